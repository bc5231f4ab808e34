"""What the runtime knows, recorded at SessionStart (the runtime's pid and host, the model, the
worktree): once, as one progress commit by gitstate, again only when a fact changes; then
`reap` judges the agent by that process rather than by its silence, and `shutdown` stops it
without anyone setting `--set pid=`. The hook runs as Claude Code runs it: the settings'
command in a shell, started by a process that plays the runtime."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import from_template, git, gitstate, make_repo
from test_claude_code import EVENTS, base, said, start

# The runtime: runs the hook's command in a shell (as Claude Code does), then, with THEN,
# becomes that command (`sleep 60`: a runtime that goes on running).
RUNTIME = """
import os, subprocess, sys
hook, then = sys.argv[1], sys.argv[2:]
res = subprocess.run(["sh", "-c", hook], input=sys.stdin.read(), text=True,
                     capture_output=True)
sys.stdout.write(json.dumps([res.returncode, res.stdout, res.stderr]) + "\\n")
sys.stdout.flush()
if then:
    os.execvp(then[0], then)
""".replace("import os,", "import json, os,")


def session_start(repo: Path, session: str, *then: str, source: str = "startup",
                  env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """SessionStart in a runtime process of its own: (that process, what the model reads);
    the hook's stderr in `LAST_STDERR`."""
    groups = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"][
        EVENTS["session-start"]]
    command = groups[0]["hooks"][0]["command"]
    event = {**base(repo, session, "SessionStart"), "source": source,
             "model": "claude-opus-4-6"}
    full = dict(os.environ, CLAUDE_PROJECT_DIR=str(repo), **(env or {}))
    proc = subprocess.Popen([sys.executable, "-c", RUNTIME, command, *then], cwd=repo,
                            env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(event))
    proc.stdin.close()
    code, out, err = json.loads(proc.stdout.readline())
    assert code == 0, err
    LAST_STDERR[:] = [err]
    return proc, json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() \
        else ""


LAST_STDERR: list[str] = []


def _repo(root: Path, preset: str) -> None:
    repo = make_repo(root / "repo")
    res = gitstate(repo, "init", "--lifecycle", preset, "--runtime", "claude-code")
    assert res.returncode == 0, res.stderr


def repo_of(tmp_path: Path, preset: str = "haak") -> Path:
    return from_template(tmp_path, ("runtime-facts", preset), lambda r: _repo(r, preset)) \
        / "repo"


def front(repo: Path, agent: str) -> str:
    return git(repo, "show", f"HEAD:agent/{agent}/_state.md").stdout


def subjects(repo: Path, since: str) -> list[str]:
    return git(repo, "log", "--format=%an|%s", f"{since}..HEAD").stdout.splitlines()


def ago(minutes: int) -> str:
    return f"@{int(time.time()) - minutes * 60} +0000"


def test_session_start_records_the_runtimes_facts_once(tmp_path):
    repo = repo_of(tmp_path)
    assert gitstate(repo, "spawn", "alice", "--session", "s1").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    first, told = session_start(repo, "s1")
    first.wait()
    host = socket.gethostname()
    [subject] = subjects(repo, tip)
    assert subject.startswith(
        f"gitstate|@alice: [STATE:bootstrap] runtime: pid {first.pid}, host {host}, "
        f"model claude-opus-4-6, worktree {repo}, pid_started "), subject
    text = front(repo, "alice")
    for line in (f"pid: {first.pid}", f"host: {host}", "model: claude-opus-4-6",
                 f"worktree: {repo}"):
        assert f"\n{line}\n" in text, text
    assert f"recorded what the runtime knows (pid {first.pid}" in told
    assert "gitstate briefing (started) alice: bootstrap" in told

    # the same runtime process, resumed: the same facts, no commit
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    res = start(repo, "s1", "resume")            # run by the test process itself
    said(res)
    own = git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    pid_now = int(own.split("\npid: ", 1)[1].split("\n", 1)[0])
    assert pid_now == os.getpid()                # the shells skipped: the process above them
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert said(start(repo, "s1", "resume")) and git(
        repo, "rev-parse", "HEAD").stdout.strip() == tip     # same facts again: nothing

    # a new runtime process (a new session of the same agent): one commit, only the process
    second, told = session_start(repo, "s1")
    second.wait()
    [subject] = subjects(repo, tip)
    assert subject.startswith(
        f"gitstate|@alice: [STATE:bootstrap] runtime: pid {second.pid}, pid_started "), subject
    assert f"\npid: {second.pid}\n" in front(repo, "alice")
    assert gitstate(repo, "check").returncode == 0
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_an_ended_agents_session_records_nothing_and_starts(tmp_path):
    """An ended agent's state file is not moved for the runtime's facts; its session starts
    all the same (exit 0, the briefing)."""
    repo = repo_of(tmp_path, "maos")
    assert gitstate(repo, "spawn", "e1", "--role", "engineer", "--session", "s1").returncode == 0
    assert gitstate(repo, "transition", "e1", "running").returncode == 0
    assert gitstate(repo, "transition", "e1", "complete").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    proc, told = session_start(repo, "s1")
    proc.wait()
    assert "e1: complete" in told and git(repo, "rev-parse", "HEAD").stdout.strip() == tip


def test_reap_judges_by_the_recorded_process_not_by_silence(tmp_path):
    """maos fails a working agent silent past its heartbeat (10m); one whose recorded runtime
    still runs on this host is not failed, one whose runtime has ended is."""
    repo = repo_of(tmp_path, "maos")
    then = {"GIT_COMMITTER_DATE": ago(30), "GIT_AUTHOR_DATE": ago(30)}   # silent since
    for agent in ("live", "dead", "quiet"):
        res = subprocess.run([sys.executable, "-m", "gitstate", "spawn", agent, "--role",
                              "engineer", "--session", f"s-{agent}"], cwd=repo,
                             env=dict(os.environ, **then), capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    live, _ = session_start(repo, "s-live", "sleep", "60", env=then)
    try:
        dead, _ = session_start(repo, "s-dead", env=then)
        dead.wait()                                       # its pid is gone now
        host = socket.gethostname()
        assert f"\npid: {live.pid}\nhost: {host}\n" in front(repo, "live")
        assert f"\npid: {dead.pid}\n" in front(repo, "dead")
        res = gitstate(repo, "reap")
        assert res.returncode == 0, res.stderr
        # running since its SessionStart (maos's `runtime:` table), failed once its process is gone
        assert f"dead: running -> failed (process {dead.pid} on {host} is gone)" in res.stdout
        assert "quiet: pending -> failed (no heartbeat for 30m" in res.stdout
        assert "live" not in res.stdout
        assert "state: running" in front(repo, "live")
        assert live.poll() is None                        # reap signals nothing
    finally:
        live.kill()
        live.wait()
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_shutdown_stops_the_recorded_runtime_without_set_pid(tmp_path):
    repo = repo_of(tmp_path, "maos")
    assert gitstate(repo, "spawn", "e1", "--role", "engineer", "--session", "s1").returncode == 0
    assert gitstate(repo, "transition", "e1", "running").returncode == 0
    runtime, _ = session_start(repo, "s1", "sleep", "60")   # the runtime goes on: sleep 60
    try:
        assert f"\npid: {runtime.pid}\n" in front(repo, "e1")
        res = gitstate(repo, "shutdown", "--grace", "5")
        assert res.returncode == 0, res.stderr
        assert f"e1: process {runtime.pid} ended on SIGTERM" in res.stdout
        assert runtime.wait(timeout=30) == -15              # it ended, on SIGTERM
        assert f"stopped: process {runtime.pid} ended on SIGTERM" in front(repo, "e1")
        assert "state: cancelled" in front(repo, "e1")
    finally:
        if runtime.poll() is None:
            runtime.kill()
            runtime.wait()


def test_a_move_the_law_refuses_is_said_and_the_session_starts(tmp_path):
    """haak: every change to a frozen agent needs a human's approval, so the facts of its new
    session are not recorded; the hook says so (to the model and on stderr) and exits 0."""
    repo = repo_of(tmp_path)
    assert gitstate(repo, "spawn", "alice", "--session", "s1").returncode == 0
    assert gitstate(repo, "freeze", "alice", "-m", "pause").returncode != 0   # the template
    sheet = repo / "data" / "freeze-states" / "alice.md"
    sheet.write_text("\n".join("- done" if line.startswith("- (") else
                               "Written." if line.startswith("(") else line
                               for line in sheet.read_text().splitlines()) + "\n")
    res = gitstate(repo, "freeze", "alice", "-m", "pause", "--wake-if", "a human asks")
    assert res.returncode == 0, res.stdout + res.stderr
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    proc, told = session_start(repo, "s1")
    proc.wait()
    assert "were not recorded" in told and "[needs-approval]" in told, told
    assert "[needs-approval]" in LAST_STDERR[0]
    assert "gitstate briefing (started) alice: frozen" in told
    assert git(repo, "rev-parse", "HEAD").stdout.strip() == tip
    assert "\npid:" not in front(repo, "alice")


def test_a_process_on_another_host_leaves_the_heartbeat_to_judge(tmp_path):
    """This host cannot see a process recorded on another (a hub's `watch`, say): the agent is
    judged by its silence as one without a pid is."""
    repo = repo_of(tmp_path, "maos")
    then = {"GIT_COMMITTER_DATE": ago(30), "GIT_AUTHOR_DATE": ago(30)}
    for agent, host in (("far", "elsewhere"), ("near", socket.gethostname())):
        res = subprocess.run([sys.executable, "-m", "gitstate", "spawn", agent, "--role",
                              "engineer", "--set", f"pid={os.getpid()}", "--set",
                              f"host={host}"], cwd=repo, env=dict(os.environ, **then),
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    res = gitstate(repo, "reap")
    assert res.returncode == 0, res.stderr
    assert "far: pending -> failed (no heartbeat for 30m" in res.stdout
    assert "near" not in res.stdout                       # this test's own process runs


@pytest.mark.parametrize("preset", ["haak", "era", "registry", "squad", "maos"])
def test_every_preset_takes_the_runtimes_facts(tmp_path, preset):
    """pid, host, model and worktree are free keys of every preset's state file: the progress
    commit is made from each preset's first state, and `check` and `verify` accept it."""
    repo = repo_of(tmp_path, preset)
    assert gitstate(repo, "spawn", "a1", "--session", "s1").returncode == 0
    proc, told = session_start(repo, "s1")
    proc.wait()
    assert "recorded what the runtime knows" in told, told
    assert git(repo, "log", "-1", "--format=%an|%s").stdout.startswith(
        f"gitstate|@a1: [STATE:{front(repo, 'a1').split('state: ', 1)[1].split()[0]}] "
        f"runtime: pid {proc.pid}, host ")
    assert f"\nworktree: {repo}\n" in front(repo, "a1")
    assert gitstate(repo, "check").returncode == 0
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_a_pid_that_is_another_process_now_is_neither_alive_nor_signalled(tmp_path):
    """The runtime's start is recorded with its pid: a process that has the pid now (the
    system reuses pids; or an agent wrote another's) is not the agent's runtime, so `reap`
    finds the runtime gone and `shutdown` signals nothing."""
    repo = repo_of(tmp_path, "maos")
    assert gitstate(repo, "spawn", "e1", "--role", "engineer", "--session", "s1").returncode == 0
    runtime, _ = session_start(repo, "s1", "sleep", "60")
    other = subprocess.Popen(["sleep", "60"])
    try:
        since = front(repo, "e1").split("\npid_started: ", 1)[1].split("\n", 1)[0]
        host = socket.gethostname()
        res = gitstate(repo, "transition", "e1", "running", "--set", f"pid={other.pid}",
                       "--set", f"pid_started={since}")
        assert res.returncode == 0, res.stderr        # its pid is another process's now
        res = gitstate(repo, "shutdown", "--grace", "2")
        assert res.returncode == 0, res.stderr
        assert other.poll() is None and runtime.poll() is None    # nobody was signalled
        assert f"process {other.pid} had already ended" in front(repo, "e1")
        assert host
    finally:
        for proc in (runtime, other):
            proc.kill()
            proc.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_a_pid_set_by_hand_is_recorded_with_its_start_and_a_dead_one_is_never_signalled(
        tmp_path):
    """`--set pid=` records the process's start with it; a pid that runs nowhere here is
    recorded as such (`pid_started: 0`), so the process the system gives that pid later is
    neither reaped as the agent's nor signalled by `shutdown`."""
    repo = repo_of(tmp_path, "maos")
    live = subprocess.Popen(["sleep", "60"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        for agent, pid in (("e1", live.pid), ("e2", dead.pid)):
            assert gitstate(repo, "spawn", agent, "--role", "engineer").returncode == 0
            res = gitstate(repo, "transition", agent, "running", "--set", f"pid={pid}")
            assert res.returncode == 0, res.stderr
        mine = front(repo, "e1")
        assert f"\npid: {live.pid}\n" in mine and f"\nhost: {socket.gethostname()}\n" in mine
        assert "\npid_started: " in mine and "\npid_started: 0\n" not in mine
        assert "\npid_started: 0\n" in front(repo, "e2")
        # another process has e2's pid now: a record that says "not running" is not it
        res = gitstate(repo, "transition", "e2", "running", "--set", f"pid={live.pid}",
                       "--set", "pid_started=0")
        assert res.returncode == 0, res.stderr
        res = gitstate(repo, "reap", "--json")
        assert res.returncode == 0, res.stderr
        assert [m["agent"] for m in json.loads(res.stdout)["moves"]] == ["e2"]
        assert live.poll() is None
        res = gitstate(repo, "shutdown", "--grace", "5")
        assert res.returncode == 0, res.stderr
        assert live.wait(timeout=30) is not None                   # e1's process was stopped
        assert f"process {live.pid} ended on SIGTERM" in front(repo, "e1")
    finally:
        live.kill()
        live.wait()
