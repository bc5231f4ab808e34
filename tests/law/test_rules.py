"""The validator, pure: file contents + lifecycle + message -> every violation."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gitstate.law.load import load_lifecycle
from gitstate.resources import shipped
from gitstate.law.rules import FileChange, validate

HAAK = load_lifecycle(shipped("protocols", "haak", "lifecycle.yaml").read_text())
P = "agent/alice/_state.md"


def doc(state: str | None, agent: str = "alice", **fields) -> bytes:
    lines = [f"agent: {agent}"] + ([f"state: {state}"] if state is not None else [])
    lines += [f"{k}: {v}" for k, v in fields.items()]
    return ("---\n" + "\n".join(lines) + "\n---\nnotes\n").encode()


def rules(changes, message=None, lc=HAAK) -> list[str]:
    return [v.rule for v in validate(changes, lc, message)]


def move(old, new, msg=None, path=P):
    return rules([FileChange(path, old, new)], msg)


def test_a_legal_move_passes():
    assert move(doc("inbox"), doc("distill"), "@alice: [STATE:distill] thinking") == []
    assert move(doc("deep_work"), doc("deep_work", thread="x"),
                "@alice: [STATE:deep_work] progress") == []
    # a progress tag must come with a change of the state file (the README's "The rules")
    assert move(doc("deep_work"), doc("deep_work"), "@alice: [STATE:deep_work] x") == [
        "tag-without-change"]


def test_illegal_move_names_the_legal_ones():
    [v] = validate([FileChange(P, doc("inbox"), doc("deep_work"))], HAAK,
                   "@alice: [STATE:deep_work] skip")
    assert v.rule == "illegal-transition"
    assert "alice is in inbox; from inbox the lifecycle allows: distill" in v.message
    assert v.where == f"{P}:3"


def test_message_rules():
    assert move(doc("inbox"), doc("distill"), "@alice: [STATE:deep_work] x") == ["tag-mismatch"]
    assert move(doc("inbox"), doc("distill"), "thinking") == ["change-without-tag"]
    assert move(doc("inbox"), doc("distill"), "@bob: [STATE:distill] x") == ["prefix-mismatch"]
    assert move(doc("inbox"), doc("distill"), "[STATE:distill] x") == ["malformed-subject"]
    assert rules([], "@alice: [STATE:inbox] nothing staged") == ["tag-without-change"]
    assert rules([], "ordinary work, thanks @alice") == []


def test_content_rules_without_a_message():
    assert move(doc("inbox"), doc("deep_work")) == ["illegal-transition"]
    assert move(None, doc("inbox")) == ["not-initial"]
    assert move(None, doc("bootstrap")) == []
    assert move(doc("inbox"), None) == ["deleted"]
    assert move(doc("dead", final_summary="x"), doc("dead", final_summary="y")) == ["terminal"]
    assert move(doc("dead", final_summary="x"), doc("bootstrap")) == ["terminal"]
    assert move(doc("inbox"), doc("napping")) == ["unknown-state"]
    assert move(doc("inbox"), doc("distill", agent="bob")) == ["agent-mismatch"]
    assert move(doc("distill"), doc("dead")) == ["missing-field"]
    assert move(doc("distill"), doc("dead", final_summary="'  '")) == ["missing-field"]
    assert move(doc("distill"), doc("dead", final_summary="done")) == []
    assert move(doc("inbox"), doc("distill", context_pct=150)) == ["bad-field"]
    assert move(doc("inbox"), b"no front matter") == ["unreadable"]
    assert move(None, doc("bootstrap", agent="Bad!"), path="agent/Bad!/_state.md") == ["invalid-id"]
    assert move(None, doc("bootstrap", agent="Bob"), path="agent/Bob/_state.md") == ["invalid-id"]


def test_every_violation_is_reported_not_just_the_first():
    found = move(doc("inbox"), doc("deep_work", agent="bob", context_pct=95),
                 "@carol: [STATE:idle] x")
    assert set(found) == {"agent-mismatch", "illegal-transition", "urgent",
                          "prefix-mismatch"}


def test_one_agent_per_commit():
    changes = [FileChange(P, doc("inbox"), doc("distill")),
               FileChange("agent/bob/_state.md", doc("inbox", "bob"), doc("distill", "bob"))]
    assert "multiple-agents" in rules(changes, "@alice: [STATE:distill] x")


def test_approval_needs_a_listed_human():
    frozen = doc("frozen", freeze_state="data/freeze-states/alice.md")
    assert move(frozen, doc("bootstrap"), "@alice: [STATE:bootstrap] wake") == ["needs-approval"]
    assert move(frozen, doc("bootstrap"),
                "@alice: [STATE:bootstrap] wake\n\nApproved-by: mallory\n") == ["needs-approval"]
    assert move(frozen, doc("bootstrap"), "@alice: [STATE:bootstrap] wake\n\nApproved-by: Zach\n") == []


def test_urgent_context_forbids_new_work():
    [v] = validate([FileChange(P, doc("distill"), doc("deep_work", context_pct=93))], HAAK,
                   "@alice: [STATE:deep_work] one more thing")
    assert v.rule == "urgent" and "freeze or die" in v.message and "frozen, dead" in v.message
    assert move(doc("distill"), doc("deep_work", context_pct=89)) == []


# -- property: a random walk is accepted exactly when every step is legal -------------------

STATES = list(HAAK.states)
REQUIRED = {"frozen": {"freeze_state": "data/freeze-states/alice.md"},
            "dead": {"final_summary": "done"}}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(STATES), min_size=1, max_size=25))
def test_random_walk_is_accepted_exactly_when_legal(proposals):
    current, content = None, None
    for step, target in enumerate(proposals):
        new = doc(target, summary=f"step {step}", **REQUIRED.get(target, {}))
        msg = f"@alice: [STATE:{target}] step\n\nApproved-by: zach\n"
        violations = validate([FileChange(P, content, new)], HAAK, msg)
        if current is None:
            legal = target == HAAK.initial
        else:
            legal = HAAK.is_legal(current, target)
        assert (violations == []) == legal, (current, target, violations)
        if legal:
            current, content = target, new
