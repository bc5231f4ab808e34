"""Once managed, always managed; the law changes only with a human's
approval; what runs as a hook on a clone is what that clone installed, not what it pulled."""

from __future__ import annotations

from conftest import git, gitstate, make_repo, snapshot, state_path, walk
from trusthelp import (alice_dead, alice_in_inbox, assert_push_refused, assert_verify_flags,
                       cached_hub, edit_state, gs, out, sha, sneak, sneak_state, verify_json)

LAW = "protocols/lifecycle.yaml"


# --- item 4: deleting the lifecycle switches nothing off -----------------------------------

def _law_gap(work, base: str) -> tuple[str, str]:
    """Delete the lifecycle, make an illegal move (alice inbox -> deep_work), restore the
    lifecycle: all with hooks off. Returns (deletion, illegal move)."""
    (work / LAW).unlink()
    gone = sneak(work, "drop the law", LAW)
    assert git(work, "cat-file", "-e", f"HEAD:{LAW}", check=False).returncode != 0
    bad = sneak_state(work, "alice", "@alice: [STATE:deep_work] nobody is watching",
                      state="deep_work")
    git(work, "checkout", base, "--", LAW)
    sneak(work, "restore the law", LAW)
    return gone, bad


def _gap_history(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    gone, bad = _law_gap(work, sha(work))
    return hub, work, gone, bad


def test_trust_deleted_lifecycle_is_caught_by_verify(tmp_path):
    _hub, work, gone, bad = _gap_history(tmp_path)
    assert_verify_flags(work, (gone, "lifecycle"), (bad, "illegal-transition"))


def test_trust_deleted_lifecycle_is_refused_by_the_hub(tmp_path):
    hub, work, _gone, _bad = _gap_history(tmp_path)
    assert_push_refused(work, hub, ["lifecycle", "illegal-transition"])


def test_trust_hook_judges_by_the_last_law_after_a_deletion(repo):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    (repo / LAW).unlink()
    sneak(repo, "drop the law", LAW)
    edit_state(repo, "alice", state="deep_work")
    before = snapshot(repo)
    res = git(repo, "commit", "-q", "-am", "@alice: [STATE:deep_work] nobody is watching",
              check=False)
    assert res.returncode != 0, "with the lifecycle deleted, the hook let an illegal move in"
    assert "[illegal-transition]" in res.stderr, res.stderr
    assert snapshot(repo) == before


def test_trust_init_no_commit_does_not_leave_the_door_open(tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "README").write_text("hello\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    gs(repo, "init", "--no-commit")
    p = state_path(repo, "bob")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("---\nagent: bob\nstate: deep_work\n---\n")
    git(repo, "add", "agent/bob/_state.md")
    before = sha(repo)
    res = git(repo, "commit", "-q", "-m", "@bob: [STATE:deep_work] born busy", check=False)
    assert res.returncode != 0, "a state commit bypassed the law in a repo made with --no-commit"
    assert "[not-initial]" in res.stderr or "[lifecycle]" in res.stderr, res.stderr
    assert sha(repo) == before


# --- item 5: the law changes only with a human's approval ----------------------------------

def relax(repo) -> None:
    """Make `dead` non-terminal, with dead -> bootstrap (a valid lifecycle)."""
    text = (repo / LAW).read_text()
    relaxed = text.replace("    terminal: true\n", "", 1) \
        .replace("  frozen: [bootstrap, dead]\n",
                 "  frozen: [bootstrap, dead]\n  dead: [bootstrap]\n")
    assert relaxed.count("dead: [bootstrap]") == 1 and "terminal: true" not in relaxed, \
        "setup: the haak preset changed shape"
    (repo / LAW).write_text(relaxed)


def test_trust_law_change_needs_approval_at_the_hook(repo):
    relax(repo)
    assert gitstate(repo, "check").returncode == 0, "setup: the relaxed law must be valid"
    before = snapshot(repo)
    res = git(repo, "commit", "-q", "-am", "law: dead is not the end", check=False)
    assert res.returncode != 0, "an unapproved change of the law was committed"
    assert "[needs-approval]" in res.stderr, res.stderr
    assert snapshot(repo) == before
    res = git(repo, "commit", "-q", "-am", "law: dead is not the end\n\nApproved-by: zach",
              check=False)
    assert res.returncode == 0, f"an approved change of the law was refused:\n{res.stderr}"


def _relaxed_history(tmp_path, trailer: str):
    """alice dies (pushed); then, hooks off, the law is relaxed (with `trailer` in the body)
    and alice comes back. Returns (hub, work, law change, revival)."""
    hub, work = cached_hub(tmp_path, "alice-dead", alice_dead)
    relax(work)
    law = sneak(work, "law: dead is not the end" + trailer, LAW)
    back = sneak_state(work, "alice", "@alice: [STATE:bootstrap] back from the dead",
                       state="bootstrap")
    return hub, work, law, back


def test_trust_unapproved_law_change_is_caught_by_verify(tmp_path):
    _hub, work, law, _back = _relaxed_history(tmp_path, "")
    assert_verify_flags(work, (law, "needs-approval"))


def test_trust_unapproved_law_change_is_refused_by_the_hub(tmp_path):
    hub, work, law, _back = _relaxed_history(tmp_path, "")
    err = assert_push_refused(work, hub, "needs-approval")
    assert law[:10] in err


def test_trust_approved_law_change_is_accepted_by_verify(tmp_path):
    _hub, work, _law, _back = _relaxed_history(tmp_path, "\n\nApproved-by: zach")
    for args in ((), ("--no-cache",)):
        rc, problems = verify_json(work, *args)
        assert rc == 0 and problems == [], problems


def test_trust_approved_law_change_is_accepted_by_the_hub(tmp_path):
    hub, work, _law, back = _relaxed_history(tmp_path, "\n\nApproved-by: zach")
    res = git(work, "push", "-q", "origin", "main", check=False)
    assert res.returncode == 0, res.stderr
    assert sha(hub, "main") == back


def _inject(repo, marker) -> None:
    """Add a command to the tracked hook shims (creating them if they are not tracked)."""
    for name in ("pre-commit", "commit-msg"):
        path = repo / ".githooks" / name
        path.parent.mkdir(exist_ok=True)
        lines = path.read_text().splitlines(keepends=True) if path.exists() else ["#!/bin/sh\n"]
        lines.insert(1, f"touch '{marker}'\nexit 0\n")
        path.write_text("".join(lines))
        path.chmod(0o755)


def test_trust_pulled_hook_change_never_runs(tmp_path, repo):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    gs(clone, "init")                                    # this clone installs its hooks
    marker = tmp_path / "injected-hook-ran"
    _inject(repo, marker)
    sneak(repo, "hooks: faster checks\n\nApproved-by: zach", ".githooks")
    assert not marker.exists()
    res = git(clone, "pull", "-q", "--ff-only", check=False)
    assert res.returncode == 0, f"setup: pull failed:\n{out(res)}"
    assert "touch" in (clone / ".githooks" / "pre-commit").read_text()
    edit_state(clone, "alice", state="deep_work")
    before = sha(clone)
    res = git(clone, "commit", "-q", "-am", "@alice: [STATE:deep_work] skip", check=False)
    assert not marker.exists(), "a hook shim pulled from another clone ran on this clone"
    assert res.returncode != 0 and "[illegal-transition]" in res.stderr, out(res)
    assert sha(clone) == before
