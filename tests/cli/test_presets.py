"""Every preset's story in a real repository, through the CLI and the hooks; each preset's own
law shown refusing a plain `git commit`."""

from __future__ import annotations

import json
import re
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import UNHOOKED, fill_freeze_state, from_template, git, gitstate, make_repo, \
    set_state_line, state_path, walk


def managed(tmp_path: Path, preset: str) -> Path:
    """tmp_path/PRESET: `gitstate init --lifecycle PRESET` in a new repository (a copy of one
    built once per session)."""
    return from_template(tmp_path, ("preset", preset), lambda root: _managed(root, preset)) \
        / preset


def _managed(tmp_path: Path, preset: str) -> None:
    repo = make_repo(tmp_path / preset)
    res = gitstate(repo, "init", "--lifecycle", preset)
    assert res.returncode == 0, res.stderr


def ok(repo, *args):
    res = gitstate(repo, *args)
    assert res.returncode == 0, f"gitstate {' '.join(args)}: {res.stdout}{res.stderr}"
    return res


def refused_commit(repo: Path, message: str, rule: str, *paths: str) -> str:
    git(repo, "add", "-A", "--", *(paths or (".",)))
    res = git(repo, "commit", "-q", "-m", message, check=False)
    assert res.returncode == 1 and f"[{rule}]" in res.stderr, res.stderr
    return res.stderr


def new_state_file(repo: Path, agent: str, **front) -> None:
    p = state_path(repo, agent)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("---\n" + "".join(f"{k}: {v}\n" for k, v in {"agent": agent, **front}.items())
                 + "---\n")


def roster(repo: Path) -> dict:
    return json.loads(ok(repo, "roster", "--json").stdout)


def test_presets_are_listed(tmp_path):
    rows = json.loads(ok(tmp_path, "presets", "--json").stdout)["presets"]
    assert [r["name"] for r in rows] == ["era", "haak", "maos", "registry", "squad"]


@pytest.mark.parametrize("preset", ["haak", "era", "registry", "squad", "maos"])
def test_every_preset_tells_its_story(tmp_path, preset):
    res = gitstate(tmp_path, "demo", "--preset", preset, "--dir", str(tmp_path / "story"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "refused" in res.stdout + res.stderr
    assert ok(tmp_path / "story", "lifecycle", "--mermaid").stdout.startswith("stateDiagram")


# -- haak --------------------------------------------------------------------------------


def test_haak_freeze_show_wake_bury_and_succession(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    walk(repo, "alice", "inbox", "distill")
    # a freeze by hand without its freeze-state file is refused by the hook
    set_state_line(repo, "alice", "state", "frozen")
    set_state_line(repo, "alice", "freeze_state", "data/freeze-states/alice.md")
    refused_commit(repo, "@alice: [STATE:frozen] by hand", "freeze-state")
    fs = repo / "data" / "freeze-states" / "alice.md"
    fs.parent.mkdir(parents=True)
    fs.write_text("---\nsession_id: alice\n---\n## Key Decisions\n- x\n")
    err = refused_commit(repo, "@alice: [STATE:frozen] by hand", "freeze-state")
    assert "'## Accumulated Knowledge'" in err and "lacks frozen_at, role" in err
    git(repo, "reset", "-q", "--hard")
    fs.unlink(missing_ok=True)
    res = gitstate(repo, "freeze", "alice", "--situation", "the roster fold")
    assert res.returncode == 1 and "placeholders" in res.stderr     # the template is written
    fill_freeze_state(fs)
    ok(repo, "freeze", "alice")
    shown = json.loads(ok(repo, "show", "alice", "--json").stdout)
    assert shown["front"]["primary_situation"] == "the roster fold"
    assert set(shown["sections"]) == {"key_decisions", "accumulated_knowledge",
                                      "open_questions", "files_changed", "handoff_notes"}
    assert "Handoff Notes" in ok(repo, "show", "alice").stdout
    # role limits: a second living architect is refused, at spawn and by hand
    res = gitstate(repo, "wake", "alice", "--approved-by", "mallory")
    assert res.returncode == 1 and "[needs-approval]" in res.stderr
    ok(repo, "wake", "alice", "--approved-by", "zach")
    new_state_file(repo, "bob", state="bootstrap", role="architect")
    refused_commit(repo, "@bob: [STATE:bootstrap] born", "role-max")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")
    walk(repo, "alice", "inbox", "distill")
    res = ok(repo, "bury", "alice", "--summary", "designed the fold")
    assert "Role 'architect' is vacant. Last held by alice" in res.stdout
    assert "mandate" in res.stdout.lower()
    ok(repo, "spawn", "bob", "--role", "architect")      # the vacancy can be filled now


def test_haak_mortality_phases(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    for pct, phase in ((10, "fresh"), (55, "midlife"), (80, "legacy"), (92, "urgent")):
        ok(repo, "transition", "alice", "inbox", "--set", f"context_pct={pct}")
        assert json.loads(ok(repo, "status", "alice", "--json").stdout)["phase"] == phase
    ok(repo, "transition", "alice", "distill")
    res = gitstate(repo, "transition", "alice", "deep_work")
    assert res.returncode == 1 and "freeze or die" in res.stderr


# -- era ---------------------------------------------------------------------------------


def test_era_loop_and_atomic_commits(tmp_path):
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    walk(repo, "era-1", "inbox", "distill", "deep_work", "inbox", "distill")
    ok(repo, "logout", "era-1", "--note", "see you")
    assert roster(repo)["freezer"][0]["state"] == "logout"
    walk(repo, "era-1", "bootstrap")                     # the next cold start
    (repo / "notes.md").write_text("thinking\n")
    refused_commit(repo, "@ERA-1: notes", "atomic", "notes.md")
    set_state_line(repo, "era-1", "summary", "notes")
    git(repo, "add", "-A")
    assert git(repo, "commit", "-qm", "@era-1: [STATE:bootstrap] notes", check=False).returncode == 0
    git(repo, *UNHOOKED, "commit", "-q", "--allow-empty", "-m", "@era-1: sneaky")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[atomic]" in res.stdout


# -- registry ----------------------------------------------------------------------------


def test_registry_parents_depth_and_self_spawn(tmp_path):
    repo = managed(tmp_path, "registry")
    ok(repo, "spawn", "root", "--role", "general")
    ok(repo, "spawn", "p1", "--parent", "root", "--role", "programmer")
    assert "depth: 1" in state_path(repo, "p1").read_text()
    res = gitstate(repo, "spawn", "p2", "--parent", "p1", "--role", "programmer")
    assert res.returncode == 1 and "[self-spawn]" in res.stderr
    ok(repo, "spawn", "g1", "--parent", "p1", "--role", "general")
    res = gitstate(repo, "spawn", "g2", "--parent", "g1", "--role", "general")
    assert res.returncode == 1 and "[max-depth]" in res.stderr
    # by hand: a lie about depth, and a programmer spawning a programmer
    new_state_file(repo, "liar", state="in-progress", parent="root", depth=0)
    refused_commit(repo, "@liar: [STATE:in-progress] born", "depth")
    new_state_file(repo, "liar", state="in-progress", parent="p1", depth=2, role="programmer")
    refused_commit(repo, "@liar: [STATE:in-progress] born", "self-spawn")
    new_state_file(repo, "liar", state="in-progress", parent="g1", depth=3, role="general")
    refused_commit(repo, "@liar: [STATE:in-progress] born", "max-depth")


def test_registry_await(tmp_path):
    repo = managed(tmp_path, "registry")
    for a in ("a", "b"):
        ok(repo, "spawn", a)
    waiting = subprocess.Popen([sys.executable, "-m", "gitstate", "await", "a", "b"], cwd=repo,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ok(repo, "transition", "a", "done")
    ok(repo, "transition", "b", "failed")
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 1, err
    assert "a: in-progress -> done" in out or "a: done" in out
    assert "failed: b" in out
    ok(repo, "spawn", "c")
    res = gitstate(repo, "await", "a", "--timeout", "1")
    assert res.returncode == 0
    res = gitstate(repo, "await", "c", "--timeout", "0.2")
    assert res.returncode == 124 and "timed out" in res.stdout
    res = gitstate(repo, "await", "ghost")
    assert res.returncode == 1 and "unknown agent" in res.stderr


# -- squad -------------------------------------------------------------------------------


def test_squad_timeouts_and_sweep(tmp_path):
    repo = managed(tmp_path, "squad")
    ok(repo, "spawn", "s1")
    walk(repo, "s1", "active", "idle")
    set_state_line(repo, "s1", "state", "suspended")
    err = refused_commit(repo, "@s1: [STATE:suspended] early", "timeout")
    assert "only after 30m in idle" in err
    git(repo, "reset", "-q", "--hard")
    assert "nothing is due" in ok(repo, "sweep").stdout
    # an agent that went idle an hour ago is due: sweep commits it, as the system
    ok(repo, "spawn", "s2")
    walk(repo, "s2", "active")
    env = dict(os.environ, GIT_COMMITTER_DATE="2000-01-01T00:00:00Z")
    res = subprocess.run([sys.executable, "-m", "gitstate", "transition", "s2", "idle"], cwd=repo,
                         env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = ok(repo, "sweep").stdout
    assert "s2: idle -> suspended" in out and "s1" not in out
    assert git(repo, "log", "-1", "--format=%an").stdout.strip() == "gitstate"
    assert roster(repo)["freezer"][0]["agent"] == "s2"
    walk(repo, "s2", "active", "idle")                     # resume, then end
    ok(repo, "bury", "s2", "--summary", "two tasks, no errors")
    assert roster(repo)["cemetery"][0]["agent"] == "s2"
    assert ok(repo, "verify").returncode == 0


def test_squad_pool_cap_at_spawn_and_resume(tmp_path):
    repo = managed(tmp_path, "squad")
    life = repo / "protocols" / "lifecycle.yaml"
    life.write_text(life.read_text().replace("max_living: 8", "max_living: 2"))
    git(repo, "commit", "-qam", "smaller pool", "-m", "Approved-by: zach")
    ok(repo, "spawn", "s1")
    ok(repo, "spawn", "s2")
    res = gitstate(repo, "spawn", "s3")
    assert res.returncode == 1 and "[max-living]" in res.stderr
    new_state_file(repo, "s3", state="spawning")
    refused_commit(repo, "@s3: [STATE:spawning] by hand", "max-living")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")


# -- maos --------------------------------------------------------------------------------


def test_maos_roles_instances_limits(tmp_path):
    repo = managed(tmp_path, "maos")
    ok(repo, "spawn", "e1", "--role", "engineer")
    ok(repo, "spawn", "e2", "--role", "engineer")
    ok(repo, "spawn", "x1", "--role", "chemist", "--new-role")   # custom roles, said so
    living = {r["agent"]: r for r in roster(repo)["living"]}
    assert (living["e1"]["instance"], living["e2"]["instance"]) == (1, 2)
    assert "engineer #2" in ok(repo, "roster").stdout
    ok(repo, "spawn", "a1", "--role", "architect")
    new_state_file(repo, "a2", state="pending", role="architect")
    refused_commit(repo, "@a2: [STATE:pending] born", "role-max")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")
    life = repo / "protocols" / "lifecycle.yaml"
    life.write_text(life.read_text().replace("custom_roles: true", "custom_roles: false"))
    git(repo, "commit", "-qam", "predefined roles only", "-m", "Approved-by: zach")
    res = gitstate(repo, "spawn", "x2", "--role", "alchemist")
    assert res.returncode == 1 and "[unknown-role]" in res.stderr
    new_state_file(repo, "x2", state="pending", role="alchemist")
    refused_commit(repo, "@x2: [STATE:pending] born", "unknown-role")


def test_maos_reap_and_shutdown(tmp_path):
    repo = managed(tmp_path, "maos")
    gone = subprocess.Popen(["true"])
    gone.wait()
    host = socket.gethostname()
    live = subprocess.run(["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"],
                          capture_output=True, text=True, check=True).stdout.strip()
    for agent, pid in (("dead-proc", gone.pid), ("live-proc", live)):
        ok(repo, "spawn", agent, "--role", "engineer")
        ok(repo, "transition", agent, "running", "--set", f"pid={pid}", "--set", f"host={host}")
    ok(repo, "spawn", "waiting")
    out = ok(repo, "reap").stdout
    assert f"dead-proc: running -> failed (process {gone.pid} on {host} is gone)" in out
    assert "live-proc" not in out
    assert git(repo, "log", "-1", "--format=%an %s").stdout.startswith("gitstate @dead-proc:")
    assert f"live-proc: process {live} ended on SIGTERM" in ok(repo, "shutdown").stdout
    view = roster(repo)
    assert view["living"] == []
    ends = {r["agent"]: r["state"] for r in view["cemetery"]}
    assert ends == {"dead-proc": "failed", "live-proc": "cancelled", "waiting": "cancelled"}
    assert ok(repo, "verify").returncode == 0


def test_haak_role_transfer_in_one_commit(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "bob")
    walk(repo, "alice", "inbox", "distill")
    res = ok(repo, "bury", "alice", "--summary", "handing over", "--transfer-role-to", "bob")
    assert "vacant" not in res.stdout
    files = git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert files == ["agent/alice/_state.md", "agent/bob/_state.md"]
    assert "architect" not in {v["role"] for v in
                               json.loads(ok(repo, "vacancies", "--json").stdout)["vacancies"]}
    living = roster(repo)["living"]
    assert [(r["agent"], r["role"]) for r in living] == [("bob", "architect")]
    # a "transfer" that changes more than the receiver's role is two agents' moves: refused
    ok(repo, "spawn", "carol", "--role", "steward")
    ok(repo, "spawn", "dan")
    walk(repo, "carol", "inbox", "distill")
    set_state_line(repo, "carol", "state", "dead")
    set_state_line(repo, "carol", "final_summary", "bye")
    set_state_line(repo, "carol", "role", "null")
    set_state_line(repo, "dan", "role", "steward")
    set_state_line(repo, "dan", "state", "inbox")
    err = refused_commit(repo, "@carol: [STATE:dead] bye\n\nRole-transfer: steward -> dan",
                         "multiple-agents")
    assert "may only take the role" in err


def at(repo, when: str, *args: str, bound: str | None = None) -> None:
    """Run gitstate with the commit dated `when` (an agent that acted in the past; `bound`:
    in that agent's own session, GITSTATE_AGENT)."""
    import subprocess
    import sys
    env = dict(os.environ, GIT_COMMITTER_DATE=when, GIT_AUTHOR_DATE=when,
               **({"GITSTATE_AGENT": bound} if bound else {}))
    res = subprocess.run([sys.executable, "-m", "gitstate", *args], cwd=repo, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def ago(minutes: int) -> str:
    """A git date `minutes` before now."""
    import time
    return f"@{int(time.time()) - minutes * 60} +0000"


def test_the_presets_page_says_what_each_preset_keeps_of_its_seed():
    """One meaning of "enforced": a row that says so names the rule the hooks, the hub and
    verify refuse it with; every seed feature has a row, those left out included."""
    from gitstate.law.rule_ids import Rule
    readme = (Path(__file__).parents[2] / "docs" / "how-to" / "presets.md").read_text()
    table = readme.split("## What each preset keeps of its seed", 1)[1].split("\n## ", 1)[0]
    rows = [r.split(" | ") for r in table.splitlines() if r.startswith("| ") and "---" not in r]
    rows = [(r[0].strip("| "), r[1], r[2].rstrip(" |")) for r in rows[1:]]
    assert {p for p, _, _ in rows} == {"haak", "registry", "squad", "era", "maos"}
    rules = {r.value for r in Rule}
    for preset, feature, how in rows:
        assert how.split(" ", 1)[0].strip(":,") in (
            "enforced", "computed", "advisory", "left", "kept"), (preset, feature)
        if how.startswith("enforced"):
            named = set(re.findall(r"`([a-z-]+)`", how))
            assert named & rules, f"{preset}: {feature}: enforced by which rule? {how}"
    features = " ".join(f"{p}: {f}" for p, f, _ in rows)
    for wanted in ("haak: the roster listed at session start", "specialist's one task",
                   "criticality filter", "workspaces and task dependencies",
                   "default_max_per_role", "core agents", "max_tokens", "idle_since"):
        assert wanted in features, wanted
