"""Shallow clones (`git clone --depth N`): where a clone's history stops, a commit shows no
parent though it had some. `verify` never judges such a commit as a history's first (a dead
agent revived there would look newly born): it judges the commits whose parents it has, names
the ones it could not judge, exits 1 and says how to fetch the rest. The ref guard refuses a
branch at such a commit for the same reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import UNHOOKED, git, gitstate, moves_on_this_branch, repo_with, set_state_line, walk

FIX = "git fetch --unshallow"


def _died_and_revived(repo: Path) -> None:
    """alice is born, works, dies; then a clone without hooks revives her into bootstrap."""
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox")
    assert gitstate(repo, "bury", "alice", "--summary", "done").returncode == 0
    set_state_line(repo, "alice", "state", "bootstrap")
    git(repo, *UNHOOKED, "commit", "-q", "-am", "@alice: [STATE:bootstrap] born again")


def _clean(repo: Path) -> None:
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox", "distill")


def shallow_clone(tmp_path: Path, origin: Path, depth: int, name: str = "shallow") -> Path:
    clone = tmp_path / name
    git(tmp_path, "clone", "-q", "--depth", str(depth), f"file://{origin}", str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    return clone


def verified(repo: Path, *args: str) -> tuple[int, dict]:
    res = gitstate(repo, "verify", "--json", *args)
    return res.returncode, json.loads(res.stdout)


def sha(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", rev).stdout.strip()


def test_a_revival_at_a_shallow_clones_boundary_is_never_judged_a_birth(tmp_path):
    full = repo_with(tmp_path, "died-and-revived", _died_and_revived)
    res = gitstate(full, "verify", "--no-cache")
    assert res.returncode == 1 and "[terminal]" in res.stdout     # the whole history: caught
    clone = shallow_clone(tmp_path, full, 1)
    head = sha(clone, "HEAD")
    res = gitstate(clone, "verify", "--no-cache")
    assert res.returncode == 1, res.stdout
    assert "ok: every" not in res.stdout and "not ok: 1 commit could not be judged" in res.stdout
    assert head[:10] in res.stdout and FIX in res.stdout and "fetch-depth: 0" in res.stdout
    code, out = verified(clone, "--no-cache")
    assert code == 1 and out["ok"] is False and out["unjudged"] == [head]
    assert out["problems"] == [] and out["judged"] == 0
    # a commit deeper: the revival has its parent, and is judged by what that parent holds
    clone2 = shallow_clone(tmp_path, full, 2, "shallow2")
    code, out = verified(clone2, "--no-cache")
    assert code == 1 and out["judged"] == 1 and out["unjudged"] == [sha(clone2, "HEAD~1")]
    assert [(p["commit"], p["rule"]) for p in out["problems"]] == [(head, "terminal")]


def test_a_shallow_clone_of_a_clean_history_says_what_it_could_not_judge(tmp_path, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    from gitstate.schema.models import json_schema
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")   # the command checks its own model too
    full = repo_with(tmp_path, "clean", _clean)
    total = int(git(full, "rev-list", "--count", "HEAD").stdout)
    clone = shallow_clone(tmp_path, full, 3)
    res = gitstate(clone, "verify", "--no-cache")
    assert res.returncode == 1
    assert "(2 commits judged)" in res.stdout and FIX in res.stdout, res.stdout
    assert "broke the rules" not in res.stdout and "ok: every commit" not in res.stdout
    res = gitstate(clone, "verify", "--json")          # with the cache: the same answer
    out = json.loads(res.stdout)
    jsonschema.validate(out, json_schema("verify"))
    assert res.returncode == 1 and out["ok"] is False and out["judged"] == 2
    assert out["unjudged"] == [sha(clone, "HEAD~2")] and out["problems"] == []
    # the whole history fetched: every commit judged, nothing remembered from before
    git(clone, "fetch", "-q", "--unshallow")
    code, out = verified(clone)
    assert code == 0 and out["ok"] is True and out["unjudged"] == [], out
    assert out["judged"] == total
    code, out = verified(full, "--no-cache")
    assert code == 0 and out["unjudged"] == []                    # a full clone: nothing unjudged


def test_the_ref_guard_refuses_a_branch_at_a_shallow_boundary(tmp_path):
    full = repo_with(tmp_path, "clean", _clean)
    git(full, "checkout", "-q", "-b", "side")
    with moves_on_this_branch(full, "side"):
        assert gitstate(full, "bury", "alice", "--summary", "done").returncode == 0
    set_state_line(full, "alice", "state", "bootstrap")
    git(full, *UNHOOKED, "commit", "-q", "-am", "@alice: [STATE:bootstrap] born again")
    revived = sha(full, "HEAD")
    git(full, "checkout", "-q", "main")
    clone = shallow_clone(tmp_path, full, 1)
    res = gitstate(clone, "init")                        # this clone's hooks and ref guard
    assert res.returncode == 0, res.stderr
    git(clone, "fetch", "-q", "--depth", "1", "origin", "side:refs/remotes/origin/side")
    res = git(clone, "branch", "side", "origin/side", check=False)
    assert res.returncode != 0 and "[shallow]" in res.stderr and FIX in res.stderr, res.stderr
    assert git(clone, "rev-parse", "-q", "--verify", "side", check=False).returncode != 0
    # with the history it lacked, the guard judges the revival itself
    git(clone, "fetch", "-q", "--unshallow", "origin", "side:refs/remotes/origin/side")
    res = git(clone, "branch", "side", revived, check=False)
    assert res.returncode != 0 and "[terminal]" in res.stderr, res.stderr
