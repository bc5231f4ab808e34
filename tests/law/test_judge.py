"""The one judge, pure: the facts of a commit -> every violation, the same at every door."""

from __future__ import annotations

from gitstate.law.grammar import parse_message
from gitstate.law.judge import Facts, judge
from gitstate.law.load import load_lifecycle
from gitstate.law.rules import FileChange
from gitstate.resources import shipped

TEXT = shipped("protocols", "haak", "lifecycle.yaml").read_text()
HAAK = load_lifecycle(TEXT)
LINED = load_lifecycle(TEXT + "\nline: main\n")
ACCEPTING = load_lifecycle(TEXT + "\nline: main\ngrammar:\n  accept:\n"
                           "    - '^@(?P<id>[\\w-]+)\\s*\\[(?P<state>\\w+)\\]:'\n")
P = "agent/alice/_state.md"


def doc(state: str, agent: str = "alice") -> bytes:
    return f"---\nagent: {agent}\nstate: {state}\n---\nnotes\n".encode()


def rules(facts: Facts) -> list[str]:
    return [v.rule for v in judge(facts)]


def merge(lc, changes=(), message="Merge branch 'side'", law=()) -> Facts:
    return Facts(lc, list(changes), message=parse_message(message), merge=True,
                 law_changed=list(law))


def test_a_merge_on_the_line_carries_work_only():
    assert rules(merge(LINED)) == []
    moved = FileChange(P, doc("distill"), doc("dead"))
    [v] = judge(merge(LINED, [moved]))
    assert v.rule == "merge-moves" and P in v.message and "--push" in v.message
    assert rules(merge(LINED, law=["protocols/lifecycle.yaml"])) == ["merge-moves"]
    # a state file the merge leaves as its first parent has it is no change
    assert rules(merge(LINED, [FileChange(P, doc("inbox"), doc("inbox"))])) == []


def test_a_merge_is_no_move_whatever_form_its_subject_takes():
    assert rules(merge(LINED, message="@alice: [STATE:dead] merged")) == ["tag-on-merge"]
    assert rules(merge(ACCEPTING, message="@alice [dead]: merged")) == ["tag-on-merge"]


def test_before_the_law_declares_the_line_a_merge_is_read_not_judged():
    moved = FileChange(P, doc("distill"), doc("dead"))
    assert rules(merge(HAAK, [moved], "@alice: [STATE:dead] x")) == []
    # and off the line (a branch of its own) it is work on that branch
    off = merge(LINED, [moved])
    off.line = False
    assert rules(off) == []


def test_after_the_law_a_subject_read_as_a_move_is_written_in_the_standard_grammar():
    empty = Facts(ACCEPTING, [], message=parse_message("@alice [dead]: gone"))
    [v] = judge(empty)
    assert v.rule == "tag-form" and "'@alice: [STATE:dead] gone'" in v.message
    moved = Facts(ACCEPTING, [FileChange(P, doc("distill"), doc("dead"))],
                  message=parse_message("@alice [dead]: gone"))
    assert "tag-form" in rules(moved)


def test_a_commit_read_one_way_by_git_and_another_by_bytes_is_refused():
    plain = Facts(LINED, [], message=parse_message("work"), encoding="ISO-8859-1")
    assert rules(plain) == ["encoding"]
    for ok in ("UTF-8", "utf8", None):
        assert rules(Facts(LINED, [], message=parse_message("work"), encoding=ok)) == []


def test_a_date_ahead_of_the_doors_clock_is_refused_beyond_the_skew():
    assert rules(Facts(LINED, [], message=parse_message("work"), ahead=301)) == ["future-date"]
    assert rules(Facts(LINED, [], message=parse_message("work"), ahead=300)) == []


def test_a_team_operations_move_from_a_state_the_law_does_not_declare_is_judged_not_a_crash():
    """`Moved-by: gitstate shutdown` on an agent whose file names an undeclared state: the
    judge says what is wrong instead of failing on the unknown state."""
    moved = FileChange(P, doc("no_such_state"), doc("dead"))
    message = parse_message("@alice: [STATE:dead] shut down\n\nMoved-by: gitstate shutdown")
    found = rules(Facts(HAAK, [moved], message=message, bound="bob"))
    assert found and all(isinstance(r, str) for r in found)
    from gitstate.law.movers import op_kind
    assert op_kind(HAAK, "shutdown", "no_such_state", "dead", None) is True
