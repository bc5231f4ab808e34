"""A swarm over a real transport: a hub served on 127.0.0.1 by `git daemon` and by nginx +
fcgiwrap + `git http-backend` (smart HTTP, as a team hosts one), 16 clones and 4
worktrees each moving its own agent with `gitstate ... --push` processes, all at once with no
pause between moves and gitstate's default settings; the same burst at a hub that runs no
hooks (the retrying fallback); and six clones racing for a role that may have one holder. The
full burst (16 clones x 10 moves) is `bench/swarm.py`."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import alone, git, gitstate

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gitstate_bench_swarm", ROOT / "bench" / "swarm.py")
swarm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(swarm)

# Moves per agent in the test: bounded so that the test stays within a minute or two on 2
# shared cores (the hub judges every push; see bench/README.md). GITSTATE_SWARM_MOVES=25 runs
# the full soak.
MOVES = int(os.environ.get("GITSTATE_SWARM_MOVES", "3"))

pytestmark = pytest.mark.e2e
# A burst needs the whole machine: each runs `alone()` (no other test meanwhile); the clones
# are made and the outcome checked beside other tests.


def _has_daemon() -> bool:
    return subprocess.run(["git", "daemon", "-h"], capture_output=True).returncode in (0, 129)


needs_daemon = pytest.mark.skipif(
    not _has_daemon() or shutil.which("git") is None,
    reason="git daemon is missing: install it (e.g. `apt-get install git-daemon-sysvinit`)")


needs_http = pytest.mark.skipif(
    swarm.http_missing() is not None,
    reason=f"smart HTTP hub: {swarm.http_missing()} (`.ci/run` installs them as root)")


@pytest.fixture(params=[pytest.param("daemon", marks=needs_daemon),
                        pytest.param("http", marks=needs_http)])
def served_hub(tmp_path, request):
    """The hub served over each transport: its hooks run the same under both."""
    hub = swarm.make_hub(tmp_path)
    server = swarm.serve(tmp_path, request.param)
    yield hub, server
    server.stop()


def expected_state(moves: int) -> str:
    return "bootstrap" if moves == 1 else swarm.LOOP[(moves - 2) % len(swarm.LOOP)]


def test_sixteen_clones_and_four_worktrees_in_a_burst_lose_nothing(tmp_path, served_hub):
    hub, daemon = served_hub
    places = swarm.make_clones(tmp_path, daemon.url("hub.git"), 16, 4)
    with alone():
        results, _ = swarm.run_swarm(places, MOVES, tmp_path)    # no pause between moves
    rows = [r for rs in results for r in rs]
    assert [r for r in rows if r["outcome"] != "landed"] == []        # 0 illegal, 0 gave up
    # in order of arrival: each move lands with its first push to the queue
    assert max(r["attempts"] for r in rows) == 1
    assert len(rows) == 20 * MOVES
    on_hub = set(git(hub, "rev-list", "main").stdout.split())
    assert {r["commit"] for r in rows} <= on_hub                       # 0 lost
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(hub), str(fresh))
    res = gitstate(fresh, "verify", "--no-cache")
    assert res.returncode == 0, res.stdout + res.stderr
    # the roster folded from history equals the state files at the hub's tip, and each agent
    # is where its own walk left it
    roster = json.loads(gitstate(fresh, "roster", "--json").stdout)
    folded = {a["agent"]: a["state"] for a in roster["living"]}
    files = {a["agent"]: a["state"] for a in json.loads(
        gitstate(fresh, "status", "--json").stdout)["agents"]}
    want = {f"agent-{i:02d}": expected_state(MOVES) for i in range(20)}
    assert folded == files == want
    state_commits = git(hub, "log", "--format=%s", "-i", "--grep=\\[state:", "main").stdout
    assert len(state_commits.splitlines()) == 20 * MOVES


@needs_daemon
def test_a_burst_at_a_hub_without_hooks_lands_every_move_at_the_defaults(tmp_path):
    hub = swarm.make_hub(tmp_path, kind="plain")
    daemon = swarm.Daemon(tmp_path)
    try:
        places = swarm.make_clones(tmp_path, daemon.url("hub.git"), 8, 0)
        with alone():
            results, _ = swarm.run_swarm(places, 2, tmp_path)
    finally:
        daemon.stop()
    rows = [r for rs in results for r in rs]
    assert [r for r in rows if r["outcome"] != "landed"] == [] and len(rows) == 16
    assert {r["commit"] for r in rows} <= set(git(hub, "rev-list", "main").stdout.split())
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(hub), str(fresh))
    assert gitstate(fresh, "verify", "--no-cache").returncode == 0


def test_six_clones_racing_for_the_architect_role_one_lands(tmp_path, served_hub):
    hub, daemon = served_hub
    places = swarm.make_clones(tmp_path, daemon.url("hub.git"), 6, 0)
    agents = [f"arch-{i}" for i in range(6)]
    with alone():
        results, _ = swarm.run_swarm(places, 1, tmp_path, role="architect", agents=agents)
    outcomes = [rs[0]["outcome"] for rs in results]
    assert outcomes.count("landed") == 1, results
    assert all(o in ("illegal", "refused") for o in outcomes if o != "landed")
    for rs in results:
        if rs[0]["outcome"] == "illegal":
            assert rs[0]["kept"].startswith("gitstate/unlanded/arch-")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(hub), str(fresh))
    roster = json.loads(gitstate(fresh, "roster", "--json").stdout)
    assert [a["role"] for a in roster["living"]] == ["architect"]
    assert gitstate(fresh, "verify", "--no-cache").returncode == 0
