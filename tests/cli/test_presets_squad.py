"""squad, round two (seed 002): a crashed session goes to `error` and resumes from there; core
sessions are exempt from the idle timeout; a full pool queues a spawn (`spawn --wait`)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import UNHOOKED, git, gitstate, set_state_line, walk
from test_presets import ago, at, managed, new_state_file, ok, refused_commit, roster


def test_a_crashed_session_goes_to_error_and_resumes(tmp_path):
    repo = managed(tmp_path, "squad")
    ok(repo, "spawn", "s1")
    walk(repo, "s1", "active")
    # the session reports its own crash with a plain commit
    set_state_line(repo, "s1", "state", "error")
    set_state_line(repo, "s1", "summary", "tool call crashed")
    git(repo, "commit", "-qam", "@s1: [STATE:error] session.error")
    assert [r["agent"] for r in roster(repo)["freezer"]] == ["s1"]
    # error leads back to active (resume) or to cleanup, nowhere else
    set_state_line(repo, "s1", "state", "idle")
    refused_commit(repo, "@s1: [STATE:idle] skip", "illegal-transition")
    git(repo, "reset", "-q", "--hard")
    assert "s1: error -> active" in ok(repo, "transition", "s1", "active", "-m", "resumed").stdout
    # reap: a session silent past the heartbeat has crashed; a recorded pid that is gone too
    at(repo, ago(45), "spawn", "quiet")
    gone = subprocess.Popen(["true"])
    gone.wait()
    import socket
    ok(repo, "transition", "s1", "active", "--set", f"pid={gone.pid}",
       "--set", f"host={socket.gethostname()}")
    out = ok(repo, "reap").stdout
    assert "quiet: spawning -> error (no heartbeat for 45m" in out
    assert f"s1: active -> error (process {gone.pid}" in out
    assert {r["agent"] for r in roster(repo)["freezer"]} == {"quiet", "s1"}
    walk(repo, "quiet", "active", "idle", "cleanup")                # resumed, then ended
    # a hidden move from error to idle is named by verify
    set_state_line(repo, "s1", "state", "idle")
    git(repo, "add", "-A")
    git(repo, *UNHOOKED, "commit", "-qm", "@s1: [STATE:idle] hidden")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[illegal-transition]" in res.stdout


def test_shutdown_does_not_call_a_stop_a_crash(tmp_path):
    repo = managed(tmp_path, "squad")
    ok(repo, "spawn", "s1")
    walk(repo, "s1", "active")
    assert "s1: active -> cleanup" in ok(repo, "shutdown").stdout


def test_core_sessions_are_exempt_from_the_idle_timeout(tmp_path):
    repo = managed(tmp_path, "squad")
    for agent, role in (("keaton", "core"), ("temp", "specialist")):
        ok(repo, "spawn", agent, "--role", role)
        ok(repo, "transition", agent, "active")
        at(repo, ago(60), "transition", agent, "idle")
    out = ok(repo, "sweep").stdout
    assert "temp: idle -> suspended" in out and "keaton" not in out
    assert "nothing is due" in ok(repo, "sweep").stdout
    # by hand: a core session may be suspended at any time (no timer applies to it); a
    # specialist only once the timeout is due
    ok(repo, "spawn", "spec2", "--role", "specialist")
    walk(repo, "spec2", "active", "idle")
    set_state_line(repo, "spec2", "state", "suspended")
    refused_commit(repo, "@spec2: [STATE:suspended] early", "timeout")
    git(repo, "reset", "-q", "--hard")
    assert ok(repo, "transition", "keaton", "suspended").returncode == 0
    set_state_line(repo, "keaton", "state", "active")
    git(repo, "commit", "-qam", "@keaton: [STATE:active] back")
    walk(repo, "keaton", "idle")
    set_state_line(repo, "keaton", "state", "suspended")
    git(repo, "commit", "-qam", "@keaton: [STATE:suspended] by hand")
    assert ok(repo, "verify").returncode == 0


def test_spawn_waits_for_a_free_slot_within_a_bound(tmp_path):
    repo = managed(tmp_path, "squad")
    life = repo / "protocols" / "lifecycle.yaml"
    life.write_text(life.read_text().replace("max_living: 8", "max_living: 2"))
    git(repo, "commit", "-qam", "a pool of two", "-m", "Approved-by: zach")
    ok(repo, "spawn", "s1")
    ok(repo, "spawn", "s2")
    res = gitstate(repo, "spawn", "s3", "--wait", "0.2")
    assert res.returncode == 1 and "[max-living]" in res.stderr
    assert "the pool stayed full for 0.2s" in res.stderr
    # a queued spawn lands once a slot frees
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    queued = subprocess.Popen([sys.executable, "-m", "gitstate", "spawn", "s5", "--wait", "60"],
                              cwd=repo, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert "the pool is full; waiting up to 60s" in queued.stderr.readline()
    walk(repo, "s1", "active", "idle", "cleanup")
    out, err = queued.communicate(timeout=60)
    assert queued.returncode == 0 and "s5: spawning" in out, err
    assert {r["agent"] for r in roster(repo)["living"]} == {"s2", "s5"}
    # by hand, a spawn into a full pool is still refused
    new_state_file(repo, "s6", state="spawning")
    refused_commit(repo, "@s6: [STATE:spawning] by hand", "max-living")
