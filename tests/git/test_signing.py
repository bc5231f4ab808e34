"""Signed approvals (the README's "What gitstate promises"): where protocols/allowed_signers
exists, a gated move must be in a commit signed by a key of the human its Approved-by: trailer
names. Keys are made with ssh-keygen in temporary folders: unsigned, signed by another human,
signed by a key not listed, and the genuine case."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import UNHOOKED, fill_freeze_state, from_template, git, gitstate, make_repo, \
    on_a_terminal, set_state_line, walk

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                reason="ssh-keygen is missing (install openssh-client)")

_KEYS: dict[str, Path] = {}


def key(tmp_path_factory, name: str) -> Path:
    if name not in _KEYS:
        where = tmp_path_factory.mktemp(f"key-{name}") / "id_ed25519"
        git(where.parent, "version")   # any cwd will do
        import subprocess
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
                        str(where)], check=True, capture_output=True)
        _KEYS[name] = where
    return _KEYS[name]


def pub(path: Path) -> str:
    return Path(f"{path}.pub").read_text().strip()


def use_key(repo: Path, path: Path | None) -> None:
    git(repo, "config", "gpg.format", "ssh")
    if path is None:
        git(repo, "config", "--unset", "user.signingkey", check=False)
    else:
        git(repo, "config", "user.signingkey", str(path))


@pytest.fixture
def keyed(tmp_path, tmp_path_factory):
    """A managed repo whose humans are zach and ana, with their keys in allowed_signers, and
    alice frozen (a copy of one built once per session)."""
    zach, ana = key(tmp_path_factory, "zach"), key(tmp_path_factory, "ana")
    from_template(tmp_path, ("signing-keyed", str(zach), str(ana)),    # this worker's keys
                  lambda root: _keyed(root / "repo", zach, ana))
    return tmp_path / "repo", {"zach": zach, "ana": ana, "mallory": key(tmp_path_factory, "mallory")}


def _keyed(path: Path, zach: Path, ana: Path) -> None:
    repo = make_repo(path)
    (repo / "README").write_text("hello\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    res = gitstate(repo, "init", "--human", "zach", "--human", "ana")
    assert res.returncode == 0
    assert "user.signingkey" in res.stdout and "zach $(cat ~/.ssh/id_ed25519.pub)" in res.stdout
    (repo / "protocols" / "allowed_signers").write_text(
        f"zach {pub(zach)}\nana {pub(ana)}\n")
    git(repo, "add", "protocols/allowed_signers")
    git(repo, "commit", "-q", "-m", "law: the humans' keys", "-m", "Approved-by: zach")
    assert "approvals: signed with the keys" in gitstate(repo, "init").stdout
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox", "distill")
    assert gitstate(repo, "freeze", "alice").returncode == 1        # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "alice.md")
    assert gitstate(repo, "freeze", "alice").returncode == 0


def verify_rules(repo: Path) -> list[str]:
    res = gitstate(repo, "verify", "--no-cache", "--json")
    return [p["rule"] for p in json.loads(res.stdout)["problems"]]


def sneak_wake(repo: Path, signer: Path | None) -> None:
    """alice woken by a plain commit from a clone without hooks, signed by `signer`."""
    set_state_line(repo, "alice", "state", "bootstrap")
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={signer}", "commit", "-S"] \
        if signer else ["commit"]
    git(repo, *UNHOOKED, *sign, "-q", "-am", "@alice: [STATE:bootstrap] woken",
        "-m", "Approved-by: zach")


def test_wake_without_a_key_of_zach_is_refused_naming_who_must_run_it(keyed):
    repo, _keys = keyed
    before = git(repo, "rev-parse", "HEAD").stdout
    res = gitstate(repo, "wake", "alice", "--approved-by", "zach")
    assert res.returncode == 1 and "zach must run it" in res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


@pytest.mark.parametrize("signer", ["ana", "mallory"])
def test_wake_signed_by_someone_else_is_refused(keyed, signer):
    repo, keys = keyed
    use_key(repo, keys[signer])
    res = gitstate(repo, "wake", "alice", "--approved-by", "zach")
    assert res.returncode == 1 and "zach must run it" in res.stderr


def test_the_genuine_approval_is_signed_and_accepted(keyed):
    repo, keys = keyed
    use_key(repo, keys["zach"])
    res = gitstate(repo, "wake", "alice", "--approved-by", "zach")
    assert res.returncode == 0, res.stderr
    assert "gpgsig" in git(repo, "cat-file", "-p", "HEAD").stdout
    assert verify_rules(repo) == []


@pytest.mark.parametrize("signer", [None, "ana", "mallory"])
def test_verify_flags_an_approval_not_signed_by_the_approver(keyed, signer):
    repo, keys = keyed
    sneak_wake(repo, keys[signer] if signer else None)
    assert verify_rules(repo) == ["unsigned-approval"]


@pytest.mark.parametrize("trailer", ["Approved-by: zach", "Approved-by : zach",
                                     "approved-by\t:zach"])
def test_the_ref_guard_refuses_an_unsigned_approval(keyed, trailer):
    """However the trailer is spelt (gitstate reads `Key :` and `key\t:` alike), an approval
    is left to the guard, which alone sees the signature."""
    repo, _keys = keyed
    before = git(repo, "rev-parse", "HEAD").stdout
    set_state_line(repo, "alice", "state", "bootstrap")
    res = git(repo, "commit", "-q", "-am", "@alice: [STATE:bootstrap] woken",
              "-m", trailer, check=False)
    assert res.returncode != 0 and "unsigned-approval" in res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_a_change_of_the_keys_needs_a_signature_too(keyed):
    repo, keys = keyed
    path = repo / "protocols" / "allowed_signers"
    path.write_text(path.read_text() + f"zach {pub(keys['mallory'])}\n")   # mallory's key as zach's
    git(repo, *UNHOOKED, "commit", "-q", "-am", "law: one more key", "-m", "Approved-by: zach")
    assert verify_rules(repo) == ["unsigned-approval"]
    git(repo, "reset", "-q", "--keep", "HEAD~1")
    path.write_text(path.read_text() + f"zach {pub(keys['mallory'])}\n")
    git(repo, *UNHOOKED, "-c", "gpg.format=ssh", "-c", f"user.signingkey={keys['zach']}",
        "commit", "-S", "-q", "-am", "law: one more key", "-m", "Approved-by: zach")
    assert verify_rules(repo) == []


def test_the_hub_refuses_an_unsigned_approval(keyed, tmp_path):
    repo, keys = keyed
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    assert gitstate(hub, "init", "--server").returncode == 0
    git(repo, "remote", "add", "origin", str(hub))
    git(repo, "push", "-q", "origin", "main")
    sneak_wake(repo, keys["ana"])
    res = git(repo, "push", "-q", "origin", "main", check=False)
    assert res.returncode != 0 and "unsigned-approval" in res.stderr
    git(repo, "reset", "-q", "--hard", "origin/main")
    use_key(repo, keys["zach"])
    assert gitstate(repo, "wake", "alice", "--approved-by", "zach").returncode == 0
    assert git(repo, "push", "-q", "origin", "main", check=False).returncode == 0


def test_doctor_says_whether_this_users_key_is_listed(keyed):
    repo, keys = keyed
    out = gitstate(repo, "doctor").stdout
    assert "authenticated" in out and "no key" in out
    use_key(repo, keys["zach"])
    assert "listed for zach" in gitstate(repo, "doctor").stdout
    use_key(repo, keys["mallory"])
    assert "not listed" in gitstate(repo, "doctor").stdout


def test_init_records_a_humans_key_in_the_commit_that_brings_the_law(empty_repo,
                                                                      tmp_path_factory):
    zach = key(tmp_path_factory, "zach")
    res = gitstate(empty_repo, "init", "--human", "pat", "--signing-key", f"{zach}.pub")
    assert res.returncode == 0, res.stderr
    assert "recorded pat's key" in res.stdout and "approvals: signed with the keys" in res.stdout
    zachs = " ".join(pub(zach).split()[:2])      # the key, without its comment
    assert git(empty_repo, "show", "HEAD:protocols/allowed_signers").stdout == f"pat {zachs}\n"
    assert "protocols/lifecycle.yaml" in git(empty_repo, "show", "--name-only", "HEAD").stdout
    assert verify_rules(empty_repo) == []
    bad = gitstate(empty_repo, "init", "--signing-key", "no such key")
    assert bad.returncode == 2 and "is not an SSH public key" in bad.stderr


def test_init_prints_the_command_that_records_the_key_at_hand_and_never_asks(
        empty_repo, tmp_path_factory, monkeypatch):
    """No prompt (an agent has no terminal): the key found is named, with the command that
    records it; that command, run by the human, makes approvals signed; run from an agent's
    session it is refused."""
    zach = key(tmp_path_factory, "zach")
    ssh = Path(os.environ["HOME"]) / ".ssh"
    ssh.mkdir()
    for suffix in ("", ".pub"):
        shutil.copy(f"{zach}{suffix}", ssh / f"id_ed25519{suffix}")
    res = gitstate(empty_repo, "init", "--human", "zach")
    assert res.returncode == 0, res.stderr
    command = "gitstate init --signing-key ~/.ssh/id_ed25519.pub --approved-by zach"
    assert "A key of this user's is at hand (~/.ssh/id_ed25519.pub)" in res.stdout
    assert command in res.stdout and "user.signingkey ~/.ssh/id_ed25519" in res.stdout
    shown = on_a_terminal(empty_repo, "import sys; from gitstate.__main__ import main; "
                          "sys.exit(main(['init', '--force']))")[0]
    assert shown.returncode == 0           # ran to its end without waiting for an answer
    head = git(empty_repo, "rev-parse", "HEAD").stdout
    monkeypatch.setenv("GITSTATE_AGENT", "alice")
    refused = gitstate(empty_repo, *command.split()[1:])
    assert refused.returncode == 1 and "[agent-approval]" in refused.stderr, refused.stderr
    assert git(empty_repo, "rev-parse", "HEAD").stdout == head
    assert not (empty_repo / "protocols" / "allowed_signers").exists()
    monkeypatch.delenv("GITSTATE_AGENT")
    done = gitstate(empty_repo, *command.split()[1:])       # zach, at a terminal
    assert done.returncode == 0, done.stderr
    assert git(empty_repo, "show", "HEAD:protocols/allowed_signers").stdout == \
        f"zach {' '.join(pub(zach).split()[:2])}\n"
    assert "Approved-by: zach" in git(empty_repo, "log", "-1", "--format=%B").stdout
    assert verify_rules(empty_repo) == []
    assert "approvals: signed with the keys" in done.stdout and "--signing-key" not in \
        done.stdout
    other = make_repo(empty_repo.parent / "other")         # the key git signs with comes first
    ana = key(tmp_path_factory, "ana")
    git(other, "config", "user.signingkey", str(ana))
    res = gitstate(other, "init", "--human", "zach")
    assert f"at hand ({ana}.pub, git config user.signingkey)" in res.stdout
    assert f"gitstate init --signing-key {ana}.pub --approved-by zach" in res.stdout


def test_init_signs_a_change_of_the_keys_where_keys_are_known(keyed):
    """A change of allowed_signers approved by zach is signed by zach's key, or refused before
    anything is written."""
    repo, keys = keyed
    before = git(repo, "rev-parse", "HEAD").stdout
    res = gitstate(repo, "init", "--signing-key", f"{keys['mallory']}.pub", "--approved-by", "zach")
    assert res.returncode == 1 and "must be signed by a key of zach" in res.stderr, res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before
    assert git(repo, "status", "--porcelain").stdout == ""          # nothing written
    use_key(repo, keys["zach"])
    res = gitstate(repo, "init", "--signing-key", f"{keys['mallory']}.pub", "--approved-by", "zach")
    assert res.returncode == 0, res.stderr
    assert "\ngpgsig " in git(repo, "cat-file", "commit", "HEAD").stdout
    assert f"zach {' '.join(pub(keys['mallory']).split()[:2])}" in \
        (repo / "protocols" / "allowed_signers").read_text()
    assert verify_rules(repo) == []


def test_an_approval_made_on_an_older_tip_is_signed_again_on_the_tip_by_push(keyed, tmp_path):
    """The line rule: the hub's queue lands a signed move only on the tip it was signed on.
    `wake --push` from a clone that is behind is refused there (`queue-stale`), and the
    command makes it again on the hub's tip, signed again with the approver's key this clone
    holds: the approval joins the line as itself, one parent, its signature judged by the
    signers in force there."""
    repo, keys = keyed
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    assert gitstate(hub, "init", "--server").returncode == 0
    git(repo, "remote", "add", "origin", str(hub))
    git(repo, "push", "-q", "-u", "origin", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(hub), str(other))
    assert gitstate(other, "init").returncode == 0
    assert gitstate(other, "spawn", "bob", "--push").returncode == 0   # repo is behind now
    before = git(hub, "rev-parse", "main").stdout.strip()
    use_key(repo, keys["zach"])
    res = gitstate(repo, "wake", "alice", "--approved-by", "zach", "--push", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    landed = git(hub, "rev-parse", "main").stdout.strip()
    parents = git(hub, "rev-list", "--parents", "-n", "1", landed).stdout.split()[1:]
    assert parents == [before]                       # made again on the tip: no merge
    allowed = tmp_path / "allowed"
    allowed.write_text(f"zach {pub(keys['zach'])}\n")
    res = git(hub, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", landed,
              check=False)
    assert res.returncode == 0, res.stderr
    assert verify_rules(repo) == []
