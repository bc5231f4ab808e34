"""maos, round two (seed 003): interrupted work ends as a failure, roles' timeouts enforced by
`sweep`, instance numbers by commit order, and `reap` by heartbeat, also as a loop."""

from __future__ import annotations

from pathlib import Path

from conftest import git, gitstate, set_state_line
from test_presets import ago, at, managed, ok, roster


def test_shutdown_cancels_interrupted_work_and_await_counts_it_failed(tmp_path):
    repo = managed(tmp_path, "maos")
    ok(repo, "spawn", "e1", "--role", "engineer")
    ok(repo, "transition", "e1", "running")
    ok(repo, "spawn", "e2", "--role", "engineer")
    ok(repo, "spawn", "done", "--role", "qa")
    ok(repo, "transition", "done", "running")
    ok(repo, "transition", "done", "complete")
    out = ok(repo, "shutdown").stdout
    assert "e1: running -> cancelled" in out and "e2: pending -> cancelled" in out
    ends = {r["agent"]: r["state"] for r in roster(repo)["cemetery"]}
    assert ends == {"e1": "cancelled", "e2": "cancelled", "done": "complete"}
    res = gitstate(repo, "await", "e1", "done")
    assert res.returncode == 1 and "failed: e1" in res.stdout
    assert gitstate(repo, "await", "done").returncode == 0
    # by hand: an agent may record its own cancellation with a plain commit
    ok(repo, "spawn", "e3", "--role", "engineer")
    set_state_line(repo, "e3", "state", "cancelled")
    git(repo, "commit", "-qam", "@e3: [STATE:cancelled] told to stop")
    assert gitstate(repo, "await", "e3").returncode == 1
    assert ok(repo, "verify").returncode == 0


def test_roles_timeouts_are_enforced_by_sweep(tmp_path):
    repo = managed(tmp_path, "maos")
    at(repo, ago(45), "spawn", "arch", "--role", "architect")        # 30m: due
    at(repo, ago(45), "spawn", "eng", "--role", "engineer")          # 60m: not yet
    at(repo, ago(61), "spawn", "eng2", "--role", "engineer")         # 60m: due
    at(repo, ago(45), "spawn", "chem", "--role", "chemist")          # custom, 40m cap: due
    at(repo, ago(35), "spawn", "sec", "--role", "security")          # 40m: not yet
    ok(repo, "transition", "eng2", "running")
    dry = ok(repo, "sweep", "--dry-run").stdout
    assert "arch: pending -> failed is due (after 30m)" in dry
    out = ok(repo, "sweep").stdout
    assert "arch: pending -> failed" in out and "role architect may live 30m" in out
    assert "eng2: running -> failed" in out and "chem: pending -> failed" in out
    assert "eng:" not in out and "sec" not in out
    ends = {r["agent"]: r["state"] for r in roster(repo)["cemetery"]}
    assert ends == {"arch": "failed", "eng2": "failed", "chem": "failed"}
    assert git(repo, "log", "-1", "--format=%an").stdout.strip() == "gitstate"
    assert "nothing is due" in ok(repo, "sweep").stdout
    assert ok(repo, "verify").returncode == 0


def test_instance_numbers_follow_commit_order(tmp_path):
    repo = managed(tmp_path, "maos")
    same = ago(5)
    for agent in ("zed", "amy", "kim"):                              # born in one second
        at(repo, same, "spawn", agent, "--role", "engineer")
    numbers = {r["agent"]: r["instance"] for r in roster(repo)["living"]}
    assert numbers == {"zed": 1, "amy": 2, "kim": 3}
    # a hand-made spawn after them is the next instance
    p = repo / "agent" / "abe" / "_state.md"
    p.parent.mkdir(parents=True)
    p.write_text("---\nagent: abe\nstate: pending\nrole: engineer\n---\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "@abe: [STATE:pending] by hand")
    numbers = {r["agent"]: r["instance"] for r in roster(repo)["living"]}
    assert numbers["abe"] == 4 and numbers["zed"] == 1


def test_reap_by_heartbeat_and_as_a_loop(tmp_path):
    repo = managed(tmp_path, "maos")
    at(repo, ago(30), "spawn", "quiet", "--role", "engineer")       # silent for 30m > 10m
    at(repo, ago(30), "spawn", "chatty", "--role", "engineer")
    ok(repo, "transition", "chatty", "running", "-m", "still here")   # a fresh heartbeat
    res = gitstate(repo, "reap", "--count", "2")
    assert res.returncode == 2 and "--every" in res.stderr
    res = gitstate(repo, "reap", "--every", "0.01s", "--count", "3")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("quiet: pending -> failed (no heartbeat for 30m") == 1
    assert "chatty" not in res.stdout
    assert {r["agent"] for r in roster(repo)["cemetery"]} == {"quiet"}
    assert "silent since" in (repo / "agent" / "quiet" / "_state.md").read_text()
    assert ok(repo, "verify").returncode == 0


def test_readme_and_shipped_docs_agree_on_shutdown():
    root = Path(__file__).parents[2]
    readme = (root / "README.md").read_text()
    assert "work it interrupts ends `cancelled`" in readme
    assert "`cancelled`" in (root / "protocols" / "maos" / "running.md").read_text()
    assert "failure" in (root / "protocols" / "maos" / "cancelled.md").read_text()
