"""The hub refuses rewrites of protected branches (its default branch, and any ref
named by `git config gitstate.protect`): force pushes and deletions."""

from __future__ import annotations

import pytest

from conftest import git
from trusthelp import (alice_dead, assert_push_refused, cached_hub, push_lawful, refs, sha,
                       subjects)


@pytest.fixture
def buried(tmp_path):
    """(hub, work): alice lived and died; all of it on the hub's main."""
    hub, work = cached_hub(tmp_path, "alice-dead", alice_dead)
    assert "[STATE:dead]" in subjects(hub, "main")[0]
    return hub, work


def test_trust_hub_refuses_a_force_push_dropping_a_death(buried):
    hub, work = buried
    assert_push_refused(work, hub, "non-fast-forward", "+HEAD~1:refs/heads/main")
    assert "[STATE:dead]" in subjects(hub, "main")[0]


def test_trust_hub_refuses_a_force_push_back_to_the_first_commit(buried):
    hub, work = buried
    first = git(work, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    assert_push_refused(work, hub, "non-fast-forward", f"+{first}:refs/heads/main")


def test_trust_hub_refuses_deleting_its_default_branch(buried):
    hub, work = buried
    # git's own guard against deleting HEAD's branch is a setting a hub admin may relax; the
    # law must not depend on it
    git(hub, "config", "receive.denyDeleteCurrent", "warn")
    said = assert_push_refused(work, hub, "protected-ref", ":refs/heads/main")
    assert sha(hub, "refs/heads/main") == sha(work, "main")
    assert "Fix these commits" not in said, said   # a deletion has no commits to fix


def test_trust_hub_protects_configured_refs_and_only_those(buried):
    hub, work = buried
    git(hub, "config", "--add", "gitstate.protect", "refs/heads/release")
    push_lawful(work, "main:refs/heads/release", "main:refs/heads/topic")
    assert_push_refused(work, hub, "non-fast-forward", "+HEAD~1:refs/heads/release")
    assert_push_refused(work, hub, "protected-ref", ":refs/heads/release")
    # a branch nobody protects may still be rewound or deleted (its commits are still judged)
    push_lawful(work, "+HEAD~1:refs/heads/topic")
    push_lawful(work, ":refs/heads/topic")
    assert "refs/heads/topic" not in refs(hub)
