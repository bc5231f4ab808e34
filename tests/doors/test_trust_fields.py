"""A state is a declared state name; fields fixed at birth stay fixed; a key
given twice is refused. At the hook, `transition`, `check`, verify and the hub."""

from __future__ import annotations

import re

import pytest

from conftest import git, gitstate, snapshot, state_path, walk
from trusthelp import (alice_in_inbox, assert_push_refused, assert_verify_flags, cached_hub,
                       edit_state, gs, out, push_lawful, sha, sneak_state, verify_json)


def _commit_all(repo, message):
    return git(repo, "commit", "-q", "-am", message, check=False)


def _refused_by_hook(repo, message, rule):
    before = snapshot(repo)
    res = _commit_all(repo, message)
    assert res.returncode != 0, f"the hook accepted {message!r}"
    assert f"[{rule}]" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    assert snapshot(repo) == before
    return res


# --- item 3: state: 5 / state: 0.5 ------------------------------------------------------

NUMBERS = ["5", "0.5"]


@pytest.mark.parametrize("value", NUMBERS)
def test_trust_numeric_state_is_refused_by_the_hook(repo, value):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    edit_state(repo, "alice", state=value)
    _refused_by_hook(repo, f"@alice: [STATE:{value}] a number", "bad-field")


@pytest.mark.parametrize("value", NUMBERS)
def test_trust_numeric_state_cannot_be_left_to_anywhere_through_the_hook(repo, value):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    sneak_state(repo, "alice", f"@alice: [STATE:{value}] a number", state=value)
    edit_state(repo, "alice", state="deep_work")
    before = snapshot(repo)
    res = _commit_all(repo, "@alice: [STATE:deep_work] anywhere from here")
    assert res.returncode != 0, "the hook let alice leave a numeric state for deep_work"
    assert re.search(r"\[[a-z-]+\]", res.stderr) and "Traceback" not in res.stderr, res.stderr
    assert snapshot(repo) == before


def _numeric_history(tmp_path, value):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    number = sneak_state(work, "alice", f"@alice: [STATE:{value}] a number", state=value)
    leave = sneak_state(work, "alice", "@alice: [STATE:deep_work] anywhere from here",
                        state="deep_work")
    return hub, work, number, leave


@pytest.mark.parametrize("value", NUMBERS)
def test_trust_numeric_state_is_caught_by_verify(tmp_path, value):
    _hub, work, number, leave = _numeric_history(tmp_path, value)
    assert_verify_flags(work, (number, "bad-field"))
    _, problems = verify_json(work, "--no-cache")
    assert any(p["commit"] == leave for p in problems), \
        f"leaving the numeric state for deep_work was not flagged: {problems}"


@pytest.mark.parametrize("value", NUMBERS)
def test_trust_numeric_state_is_refused_by_the_hub(tmp_path, value):
    hub, work, _number, leave = _numeric_history(tmp_path, value)
    err = assert_push_refused(work, hub, "bad-field")
    assert leave[:10] in err, f"the hub did not flag leaving the numeric state:\n{err}"


# --- item 10: fields fixed at birth ------------------------------------------------------

def test_trust_transition_refuses_to_change_fixed_fields(repo):
    gs(repo, "spawn", "alice")
    before = snapshot(repo)
    res = gitstate(repo, "transition", "alice", "bootstrap", "--set", "depth=7",
                   "--set", "parent=ghost")
    assert res.returncode == 1, f"transition rewrote depth and parent:\n{out(res)}"
    assert "[fixed-field]" in out(res), out(res)
    assert snapshot(repo) == before


FIXED = {"parent": "bob", "depth": "1", "role": "auditor", "agent": "bob"}
# `agent:` must equal the directory, which never changes: its own rule says so precisely
FIXED_RULE = {"parent": "fixed-field", "depth": "fixed-field", "role": "fixed-field",
              "agent": "agent-mismatch"}


@pytest.fixture
def born(repo):
    """alice (a librarian, no parent, depth 0) in inbox, and bob."""
    gs(repo, "spawn", "bob")
    gs(repo, "spawn", "alice", "--role", "librarian")
    walk(repo, "alice", "inbox")
    text = state_path(repo, "alice").read_text()
    assert "parent: null" in text and "depth: 0" in text and "role: librarian" in text
    return repo


@pytest.mark.parametrize("field", sorted(FIXED))
def test_trust_hand_edit_of_a_fixed_field_is_refused_by_the_hook(born, field):
    edit_state(born, "alice", **{field: FIXED[field]})
    _refused_by_hook(born, f"@alice: [STATE:inbox] change {field}", FIXED_RULE[field])


def _born(work):
    gs(work, "spawn", "bob")
    gs(work, "spawn", "alice", "--role", "librarian")
    walk(work, "alice", "inbox")
    push_lawful(work)


def _fixed_history(tmp_path):
    hub, work = cached_hub(tmp_path, "fixed-fields", _born)
    made = {}
    for field in ("parent", "depth", "role", "agent"):     # agent last: it renames the file's owner
        made[field] = sneak_state(work, "alice", f"@alice: [STATE:inbox] change {field}",
                                  **{field: FIXED[field]})
    return hub, work, made


def test_trust_fixed_fields_are_caught_by_verify(tmp_path):
    _hub, work, made = _fixed_history(tmp_path)
    assert_verify_flags(work, *[(c, FIXED_RULE[f]) for f, c in made.items()])


def test_trust_fixed_fields_are_refused_by_the_hub(tmp_path):
    hub, work, made = _fixed_history(tmp_path)
    err = assert_push_refused(work, hub, "fixed-field")
    for field, commit in made.items():
        assert commit[:10] in err, f"the hub did not flag the change of {field}:\n{err}"


# --- item 10: a key given twice ------------------------------------------------------------

def _duplicate_state(repo) -> None:
    """alice in inbox; her file says `state: dead` on line 3 and `state: inbox` on line 10."""
    path = state_path(repo, "alice")
    lines = path.read_text().splitlines(keepends=True)
    assert lines[2] == "state: inbox\n"
    lines[2] = "state: dead\n"
    lines.insert(9, "state: inbox\n")
    assert lines.index("---\n", 1) > 10
    path.write_text("".join(lines))


def test_trust_duplicate_key_is_refused_by_the_hook(repo):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    _duplicate_state(repo)
    _refused_by_hook(repo, "@alice: [STATE:inbox] twice", "duplicate-key")


def test_trust_duplicate_key_is_refused_by_check(repo):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    _duplicate_state(repo)
    res = gitstate(repo, "check")
    assert res.returncode == 1 and "[duplicate-key]" in res.stdout, out(res)


def _duplicate_history(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    _duplicate_state(work)
    git(work, "add", "agent/alice/_state.md")
    bad = sneak_state(work, "alice", "@alice: [STATE:inbox] twice")
    return hub, work, bad


def test_trust_duplicate_key_is_caught_by_verify(tmp_path):
    _hub, work, bad = _duplicate_history(tmp_path)
    assert sha(work) == bad
    assert_verify_flags(work, (bad, "duplicate-key"))


def test_trust_duplicate_key_is_refused_by_the_hub(tmp_path):
    hub, work, _bad = _duplicate_history(tmp_path)
    assert_push_refused(work, hub, "duplicate-key")
