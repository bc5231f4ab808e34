"""squad (seed 002): a crashed session goes to `error` and resumes from there; core sessions,
made idle at once by `team load`, are never suspended nor reaped for silence; status offers
a suspension only once due; a full pool queues a spawn (`spawn --wait`)."""

from __future__ import annotations

import json
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
    walk(repo, "quiet", "active", "idle")                           # resumed, then ended
    ok(repo, "bury", "quiet", "--summary", "resumed after a crash")
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


def test_core_sessions_are_loaded_idle_and_kept_alive(tmp_path):
    repo = managed(tmp_path, "squad")
    out = ok(repo, "team", "load", "keaton", "ripley").stdout
    assert "keaton: spawning -> idle (core)" in out and "ripley: spawning -> idle (core)" in out
    assert {(r["agent"], r["state"], r["role"]) for r in roster(repo)["living"]} == {
        ("keaton", "idle", "core"), ("ripley", "idle", "core")}
    assert "keaton: already idle" in ok(repo, "team", "load", "keaton").stdout
    # an hour later: sweep suspends the specialist only, reap fails no core session
    ok(repo, "spawn", "temp", "--role", "specialist")
    ok(repo, "transition", "temp", "active")
    at(repo, ago(60), "transition", "temp", "idle")
    at(repo, ago(60), "transition", "keaton", "idle", "-m", "still here")
    out = ok(repo, "sweep").stdout
    assert "temp: idle -> suspended" in out and "keaton" not in out
    assert "keaton" not in ok(repo, "reap", "--host", "elsewhere").stdout
    # suspending a core session is refused: by the CLI, a plain commit, and verify
    res = gitstate(repo, "transition", "keaton", "suspended")
    assert res.returncode == 1 and "[role-forbids]" in res.stderr
    assert "keaton holds role 'core', which never enters suspended" in res.stderr
    set_state_line(repo, "keaton", "state", "suspended")
    refused_commit(repo, "@keaton: [STATE:suspended] by hand", "role-forbids")
    git(repo, *UNHOOKED, "commit", "-qam", "@keaton: [STATE:suspended] no hooks")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[role-forbids]" in res.stdout
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert "suspended" not in json.loads(ok(repo, "status", "keaton", "--json").stdout)["next"]
    # a specialist is suspended by hand only once the timeout is due, and status says so
    ok(repo, "spawn", "spec2", "--role", "specialist")
    walk(repo, "spec2", "active", "idle")
    assert json.loads(ok(repo, "status", "spec2", "--json").stdout)["next"] == [
        "active", "cleanup", "error", "idle"]
    rows = {r["agent"]: r["next"] for r in json.loads(ok(repo, "status", "--json").stdout)[
        "agents"]}
    assert "suspended" not in rows["spec2"]
    set_state_line(repo, "spec2", "state", "suspended")
    refused_commit(repo, "@spec2: [STATE:suspended] early", "timeout")
    git(repo, "reset", "-q", "--hard")
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
    walk(repo, "s1", "active", "idle")
    ok(repo, "bury", "s1", "--summary", "one task")
    out, err = queued.communicate(timeout=60)
    assert queued.returncode == 0 and "s5: spawning" in out, err
    assert {r["agent"] for r in roster(repo)["living"]} == {"s2", "s5"}
    # by hand, a spawn into a full pool is still refused
    new_state_file(repo, "s6", state="spawning")
    refused_commit(repo, "@s6: [STATE:spawning] by hand", "max-living")


def test_an_idle_session_is_suspended_not_recorded_as_a_crash(tmp_path):
    """The heartbeat judges working sessions only: a specialist idle past both the idle timeout
    and the heartbeat (30m each) is suspended by sweep, whichever of reap and sweep runs first,
    while a session silent as long in `active` has crashed."""
    repo = managed(tmp_path, "squad")
    for agent in ("napper", "worker"):
        ok(repo, "spawn", agent, "--role", "specialist")
    ok(repo, "transition", "napper", "active")
    at(repo, ago(45), "transition", "napper", "idle", "-m", "turn ended")
    at(repo, ago(45), "transition", "worker", "active", "-m", "working")
    out = ok(repo, "reap").stdout
    assert "napper" not in out
    assert "worker: active -> error (no heartbeat for 45m" in out
    assert "napper: idle -> suspended" in ok(repo, "sweep").stdout
    states = {r["agent"]: r["state"] for r in roster(repo)["freezer"]}
    assert states == {"napper": "suspended", "worker": "error"}


def test_the_demo_loads_the_seeds_core_agents_and_spawns_a_specialist_on_demand(tmp_path):
    """Seed 002: "Core agents get persistent sessions created at team load" — keaton, ripley,
    dallas, hockney and scribe — "Specialized agents get on-demand sessions created per
    task". The demo's squad story keeps them apart: no core agent is spawned a specialist."""
    res = gitstate(tmp_path, "demo", "--preset", "squad", "--dir", str(tmp_path / "story"))
    assert res.returncode == 0, res.stdout + res.stderr
    roles = {r["agent"]: r["role"] for r in roster(tmp_path / "story")["living"]}
    core = ["keaton", "ripley", "dallas", "hockney", "scribe"]
    assert {a: roles.get(a) for a in core} == dict.fromkeys(core, "core")
    specialists = [a for a, role in roles.items() if role == "specialist"]
    assert specialists and not set(specialists) & set(core)
