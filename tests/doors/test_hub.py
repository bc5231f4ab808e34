"""A bare hub whose pre-receive hook holds every pushed commit to the lifecycle."""

from __future__ import annotations

import os

from conftest import UNHOOKED, git, gitstate, make_repo, moves_on_this_branch, set_state_line, walk


def test_hub_refuses_a_push_that_bypassed_the_local_hooks(tmp_path):
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    res = gitstate(hub, "init", "--server")
    assert res.returncode == 0, res.stderr
    assert (hub / "hooks" / "pre-receive").is_file()

    work = make_repo(tmp_path / "work")
    assert gitstate(work, "init").returncode == 0
    assert gitstate(work, "spawn", "alice").returncode == 0
    walk(work, "alice", "inbox")
    git(work, "remote", "add", "origin", str(hub))
    res = git(work, "push", "-q", "origin", "main", check=False)
    assert res.returncode == 0, res.stderr                     # a lawful history is accepted

    set_state_line(work, "alice", "state", "deep_work")        # illegal: inbox -> deep_work
    git(work, *UNHOOKED, "commit", "-q", "-am", "@alice: [STATE:deep_work] sneaky")
    res = git(work, "push", "-q", "origin", "main", check=False)
    assert res.returncode != 0
    assert "push refused by the hub" in res.stderr and "[illegal-transition]" in res.stderr
    assert "Fix these commits and push again (`gitstate sync`" in res.stderr, res.stderr
    assert "sneaky" not in git(hub, "log", "--format=%s", "main").stdout

    git(work, "reset", "-q", "--hard", "HEAD^")               # fix it and push the legal move
    walk(work, "alice", "distill")
    assert git(work, "push", "-q", "origin", "main", check=False).returncode == 0


def test_server_init_needs_a_bare_repository(repo):
    res = gitstate(repo, "init", "--server")
    assert res.returncode == 2 and "bare" in res.stderr


def test_the_hub_records_when_it_received_each_state_commit_without_python(tmp_path):
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    assert gitstate(hub, "init", "--server").returncode == 0
    shim = (hub / "hooks" / "post-receive").read_text()
    assert "python" not in shim.lower().replace("no python", "") and "gitstate hook" not in shim
    work = make_repo(tmp_path / "work")
    assert gitstate(work, "init").returncode == 0
    assert gitstate(work, "spawn", "alice").returncode == 0
    git(work, "remote", "add", "origin", str(hub))
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "-b", "side")
    with moves_on_this_branch(work, "side"):
        walk(work, "alice", "inbox")
    git(work, "commit", "-q", "--allow-empty", "-m", "plain work")
    git(work, "push", "-q", "origin", "side")                  # a new branch: its own commits
    noted = git(hub, "notes", "--ref=refs/notes/gitstate-received", "list").stdout.split()
    tagged = git(hub, "log", "--format=%H", "--grep=\\[STATE:", "--all").stdout.split()
    assert sorted(noted[1::2]) == sorted(tagged) and len(tagged) == 2   # state commits only
    stamps = {git(hub, "notes", "--ref=refs/notes/gitstate-received", "show", sha).stdout
              .split()[0] for sha in tagged}
    assert stamps == {"received"}


def test_pushes_landing_at_once_each_keep_their_received_record(tmp_path):
    """Sixteen post-receives at the same moment, each for a state commit of its own: every
    commit's reception is recorded (`git notes add` alone would keep only the last writer's)."""
    import subprocess

    from hubs import hub_and_clones
    hub, _ = hub_and_clones(tmp_path, 1)
    tip = git(hub, "rev-parse", "main").stdout.strip()
    tree = git(hub, "rev-parse", "main^{tree}").stdout.strip()
    commits = [git(hub, "commit-tree", tree, "-p", tip, "-m",
                   f"@a{i}: [STATE:bootstrap] spawned").stdout.strip() for i in range(16)]
    zero = "0" * len(tip)
    # as git runs a hook: no identity of the pusher's, none configured on the hub
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    runs = [subprocess.Popen([str(hub / "hooks" / "post-receive")], cwd=hub, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
            for _ in commits]
    for run, commit in zip(runs, commits):
        run.stdin.write(f"{zero} {commit} refs/heads/b-{commit[:8]}\n".encode())
        run.stdin.close()
    assert all(run.wait(timeout=120) == 0 for run in runs)
    for commit in commits:
        said = git(hub, "notes", "--ref=refs/notes/gitstate-received", "show", commit,
                   check=False)
        assert said.returncode == 0 and said.stdout.startswith("received "), commit
    assert git(hub, "for-each-ref", "refs/notes/").stdout.count("\n") == 1


LEGACY_SHIM = """#!/bin/sh
# gitstate-shim: post-receive -- as `gitstate init --server` wrote it before the plain-git one
exec "{python}" -m gitstate hook post-receive
"""


def test_a_post_receive_shim_from_before_records_by_compare_and_swap(tmp_path):
    """A hub whose post-receive still runs gitstate's Python entry: pushes landing at once
    each keep their received record (it once added notes without compare-and-swap), written
    as the hub, as the plain-git shim writes them."""
    import subprocess
    import sys

    from hubs import hub_and_clones
    hub, _ = hub_and_clones(tmp_path, 1)
    hook = hub / "hooks" / "post-receive"
    hook.write_text(LEGACY_SHIM.format(python=sys.executable))
    tip = git(hub, "rev-parse", "main").stdout.strip()
    tree = git(hub, "rev-parse", "main^{tree}").stdout.strip()
    commits = [git(hub, "commit-tree", tree, "-p", tip, "-m",
                   f"@a{i}: [STATE:bootstrap] spawned").stdout.strip() for i in range(8)]
    zero = "0" * len(tip)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    runs = [subprocess.Popen([str(hook)], cwd=hub, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in commits]
    for run, commit in zip(runs, commits):
        run.stdin.write(f"{zero} {commit} refs/heads/b-{commit[:8]}\n".encode())
        run.stdin.close()
    assert all(run.wait(timeout=120) == 0 for run in runs)
    for commit in commits:
        said = git(hub, "notes", "--ref=refs/notes/gitstate-received", "show", commit,
                   check=False)
        assert said.returncode == 0 and said.stdout.startswith("received "), commit
    assert git(hub, "log", "-1", "--format=%an", "refs/notes/gitstate-received").stdout \
        .strip() == "gitstate hub"
    assert git(hub, "for-each-ref", "refs/notes/").stdout.count("\n") == 1
