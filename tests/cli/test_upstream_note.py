"""The read views say, on stderr, when the branch they read differs from its remote-tracking
upstream as of the last fetch (no network): behind, ahead, or both; never under `--json` or
`--at`, and nothing without such an upstream. One git call tells it."""

from __future__ import annotations

import json

import pytest

from conftest import git, gitstate

BEHIND = ("note: origin/main has 1 commit this clone has not got (as of the last fetch): "
          "`git pull` brings it\n")
AHEAD = ("note: 1 commit here has not landed on origin/main: `gitstate sync` lands the moves "
         "among them\n")
BOTH = ("note: origin/main has 1 commit this clone has not got (as of the last fetch), and 1 "
        "here is not on it: `gitstate sync` brings this branch in step and lands its moves\n")
VIEWS = (("roster",), ("status",), ("status", "ana"), ("log",), ("log", "ana", "-n", "1"),
         ("vacancies",), ("inbox", "ana"))


@pytest.fixture
def clones(tmp_path):
    """Two clones of a hub, both holding ana."""
    from hubs import hub_and_clones
    hub, (a, b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "ana", "--push").returncode == 0
    git(b, "pull", "-q")
    return hub, a, b


def _said(repo, note: str) -> None:
    for view in VIEWS:
        res = gitstate(repo, *view)
        assert res.returncode == 0, (view, res.stderr)
        assert res.stderr == note, view
        assert "note:" not in res.stdout, view
        quiet = gitstate(repo, *view, "--json")
        assert quiet.returncode == 0 and quiet.stderr == "", view
        json.loads(quiet.stdout)
        assert gitstate(repo, *view, "--at", "HEAD").stderr == "", view


@pytest.mark.parametrize("whole", [False, True], ids=["fast", "click"])
def test_a_clone_behind_its_upstream_says_so_in_every_view(clones, monkeypatch, whole):
    _hub, a, b = clones
    if whole:   # the command line's own path (the typed models check the JSON there)
        monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")
    _said(b, "")
    assert gitstate(a, "transition", "ana", "inbox", "--push").returncode == 0
    git(b, "fetch", "-q")
    _said(b, BEHIND)
    git(b, "pull", "-q")
    _said(b, "")


def test_unlanded_commits_and_both_ways_are_said_too(clones):
    _hub, a, b = clones
    assert gitstate(b, "transition", "ana", "inbox").returncode == 0      # not pushed
    _said(b, AHEAD)
    assert gitstate(a, "say", "ana", "hello", "--push").returncode == 0
    git(b, "fetch", "-q")
    _said(b, BOTH)
    sync = gitstate(b, "sync")
    assert sync.returncode == 0, sync.stderr
    _said(b, "")


def test_one_git_call_tells_it_and_no_upstream_says_nothing(clones, repo, tmp_path,
                                                            monkeypatch):
    hub, a, b = clones
    assert gitstate(a, "transition", "ana", "inbox", "--push").returncode == 0
    git(b, "fetch", "-q")
    for where, note in ((b, BEHIND), (repo, "")):
        trace = tmp_path / f"trace-{where.name}"
        monkeypatch.setenv("GIT_TRACE", str(trace))
        res = gitstate(where, "roster")
        monkeypatch.delenv("GIT_TRACE")
        assert res.stderr == note
        asked = [line for line in trace.read_text().splitlines()
                 if "built-in: git" in line and "upstream" in line]
        assert len(asked) == 1 and "for-each-ref" in asked[0], asked
    assert gitstate(hub, "roster").stderr == ""                     # a hub has no upstream


def test_an_upstream_that_is_a_local_branch_is_not_said(repo):
    git(repo, "switch", "-q", "-c", "feature")
    git(repo, "branch", "-q", "--set-upstream-to=main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "work")
    assert gitstate(repo, "roster").stderr == ""
