"""Who may move whom (README "Who may move whom"): a session bound to an agent is refused
moves of others (`not-yours`) at every local door; an agent with a key is moved only by a
commit signed by a key of someone the law lets move it (`unsigned-move`) at the hub and in
`verify --no-cache`; team operations and humans are proven as the README says."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import (
    UNHOOKED,
    fill_freeze_state,
    git,
    gitstate,
    make_repo,
    managed_repo,
    set_state_line,
    snapshot,
    walk,
)
from hubs import make_hub
from trusthelp import run_git

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                reason="ssh-keygen is missing (install openssh-client)")


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])   # the test's own (conftest isolates it)


def keys_dir(home: Path) -> Path:
    return home / ".config" / "gitstate" / "keys"


def private_key(home: Path, agent: str) -> Path:
    found = [p for p in keys_dir(home).glob(f"{agent}-*") if p.suffix != ".pub"]
    assert len(found) == 1, found
    return found[0]


def rules(res) -> list[str]:
    return [p["rule"] for p in json.loads(res.stdout)["problems"]]


def verify(repo: Path) -> list[str]:
    return rules(gitstate(repo, "verify", "--no-cache", "--json"))


def hand_move(repo: Path, agent: str, old: str, new: str, *, sign: Path | None = None,
              trailer: str = "") -> None:
    """Move `agent` by hand from a clone without hooks, signed with `sign` if given."""
    set_state_line(repo, agent, "state", new)
    if new in ("dead", "done", "failed"):
        set_state_line(repo, agent, "final_summary", "ended by hand")
    git(repo, "add", "-A")
    signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={sign}"] if sign else []
    message = f"@{agent}: [STATE:{new}] by hand" + (f"\n\n{trailer}" if trailer else "")
    git(repo, *UNHOOKED, *signing, "commit", "-q", *(["-S"] if sign else []), "-m", message)


@pytest.fixture
def haak(tmp_path, monkeypatch):
    repo = managed_repo(tmp_path / "repo")
    for agent in ("alice", "bob"):
        assert gitstate(repo, "spawn", agent).returncode == 0
        walk(repo, agent, "inbox")
    return repo


# -- the local doors: a session's binding ------------------------------------------------


def test_a_session_bound_to_alice_moves_no_one_else(haak, monkeypatch):
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    before = snapshot(haak)
    for args in (["bury", "bob", "--summary", "cleaned up"], ["transition", "bob", "dead"]):
        res = gitstate(haak, *args)
        assert res.returncode == 1 and "[not-yours]" in res.stderr, res.stderr
        assert "alice may not move bob" in res.stderr and "bob itself" in res.stderr
        assert snapshot(haak) == before
    set_state_line(haak, "bob", "state", "distill")
    git(haak, "add", "-A")
    res = git(haak, "commit", "-q", "-m", "@bob: [STATE:distill] by hand", check=False)
    assert res.returncode != 0 and "[not-yours]" in res.stderr
    res = git(haak, "commit", "-q", "--no-verify", "-m", "@bob: [STATE:distill] by hand",
              check=False)   # the ref guard holds too
    assert res.returncode != 0 and "not-yours" in res.stderr
    git(haak, "reset", "-q", "--hard")
    assert gitstate(haak, "transition", "alice", "distill").returncode == 0   # its own: fine


def test_a_shutdown_trailer_carries_only_moves_towards_rest(haak, monkeypatch):
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    set_state_line(haak, "bob", "state", "distill")       # further from rest than inbox
    git(haak, "add", "-A")
    res = git(haak, "commit", "-q", "-m",
              "@bob: [STATE:distill] by hand\n\nMoved-by: gitstate shutdown", check=False)
    assert res.returncode != 0 and "[not-yours]" in res.stderr
    assert "`gitstate shutdown`" not in res.stderr          # not a move shutdown makes
    git(haak, "reset", "-q", "--hard")


def test_a_typed_reap_or_shutdown_trailer_is_no_proof_in_an_agents_session(haak, monkeypatch):
    """alice's session writes bob dead and types `Moved-by: gitstate shutdown` (or reap): the
    trailer proves nothing there, as a typed approval does not; sweep's is proven by time."""
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    set_state_line(haak, "bob", "state", "dead")
    set_state_line(haak, "bob", "final_summary", "killed by alice")
    git(haak, "add", "-A")
    for op in ("shutdown", "reap"):
        res = git(haak, "commit", "-q", "-m",
                  f"@bob: [STATE:dead] bye\n\nMoved-by: gitstate {op}", check=False)
        assert res.returncode != 0 and "[not-yours]" in res.stderr, res.stderr
        assert "from a terminal no agent is bound to" in res.stderr
        res = git(haak, "commit", "-q", "--no-verify", "-m",
                  f"@bob: [STATE:dead] bye\n\nMoved-by: gitstate {op}", check=False)
        assert res.returncode != 0 and "not-yours" in res.stderr       # the ref guard too
    git(haak, "reset", "-q", "--hard")
    monkeypatch.delenv("GITSTATE_AGENT")
    assert gitstate(haak, "shutdown").returncode == 0        # a lead's terminal: as before


def test_without_a_binding_nothing_changes(haak):
    assert gitstate(haak, "bury", "bob", "--summary", "done").returncode == 0
    assert verify(haak) == []


def _freeze_bob(repo: Path) -> None:
    assert gitstate(repo, "freeze", "bob").returncode == 1   # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "bob.md")
    assert gitstate(repo, "freeze", "bob").returncode == 0


def _wake_by_hand(repo: Path, env: dict[str, str]):
    """bob woken by a commit of its state file with `Approved-by: zach`, through the installed
    hooks, made with `env` added to the environment."""
    set_state_line(repo, "bob", "state", "bootstrap")
    git(repo, "add", "-A")
    return run_git(repo, "commit", "-q", "-m", "@bob: [STATE:bootstrap] woken",
                   "-m", "Approved-by: zach", env=env, check=False)


def test_an_agent_does_not_approve_as_a_human_by_typing_the_name(haak, monkeypatch):
    """Until protocols/allowed_signers is committed, a gated move made from an agent's session
    (bound, or under a runtime) is refused: its `Approved-by: zach` proves nothing."""
    _freeze_bob(haak)
    before = snapshot(haak)
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    res = gitstate(haak, "wake", "bob", "--approved-by", "zach")
    assert res.returncode == 1 and "[agent-approval]" in res.stderr, res.stderr
    assert "bob frozen -> bootstrap is approved by zach" in res.stderr
    assert "bound to agent alice" in res.stderr and "from a terminal of their own" in res.stderr
    assert snapshot(haak) == before
    monkeypatch.delenv("GITSTATE_AGENT")
    for env, said in (({"GITSTATE_AGENT": "alice"}, "bound to agent alice"),
                      ({"CLAUDECODE": "1"}, "an agent runtime's (CLAUDECODE is set)")):
        res = _wake_by_hand(haak, env)
        assert res.returncode != 0 and "[agent-approval]" in res.stderr, res.stderr
        assert said in res.stderr
        assert snapshot(haak)[0] == before[0]               # HEAD did not move
        git(haak, "reset", "-q", "--hard")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "a-session-of-no-agent")   # unbound, a runtime
    res = gitstate(haak, "wake", "bob", "--approved-by", "zach")
    assert res.returncode == 1 and "(CLAUDE_CODE_SESSION_ID is set)" in res.stderr, res.stderr
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    # a change of the law too
    law = haak / "protocols" / "lifecycle.yaml"
    law.write_text(law.read_text() + "# a comment\n")
    git(haak, "add", "-A")
    res = run_git(haak, "commit", "-q", "-m", "law: a comment", "-m", "Approved-by: zach",
                  env={"GITSTATE_AGENT": "alice"}, check=False)
    assert res.returncode != 0 and "[agent-approval]" in res.stderr, res.stderr
    assert "a change of the law (protocols/lifecycle.yaml)" in res.stderr
    # with the commit hooks skipped, the ref guard judges it the same way
    res = run_git(haak, "commit", "-q", "--no-verify", "-m", "law: a comment", "-m",
                  "Approved-by: zach", env={"GITSTATE_AGENT": "alice"}, check=False)
    assert res.returncode != 0 and "[agent-approval]" in res.stderr, res.stderr
    assert snapshot(haak)[0] == before[0]
    git(haak, "reset", "-q", "--hard")
    # a person at a terminal, outside any agent's session: the trailer counts, as before
    res = gitstate(haak, "wake", "bob", "--approved-by", "zach")
    assert res.returncode == 0, res.stderr
    assert "Approved-by: zach" in git(haak, "log", "-1", "--format=%B").stdout
    assert verify(haak) == []


def test_with_allowed_signers_the_humans_signature_decides(haak, tmp_path, monkeypatch):
    """Once protocols/allowed_signers is in the law, an agent's session is not refused for
    typing a name: the signature is judged instead (`unsigned-approval`)."""
    import subprocess
    zach = tmp_path / "zach"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zach", "-f",
                    str(zach)], check=True, capture_output=True)
    (haak / "protocols" / "allowed_signers").write_text(f"zach {Path(f'{zach}.pub').read_text()}")
    git(haak, "add", "-A")
    git(haak, "commit", "-q", "-m", "law: zach's key", "-m", "Approved-by: zach")
    _freeze_bob(haak)
    res = _wake_by_hand(haak, {"GITSTATE_AGENT": "alice"})
    assert res.returncode != 0 and "[unsigned-approval]" in res.stderr, res.stderr
    assert "agent-approval" not in res.stderr
    git(haak, "reset", "-q", "--hard")
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    res = gitstate(haak, "wake", "bob", "--approved-by", "zach")
    assert res.returncode == 1 and "must be signed by a key of zach" in res.stderr, res.stderr
    git(haak, "config", "gpg.format", "ssh")
    git(haak, "config", "user.signingkey", str(zach))
    res = gitstate(haak, "wake", "bob", "--approved-by", "zach")   # zach's key signs
    assert res.returncode == 0, res.stderr
    assert verify(haak) == []


# -- keys, the hub and verify -----------------------------------------------------------


@pytest.fixture
def registry(tmp_path, home):
    """A registry hub; a clone where root spawned bob (with a key) and alice (with one)."""
    hub = make_hub(tmp_path / "hub.git")
    seed = make_repo(tmp_path / "seed")
    (seed / "README").write_text("hello\n")
    git(seed, "add", "README")
    git(seed, "commit", "-q", "-m", "first")
    assert gitstate(seed, "init", "--lifecycle", "registry").returncode == 0
    for args in (["root", "--role", "general", "--key"],
                 ["bob", "--parent", "root", "--role", "programmer", "--key"],
                 ["alice", "--role", "general", "--key"]):
        res = gitstate(seed, "spawn", *args)
        assert res.returncode == 0, res.stderr
    git(seed, "remote", "add", "origin", str(hub))
    res = git(seed, "push", "-q", "-u", "origin", "main", check=False)
    assert res.returncode == 0, res.stderr
    return hub, seed


def test_keys_are_made_kept_outside_the_repo_and_recorded_at_birth(registry, home):
    _hub, seed = registry
    text = (seed / "agent" / "bob" / "_state.md").read_text()
    pub = (Path(f"{private_key(home, 'bob')}.pub")).read_text().split()
    assert f"key: {pub[0]} {pub[1]}" in text
    assert not list(seed.rglob("bob-*"))
    # the birth of bob (root has a key) is signed by root's key
    assert "gpgsig" in git(seed, "cat-file", "-p", "HEAD~1").stdout
    set_state_line(seed, "bob", "key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIForged")
    git(seed, "add", "-A")
    res = git(seed, "commit", "-q", "-m", "@bob: [STATE:in-progress] new key", check=False)
    assert res.returncode != 0 and "[fixed-field]" in res.stderr


def test_an_unsigned_move_of_a_keyed_agent_is_refused_by_the_hub_and_verify(registry):
    _hub, seed = registry
    hand_move(seed, "bob", "in-progress", "failed")
    assert verify(seed) == ["unsigned-move"]
    res = git(seed, "push", "-q", "origin", "main", check=False)
    assert res.returncode != 0 and "unsigned-move" in res.stderr


def test_signed_by_the_agent_or_by_its_parent_where_the_law_allows(registry, home,
                                                                   monkeypatch):
    _hub, seed = registry
    hand_move(seed, "bob", "in-progress", "done", sign=private_key(home, "root"))
    assert verify(seed) == []
    assert git(seed, "push", "-q", "origin", "main", check=False).returncode == 0
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    res = gitstate(seed, "transition", "alice", "done")   # signed with the bound alice's key
    assert res.returncode == 0, res.stderr
    assert "gpgsig" in git(seed, "cat-file", "-p", "HEAD").stdout
    assert git(seed, "push", "-q", "origin", "main", check=False).returncode == 0


def test_a_command_never_signs_with_the_moved_agents_key_for_someone_else(registry, home,
                                                                          monkeypatch):
    """The key folder holds alice's key (every agent of this user has one there): a command
    that is not alice's does not sign alice's move with it. Unbound, her end is left unsigned,
    and the hub refuses it; bound to bob, the key chosen is bob's, never hers."""
    hub, seed = registry
    res = gitstate(seed, "transition", "alice", "done")      # a person at a terminal
    assert res.returncode == 0, res.stderr
    assert "gpgsig" not in git(seed, "cat-file", "-p", "HEAD").stdout
    assert verify(seed) == ["unsigned-move"]
    res = git(seed, "push", "-q", "origin", "main", check=False)
    assert res.returncode != 0 and "unsigned-move" in res.stderr
    git(seed, "reset", "-q", "--hard", "HEAD~1")
    from gitstate.git.repo import open_managed
    from gitstate.moves.principals import signing_key
    repo = open_managed(str(seed))
    head = repo.git.head()
    lc, _path, alice = repo.agent_doc("alice", head)
    _lc, _path, bob = repo.agent_doc("bob", head)
    done = ("in-progress", "done")
    assert signing_key(repo, lc, head, "alice", alice.front, done) is None
    monkeypatch.setenv("GITSTATE_AGENT", "bob")
    assert signing_key(repo, lc, head, "alice", alice.front, done) == \
        str(private_key(home, "bob"))
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    assert signing_key(repo, lc, head, "alice", alice.front, done) == \
        str(private_key(home, "alice"))
    monkeypatch.delenv("GITSTATE_AGENT")       # unbound: the parent, for a move the law gives it
    assert signing_key(repo, lc, head, "bob", bob.front, done) == str(private_key(home, "root"))
    monkeypatch.setenv("GITSTATE_AGENT", "bob")
    res = gitstate(seed, "transition", "alice", "done")      # and bob may not move alice
    assert res.returncode == 1 and "[not-yours]" in res.stderr
    assert git(hub, "rev-parse", "main").stdout == git(seed, "rev-parse", "HEAD").stdout


def test_a_registry_orchestrator_ends_its_child(registry, monkeypatch):
    _hub, seed = registry
    monkeypatch.setenv("GITSTATE_AGENT", "root")
    res = gitstate(seed, "transition", "bob", "done", "-m", "the parent records the end")
    assert res.returncode == 0, res.stderr
    assert git(seed, "push", "-q", "origin", "main", check=False).returncode == 0
    monkeypatch.setenv("GITSTATE_AGENT", "alice")   # not alice: she is no parent of root
    res = gitstate(seed, "transition", "root", "done")
    assert res.returncode == 1 and "[not-yours]" in res.stderr


def test_forged_signatures_are_refused(registry, home):
    _hub, seed = registry
    hand_move(seed, "bob", "in-progress", "done", sign=private_key(home, "alice"))
    assert verify(seed) == ["unsigned-move"]          # another agent's key
    git(seed, "reset", "-q", "--hard", "HEAD~1")
    # a signature copied from another commit does not verify
    hand_move(seed, "bob", "in-progress", "done", sign=private_key(home, "bob"))
    signed = git(seed, "cat-file", "commit", "HEAD").stdout
    git(seed, "reset", "-q", "--hard", "HEAD~1")
    hand_move(seed, "bob", "in-progress", "failed")
    body = git(seed, "cat-file", "commit", "HEAD").stdout
    sig = signed[signed.index("gpgsig"):signed.index("\n\n")]
    head, _, rest = body.partition("\n\n")
    forged = git(seed, "hash-object", "-t", "commit", "-w", "--stdin",
                 input=f"{head}\n{sig}\n\n{rest}").stdout.strip()
    git(seed, *UNHOOKED, "update-ref", "refs/heads/main", forged)   # the guard refuses it too
    assert verify(seed) == ["unsigned-move"]
    git(seed, "reset", "-q", "--hard", "HEAD~1")
    # a key changed in the same push: refused (fixed-field), and the push with it
    mallory = private_key(home, "alice")
    set_state_line(seed, "bob", "key", Path(f"{mallory}.pub").read_text().strip())
    git(seed, "add", "-A")
    git(seed, *UNHOOKED, "commit", "-q", "-m", "@bob: [STATE:in-progress] new key")
    hand_move(seed, "bob", "in-progress", "done", sign=mallory)
    assert "fixed-field" in verify(seed)
    res = git(seed, "push", "-q", "origin", "main", check=False)
    assert res.returncode != 0 and "fixed-field" in res.stderr


def test_team_operations_are_proven_by_time_or_by_an_operator(tmp_path, monkeypatch):
    repo = managed_repo(tmp_path / "repo", "--lifecycle", "squad")
    assert gitstate(repo, "spawn", "keaton", "--key").returncode == 0
    monkeypatch.setenv("GITSTATE_AGENT", "keaton")   # keaton's moves, signed with its key
    walk(repo, "keaton", "active")
    hour_ago = f"@{int(time.time()) - 3600} +0000"
    monkeypatch.setenv("GIT_COMMITTER_DATE", hour_ago)
    monkeypatch.setenv("GIT_AUTHOR_DATE", hour_ago)
    walk(repo, "keaton", "idle")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.setenv("GITSTATE_AGENT", "someone-else")   # sweep acts for the team
    res = gitstate(repo, "sweep")
    assert res.returncode == 0 and "idle -> suspended" in res.stdout, res.stderr
    message = git(repo, "log", "-1", "--format=%B").stdout
    assert "Moved-by: gitstate sweep" in message and "gitstate" in git(
        repo, "log", "-1", "--format=%an").stdout
    assert verify(repo) == []
    # a Moved-by: written by hand proves nothing: reap's end needs a human's signature
    monkeypatch.setenv("GITSTATE_AGENT", "keaton")
    walk(repo, "keaton", "active")
    monkeypatch.delenv("GITSTATE_AGENT")
    hand_move(repo, "keaton", "active", "error", trailer="Moved-by: gitstate reap")
    assert verify(repo) == ["unsigned-move"]


def test_a_sweep_is_proven_at_the_hub_by_the_hubs_own_clock(tmp_path, monkeypatch):
    repo = managed_repo(tmp_path / "repo", "--lifecycle", "squad")
    hub = make_hub(tmp_path / "hub.git")
    git(repo, "remote", "add", "origin", str(hub))
    assert gitstate(repo, "spawn", "keaton", "--key").returncode == 0
    monkeypatch.setenv("GITSTATE_AGENT", "keaton")   # keaton's moves, signed with its key
    walk(repo, "keaton", "active")
    hour_ago = int(time.time()) - 3600
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{hour_ago} +0000")
    walk(repo, "keaton", "idle")                   # idle for an hour by the commit's date
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    git(repo, "push", "-q", "-u", "origin", "main")
    idle = git(repo, "rev-parse", "HEAD").stdout.strip()
    monkeypatch.setenv("GITSTATE_AGENT", "someone-else")          # sweep acts for the team
    # the hub received that idle a moment ago: by its own clock the move is not due yet
    res = gitstate(repo, "sweep", "--push")
    assert res.returncode != 0 and git(hub, "rev-parse", "main").stdout.strip() == idle
    assert git(repo, "rev-parse", "HEAD").stdout.strip() == idle
    # an hour later at the hub (its record of reception says so): due, and accepted
    git(hub, "notes", "--ref=refs/notes/gitstate-received", "add", "-f", "-m",
        f"received {hour_ago}", idle)
    git(repo, "reset", "-q", "--hard", idle)
    res = gitstate(repo, "sweep", "--push")
    assert res.returncode == 0 and "idle -> suspended" in res.stdout, res.stdout + res.stderr
    assert "Moved-by: gitstate sweep" in git(hub, "log", "-1", "--format=%B", "main").stdout


def test_shutdown_of_a_keyed_agent_is_signed_by_a_human_or_refused_first(tmp_path, home,
                                                                          monkeypatch):
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is missing (install openssh-client)")
    repo = managed_repo(tmp_path / "repo", "--lifecycle", "squad")
    assert gitstate(repo, "spawn", "keaton", "--key").returncode == 0
    monkeypatch.setenv("GITSTATE_AGENT", "keaton")   # its own move, signed with its key
    walk(repo, "keaton", "active")
    monkeypatch.delenv("GITSTATE_AGENT")           # shutdown: run by a person at a terminal
    before = snapshot(repo)
    res = gitstate(repo, "shutdown")
    assert res.returncode != 0 and "must sign" in res.stderr and "zach" in res.stderr, res.stderr
    assert snapshot(repo) == before                        # refused before any commit
    # zach's key in the law, and this clone signing with it: shutdown signs, verify agrees
    zach = tmp_path / "zach"
    import subprocess
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zach", "-f",
                    str(zach)], check=True, capture_output=True)
    (repo / "protocols" / "allowed_signers").write_text(
        f"zach {Path(f'{zach}.pub').read_text()}")
    git(repo, "add", "protocols/allowed_signers")
    git(repo, "commit", "-q", "-m", "law: zach's key", "-m", "Approved-by: zach")
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", str(zach))
    res = gitstate(repo, "shutdown")
    assert res.returncode == 0, res.stderr
    assert "Moved-by: gitstate shutdown" in git(repo, "log", "-1", "--format=%B").stdout
    assert "\ngpgsig " in git(repo, "cat-file", "commit", "HEAD").stdout     # signed
    assert verify(repo) == []


def test_the_lifecycle_says_who_may_move_whom(tmp_path):
    repo = managed_repo(tmp_path / "repo", "--lifecycle", "registry")
    out = gitstate(repo, "lifecycle").stdout
    assert "who may move whom:" in out
    assert "its parent may also move it: in-progress -> done, in-progress -> failed" in out
    lc = json.loads(gitstate(repo, "lifecycle", "--json").stdout)
    assert lc["policies"]["movers"]["parent"] == ["in-progress -> done",
                                                  "in-progress -> failed"]


def test_doctor_says_whose_moves_are_unauthenticated(haak, monkeypatch):
    found = {f["check"]: f for f in json.loads(gitstate(haak, "doctor", "--json").stdout)
             ["findings"]}
    assert found["binding"]["status"] == "warn"
    assert "alice, bob" in found["movers"]["detail"]
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    found = {f["check"]: f for f in json.loads(gitstate(haak, "doctor", "--json").stdout)
             ["findings"]}
    assert found["binding"]["status"] == "ok"


def test_doctor_warns_when_this_user_can_read_several_agents_keys(registry, home, tmp_path,
                                                                  monkeypatch):
    """Keys tell agents apart only if each agent's tools can read its key alone."""
    _hub, seed = registry

    def findings() -> dict:
        found = json.loads(gitstate(seed, "doctor", "--json").stdout)["findings"]
        return {f["check"]: f for f in found if f["check"] == "keys"}

    keys = findings()["keys"]
    assert keys["status"] == "warn" and "3 agents (alice, bob, root)" in keys["detail"]
    assert "own OS user" in keys["fix"]
    alone = tmp_path / "bob-alone"                  # bob's user: its own key, no other
    alone.mkdir()
    for part in (private_key(home, "bob"), Path(f"{private_key(home, 'bob')}.pub")):
        shutil.copy(part, alone / part.name)
    monkeypatch.setenv("GITSTATE_KEYS", str(alone))
    assert findings() == {}
