"""Racing writers and killed commands never corrupt the index or lose a commit."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from conftest import git, gitstate, state_path, walk
from gitstate.git.atomic import Plan, commit_atomically
from gitstate.git.runner import Git


def start(repo, *args):
    return subprocess.Popen([sys.executable, "-m", "gitstate", *args], cwd=repo,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def assert_healthy(repo):
    assert git(repo, "fsck", "--no-progress", check=False).returncode == 0
    git(repo, "ls-files", "-s")                       # the index is readable
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""  # index == HEAD


def test_a_moved_head_is_detected_and_the_move_rejudged(repo):
    """The compare-and-swap on HEAD: if someone commits meanwhile, nothing is lost."""
    g = Git(repo)
    seen_parents = []

    def prepare(parent):
        seen_parents.append(parent)
        if len(seen_parents) == 1:   # another writer lands between our read and our swap
            (repo / "other.txt").write_text("theirs\n")
            git(repo, "add", "other.txt")
            git(repo, "commit", "-q", "-m", "someone else")
        return Plan({"mine.txt": b"mine\n"}, "my commit\n", with_staged=False)

    result = commit_atomically(g, repo, prepare)
    assert len(seen_parents) == 2 and seen_parents[0] != seen_parents[1]
    assert result.parent == seen_parents[1]
    log = git(repo, "log", "--format=%s", "-2").stdout.split("\n")
    assert log[:2] == ["my commit", "someone else"]
    assert git(repo, "show", "HEAD:other.txt").stdout == "theirs\n"
    assert_healthy(repo)


def test_racing_transitions_of_different_agents_all_land(repo):
    agents = ["a1", "a2", "a3", "a4"]
    for a in agents:
        assert gitstate(repo, "spawn", a).returncode == 0
    base = int(git(repo, "rev-list", "--count", "HEAD").stdout)
    for target in ("inbox", "distill"):
        procs = [start(repo, "transition", a, target) for a in agents]
        for p in procs:
            out, err = p.communicate()
            assert p.returncode == 0, err
    assert int(git(repo, "rev-list", "--count", "HEAD").stdout) == base + 2 * len(agents)
    assert git(repo, "rev-list", "--merges", "HEAD").stdout == ""
    for a in agents:
        assert "state: distill" in git(repo, "show", f"HEAD:agent/{a}/_state.md").stdout
    assert_healthy(repo)


def test_racing_moves_of_one_agent_one_lands_the_other_is_rejudged(repo):
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox", "distill")
    before = int(git(repo, "rev-list", "--count", "HEAD").stdout)
    procs = [start(repo, "transition", "alice", s) for s in ("deep_work", "idle")]
    results = [(p.wait(), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 1], results          # one landed; the other, judged again, refused
    refused = next(err for code, err in results if code == 1)
    assert "[illegal-transition]" in refused
    assert int(git(repo, "rev-list", "--count", "HEAD").stdout) == before + 1
    assert_healthy(repo)


def test_a_killed_transition_leaves_a_valid_repository(repo):
    assert gitstate(repo, "spawn", "alice").returncode == 0
    states = ["inbox", "distill", "deep_work", "inbox", "distill", "idle", "inbox"]
    for i, target in enumerate(states):
        p = start(repo, "transition", "alice", target)
        time.sleep(0.02 * (i % 5))      # kill at varying points; every outcome must be valid
        p.send_signal(signal.SIGKILL)
        p.wait()
        assert git(repo, "fsck", "--no-progress", check=False).returncode == 0
        # any gitstate command finishes a commit that was published but not yet synced
        assert gitstate(repo, "status").returncode == 0
        head_state = git(repo, "show", "HEAD:agent/alice/_state.md").stdout
        current = next(ln.split(": ", 1)[1] for ln in head_state.splitlines()
                       if ln.startswith("state:"))
        if current != target:            # it died before publishing: finish the move now
            res = gitstate(repo, "transition", "alice", target)
            assert res.returncode == 0, res.stderr
        assert f"state: {target}" in state_path(repo, "alice").read_text()
        assert_healthy(repo)


def test_a_commit_interrupted_after_publishing_is_finished_by_the_next_command(repo, monkeypatch):
    import pytest
    from gitstate.git import atomic as commit_mod
    from gitstate.moves.agent import transition
    from gitstate.git.repo import open_managed

    assert gitstate(repo, "spawn", "alice").returncode == 0

    def die(*args, **kwargs):
        raise KeyboardInterrupt("killed between publishing and syncing the index")

    monkeypatch.setattr(commit_mod, "_finish", die)
    with pytest.raises(KeyboardInterrupt):
        transition(open_managed(str(repo)), "alice", "inbox")
    monkeypatch.undo()
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    assert git(repo, "diff", "--cached", "--name-only").stdout == "agent/alice/_state.md\n"
    assert (repo / ".git" / "gitstate" / "pending.json").is_file()

    assert gitstate(repo, "status").returncode == 0          # finishes the interrupted commit
    assert_healthy(repo)
    assert "state: inbox" in state_path(repo, "alice").read_text()
    assert not (repo / ".git" / "gitstate" / "pending.json").exists()
    assert gitstate(repo, "transition", "alice", "distill").returncode == 0


def test_a_commit_interrupted_before_publishing_leaves_nothing(repo, monkeypatch):
    import pytest
    from gitstate.git import atomic as commit_mod
    from gitstate.moves.agent import transition
    from gitstate.git.repo import open_managed

    assert gitstate(repo, "spawn", "alice").returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout
    real_write = commit_mod._write_journal

    def write_then_die(*args):
        real_write(*args)
        raise KeyboardInterrupt("killed before the swap")

    monkeypatch.setattr(commit_mod, "_write_journal", write_then_die)
    with pytest.raises(KeyboardInterrupt):
        transition(open_managed(str(repo)), "alice", "inbox")
    monkeypatch.undo()
    assert gitstate(repo, "status").returncode == 0
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert "state: bootstrap" in state_path(repo, "alice").read_text()
    assert_healthy(repo)


def test_nothing_is_ever_written_inside_git(repo):
    """The last line behind the layout check: no path through a .git folder, by name or by a
    link."""
    import os

    import pytest

    from gitstate.errors import GitstateError
    from gitstate.git.atomic import safe_path
    for bad in (".git/shallow", ".GIT/x", "a/.git/x", "a/.git./x", "git~1/x", "../x", "/etc/x"):
        with pytest.raises(GitstateError):
            safe_path(repo, bad)
    os.symlink(".git", repo / "agent-link")
    with pytest.raises(GitstateError, match="into .git"):
        safe_path(repo, "agent-link/shallow")
    assert safe_path(repo, "agent/a/_state.md") == repo / "agent" / "a" / "_state.md"


def test_a_stale_head_lock_is_said_not_retried(repo):
    """HEAD unmoved but update-ref refused: git's words and what to do, at once."""
    assert gitstate(repo, "spawn", "alice").returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    lock = repo / ".git" / "HEAD.lock"
    lock.write_text("")
    t = time.perf_counter()
    res = gitstate(repo, "transition", "alice", "inbox")
    assert time.perf_counter() - t < 5
    assert res.returncode == 1 and "HEAD.lock" in res.stderr and "remove" in res.stderr
    assert "kept moving" not in res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout.strip() == head
    assert not (repo / ".git" / "gitstate" / "pending.json").exists()
    lock.unlink()
    assert gitstate(repo, "transition", "alice", "inbox").returncode == 0
    assert_healthy(repo)


def test_an_index_lock_after_publishing_keeps_the_journal_and_says_so(repo, monkeypatch):
    """The index lock appears between the swap of HEAD and the index update (a git command
    started meanwhile and was killed): the move says what happened, keeps its journal, and
    once the lock is gone any command (here a plain `git commit`) finishes the step."""
    import pytest

    from gitstate.git import atomic
    from gitstate.git.atomic import IndexLocked
    assert gitstate(repo, "spawn", "alice").returncode == 0
    monkeypatch.setattr(atomic, "INDEX_WAIT", 0.2)
    real_finish = atomic._finish

    def lock_then_finish(git_, top, entries, datas, gdir, sha, work=None):
        (gdir / "index.lock").write_text("")
        real_finish(git_, top, entries, datas, gdir, sha, work)

    monkeypatch.setattr(atomic, "_finish", lock_then_finish)
    text = state_path(repo, "alice").read_text().replace("state: bootstrap", "state: inbox")

    def prepare(parent):
        return Plan({"agent/alice/_state.md": text.encode()}, "@alice: [STATE:inbox] x\n",
                    with_staged=False)

    with pytest.raises(IndexLocked) as info:
        commit_atomically(Git(repo), repo, prepare)
    assert "index.lock" in str(info.value) and "journal is kept" in str(info.value)
    assert (repo / ".git" / "gitstate" / "pending.json").exists()
    (repo / ".git" / "index.lock").unlink()
    (repo / "work.txt").write_text("work\n")
    git(repo, "add", "work.txt")
    res = git(repo, "commit", "-q", "-m", "ordinary work", check=False)
    assert res.returncode == 0, res.stderr
    assert "finished an interrupted commit" in res.stderr
    assert not (repo / ".git" / "gitstate" / "pending.json").exists()
    assert_healthy(repo)
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout
