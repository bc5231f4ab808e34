"""The flat front-matter reader agrees with the full YAML loader wherever it answers, and
refuses what it refuses (a key given twice, a number too long) with the same rule and line."""

from __future__ import annotations

from hypothesis import example, given, settings, strategies as st

from gitstate.errors import InvalidFile
from gitstate.law import yamlio
from gitstate.law.flatyaml import load_flat

TRICKY = ["on", "off", "yes", "no", "y", "n", "null", "~", "Null", "true", "FALSE", "0x1f",
          "0o17", "017", "1_000", "1:30", "1.5", ".5", "1e3", "1.0e+3", ".inf", "-.inf", ".nan",
          "2026-11-22", "2026-11-22T10:04:00Z", "3f2a9c1", "1234567", "-1", "+3", "0", "00",
          "=", "<<", "a: b", "a #b", "a#b", "'quoted'", "'it''s'", "'unclosed", "- x", "-x",
          "? x", "[1, 2]", "{a: 1}", "&anchor x", "*ref", "!tag x", "|", ">", "%x", "@x",
          "`x`", '"dq"', "x:", "a\tb", "plain text, with (parens)", "alice's", "ünïcödé",
          "", " ", "# only a comment", "x # comment", "'q' # c", "'q'x", "a,b", "a, b",
          "(x)", "x+y", "a/b", "x.y", "x -y", "a - b", "C++", "x_(y)", "null x", "true story",
          "a #b #c", "v1.2.3", "x,", "x)"]
keys = st.sampled_from(["agent", "state", "on", "yes", "null", "true", "n", "k.e-y", "_x",
                        "1", "a b", "x"])
values = st.one_of(st.sampled_from(TRICKY), st.text(max_size=12))


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(keys, values), min_size=1, max_size=6),
       st.sampled_from(["", "\n", "# c\n", "  # indented\n", "  nested: 1\n"]))
@example([("agent", "alice"), ("state", "inbox")], "")
def test_flat_reader_matches_yaml_wherever_it_answers(pairs, extra):
    text = "".join(f"{k}: {v}\n" for k, v in pairs) + extra
    try:
        fast = load_flat(text, 1, where="t")
    except InvalidFile as refused:
        try:
            yamlio.load(text, where="t", line_offset=1)
        except InvalidFile as exc:
            assert (exc.rule, exc.where) == (refused.rule, refused.where), text
            return
        raise AssertionError(f"flat reader refused what YAML reads: {text!r} ({refused})")
    if fast is None:
        return
    try:
        slow = yamlio.load(text, where="t", line_offset=1)
    except Exception as exc:  # PyYAML refuses it: the flat reader must not have accepted it
        raise AssertionError(f"flat reader accepted what YAML rejects: {text!r} ({exc})")
    assert fast[0] == slow[0], text
    for key in fast[0]:
        assert fast[1][(key,)] == slow[1][(key,)], text


def test_a_key_given_twice_is_refused_by_both_readers():
    text = "agent: alice\nstate: dead\nsummary: x\nstate: inbox\n"
    for read in (lambda: load_flat(text, 1, where="f"),
                 lambda: yamlio.load(text, where="f", line_offset=1)):
        try:
            read()
        except InvalidFile as exc:
            assert exc.rule == "duplicate-key" and exc.where == "f:5"
        else:
            raise AssertionError("a key given twice was read")


def test_a_long_number_is_refused_by_both_readers():
    text = "agent: alice\ncontext_pct: " + "7" * 5000 + "\n"
    for read in (lambda: load_flat(text, 1, where="f"),
                 lambda: yamlio.load(text, where="f", line_offset=1)):
        try:
            read()
        except InvalidFile as exc:
            assert exc.rule == "long-number" and exc.where == "f:3"
        else:
            raise AssertionError("a 5,000-digit number was read")


def test_the_common_state_file_is_read_without_pyyaml():
    text = ("agent: alice\nstate: deep_work   # working\nrole: architect\nparent: null\n"
            "depth: 0\ncontext_pct: 62\nsummary: Implementing the roster fold, part 2\n"
            "last_read_commit: 3f2a9c1\nupdated: '2026-11-22T10:04:00Z'\n")
    data, lines = load_flat(text, 1)
    assert data["state"] == "deep_work" and data["context_pct"] == 62
    assert data["updated"] == "2026-11-22T10:04:00Z" and lines[("role",)] == 4


@settings(max_examples=800, deadline=None)
@given(keys, st.one_of(values, st.none(), st.booleans(), st.integers(), st.floats(),
                       st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True),
                       st.datetimes().map(lambda d: d.isoformat() + "Z")))
@example("state", "deep_work")
@example("updated", "2026-11-22T10:04:00Z")
@example("updated", "2026-11-22T10:04:00.123456Z")
def test_a_flat_entry_is_written_as_pyyaml_writes_it(key, value):
    """A move's values are written without PyYAML exactly as it would write them (a time
    stamp quoted, a YAML 1.1 word quoted), or left to it."""
    from gitstate.law.flatyaml import dump_flat_entry
    flat = dump_flat_entry(key, value)
    if flat is not None:
        assert flat == yamlio.dump_entry(key, value)


def test_a_move_writes_a_common_state_file_without_pyyaml():
    import subprocess
    import sys
    script = ("import sys\nfrom gitstate.law import statefile\n"
              "doc = statefile.parse_bytes(b'---\\nagent: alice\\nstate: inbox\\n"
              "updated: \\'2026-11-22T10:04:00Z\\'\\n---\\nnotes\\n', 'agent/alice/_state.md')\n"
              "out = statefile.with_fields(doc, {'state': 'deep_work', 'updated': "
              "'2026-11-23T08:00:00Z', 'idle_since': None})\n"
              "print(out, end='')\nprint('yaml' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert out == ("---\nagent: alice\nstate: deep_work\nupdated: '2026-11-23T08:00:00Z'\n"
                   "idle_since: null\n---\nnotes\nFalse\n")
