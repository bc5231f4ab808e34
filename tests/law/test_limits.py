"""Limits on untrusted input (issue #9): each refusal names its rule and line, and comes fast.

The black-box corpus (tests/hostile/) runs every case through every door; these are the pure
readers' own cases, one per limit.
"""

from __future__ import annotations

import time

import pytest

from gitstate.errors import InvalidFile
from gitstate.law import limits
from gitstate.law.grammar import parse_message, subject_tag
from gitstate.law.load import LifecycleInvalid, load_lifecycle, read_lifecycle
from gitstate.law.statefile import parse, parse_bytes

PATH = "agent/alice/_state.md"
HEAD = "---\nagent: alice\nstate: inbox\n"


def refusal(call, *args) -> InvalidFile:
    with pytest.raises(InvalidFile) as info:
        call(*args)
    return info.value


def state(front: str, body: str = "notes\n") -> str:
    return HEAD + front + "---\n" + body


@pytest.mark.parametrize("front, rule, line", [
    ("x: " + "[" * 40 + "]" * 40 + "\n", "too-deep", 4),
    ("x: {a: {b: [1]}}\ny: " + "{a: " * 33 + "1" + "}" * 33 + "\n", "too-deep", 5),
    ("x: &a [1]\ny: *a\n", "yaml-alias", 4),
    ("x: !!binary aGk=\n", "yaml-tag", 4),
    ("x: !!python/object/apply:os.system ['true']\n", "yaml-tag", 4),
    ("x: !vault abc\n", "yaml-tag", 4),
    ("context_pct: " + "7" * 101 + "\n", "long-number", 4),
    ("x: [" + "7" * 101 + "]\n", "long-number", 4),
    ("x: 1." + "7" * 100 + "\n", "long-number", 4),
    ("summary: a\nstate: dead\n", "duplicate-key", 5),
    ("summary: 'quoted'\nstate: dead\n", "duplicate-key", 5),
    ("summary: \"q\"\nx: [1]\nstate: dead\n", "duplicate-key", 6),
    ("<<: {summary: merged}\n", "unreadable", 4),
    ("summary: ok\x85final_summary: smuggled\n", "unreadable", 4),
    ("summary: ok\u2028final_summary: smuggled\n", "unreadable", 4),
    ("summary: ok\rfinal_summary: smuggled\n", "unreadable", 4),
    ("x: " + "a" * (limits.LINE_CHARS + 1) + "\n", "too-large", 4),
    ("".join(f"k{i:05d}: v\n" for i in range(10_000)), "too-large", 2),
])
def test_each_limit_names_its_rule_and_line(front, rule, line):
    exc = refusal(parse, state(front), PATH)
    assert (exc.rule, exc.where) == (rule, f"{PATH}:{line}"), str(exc)
    assert str(exc).startswith(f"[{rule}] {PATH}:{line}: ")


def test_the_file_itself_bounded_bom_and_encoding():
    assert refusal(parse_bytes, state("", "x" * limits.STATE_FILE_BYTES).encode(), PATH).rule \
        == "too-large"
    assert refusal(parse_bytes, b"\xef\xbb\xbf" + state("").encode(), PATH).rule == "unreadable"
    assert refusal(parse_bytes, state("x: \xe9\n").encode("latin-1"), PATH).where == f"{PATH}:4"
    assert refusal(parse_bytes, state("x: \ud800\n").encode("utf-8", "surrogatepass"),
                   PATH).rule == "unreadable"


def test_crlf_and_odd_characters_in_the_notes_are_fine():
    doc = parse(state("summary: ok\n").replace("\n", "\r\n"), PATH)
    assert doc.state == "inbox" and doc.get("summary") == "ok"
    doc = parse(state("summary: ok\n", "notes\x85 with\u2028 odd\r breaks\n"), PATH)
    assert doc.text() == state("summary: ok\n", "notes\x85 with\u2028 odd\r breaks\n")


def test_nothing_recursive_sees_deep_nesting():
    """400 KB of '[' made libyaml's composer overflow the C stack; the front matter limit
    refuses it, and nesting is refused by depth long before any such size."""
    t = time.perf_counter()
    assert refusal(parse, state("x: " + "[" * 400_000 + "\n"), PATH).rule == "too-large"
    assert refusal(parse, state("x: " + "[" * 10_000 + "\n"), PATH).rule == "too-deep"
    assert time.perf_counter() - t < 1


BASE = """\
name: tiny
initial: start
states:
  start: {roster: living}
  work: {roster: living}
  done: {roster: dead, terminal: true}
transitions:
  start: [work]
  work: [done]
"""


def alias_bomb(levels: int = 9) -> str:
    lines = ['x-a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"x-a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]"
              for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_a_lifecycle_alias_bomb_is_refused_without_expanding():
    t = time.perf_counter()
    exc = refusal(load_lifecycle, BASE + alias_bomb(), "life.yaml")
    assert time.perf_counter() - t < 1
    assert exc.rule == "yaml-alias" and exc.where.startswith("life.yaml:")


def test_a_lifecycle_may_share_a_little_with_anchors():
    lc = load_lifecycle("name: shared\ninitial: a\nstates:\n  a: &living {roster: living}\n"
                        "  b: *living\n  c: {roster: dead, terminal: true}\n"
                        "transitions:\n  a: [b]\n  b: [c]\n")
    assert lc.states["b"].roster == "living"


@pytest.mark.parametrize("text, rule", [
    (BASE + "policies: {max_living: " + "9" * 5000 + "}\n", "long-number"),
    (BASE + "description: " + "[" * 2000 + "]" * 2000 + "\n", "too-deep"),
    (BASE + "description: !!python/name:os.system\n", "yaml-tag"),
    (BASE + "states: {}\n", "duplicate-key"),
    (BASE + "# " + "x" * limits.LIFECYCLE_BYTES + "\n", "too-large"),
    ("initial: a\nstates:\n  a: [\n", "lifecycle"),
])
def test_a_hostile_lifecycle_is_refused_with_its_rule(text, rule):
    assert refusal(load_lifecycle, text, "life.yaml").rule == rule


def test_lifecycle_bytes_are_bounded_and_strict_utf8():
    assert refusal(read_lifecycle, b"# " + b"x" * (20 << 20), "f").rule == "too-large"
    exc = refusal(read_lifecycle, BASE.replace("tiny", "t\xe9").encode("latin-1"), "f")
    assert exc.rule == "unreadable" and exc.where == "f:1"


def chain(n: int) -> str:
    lines = ["name: chain", "initial: s0", "states:"]
    lines += [f"  s{i}: {{}}" for i in range(n - 1)] + ["  end: {roster: dead, terminal: true}"]
    lines += ["transitions:"] + [f"  s{i}: [s{i + 1}]" for i in range(n - 2)]
    return "\n".join(lines + [f"  s{n - 2}: [end]"]) + "\n"


def test_lifecycle_checks_are_linear():
    """10,000 states took ~50 s when 'can reach an end' searched from every state; bench/
    hostile.py has the figures. The bound here only tells linear from quadratic."""
    t = time.perf_counter()
    lc = load_lifecycle(chain(10_000))
    assert len(lc.states) == 10_000
    assert time.perf_counter() - t < 5
    stuck = chain(10_000).replace("  s9998: [end]\n", "  s9998: [s9997]\n")
    exc = refusal(load_lifecycle, stuck, "life.yaml")
    assert "no terminal or frozen state can be reached from: s0, s1," in exc.message
    assert "more" in exc.message and len(exc.message) < 2000


@pytest.mark.parametrize("layout", [
    ".git/{id}", ".git/{id}/_state.md", ".GIT/{id}.md", "agent/.git/{id}.md", "agent/.Git./{id}",
    "git~1/{id}.md", "../{id}/_state.md", "/tmp/{id}.md", ".{id}/_state.md", "a/.{id}.md",
    "protocols/{id}.yaml", ".githooks/{id}", "agent/{id}/\u200c.git", "agent/{id} x/_state.md",
])
def test_layouts_stay_in_the_work_tree_and_out_of_git(layout):
    with pytest.raises(LifecycleInvalid) as info:
        load_lifecycle(BASE + f"layout: {{state_file: '{layout}'}}\n", "life.yaml")
    assert any("layout.state_file" in m for _, m in info.value.problems)
    assert info.value.rule == "lifecycle"


def test_ordinary_layouts_still_load():
    for layout in ("{id}/_state.md", "agents/{id}.md", ".agents/{id}/state.md", "a/{id}.git"):
        assert load_lifecycle(BASE + f"layout: {{state_file: '{layout}'}}\n").state_file \
            == layout


def test_an_accept_pattern_re2_cannot_run_is_refused_at_load():
    for pattern in (r"^@(?P<id>\w+)(?=\s)\s*\[(?P<state>\w+)\]", r"^@(?P<id>\w+) (?P=id)"
                    r"\[(?P<state>\w+)\]"):
        with pytest.raises(LifecycleInvalid) as info:
            load_lifecycle(BASE + "grammar:\n  accept:\n    - '" + pattern + "'\n", "life.yaml")
        assert any("RE2" in m for _, m in info.value.problems)


def test_an_accept_pattern_runs_in_linear_time():
    lc = load_lifecycle(BASE + "grammar:\n  accept:\n"
                        "    - '^@(?P<id>(\\w+)+)\\s*\\[(?P<state>\\w+)\\]:'\n")
    accept = lc.accept_patterns()
    t = time.perf_counter()
    for n in (40, 1000, 100_000):
        assert subject_tag("@" + "a" * n + "!", accept) is None
        assert parse_message("@" + "a" * n + "!", accept).tag is None
    assert time.perf_counter() - t < 1
    assert subject_tag("@Era1 [deep_work]: fold", accept) == ("era1", "deep_work", "fold")
    assert subject_tag("@era1 [deep_work]: " + "x" * limits.SUBJECT_CHARS, accept) is None


def test_untrusted_text_is_read_in_linear_time():
    """Commit messages, freeze-state files and lifecycle values come from anyone: none of the
    expressions that read them may backtrack quadratically on a long line of blanks (each of
    these took seconds to hours before)."""
    from gitstate.law.grammar import parse_trailers
    from gitstate.law.times import parse_duration
    from gitstate.law.rules import role_transfer
    from gitstate.law.society import freeze_file_problems
    n = 200_000
    t = time.perf_counter()
    assert parse_trailers("Approved-by:" + " " * n + "\t" + "\r" * n + "!") == \
        {"approved-by": ["!"]}
    assert parse_trailers("Approved-by: zach\nX: \r") == {}
    assert parse_message(f"@a: [STATE:x] y\n\nRole-transfer: {'->' * n}\t\n").trailers
    assert role_transfer("->" * n + "\t") is None and role_transfer("arch -> bob") == ("arch", "bob")
    assert parse_duration("1" + " " * n + "x") is None and parse_duration(" 30m\n") == 1800
    assert parse_duration("9" * 5000 + "m") is None
    assert freeze_file_problems("## x" + " " * n + "y\n")
    assert time.perf_counter() - t < 1
