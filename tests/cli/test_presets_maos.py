"""maos (seed 003): interrupted work ends as a failure, roles' timeouts made by `sweep`,
instance numbers by commit order, `reap` by heartbeat, also as a loop; custom roles said so
at spawn with a default limit; shutdown stops the processes it can (SIGTERM, SIGKILL)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from conftest import UNHOOKED, git, gitstate, set_state_line
from test_presets import ago, at, managed, ok, refused_commit, roster


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
    at(repo, ago(45), "spawn", "chem", "--role", "chemist", "--new-role")   # custom, 40m: due
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


def test_the_presets_page_and_shipped_docs_agree_on_shutdown():
    root = Path(__file__).parents[2]
    readme = (root / "docs" / "how-to" / "presets.md").read_text()
    assert "work it interrupts ends `cancelled`" in readme
    assert "`cancelled`" in (root / "protocols" / "maos" / "running.md").read_text()
    assert "failure" in (root / "protocols" / "maos" / "cancelled.md").read_text()


def test_custom_roles_are_said_so_and_have_a_default_limit(tmp_path):
    repo = managed(tmp_path, "maos")
    res = gitstate(repo, "spawn", "c1", "--role", "enginer")         # a typo is not a role
    assert res.returncode == 1 and "[unknown-role]" in res.stderr
    assert "(did you mean 'engineer'?)" in res.stderr and "`--new-role`" in res.stderr
    ok(repo, "spawn", "c1", "--role", "chemist", "--new-role")
    assert git(repo, "log", "-1", "--format=%(trailers:key=New-role,valueonly)").stdout.strip() \
        == "chemist"
    ok(repo, "spawn", "c2", "--role", "chemist", "--new-role")
    res = gitstate(repo, "spawn", "c3", "--role", "chemist", "--new-role")   # role_max: 2
    assert res.returncode == 1 and "[role-max]" in res.stderr
    assert "policies.role_max" in res.stderr
    # by hand: a birth in an undeclared role without the trailer, then a third chemist
    p = repo / "agent" / "c3" / "_state.md"
    p.parent.mkdir(parents=True)
    p.write_text("---\nagent: c3\nstate: pending\nrole: alchemist\n---\n")
    refused_commit(repo, "@c3: [STATE:pending] by hand", "unknown-role")
    git(repo, "commit", "-qm", "@c3: [STATE:pending] by hand", "-m", "New-role: alchemist")
    p = repo / "agent" / "c4" / "_state.md"
    p.parent.mkdir(parents=True)
    p.write_text("---\nagent: c4\nstate: pending\nrole: chemist\n---\n")
    refused_commit(repo, "@c4: [STATE:pending] by hand\n\nNew-role: chemist", "role-max")
    git(repo, "add", "-A")
    git(repo, *UNHOOKED, "commit", "-qm", "@c4: [STATE:pending] no hooks", "-m",
        "New-role: chemist")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[role-max]" in res.stdout


def _orphan(script: str) -> int:
    """The pid of a process running `script`, not a child of this one (so that nothing here
    waits for it: it ends as the signals say)."""
    out = subprocess.run(["sh", "-c", f"({script}) >/dev/null 2>&1 & echo $!"],
                         capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z"


def test_shutdown_stops_the_processes_it_can_and_says_which_it_cannot(tmp_path):
    repo = managed(tmp_path, "maos")
    polite = _orphan("exec sleep 300")
    stubborn = _orphan("trap '' TERM; exec sleep 300")
    here = socket.gethostname()
    for agent, pid, host in (("e1", polite, here), ("e2", stubborn, here),
                             ("e3", 999_999, "elsewhere")):
        ok(repo, "spawn", agent, "--role", "engineer" if agent != "e3" else "qa")
        ok(repo, "transition", agent, "running", "--set", f"pid={pid}", "--set", f"host={host}")
    out = ok(repo, "shutdown", "--grace", "1").stdout
    assert f"e1: process {polite} ended on SIGTERM" in out
    assert f"e2: process {stubborn} did not end within 1s of SIGTERM; killed (SIGKILL)" in out
    assert "e3: not signalled: process 999999 runs on elsewhere" in out
    assert _gone(polite) and _gone(stubborn)
    files = {a: (repo / "agent" / a / "_state.md").read_text() for a in ("e1", "e2", "e3")}
    assert f"stopped: process {polite} ended on SIGTERM" in files["e1"]
    assert f"stopped: process {stubborn} killed (SIGKILL) after 1s" in files["e2"]
    assert "stopped: 'not signalled: process 999999 runs on elsewhere" in files["e3"]
    assert {r["agent"]: r["state"] for r in roster(repo)["cemetery"]} == {
        "e1": "cancelled", "e2": "cancelled", "e3": "cancelled"}
    assert ok(repo, "verify").returncode == 0


def test_assuming_an_undeclared_role_needs_new_role_at_every_door(tmp_path):
    """maos allows custom roles, but only said so (`New-role:`): an agent that assumes a role
    after birth (`Assumes-role: architcet`, a typo) is held to the same — refused by the
    command, the commit hooks, the hub and verify, naming the nearest declared role — and
    takes a new role only with `New-role:` on that same commit."""
    from hubs import make_hub
    repo = managed(tmp_path, "maos")
    hub = make_hub(tmp_path / "hub.git")
    git(repo, "remote", "add", "origin", str(hub))
    ok(repo, "spawn", "a1")
    ok(repo, "spawn", "a2")
    git(repo, "push", "-q", "-u", "origin", "main")
    res = gitstate(repo, "assume", "a1", "architcet")
    assert res.returncode == 1 and "[unknown-role]" in res.stderr, res.stderr
    assert "(did you mean 'architect'?)" in res.stderr
    assert "`--new-role` (trailer 'New-role: architcet')" in res.stderr
    # the commit hooks
    set_state_line(repo, "a1", "role", "architcet")
    refused_commit(repo, "@a1: [STATE:pending] assumes architcet\n\nAssumes-role: architcet",
                   "unknown-role")
    # hooks off: the hub refuses the push, verify names it
    git(repo, *UNHOOKED, "commit", "-qm", "@a1: [STATE:pending] assumes architcet",
        "-m", "Assumes-role: architcet")
    res = git(repo, "push", "origin", "main", check=False)
    assert res.returncode != 0 and "[unknown-role]" in res.stderr, res.stderr
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[unknown-role]" in res.stdout
    assert "did you mean 'architect'?" in res.stdout
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    # a declared role, or a new one said so on the same commit
    ok(repo, "assume", "a1", "architect")
    ok(repo, "assume", "a2", "chemist", "--new-role")
    trailers = git(repo, "log", "-1", "--format=%(trailers:only,unfold)").stdout.split("\n")
    assert trailers[:2] == ["Assumes-role: chemist", "New-role: chemist"]
    git(repo, "push", "-q", "origin", "main")
    assert ok(repo, "verify").returncode == 0


def test_a_failed_agent_is_retried_with_exponential_backoff_up_to_max(tmp_path):
    """Seed 003's mitigation: "Simple retry policies with exponential backoff". maos declares
    `policies.retry: {max: 3, backoff: 1m}`: a failed agent goes back to work, the n-th retry
    no sooner than 1m * 2^(n-1) after the failure, at most 3 times; each retry counts itself
    (`retries`). Early, over the max, or miscounted, it is refused at every door."""
    from hubs import make_hub
    repo = managed(tmp_path, "maos")
    hub = make_hub(tmp_path / "hub.git")
    git(repo, "remote", "add", "origin", str(hub))
    ok(repo, "spawn", "e1", "--role", "engineer")
    ok(repo, "transition", "e1", "running")
    ok(repo, "transition", "e1", "failed", "-m", "crashed")
    git(repo, "push", "-q", "-u", "origin", "main")
    res = gitstate(repo, "transition", "e1", "pending", "-m", "retry")    # the 1st waits 1m
    assert res.returncode == 1 and "[retry]" in res.stderr, res.stderr
    assert "retry 1 of 3 of e1 waits 1m after it entered failed (backoff 1m, doubled for " \
        "each retry made); due in" in res.stderr
    # by hand: the hooks refuse it; hooks off, the hub refuses it and verify names it
    set_state_line(repo, "e1", "state", "pending")
    set_state_line(repo, "e1", "retries", "1")
    refused_commit(repo, "@e1: [STATE:pending] early retry", "retry")
    git(repo, *UNHOOKED, "commit", "-qm", "@e1: [STATE:pending] early retry")
    res = git(repo, "push", "origin", "main", check=False)
    assert res.returncode != 0 and "[retry]" in res.stderr, res.stderr
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[retry]" in res.stdout
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    # a history of retries, each once due (1m, 2m, 4m after its failure; `retries` written by
    # the move): the fourth is refused, saying how many were used
    at(repo, ago(60), "spawn", "e2", "--role", "engineer")
    for minutes, state in ((59, "running"), (58, "failed"), (50, "pending"), (49, "running"),
                           (48, "failed"), (40, "running"), (39, "failed")):
        at(repo, ago(minutes), "transition", "e2", state)
    assert "retries: 2" in (repo / "agent" / "e2" / "_state.md").read_text()
    at(repo, ago(20), "transition", "e2", "pending")                 # the third retry, living
    assert [(r["agent"], r.get("ended")) for r in roster(repo)["living"]
            if r["agent"] == "e2"] == [("e2", None)]
    at(repo, ago(19), "transition", "e2", "failed")
    res = gitstate(repo, "transition", "e2", "pending")
    assert res.returncode == 1 and "[retry]" in res.stderr, res.stderr
    assert "e2 was retried 3 times already, the most policies.retry allows (3): it stays " \
        "failed. Spawn a new agent for its task instead (`gitstate spawn ID --role " \
        "engineer`)" in res.stderr
    # the count is the retries' own: no other commit changes it
    ok(repo, "spawn", "e3", "--role", "engineer")
    res = gitstate(repo, "transition", "e3", "running", "--set", "retries=0")
    assert res.returncode == 2 and "a retry counts itself" in res.stderr, res.stderr   # usage
    set_state_line(repo, "e3", "retries", "1")
    refused_commit(repo, "@e3: [STATE:pending] a count by hand", "retry")
    git(repo, "reset", "-q", "--hard")
    # cancelled work is not retried (retry.states: [failed])
    ok(repo, "transition", "e3", "cancelled")
    res = gitstate(repo, "transition", "e3", "pending")
    assert res.returncode == 1 and "[terminal]" in res.stderr
    assert ok(repo, "verify").returncode == 0


def _retried_engineer(repo, agent: str, *, key: bool = False, hub=None) -> None:
    """An engineer born 90 minutes ago, failed 80 minutes ago, retried 10 minutes ago: past
    its role's 60m from birth, 10m from its retry. With `hub`: pushed there before its
    retry, received as committed (the hub's record of reception says so)."""
    at(repo, ago(90), "spawn", agent, "--role", "engineer", *(["--key"] if key else []))
    for minutes, state in ((89, "running"), (80, "failed")):
        at(repo, ago(minutes), "transition", agent, state, bound=agent if key else None)
    if hub is not None:
        git(repo, "push", "-q", "-u", "origin", "main")
        for line in git(repo, "log", "--format=%H %ct").stdout.split("\n"):
            if line:
                sha, ct = line.split()
                git(hub, "notes", "--ref=refs/notes/gitstate-received", "add", "-f", "-m",
                    f"received {ct}", sha)
    at(repo, ago(10), "transition", agent, "pending", bound=agent if key else None)


def test_a_retried_agents_role_timeout_counts_from_its_last_retry(tmp_path):
    """Seed 003: "Agent timeout: 60 minutes" for an engineer, and "simple retry policies
    with exponential backoff": a retried agent goes back to work, and its role's time counts
    from that retry, not from its birth."""
    repo = managed(tmp_path, "maos")
    _retried_engineer(repo, "e1")
    at(repo, ago(61), "spawn", "e2", "--role", "engineer")          # never retried: due
    assert "retries: 1" in (repo / "agent" / "e1" / "_state.md").read_text()
    out = ok(repo, "sweep").stdout
    moved = [line.split(":")[0] for line in out.splitlines() if ": " in line]
    assert "e2: pending -> failed" in out and "e1" not in moved, out
    assert {r["agent"] for r in roster(repo)["living"]} == {"e1"}
    # its retry's hour over, sweep fails it, saying whence the time counted
    at(repo, ago(130), "spawn", "e3", "--role", "engineer")
    for minutes, state in ((129, "failed"), (65, "pending")):
        at(repo, ago(minutes), "transition", "e3", state)
    out = ok(repo, "sweep").stdout
    assert "e3: pending -> failed (retried" in out and "from its last retry" in out, out
    assert ok(repo, "verify").returncode == 0


def test_the_law_judges_a_sweep_of_a_retried_agent_from_its_retry(tmp_path):
    """The law's own judgement of a sweep's move (proven by time, for an agent with a key):
    the hub and verify count a retried agent's role timeout from its last retry too."""
    import shutil
    if shutil.which("ssh-keygen") is None:
        import pytest
        pytest.skip("ssh-keygen is missing")
    from hubs import make_hub
    repo = managed(tmp_path, "maos")
    hub = make_hub(tmp_path / "hub.git")
    git(repo, "remote", "add", "origin", str(hub))
    _retried_engineer(repo, "e1", key=True, hub=hub)
    git(repo, "push", "-q", "origin", "main")
    assert "nothing is due" in ok(repo, "sweep").stdout
    # a sweep's end made by hand (hooks off): 90m from birth, 10m from its retry: early
    set_state_line(repo, "e1", "state", "failed")
    message = "@e1: [STATE:failed] timed out\n\nMoved-by: gitstate sweep"
    git(repo, *UNHOOKED, "commit", "-qam", message)
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[unsigned-move]" in res.stdout, res.stdout
    assert "before it was due by this door's clock" in res.stdout
    res = git(repo, "push", "origin", "main", check=False)
    assert res.returncode != 0 and "unsigned-move" in res.stderr, res.stderr


def test_status_of_a_failed_agent_names_its_retry_and_when_it_is_legal(tmp_path):
    """maos's retry (1m backoff, doubled for each retry made, at most 3): `status ID` of a
    failed agent lists the retry, legal once its backoff has passed."""
    import json
    repo = managed(tmp_path, "maos")
    ok(repo, "spawn", "e1", "--role", "engineer")
    ok(repo, "transition", "e1", "failed")                             # just now: waits 1m
    rec = json.loads(ok(repo, "status", "e1", "--json").stdout)
    assert rec["next"] == [] and rec["retry"]["to"] == ["pending", "running"]
    assert rec["retry"]["retries"] == 0 and rec["retry"]["max"] == 3
    assert 0 < rec["retry"]["due_in"] <= 60
    assert "retry: pending or running (retry 1 of 3), legal in" in \
        ok(repo, "status", "e1").stdout
    at(repo, ago(5), "spawn", "e2", "--role", "engineer")
    at(repo, ago(3), "transition", "e2", "failed")                     # 3m ago: legal
    rec = json.loads(ok(repo, "status", "e2", "--json").stdout)
    assert rec["retry"]["due_in"] == 0 and rec["next"] == ["pending", "running"]
    assert "retry: pending or running (retry 1 of 3), legal now" in \
        ok(repo, "status", "e2").stdout
    ok(repo, "transition", "e2", "pending")            # what status said is legal, is
    # cancelled work is never retried (retry.states: [failed]): no retry, nothing next
    ok(repo, "spawn", "e3", "--role", "engineer")
    ok(repo, "transition", "e3", "cancelled")
    rec = json.loads(ok(repo, "status", "e3", "--json").stdout)
    assert rec["retry"] is None and rec["next"] == []
