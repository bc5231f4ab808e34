"""Worktrees of one repository are first-class: each agent in its own worktree, with its own
HEAD, index, lock and caches (git keeps them per worktree), the hooks common to all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import git, gitstate, set_state_line

from hubs import hub_and_clones


def worktree(base: Path, name: str) -> Path:
    where = base.parent / name
    git(base, "worktree", "add", "-q", "-b", name, str(where), "origin/main")
    git(where, "branch", "-q", "--set-upstream-to=origin/main")
    return where


def test_worktrees_keep_their_own_state_and_share_the_hooks(tmp_path):
    _hub, (base,) = hub_and_clones(tmp_path, 1)
    w1 = worktree(base, "w1")
    assert git(w1, "rev-parse", "--git-dir").stdout != git(base, "rev-parse", "--git-dir").stdout
    assert git(w1, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout == \
        git(base, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout
    w1_head = git(w1, "rev-parse", "HEAD").stdout
    assert gitstate(w1, "spawn", "alice").returncode == 0
    # the move landed on the team line (main, the base worktree's branch, which followed);
    # the worktree's own branch did not move
    assert "@alice: [STATE:bootstrap]" in git(base, "log", "-1", "--format=%s").stdout
    assert git(base, "status", "--porcelain").stdout == ""
    assert git(w1, "rev-parse", "HEAD").stdout == w1_head
    # gitstate's caches live in this worktree's own git dir
    assert (Path(git(w1, "rev-parse", "--absolute-git-dir").stdout.strip()) / "gitstate").is_dir()
    git(w1, "merge", "-q", "--ff-only", "main")                   # the branch catches up
    set_state_line(w1, "alice", "state", "deep_work")            # illegal: bootstrap -> deep_work
    res = git(w1, "commit", "-qam", "@alice: [STATE:deep_work] skip", check=False)
    assert res.returncode != 0 and "illegal-transition" in res.stderr   # the common hooks ran
    git(w1, "checkout", "-q", "--", ".")


def test_two_worktrees_move_their_agents_concurrently(tmp_path):
    hub, (base,) = hub_and_clones(tmp_path, 1)
    places = [worktree(base, "w1"), worktree(base, "w2")]
    script = ("import sys\nfrom gitstate.cli.main import main\n"
              "agent = sys.argv[1]\n"
              "for args in (['spawn', agent], ['transition', agent, 'inbox'],"
              " ['transition', agent, 'distill'], ['transition', agent, 'idle'],"
              " ['transition', agent, 'inbox']):\n"
              "    code = main([*args, '--push'])\n"
              "    if code: sys.exit(code)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, f"agent-{i}"], cwd=p,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, p in enumerate(places)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    subjects = git(hub, "log", "--format=%s", "main").stdout
    assert subjects.count("@agent-0: [STATE:") == 5 and subjects.count("@agent-1: [STATE:") == 5
    git(base, "pull", "-q", "--ff-only")
    res = gitstate(base, "verify", "--no-cache")
    assert res.returncode == 0, res.stdout
