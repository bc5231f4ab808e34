"""Every git command that can move a branch is
judged before the branch moves. An illegal result fails the command, names the rule, and
leaves the branch where it was. One test per command."""

from __future__ import annotations

from conftest import git, walk
from trusthelp import (assert_local_refusal, edit_state, gs, run_git, sha, sneak_state,
                       two_architects)


def test_trust_git_commit_is_judged(repo):
    gs(repo, "spawn", "alice")
    edit_state(repo, "alice", state="deep_work")
    before = sha(repo, "main")
    res = git(repo, "commit", "-q", "-am", "@alice: [STATE:deep_work] skip", check=False)
    assert_local_refusal(repo, res, "illegal-transition", "main", before)


def test_trust_git_commit_amend_is_judged(repo):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    edit_state(repo, "alice", state="deep_work")
    before = sha(repo, "main")
    res = git(repo, "commit", "-q", "--amend", "-a", "-m", "@alice: [STATE:deep_work] skip",
              check=False)
    assert_local_refusal(repo, res, "illegal-transition", "main", before)   # bootstrap -> deep_work


def test_trust_git_merge_is_judged(repo):
    two_architects(repo)
    before = sha(repo, "main")
    res = git(repo, "merge", "--no-edit", "side", check=False)
    # the line rule: a2's birth would reach the team line inside a merge (landed by itself,
    # it is refused as `role-max`: test_trust_git_cherry_pick_is_judged)
    assert_local_refusal(repo, res, "merge-moves", "main", before)


def test_trust_git_revert_is_judged(repo):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox", "distill")
    gs(repo, "bury", "alice", "--summary", "done")
    before = sha(repo, "main")
    res = git(repo, "revert", "--no-edit", "HEAD", check=False)     # alice back to distill
    assert_local_refusal(repo, res, "terminal", "main", before)


def test_trust_git_cherry_pick_is_judged(repo):
    two_architects(repo)
    before = sha(repo, "main")
    res = git(repo, "cherry-pick", "side", check=False)
    assert_local_refusal(repo, res, "role-max", "main", before)


def test_trust_git_rebase_is_judged(repo):
    two_architects(repo)
    git(repo, "checkout", "-q", "side")
    before = sha(repo, "side")
    res = git(repo, "rebase", "main", check=False)
    assert_local_refusal(repo, res, "role-max", "side", before)


def test_trust_git_rebase_interactive_fixup_is_judged(repo):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox", "distill")
    before = sha(repo, "main")
    res = run_git(repo, "rebase", "-i", "HEAD~2", check=False,
                  env={"GIT_SEQUENCE_EDITOR": "sed -i -e '2s/^pick/fixup/'", "GIT_EDITOR": "true"})
    # one commit, bootstrap -> distill, under alice's [STATE:inbox] tag
    assert_local_refusal(repo, res, ["tag-mismatch", "illegal-transition"], "main", before)


def test_trust_git_am_is_judged(repo, tmp_path):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    git(repo, "checkout", "-q", "-b", "evil")
    sneak_state(repo, "alice", "@alice: [STATE:deep_work] skip", state="deep_work")
    patch = tmp_path / "skip.patch"
    patch.write_text(git(repo, "format-patch", "-1", "--stdout", "evil").stdout)
    git(repo, "checkout", "-q", "main")
    before = sha(repo, "main")
    res = git(repo, "am", str(patch), check=False)
    assert_local_refusal(repo, res, "illegal-transition", "main", before)


def test_trust_git_pull_rebase_is_judged(repo, tmp_path):
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    gs(clone, "init")
    sneak_state(repo, "alice", "@alice: [STATE:deep_work] skip", state="deep_work")  # upstream
    (clone / "mine.txt").write_text("mine\n")
    git(clone, "add", "mine.txt")
    git(clone, "commit", "-q", "-m", "work: mine")
    before = sha(clone, "main")
    res = git(clone, "pull", "--rebase", "-q", check=False)
    assert_local_refusal(clone, res, "illegal-transition", "main", before)


def test_trust_lawful_history_moves_freely(repo):
    """The guard judges; it does not get in the way: ordinary and lawful work still merges,
    cherry-picks, reverts and rebases."""
    gs(repo, "spawn", "alice")
    git(repo, "checkout", "-q", "-b", "side")
    walk(repo, "alice", "inbox")
    (repo / "s.txt").write_text("s\n")
    git(repo, "add", "s.txt")
    git(repo, "commit", "-q", "-m", "work: s")
    git(repo, "checkout", "-q", "main")
    (repo / "m.txt").write_text("m\n")
    git(repo, "add", "m.txt")
    git(repo, "commit", "-q", "-m", "work: m")
    git(repo, "cherry-pick", "side")                     # ordinary work
    git(repo, "revert", "--no-edit", "HEAD")             # and taking it back
    git(repo, "checkout", "-q", "side")
    git(repo, "rebase", "-q", "main")                    # alice's move, replayed on main
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "side")        # fast-forward
    assert "state: inbox" in (repo / "agent" / "alice" / "_state.md").read_text()
