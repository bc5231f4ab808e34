"""_state.md: parsing, typed known keys, and byte-for-byte round trips (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gitstate.law import statefile
from gitstate.errors import InvalidFile

DOC = """---
agent: alice
state: deep_work   # a comment stays
role: architect
custom_key: {nested: [1, 2]}
context_pct: 62
---
## Notes
free text, *never* parsed: ---
"""


def test_parse_known_and_unknown_keys():
    doc = statefile.parse(DOC, "agent/alice/_state.md")
    assert doc.agent == "alice" and doc.state == "deep_work"
    assert doc.get("custom_key") == {"nested": [1, 2]}
    assert doc.line_of("role") == 4
    assert doc.text() == DOC


def test_with_fields_changes_only_what_it_sets():
    doc = statefile.parse(DOC, "p")
    out = statefile.with_fields(doc, {"state": "inbox", "thread": "fold"})
    assert "state: inbox\n" in out
    assert "role: architect\n" in out and "custom_key: {nested: [1, 2]}\n" in out
    assert out.endswith("---\n## Notes\nfree text, *never* parsed: ---\n")
    again = statefile.parse(out, "p")
    assert again.front == {**doc.front, "state": "inbox", "thread": "fold"}


def test_multiline_values_are_replaced_whole():
    text = "---\nagent: a\nstate: x\nsummary: >\n  long\n  text\nrole: r\n---\nbody\n"
    out = statefile.with_fields(statefile.parse(text, "p"), {"summary": "short"})
    assert out == "---\nagent: a\nstate: x\nsummary: short\nrole: r\n---\nbody\n"


@pytest.mark.parametrize("text, line, words", [
    ("", 1, "no front matter"),
    ("hello\n---\n", 1, "must start with a line '---'"),
    ("---\nagent: a\n", 1, "never closed"),
    ("---\nagent: a\nstate: [x\n---\n", 4, "invalid YAML"),
    ("---\n- a\n- b\n---\n", 2, "must be a mapping"),
])
def test_broken_front_matter_names_file_and_line(text, line, words):
    with pytest.raises(InvalidFile) as info:
        statefile.parse(text, "agent/a/_state.md")
    assert info.value.where == f"agent/a/_state.md:{line}"
    assert words in info.value.message


def test_non_utf8_and_huge_files_are_clear_errors():
    with pytest.raises(InvalidFile) as info:
        statefile.parse_bytes(b"---\nagent: a\n\xff\n---\n", "f.md")
    assert info.value.where == "f.md:3" and "not UTF-8" in info.value.message
    with pytest.raises(InvalidFile) as info:
        statefile.parse_bytes(b"x" * (statefile.MAX_STATE_FILE_BYTES + 1), "f.md")
    assert "at most" in info.value.message


def test_field_types_are_checked():
    text = ("---\nagent: Not An Id!\nstate: x\ncontext_pct: 150\ndepth: -1\n"
            "freeze_state: ../../etc/passwd\nlast_read_commit: zzz\n---\n")
    found = {key: line for key, line, _ in statefile.field_problems(statefile.parse(text, "p"))}
    assert found == {"agent": 2, "context_pct": 4, "depth": 5, "freeze_state": 6,
                     "last_read_commit": 7}


def test_yaml_quirks_do_not_change_values():
    doc = statefile.parse("---\nagent: a\nstate: on\nupdated: 2026-11-22T10:04:00Z\n---\n", "p")
    assert doc.state == "on"
    assert doc.get("updated") == "2026-11-22T10:04:00Z"


keys = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda k: k not in statefile.FIELDS)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                            max_size=30))


@settings(max_examples=150, deadline=None)
@given(extra=st.dictionaries(keys, scalars, max_size=5),
       body=st.text(max_size=200),
       updates=st.dictionaries(st.sampled_from(["state", "thread", "summary", "context_pct"]),
                               scalars, max_size=4))
def test_round_trip_keeps_unknown_keys_and_body(extra, body, updates):
    import yaml
    front = "agent: alice\nstate: inbox\n" + "".join(
        yaml.safe_dump({k: v}, allow_unicode=True, width=1 << 16) for k, v in extra.items())
    text = f"---\n{front}---\n{body}"
    doc = statefile.parse(text, "p")
    assert doc.text() == text
    out = statefile.with_fields(doc, updates)
    assert out.endswith(f"---\n{body}")
    again = statefile.parse(out, "p")
    assert again.front == {**doc.front, **updates}
    for key in extra:  # untouched entries keep their exact lines
        line = yaml.safe_dump({key: extra[key]}, allow_unicode=True, width=1 << 16)
        assert line in out


def _split_by_lines(text: str):
    """The file split into (first line, front matter, closing line, body) line by line, as the
    front matter is defined: the reference for `parse`'s faster split."""
    import re
    lines = text.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    if not lines or not re.match(r"^---[ \t]*\r?\n?$", lines[0]):
        return None
    for i in range(1, len(lines)):
        if re.match(r"^(?:---|\.\.\.)[ \t]*\r?\n?$", lines[i]):
            return lines[0], "".join(lines[1:i]), lines[i], "".join(lines[i + 1:])
    return None


_PIECES = st.sampled_from(["---", "...", "--- ", "---\t", "\r", "\n", "\n", "agent: a",
                           "state: s", "x: 1", " ", "#", "-", ".", "notes"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_front_matter_is_split_as_line_by_line(text):
    expected = _split_by_lines(text)
    try:
        doc = statefile.parse(text, "agent/a/_state.md")
    except InvalidFile as exc:
        if expected is not None:   # split alike, refused later (the YAML, a line break)
            assert "front matter opened" not in str(exc) and "no front matter" not in str(exc)
        return
    assert expected == (doc.head, doc.front_text, doc.close, doc.body)


LINES = ["---", "...", "--- ", "...\t", "---x", "----", " ---", "...\r", "---\r", "a: b", "",
         "- x", "#---", "..", "--"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=8), st.booleans())
def test_the_closing_line_is_found_where_the_expression_finds_it(lines, final_newline):
    """`_close_line` looks only where a line starts with '---' or '...': it finds the same
    line as searching with the expression at every character."""
    text = "---\n" + "\n".join(lines) + ("\n" if final_newline else "")
    found = statefile._close_line(text, 4)
    expected = statefile._CLOSE_LINE.search(text, 4)
    assert (found and found.span()) == (expected and expected.span()), text


def test_state_files_share_what_their_lines_say_but_not_long_lines():
    """verify reads every version of every state file: a short line read before is looked up;
    a long one (anyone may commit one) is not kept."""
    from gitstate.law import flatyaml
    long_summary = "summary: " + "x" * 10_000
    text = f"---\nagent: alice\nstate: inbox\n{long_summary}\n---\n"
    first = statefile.parse(text, "agent/alice/_state.md")
    again = statefile.parse(text, "agent/alice/_state.md")
    assert first.front == again.front and again.lines == first.lines
    assert "state: inbox" in flatyaml._SEEN and long_summary not in flatyaml._SEEN
    assert again.front["summary"] == "x" * 10_000


def test_the_lists_of_keys_are_read_from_the_one_table():
    """Each room's list of state-file keys is what law/statekeys.py says of them."""
    from gitstate.law.lifecycle import NOT_DEFAULTS
    from gitstate.law.statekeys import KEYS
    from gitstate.moves.fields import NUMERIC_KEYS, PROTECTED_KEYS
    from gitstate.moves.unlanded import _KEYS_THE_MOVE_SETS
    assert len({k.name for k in KEYS}) == len(KEYS)
    assert list(statefile.FIELDS) == [
        "agent", "state", "role", "model", "person", "project", "parent", "depth", "thread",
        "context_pct", "summary", "last_read_commit", "freeze_state", "final_summary",
        "updated", "retries", "pid", "host", "worktree", "max_tokens", "tokens", "stopped",
        "key"]
    assert statefile.FIELDS["depth"](-1) and not statefile.FIELDS["context_pct"](42.5)
    assert PROTECTED_KEYS == {"agent": "it is the agent's id",
                              "state": "name the state as the STATE argument",
                              "retries": "a retry counts itself (`policies.retry`: `gitstate "
                                         "transition ID STATE` from a failure state)"}
    assert NUMERIC_KEYS == {"context_pct", "depth", "pid", "max_tokens", "tokens", "retries"}
    assert NOT_DEFAULTS == ("agent", "state", "parent", "depth", "updated", "retries", "key")
    assert _KEYS_THE_MOVE_SETS == ("state", "updated", "ended", "retries")
