"""The line rule: on the team line a merge carries work only, so merges cannot revive, fork or
invent an agent; a move reaches the line by itself. (Before, merges were judged by what each
parent's line had done; the rule ids here were `merge-state`, `divergent` and a merged
`role-max`, all now `merge-moves`.)

(The plain `git merge` of two architects, refused by the local guard, is in
test_trust_git_commands.py with the other commands that move a branch.)
"""

from __future__ import annotations

from conftest import git, gitstate, state_path, walk
from trusthelp import (alice_in_inbox, assert_push_refused, assert_verify_flags, cached_hub,
                       commit_tree, divergent_fork, gs, move_branch, nohooks, out, push_lawful,
                       sha, tree_with, two_architects, verify_json)


def _ordinary(repo, name: str) -> None:
    (repo / name).write_text(f"{name}\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"work: {name}")


# --- (i) a merge that takes an older state file revives a dead agent ----------------------

def _revival_fork(work) -> None:
    """alice dies on main; `side` (forked while alice was in distill) has ordinary work.
    Leaves main checked out and `git merge --no-commit side` under way."""
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox", "distill")
    git(work, "branch", "side")
    gs(work, "bury", "alice", "--summary", "done")
    git(work, "checkout", "-q", "side")
    _ordinary(work, "side.txt")
    git(work, "checkout", "-q", "main")
    nohooks(work, "merge", "-q", "--no-ff", "--no-commit", "side")
    git(work, "checkout", "side", "--", "agent/alice/_state.md")     # the older version
    assert "state: distill" in state_path(work, "alice").read_text()


def test_trust_merge_reviving_a_dead_agent_is_refused_by_the_hook(repo):
    _revival_fork(repo)
    before = sha(repo)
    res = git(repo, "commit", "-q", "--no-edit", check=False)
    assert res.returncode != 0, f"the merge that revives alice was committed:\n{out(res)}"
    assert "[merge-moves]" in res.stderr, res.stderr
    assert sha(repo) == before
    assert (repo / ".git" / "MERGE_HEAD").exists()


def _revival_base(work):
    _revival_fork(work)
    push_lawful(work)       # alice's death is on the hub


def _revival_merged(tmp_path):
    hub, work = cached_hub(tmp_path, "revival", _revival_base)
    nohooks(work, "commit", "-q", "--no-verify", "--no-edit")
    merge = sha(work)
    assert len(git(work, "rev-list", "--parents", "-n", "1", merge).stdout.split()) == 3
    return hub, work, merge


def test_trust_merge_reviving_a_dead_agent_is_caught_by_verify(tmp_path):
    _hub, work, merge = _revival_merged(tmp_path)
    assert_verify_flags(work, (merge, "merge-moves"))


def test_trust_merge_reviving_a_dead_agent_is_refused_by_the_hub(tmp_path):
    hub, work, _merge = _revival_merged(tmp_path)
    assert_push_refused(work, hub, "merge-moves")


# --- (ii) two branches each spawn the holder of a max-1 role ------------------------------

def _architects_base(work):
    two_architects(work)
    push_lawful(work)


def _architects_merged(tmp_path):
    hub, work = cached_hub(tmp_path, "two-architects", _architects_base)
    nohooks(work, "merge", "-q", "--no-edit", "side")
    merge = sha(work)
    assert (work / "agent" / "a1").is_dir() and (work / "agent" / "a2").is_dir()
    return hub, work, merge


def test_trust_merged_role_holders_are_caught_by_verify(tmp_path):
    _hub, work, merge = _architects_merged(tmp_path)
    assert_verify_flags(work, (merge, "merge-moves"))


def test_trust_merged_role_holders_are_caught_by_check(tmp_path):
    # `check` judges the work tree as it stands: two living architects
    _hub, work, _merge = _architects_merged(tmp_path)
    res = gitstate(work, "check")
    assert res.returncode == 1 and "[role-max]" in res.stdout, out(res)


def test_trust_merged_role_holders_are_refused_by_the_hub(tmp_path):
    hub, work, _merge = _architects_merged(tmp_path)
    assert_push_refused(work, hub, "merge-moves")


# --- (iii) both parents moved the same agent ----------------------------------------------

def test_trust_divergent_merge_is_refused_by_git_merge(repo):
    divergent_fork(repo)
    before = sha(repo)
    res = git(repo, "merge", "--no-edit", "side", check=False)
    assert sha(repo, "refs/heads/main") == before, f"the divergent merge landed:\n{out(res)}"
    assert res.returncode != 0, out(res)
    assert "[merge-moves]" in out(res) or "CONFLICT" in out(res), out(res)


def test_trust_a_merge_that_keeps_the_lines_state_is_work_and_the_sides_move_is_no_move(repo):
    """`-s ours` keeps every state file as the team line has it: the merge is work, and the
    move the side branch made (its `thread`) never reaches the line or its views."""
    divergent_fork(repo)
    res = git(repo, "merge", "-s", "ours", "--no-edit", "side", check=False)
    assert res.returncode == 0, out(res)
    assert "side-work" not in state_path(repo, "alice").read_text()
    rc, problems = verify_json(repo, "--no-cache")
    assert rc == 0 and problems == [], problems
    log = gitstate(repo, "log", "alice", "--json")
    assert "progress" not in log.stdout and log.returncode == 0, out(log)


def _divergent_base(work):
    divergent_fork(work)
    push_lawful(work, "main", "side")


def _divergent_merged(tmp_path):
    hub, work = cached_hub(tmp_path, "divergent", _divergent_base)
    nohooks(work, "merge", "-q", "-X", "theirs", "--no-edit", "side")
    assert "side-work" in state_path(work, "alice").read_text()
    return hub, work, sha(work)


def test_trust_divergent_merge_is_caught_by_verify(tmp_path):
    _hub, work, merge = _divergent_merged(tmp_path)
    assert_verify_flags(work, (merge, "merge-moves"))


def test_trust_divergent_merge_is_refused_by_the_hub(tmp_path):
    hub, work, _merge = _divergent_merged(tmp_path)
    assert_push_refused(work, hub, "merge-moves")


# --- (iv) a crafted parentless commit merged in as second parent --------------------------

ROOT_RULES = {"merge-moves"}   # the root is off the line: the merge brings x onto it


def _crafted_root(tmp_path):
    """x appears in deep_work out of nowhere: a parentless commit holding only its state file,
    merged into main as second parent (all by plumbing)."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    x = state_path(work, "alice").read_text().replace("agent: alice", "agent: x") \
        .replace("state: inbox", "state: deep_work")
    files = {"agent/x/_state.md": x}
    root = commit_tree(work, tree_with(work, None, files), "@x: [STATE:deep_work] from nowhere")
    merge = commit_tree(work, tree_with(work, "HEAD", files), "Merge history of x", "HEAD", root)
    move_branch(work, merge)
    assert "state: deep_work" in state_path(work, "x").read_text()
    return hub, work, root, merge


def test_trust_crafted_root_merge_is_caught_by_verify(tmp_path):
    _hub, work, root, merge = _crafted_root(tmp_path)
    assert_verify_flags(work, ({root, merge}, ROOT_RULES))


def test_trust_crafted_root_merge_is_refused_by_the_hub(tmp_path):
    hub, work, _root, _merge = _crafted_root(tmp_path)
    assert_push_refused(work, hub, ROOT_RULES)


# --- and a lawful merge still passes every door -------------------------------------------

def test_trust_lawful_merge_passes_every_door(tmp_path):
    """The line rule's lawful merge: `side` did work, and alice's move (inbox -> distill) was
    landed on the team line by itself; the merge carries the work, and the hook, verify and
    the hub all accept it. (Before the rule, the move rode inside the merge.)"""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    git(work, "checkout", "-q", "-b", "side")
    _ordinary(work, "side.txt")
    git(work, "checkout", "-q", "main")
    walk(work, "alice", "distill")
    _ordinary(work, "main.txt")
    res = git(work, "merge", "--no-edit", "side", check=False)
    assert res.returncode == 0, out(res)
    assert "state: distill" in state_path(work, "alice").read_text()
    assert (work / "side.txt").exists()
    for args in ((), ("--no-cache",)):
        rc, problems = verify_json(work, *args)
        assert rc == 0 and problems == [], problems
    res = git(work, "push", "-q", "origin", "main", check=False)
    assert res.returncode == 0, res.stderr
