"""The resident judge (gitstate/doors/resident.py): the commit hooks' Python kept running between
commits. The first state commit starts it; the next are judged by it with the verdicts, words,
exit codes and untouched work trees of an in-process hook; it serves only a client that would
run the same gitstate, and it goes away when its socket does."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import git, gitstate, managed_repo, set_state_line, snapshot, walk

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")


@pytest.fixture
def judged(monkeypatch):
    """Commits made here may start a judge (the suite's default is none); every judge started
    is stopped at the end."""
    monkeypatch.setenv("GITSTATE_JUDGE", "1")
    monkeypatch.setenv("GITSTATE_JUDGE_IDLE", "60")
    started: list[Path] = []
    yield started
    for folder in started:
        status = folder / ".git" / "gitstate" / "judge.json"
        if status.exists():
            _stop(json.loads(status.read_text())["pid"])


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in _proc_state(pid)


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "Z"


def until(what, seconds: float = 20.0):
    """`what()` once it is true: the judge starts and stops on its own, in the background
    (bounded: a judge that never comes fails the test)."""
    end = time.monotonic() + seconds
    while True:
        found = what()
        if found or time.monotonic() > end:
            return found
        time.sleep(0.02)


def status(repo: Path) -> dict | None:
    path = repo / ".git" / "gitstate" / "judge.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def move(repo: Path, agent: str, state: str, message: str | None = None):
    set_state_line(repo, agent, "state", state)
    return git(repo, "commit", "-qam", message or f"@{agent}: [STATE:{state}] on",
               check=False)


def started_judge(repo: Path, judged: list) -> dict:
    """A judge started by one state commit of alice's, and waited for."""
    judged.append(repo)
    assert move(repo, "alice", "inbox").returncode == 0
    found = until(lambda: status(repo))
    assert found and found["served"] == 0 and _alive(found["pid"]), found
    assert (repo / ".git" / "gitstate" / "judge.sock").is_socket()
    return found


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = managed_repo(tmp_path / "repo")
    assert gitstate(repo, "spawn", "alice").returncode == 0
    return repo


def test_the_first_state_commit_starts_a_judge_and_the_next_are_judged_by_it(repo, judged):
    first = started_judge(repo, judged)
    assert move(repo, "alice", "distill").returncode == 0
    assert move(repo, "alice", "deep_work").returncode == 0
    after = status(repo)
    assert after["pid"] == first["pid"] and after["served"] == 2
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@alice: [STATE:deep_work] on"
    assert gitstate(repo, "verify").returncode == 0
    [said] = [f for f in json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
              if f["check"] == "judge"]
    assert f"a resident judge runs (pid {first['pid']}," in said["detail"]
    assert "2 commit hooks judged" in said["detail"]
    # an ordinary commit never reaches Python, nor the judge
    (repo / "notes.txt").write_text("x\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "notes")
    assert status(repo)["served"] == 2


# Each commit of alice's, from bootstrap: legal, and refused in the ways a hook refuses.
CASES = [
    ("inbox", "@alice: [STATE:inbox] reading"),
    ("dead", "@alice: [STATE:dead] gone"),                       # missing final_summary
    ("deep_work", "@alice: [STATE:deep_work] skipping"),         # illegal transition
    ("inbox", "@alice: [STATE:distill] a tag that lies"),        # tag and file disagree
    ("inbox", "@bob: [STATE:inbox] not bob's file"),              # another agent's prefix
    ("inbox", "reading, untagged"),                              # a move without a tag
    ("inbox", "@alice: [STATE:inbox] x\n\nApproved-by: alice"),  # an agent's own approval
]


@pytest.mark.parametrize("state,message", CASES, ids=[m.split("\n")[0] for _, m in CASES])
def test_the_judge_says_what_the_in_process_hook_says(tmp_path, judged, monkeypatch,
                                                      state, message):
    base = managed_repo(tmp_path / "base")
    assert gitstate(base, "spawn", "alice").returncode == 0
    here, there = tmp_path / "judged", tmp_path / "in-process"
    for copy in (here, there):
        shutil.copytree(base, copy, symlinks=True)
    started_judge(here, judged)
    git(here, "reset", "-q", "--hard", "HEAD~1")       # back to the copies' common start
    said = {}
    for copy in (here, there):
        monkeypatch.setenv("GITSTATE_JUDGE", "1" if copy == here else "0")
        set_state_line(copy, "alice", "state", state)
        before = snapshot(copy)
        res = git(copy, "commit", "-qam", message, check=False)
        said[copy] = (res.returncode, res.stdout, res.stderr.replace(str(copy), "REPO"),
                      git(copy, "log", "-1", "--format=%s%n%b").stdout)
        if res.returncode != 0:
            assert snapshot(copy) == before         # a refused commit leaves all as it was
    assert said[here] == said[there]
    assert status(here)["served"] >= 1


def test_a_killed_judge_is_replaced_and_no_commit_goes_unjudged(repo, judged):
    first = started_judge(repo, judged)
    os.kill(first["pid"], signal.SIGKILL)
    assert until(lambda: not _alive(first["pid"]))
    assert (repo / ".git" / "gitstate" / "judge.sock").exists()     # left behind
    # refused as ever: the client finds no judge answering and judges in Python
    set_state_line(repo, "alice", "state", "deep_work")
    before = snapshot(repo)
    res = git(repo, "commit", "-qam", "@alice: [STATE:deep_work] on", check=False)
    assert res.returncode == 1 and "[illegal-transition]" in res.stderr
    assert snapshot(repo) == before
    second = until(lambda: (s := status(repo)) and s["pid"] != first["pid"] and s)
    assert second and _alive(second["pid"])
    git(repo, "checkout", "-q", "--", ".")
    assert move(repo, "alice", "distill").returncode == 0
    assert status(repo)["served"] == 1


def test_a_client_that_would_run_another_gitstate_is_not_served(repo, judged, monkeypatch,
                                                                 tmp_path):
    started_judge(repo, judged)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))   # another module path
    set_state_line(repo, "alice", "state", "deep_work")
    before = snapshot(repo)
    res = git(repo, "commit", "-qam", "@alice: [STATE:deep_work] on", check=False)
    assert res.returncode == 1 and "[illegal-transition]" in res.stderr   # judged in Python
    assert snapshot(repo) == before and status(repo)["served"] == 0
    monkeypatch.delenv("PYTHONPATH")
    git(repo, "checkout", "-q", "--", ".")
    assert move(repo, "alice", "distill").returncode == 0
    assert status(repo)["served"] == 1


def test_the_judge_sees_the_commits_own_environment(repo, judged, monkeypatch):
    """The committer's clock is the commit's: a freeze stamped later than its commit is
    refused by the judge as by the hook (GIT_COMMITTER_DATE of this commit, not the judge's)."""
    started_judge(repo, judged)
    walk(repo, "alice", "distill")
    fs = repo / "data" / "freeze-states" / "alice.md"
    res = gitstate(repo, "freeze", "alice", "--wake-if", "asked")
    assert res.returncode != 0 and fs.exists()                  # the template, to fill in
    text = fs.read_text()
    for line in text.splitlines():
        if line.strip().startswith(("- (", "(")):
            text = text.replace(line, "- written")
    fs.write_text(text.replace("frozen_at: null", "frozen_at: '2030-01-01T00:00:00Z'"))
    set_state_line(repo, "alice", "freeze_state", "data/freeze-states/alice.md")
    set_state_line(repo, "alice", "state", "frozen")
    git(repo, "add", "-A")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2029-12-31T00:00:00Z")
    res = git(repo, "commit", "-qm", "@alice: [STATE:frozen] resting", check=False)
    assert res.returncode == 1 and "is later than this freeze" in res.stderr, res.stderr
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-01-01T00:00:00Z")
    res = git(repo, "commit", "-qm", "@alice: [STATE:frozen] resting", check=False)
    assert res.returncode == 0, res.stderr
    assert status(repo)["served"] >= 2


def test_the_judge_goes_when_its_socket_goes(repo, judged):
    first = started_judge(repo, judged)
    (repo / ".git" / "gitstate" / "judge.sock").unlink()
    assert until(lambda: not _alive(first["pid"]))
    assert not (repo / ".git" / "gitstate" / "judge.json").exists()


def test_no_judge_where_the_config_says_so(repo, judged):
    judged.append(repo)
    git(repo, "config", "gitstate.judge", "false")
    os.environ.pop("GITSTATE_PYTHON", None)
    assert move(repo, "alice", "inbox").returncode == 0
    assert move(repo, "alice", "distill").returncode == 0
    assert not (repo / ".git" / "gitstate" / "judge.sock").exists()
    assert status(repo) is None
    [said] = [f for f in json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
              if f["check"] == "judge"]
    assert said["detail"].startswith("the resident judge is off")


def _commit_bounded(repo: Path, agent: str, state: str) -> subprocess.CompletedProcess:
    """`move`, bounded: a commit held by a judge fails the test instead of hanging it."""
    set_state_line(repo, agent, "state", state)
    return subprocess.run(["git", "commit", "-qam", f"@{agent}: [STATE:{state}] on"], cwd=repo,
                          capture_output=True, text=True, timeout=60)


def test_a_stopped_judge_holds_no_commit(repo, judged):
    """A judge stopped (`kill -STOP`, a debugger) answers nobody: a commit that finds it so is
    judged in-process, with the verdict an in-process hook gives, and waits for nothing."""
    first = started_judge(repo, judged)
    os.kill(first["pid"], signal.SIGSTOP)
    try:
        assert until(lambda: _proc_state(first["pid"]) in ("T", "t"))
        assert _commit_bounded(repo, "alice", "distill").returncode == 0
        refused = _commit_bounded(repo, "alice", "dead")           # no final_summary
        assert refused.returncode == 1 and "final_summary" in refused.stderr, refused.stderr
    finally:
        os.kill(first["pid"], signal.SIGCONT)
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "@alice: [STATE:distill] on"
    assert status(repo)["served"] == 0                              # it judged none of them
