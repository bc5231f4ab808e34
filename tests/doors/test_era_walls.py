"""Seed 004 (era), in its own words, at every door (the commit hooks and commands, the hub,
`verify`):

- "The _state.md file is maintained by the game system, not agents. It contains objective
  measurements agents cannot self-assess" (`policies.fourth_wall`: `fourth-wall`);
- "Thread transitions happen in distill" (`policies.changes_in`: `changes-in`);
- "BAD - separate commits: git commit -m 'Updated feature'" (`policies.work_commits_name_agent`:
  `unnamed-work` at the hub and in `verify`);
- "deep_work: Thread and max_tokens from _state.md": a budget left out (or `null`) is the
  lifecycle's default, else none is declared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    UNHOOKED,
    git,
    gitstate,
    managed_repo,
    set_state_line,
    snapshot,
    state_path,
    walk,
)
from hubs import make_hub


def managed(tmp_path: Path, preset: str) -> Path:
    return managed_repo(tmp_path / preset, "--lifecycle", preset)


def ok(repo: Path, *args: str) -> subprocess.CompletedProcess:
    res = gitstate(repo, *args)
    assert res.returncode == 0, f"gitstate {' '.join(args)}: {res.stdout}{res.stderr}"
    return res


def rules(res) -> list[str]:
    return sorted({p["rule"] for p in json.loads(res.stdout)["problems"]})


def verify(repo: Path) -> list[str]:
    return rules(gitstate(repo, "verify", "--no-cache", "--json"))


def bound(repo: Path, agent: str, *cmd: str) -> subprocess.CompletedProcess:
    """A command run in the agent's own session (its runtime names it: GITSTATE_AGENT)."""
    return subprocess.run(list(cmd), cwd=repo, env=dict(os.environ, GITSTATE_AGENT=agent),
                          capture_output=True, text=True)


def as_runtime(repo: Path, agent: str, state: str, sets: dict) -> subprocess.CompletedProcess:
    """What the runtime's context hook does with a measurement: one commit by the system."""
    code = ("import sys; from gitstate.git.repo import open_managed; "
            "from gitstate.runtime.system_moves import record_as_system; "
            f"print(record_as_system(open_managed('.'), {agent!r}, {state!r}, {sets!r}, "
            "'measured'))")
    return subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True)


def with_hub(tmp_path: Path, repo: Path) -> Path:
    hub = make_hub(tmp_path / "hub.git")
    git(repo, "remote", "add", "origin", str(hub))
    git(repo, "push", "-q", "-u", "origin", "main")
    return hub


def pushed(repo: Path) -> subprocess.CompletedProcess:
    return git(repo, "push", "-q", "origin", "main", check=False)


def era_at_work(tmp_path: Path) -> Path:
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    walk(repo, "era-1", "inbox", "distill")
    ok(repo, "transition", "era-1", "deep_work", "--set", "thread=parser")
    return repo


# -- the fourth wall -----------------------------------------------------------------------


def test_an_era_agent_does_not_write_what_the_system_measures_of_it(tmp_path):
    repo = era_at_work(tmp_path)
    before = snapshot(repo)
    res = bound(repo, "era-1", sys.executable, "-m", "gitstate", "transition", "era-1",
                "deep_work", "--set", "context_pct=10", "-m", "I feel fresh")
    assert res.returncode == 1 and "[fourth-wall]" in res.stderr, res.stderr
    assert "era-1's context_pct is the system's" in res.stderr
    assert "`--approved-by zach` from a terminal of their own" in res.stderr   # what is legal
    assert snapshot(repo) == before
    # nor by typing the human's name: nothing shows that zach approved it
    res = bound(repo, "era-1", sys.executable, "-m", "gitstate", "transition", "era-1",
                "deep_work", "--set", "tokens=10", "--approved-by", "zach")
    assert res.returncode == 1 and "[agent-approval]" in res.stderr, res.stderr
    # nor by hand: its budget, given by a human, neither raised nor dropped
    ok(repo, "transition", "era-1", "deep_work", "--set", "max_tokens=50000",
       "--approved-by", "zach")
    for budget in ("999999999", "null"):
        set_state_line(repo, "era-1", "max_tokens", budget)
        git(repo, "add", "-A")
        res = bound(repo, "era-1", "git", "commit", "-qm", "@era-1: [STATE:deep_work] budget")
        assert res.returncode == 1 and "[fourth-wall]" in res.stderr, res.stderr
        assert "era-1's max_tokens is the system's" in res.stderr
        git(repo, "reset", "-q", "--hard")
    # the agent's own moves and notes stay its own
    set_state_line(repo, "era-1", "summary", "tokenizer done")
    git(repo, "add", "-A")
    res = bound(repo, "era-1", "git", "commit", "-qm", "@era-1: [STATE:deep_work] tokenizer")
    assert res.returncode == 0, res.stderr


def test_the_runtime_and_the_human_write_the_measurements(tmp_path):
    repo = era_at_work(tmp_path)
    res = as_runtime(repo, "era-1", "deep_work", {"context_pct": 12, "tokens": 1200})
    assert res.returncode == 0 and "Recorded as" in res.stdout, res.stderr
    message = git(repo, "log", "-1", "--format=%B").stdout
    assert "Moved-by: gitstate runtime" in message
    text = state_path(repo, "era-1").read_text()
    assert "context_pct: 12" in text and "tokens: 1200" in text
    ok(repo, "transition", "era-1", "deep_work", "--set", "max_tokens=50000",
       "--approved-by", "zach")                                   # the human, at a terminal
    assert verify(repo) == []


def test_a_forged_measurement_is_refused_by_the_hub_and_verify(tmp_path):
    repo = era_at_work(tmp_path)
    hub = with_hub(tmp_path, repo)
    set_state_line(repo, "era-1", "context_pct", "3")
    git(repo, *UNHOOKED, "commit", "-qam", "@era-1: [STATE:deep_work] fresh as a daisy")
    assert verify(repo) == ["fourth-wall"]
    res = pushed(repo)
    assert res.returncode != 0 and "fourth-wall" in res.stderr
    # the trailer is what the hub reads where no keys exist: the wall is advisory there
    git(repo, *UNHOOKED, "commit", "-q", "--amend", "-m",
        "@era-1: [STATE:deep_work] measured\n\nMoved-by: gitstate runtime")
    assert verify(repo) == []
    assert pushed(repo).returncode == 0
    assert git(hub, "rev-parse", "main").stdout == git(repo, "rev-parse", "HEAD").stdout


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is missing")
def test_with_keys_the_runtimes_moves_are_signed_by_a_key_the_agent_does_not_hold(tmp_path,
                                                                                 monkeypatch):
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1", "--key")
    monkeypatch.setenv("GITSTATE_AGENT", "era-1")     # its own moves, signed with its key
    walk(repo, "era-1", "inbox")
    monkeypatch.delenv("GITSTATE_AGENT")
    runtime = tmp_path / "runtime-key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runtime", "-f",
                    str(runtime)], check=True, capture_output=True)
    lifecycle = repo / "protocols" / "lifecycle.yaml"
    lifecycle.write_text(lifecycle.read_text().replace(
        "  atomic_commits: true", "  movers: {operators: [runtime]}\n  atomic_commits: true"))
    (repo / "protocols" / "allowed_signers").write_text(
        f"runtime {Path(f'{runtime}.pub').read_text()}")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "law: the runtime's key", "-m", "Approved-by: zach")
    # the agent's own key signs a measurement with the runtime's trailer: not the runtime's
    monkeypatch.setenv("GITSTATE_AGENT", "era-1")
    res = as_runtime(repo, "era-1", "inbox", {"context_pct": 20})
    assert res.returncode != 0 and "must sign" in res.stderr, res.stdout + res.stderr
    set_state_line(repo, "era-1", "context_pct", "20")
    key = next(p for p in (Path(os.environ["HOME"]) / ".config" / "gitstate" / "keys").glob(
        "era-1-*") if p.suffix != ".pub")
    git(repo, *UNHOOKED, "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit",
        "-q", "-S", "-am", "@era-1: [STATE:inbox] measured\n\nMoved-by: gitstate runtime")
    assert verify(repo) == ["unsigned-move"]
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    # the runtime signs with its own key (where the agent's tools cannot read it)
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", str(runtime))
    res = as_runtime(repo, "era-1", "inbox", {"context_pct": 20})
    assert res.returncode == 0, res.stderr
    assert "\ngpgsig " in git(repo, "cat-file", "commit", "HEAD").stdout
    assert verify(repo) == []


# -- thread transitions happen in distill ---------------------------------------------------


def test_the_thread_changes_only_as_the_agent_leaves_distill(tmp_path):
    repo = era_at_work(tmp_path)
    res = gitstate(repo, "transition", "era-1", "deep_work", "--set", "thread=other")
    assert res.returncode == 1 and "[changes-in]" in res.stderr
    assert "era-1's thread changes only in a move that leaves distill" in res.stderr
    assert "keep thread as it was ('parser')" in res.stderr
    res = gitstate(repo, "transition", "era-1", "inbox", "--set", "thread=other")
    assert res.returncode == 1 and "[changes-in]" in res.stderr
    walk(repo, "era-1", "inbox", "distill")
    ok(repo, "transition", "era-1", "deep_work", "--set", "thread=other")   # chosen in distill
    hub = with_hub(tmp_path, repo)
    set_state_line(repo, "era-1", "thread", "a third")
    git(repo, *UNHOOKED, "commit", "-qam", "@era-1: [STATE:deep_work] switched quietly")
    assert verify(repo) == ["changes-in"]
    res = pushed(repo)
    assert res.returncode != 0 and "changes-in" in res.stderr
    assert git(hub, "rev-parse", "main").stdout != git(repo, "rev-parse", "HEAD").stdout


# -- every work commit names its agent --------------------------------------------------------


def era_naming_agents(tmp_path: Path) -> Path:
    repo = era_at_work(tmp_path)
    lifecycle = repo / "protocols" / "lifecycle.yaml"
    lifecycle.write_text(lifecycle.read_text().replace(
        "  # work_commits_name_agent: true", "  work_commits_name_agent: true"))
    git(repo, "commit", "-qam", "law: every work commit names its agent", "-m",
        "Approved-by: zach")
    return repo


def test_the_seeds_bad_commit_is_refused_by_the_hub_and_verify_where_the_law_asks(tmp_path):
    repo = era_naming_agents(tmp_path)
    hub = with_hub(tmp_path, repo)
    (repo / "mywork.py").write_text("x = 1\n")
    git(repo, "add", "mywork.py")
    git(repo, "commit", "-qm", "Updated feature")     # a person's terminal: the hooks let it be
    assert verify(repo) == ["unnamed-work"]
    res = pushed(repo)
    assert res.returncode != 0 and "unnamed-work" in res.stderr
    assert "'@<id>: [STATE:<state>] <text>'" in res.stderr and "Approved-by: zach" in res.stderr
    # a human's (the law has no allowed_signers: the trailer), or the agent's, with its state
    git(repo, "commit", "-q", "--amend", "-m", "Updated feature", "-m", "Approved-by: zach")
    assert verify(repo) == []
    (repo / "mywork.py").write_text("x = 2\n")
    git(repo, "add", "mywork.py")
    ok(repo, "transition", "era-1", "deep_work", "-m", "parser: x")
    assert pushed(repo).returncode == 0
    assert git(hub, "rev-parse", "main").stdout == git(repo, "rev-parse", "HEAD").stdout


def test_without_the_policy_an_unnamed_commit_is_only_refused_locally_to_a_bound_agent(tmp_path):
    repo = era_at_work(tmp_path)
    with_hub(tmp_path, repo)
    (repo / "mywork.py").write_text("x = 1\n")
    git(repo, "add", "mywork.py")
    res = bound(repo, "era-1", "git", "commit", "-qm", "Updated feature")
    assert res.returncode == 1 and "[atomic]" in res.stderr
    git(repo, "commit", "-qm", "Updated feature")
    assert verify(repo) == [] and pushed(repo).returncode == 0


# -- the token budget -------------------------------------------------------------------------


def test_a_state_file_without_a_budget_has_the_lifecycles_default(tmp_path):
    repo = era_at_work(tmp_path)
    ok(repo, "transition", "era-1", "deep_work", "--set", "tokens=99999",
       "--approved-by", "zach")                   # no max_tokens declared: no budget
    lifecycle = repo / "protocols" / "lifecycle.yaml"
    lifecycle.write_text(lifecycle.read_text() + "\ndefaults:\n  max_tokens: 50000\n")
    git(repo, "commit", "-qam", "law: a budget for all", "-m", "Approved-by: zach")
    res = gitstate(repo, "transition", "era-1", "deep_work", "-m", "more")
    assert res.returncode == 1 and "[token-limit]" in res.stderr
    assert "the lifecycle's default max_tokens (its own is not set) 50,000" in res.stderr
    # `max_tokens: null` is a budget not set: the default holds
    ok(repo, "transition", "era-1", "deep_work", "--set", "max_tokens=null", "--set",
       "tokens=100", "--approved-by", "zach")
    set_state_line(repo, "era-1", "tokens", "99999")
    git(repo, *UNHOOKED, "commit", "-qam", "@era-1: [STATE:deep_work] over\n\nApproved-by: zach")
    assert verify(repo) == ["token-limit"]


# -- the lifecycle's words ----------------------------------------------------------------------


def test_the_walls_are_checked_when_the_lifecycle_is_loaded():
    from gitstate.errors import InvalidFile
    from gitstate.law.load import load_lifecycle
    from gitstate.resources import preset_dir
    era = (preset_dir("era") / "lifecycle.yaml").read_text()
    lc = load_lifecycle(era)
    assert lc.policies.fourth_wall and lc.policies.changes_in == {"thread": ("distill",)}
    assert not lc.policies.work_commits_name_agent
    for bad, said in (("fourth_wall: true", "fourth_wall: maybe"),
                      ("thread: [distill]", "thread: [dstill]"),
                      ("thread: [distill]", "updated: [distill]"),
                      ("atomic_commits: true", "atomic_commits: true\n  movers: {system: "
                                               "['logout -> nowhere']}")):
        with pytest.raises(InvalidFile) as err:
            load_lifecycle(era.replace(bad, said, 1))
        assert "lifecycle.yaml:" in str(err.value)
    assert "dstill" in _problem(era.replace("thread: [distill]", "thread: [dstill]", 1))


def _problem(text: str) -> str:
    from gitstate.errors import InvalidFile
    from gitstate.law.load import load_lifecycle
    try:
        load_lifecycle(text)
    except InvalidFile as exc:
        return str(exc)
    return ""


def test_a_move_the_lifecycle_names_as_the_systems_is_the_runtimes_or_a_humans(tmp_path):
    repo = managed(tmp_path, "era")
    lifecycle = repo / "protocols" / "lifecycle.yaml"
    lifecycle.write_text(lifecycle.read_text().replace(
        "  atomic_commits: true", "  movers: {system: ['logout -> bootstrap']}\n"
        "  atomic_commits: true"))
    git(repo, "commit", "-qam", "law: the cold start is the system's", "-m", "Approved-by: zach")
    assert "makes logout -> bootstrap" in ok(repo, "lifecycle").stdout
    ok(repo, "spawn", "era-1")
    walk(repo, "era-1", "inbox", "distill")
    ok(repo, "logout", "era-1", "--note", "bye")
    res = bound(repo, "era-1", sys.executable, "-m", "gitstate", "transition", "era-1",
                "bootstrap")
    assert res.returncode == 1 and "[fourth-wall]" in res.stderr
    assert "era-1's move logout -> bootstrap is the system's" in res.stderr
    ok(repo, "transition", "era-1", "bootstrap", "--approved-by", "zach")
    assert verify(repo) == []


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is missing")
def test_with_allowed_signers_a_humans_unnamed_commit_is_proven_by_the_signature(tmp_path):
    repo = era_naming_agents(tmp_path)
    zach = tmp_path / "zach"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zach", "-f",
                    str(zach)], check=True, capture_output=True)
    (repo / "protocols" / "allowed_signers").write_text(f"zach {Path(f'{zach}.pub').read_text()}")
    git(repo, "add", "protocols/allowed_signers")
    git(repo, "-c", "gpg.format=ssh", "-c", f"user.signingkey={zach}", "commit", "-q", "-S",
        "-m", "law: zach's key", "-m", "Approved-by: zach")
    (repo / "mywork.py").write_text("x = 1\n")
    git(repo, "add", "mywork.py")
    git(repo, "commit", "-qm", "Updated feature", "-m", "Approved-by: zach")   # typed: no proof
    assert verify(repo) == ["unnamed-work"]
    git(repo, "-c", "gpg.format=ssh", "-c", f"user.signingkey={zach}", "commit", "-q",
        "--amend", "-S", "-m", "Updated feature")                            # signed by zach
    assert verify(repo) == []


def test_a_hand_picked_idle_stamp_is_refused_by_every_door(tmp_path):
    """Seed 004: the state file's stamps are "objective measurements agents cannot
    self-assess": the move into idle writes idle_since as its own time, never one picked."""
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    walk(repo, "era-1", "inbox", "distill")
    before = snapshot(repo)
    res = gitstate(repo, "transition", "era-1", "idle", "--set",
                   "idle_since=2020-01-01T00:00:00Z")
    assert res.returncode == 1 and "[fourth-wall]" in res.stderr, res.stderr
    assert "era-1's idle_since is the time of the move that writes it" in res.stderr
    assert "no `--set idle_since=...`" in res.stderr            # what is legal instead
    assert snapshot(repo) == before
    ok(repo, "transition", "era-1", "idle")                      # its own stamp: accepted
    assert verify(repo) == []
    # with the hooks off, the hub and verify refuse the picked stamp
    hub = with_hub(tmp_path, repo)
    walk(repo, "era-1", "inbox", "distill")
    git(repo, "push", "-q", "origin", "main")
    set_state_line(repo, "era-1", "state", "idle")
    set_state_line(repo, "era-1", "idle_since", "2020-01-01T00:00:00Z")
    git(repo, *UNHOOKED, "commit", "-qam", "@era-1: [STATE:idle] waiting since long ago")
    assert verify(repo) == ["fourth-wall"]
    res = pushed(repo)
    assert res.returncode != 0 and "fourth-wall" in res.stderr, res.stderr
    assert git(hub, "rev-parse", "main").stdout != git(repo, "rev-parse", "HEAD").stdout


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is missing")
@pytest.mark.parametrize("op", ["sweep", "reap", "shutdown"])
def test_a_team_operations_trailer_on_a_move_not_of_its_kind_does_not_pass_the_wall(
        tmp_path, monkeypatch, op):
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1", "--key")
    monkeypatch.setenv("GITSTATE_AGENT", "era-1")
    walk(repo, "era-1", "inbox")
    hub = with_hub(tmp_path, repo)
    # the agent signs a measurement of itself with its own key, naming a team operation
    set_state_line(repo, "era-1", "context_pct", "20")
    key = next(p for p in (Path(os.environ["HOME"]) / ".config" / "gitstate" / "keys").glob(
        "era-1-*") if p.suffix != ".pub")
    res = git(repo, "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q",
              "-S", "-am", f"@era-1: [STATE:inbox] measured\n\nMoved-by: gitstate {op}",
              check=False)
    assert res.returncode != 0 and "fourth-wall" in res.stderr, res.stderr
    git(repo, *UNHOOKED, "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit",
        "-q", "-S", "-am", f"@era-1: [STATE:inbox] measured\n\nMoved-by: gitstate {op}")
    assert verify(repo) == ["fourth-wall"]
    res = pushed(repo)
    assert res.returncode != 0 and "fourth-wall" in res.stderr
    assert git(hub, "rev-parse", "main").stdout != git(repo, "rev-parse", "HEAD").stdout


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is missing")
def test_a_team_operations_trailer_covers_its_move_but_not_a_measurement_made_with_it(
        tmp_path, monkeypatch):
    """A move of shutdown's own kind (inbox -> distill, nearer logout) may say `Moved-by: gitstate shutdown`;
    the agent's own context_pct changed in the same commit is still the runtime's."""
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1", "--key")
    monkeypatch.setenv("GITSTATE_AGENT", "era-1")
    walk(repo, "era-1", "inbox")
    hub = with_hub(tmp_path, repo)
    key = next(p for p in (Path(os.environ["HOME"]) / ".config" / "gitstate" / "keys").glob(
        "era-1-*") if p.suffix != ".pub")
    signed = ("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}")
    set_state_line(repo, "era-1", "state", "distill")
    set_state_line(repo, "era-1", "context_pct", "5")
    message = "@era-1: [STATE:distill] shutdown\n\nMoved-by: gitstate shutdown"
    before = snapshot(repo)
    res = git(repo, *signed, "commit", "-q", "-S", "-am", message, check=False)
    assert res.returncode != 0 and "fourth-wall" in res.stderr, res.stderr
    assert "era-1's context_pct" in res.stderr
    assert snapshot(repo) == before
    git(repo, *UNHOOKED, *signed, "commit", "-q", "-S", "-am", message)
    assert "fourth-wall" in verify(repo)
    res = pushed(repo)
    assert res.returncode != 0 and "fourth-wall" in res.stderr
    assert git(hub, "rev-parse", "main").stdout != git(repo, "rev-parse", "HEAD").stdout
    # the agent's own move, signed by its key, without the measurement, passes every door
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    set_state_line(repo, "era-1", "state", "distill")
    git(repo, *signed, "commit", "-q", "-S", "-am", "@era-1: [STATE:distill] done")
    assert verify(repo) == []
    assert pushed(repo).returncode == 0
