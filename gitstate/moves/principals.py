"""Principals for gitstate's own commands (docs/explanation/movers.md): the session's
binding, agents' keys, and which key signs a move.

An agent's key is an SSH key pair made by `spawn --key` and kept in the user's config
directory (`$GITSTATE_KEYS`, else `$XDG_CONFIG_HOME/gitstate/keys`, else
`~/.config/gitstate/keys`), never committed: only its public half is recorded, at birth, in
the agent's state file (`key:`). A move is signed with the key of who makes it — the bound
agent; unbound, the parent where the law gives the move to the parent — when this clone holds
that key; never with the moved agent's key because the key folder happens to hold it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed
from gitstate.git.signing import can_sign_as
from gitstate.law import statefile
from gitstate.law.lifecycle import SIGNERS_PATH, Lifecycle
from gitstate.law.movers import KEY_FIELD
from gitstate.law.signers import parse_public_key

_ACTING: ContextVar[str | None] = ContextVar("gitstate_acting_as", default=None)


def bound_agent() -> str | None:
    """The agent this session is bound to: the one a face acts as (`acting_as`: the MCP
    server's binding), else `GITSTATE_AGENT`; None."""
    return _ACTING.get() or os.environ.get("GITSTATE_AGENT", "").strip().lower() or None


@contextmanager
def acting_as(agent: str) -> Iterator[None]:
    """Run the commands of this thread (and context) as bound to `agent`."""
    token = _ACTING.set(agent)
    try:
        yield
    finally:
        _ACTING.reset(token)


def session_env() -> dict[str, str]:
    """This session's environment as the doors judge it, its binding included."""
    return {**os.environ, "GITSTATE_AGENT": bound_agent() or ""}


# -- keys -------------------------------------------------------------------------------


def keys_dir() -> Path:
    found = os.environ.get("GITSTATE_KEYS")
    if found:
        return Path(found)
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"),
                                                              ".config")
    return Path(config) / "gitstate" / "keys"


def new_key(agent: str) -> str:
    """Make a key pair for `agent` in the keys directory; its public key line."""
    where = keys_dir()
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    import secrets  # (only where a key is made: a move imports neither)
    import subprocess
    path = where / f"{agent}-{secrets.token_hex(4)}"
    try:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                        f"gitstate agent {agent}", "-f", str(path)], check=True,
                       capture_output=True, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise GitstateError(f"could not make a key for {agent}: {exc}",
                            hint="install ssh-keygen (openssh-client), or give a public key: "
                                 "`--key 'ssh-ed25519 AAAA...'`") from None
    return Path(f"{path}.pub").read_text("utf-8").strip()


def given_key(value: str) -> str:
    """The public key line of `--key VALUE`: the line itself, or a file holding it."""
    text = value.strip()
    if parse_public_key(text) is None and Path(os.path.expanduser(text)).is_file():
        text = Path(os.path.expanduser(text)).read_text("utf-8", "replace").strip()
    key = parse_public_key(text)
    if key is None or text.startswith("-----"):
        raise GitstateError(f"--key {value!r} is not an SSH public key",
                            hint="give 'ssh-ed25519 AAAA...' or a .pub file, or `--key new` "
                                 "to have gitstate make one")
    return f"{key[0]} {key[1]}"


def held_key(public: object) -> str | None:
    """The private key file this clone holds for a recorded public key, or None."""
    key = parse_public_key(public) if isinstance(public, str) else None
    where = keys_dir()
    if key is None or not where.is_dir():
        return None
    for pub in sorted(where.glob("*.pub")):
        try:
            if parse_public_key(pub.read_text("utf-8", "replace")[:20000]) == key:
                return _private_of(pub)
        except OSError:
            continue
    return None


def _private_of(pub: Path) -> str | None:
    private = pub.with_suffix("")
    return str(private) if private.is_file() else None


def signing_key(repo: Managed, lc: Lifecycle, head: str | None, agent: str,
                front: dict | None, move: tuple[str | None, str]) -> str | None:
    """The private key to sign this move with, where this clone holds it: the bound agent's
    (whoever it moves: itself, a child, or as a holder of a mover role); unbound, the parent's
    for a move the law gives the parent (a birth, `policies.movers.parent`). Never the moved
    agent's own key merely because the key folder holds it: a key proves who moves only if
    it is the mover's (an unbound move of a keyed agent is left unsigned, and the hub refuses
    it as `unsigned-move`)."""
    if head is None:
        return None
    bound = bound_agent() or _parent_moving(lc, front, move)
    if bound is None:
        return None
    mine = front if bound == agent else _front(repo, lc, head, bound)
    return held_key((mine or {}).get(KEY_FIELD))


def _parent_moving(lc: Lifecycle, front: dict | None, move: tuple[str | None, str]) -> str | None:
    """The parent, for a move the law gives the parent (a birth, `policies.movers.parent`)."""
    parent = statefile.as_text((front or {}).get("parent"))
    old, new = move
    if not parent or not (old is None or lc.policies.movers.parent_may(old, new)):
        return None
    return parent.lower()


def _front(repo: Managed, lc: Lifecycle, head: str, agent: str) -> dict | None:
    data = repo.git.cat_files([f"{head}:{lc.state_path(agent)}"])[0]
    try:
        return statefile.parse_bytes(data, lc.state_path(agent)).front if data else None
    except GitstateError:
        return None


def must_sign(repo: Managed, lc: Lifecycle, head: str | None, agent: str, old: str | None,
              new: str, approved_by: str | None, moved_by: str | None, *,
              keyed: bool = False) -> bool:
    """A gated move approved by a human is signed with that human's key where the law lists
    keys (protocols/allowed_signers); refused, naming who must run it, without such a key.
    `reap` and `shutdown` (and, under `policies.fourth_wall`, the runtime's moves) sign with
    this clone's key where it is listed for a human or an operator; of a `keyed` agent they
    must (the hub and verify refuse them unsigned), so they are refused here, before anything
    is committed, when this clone cannot."""
    if head is None or old is None:
        return False
    gated = _gated(lc, old, new, approved_by)
    if not gated and not _operation(lc, moved_by):
        return False
    signers = repo.git.cat_files([f"{head}:{SIGNERS_PATH}"])[0]
    if not gated:
        return _operation_signs(repo, lc, signers, agent, f"{old} -> {new}", moved_by, keyed)
    assert approved_by is not None
    return signers is not None and _approver_signs(repo, signers, f"{agent} {old} -> {new}",
                                                   approved_by)


def _gated(lc: Lifecycle, old: str, new: str, approved_by: str | None) -> bool:
    """Whether an approval signs the move: a gated move approved by a human (under the fourth
    wall any approval, which may be of the system's keys: law/wall.py)."""
    return bool(approved_by) and bool(lc.gated(old, new) or lc.policies.fourth_wall)


def _operation(lc: Lifecycle, moved_by: str | None) -> bool:
    """Whether the move is an operation's, signed with this clone's key (law/wall.py: not
    the agent's key)."""
    return moved_by in ("reap", "shutdown") or (
        moved_by == "runtime" and bool(lc.policies.fourth_wall))


def _approver_signs(repo: Managed, signers: bytes, move: str, approved_by: str) -> bool:
    """True when this clone signs with a key of `approved_by`; refused otherwise."""
    ok, have = can_sign_as(repo.git, signers, approved_by)
    if not ok:
        raise GitstateError(
            f"{move} is approved by {approved_by}, and {SIGNERS_PATH} binds "
            f"approvals to keys: the commit must be signed by a key of {approved_by}, but this "
            f"clone signs with {have}; nothing was committed",
            hint=f"{approved_by} must run it, with `git config gpg.format ssh` and `git config "
                 f"user.signingkey` set to a key listed for {approved_by} in {SIGNERS_PATH}")
    return True


def _operation_signs(repo: Managed, lc: Lifecycle, signers: bytes | None, agent: str,
                     move: str, moved_by: str | None, keyed: bool) -> bool:
    """Whether `reap` or `shutdown` signs `move` with this clone's key (listed for a human or
    an operator); refused when it cannot and the agent is `keyed`."""
    names = list(lc.policies.humans) + list(lc.policies.movers.operators)
    if signers is not None and any(can_sign_as(repo.git, signers, n)[0] for n in names):
        return True
    if keyed:
        raise GitstateError(
            f"{agent} has a key, so `gitstate {moved_by}` must sign its move ({move}) "
            f"with the key of a human or operator ({', '.join(names) or 'none'}) "
            f"listed in {SIGNERS_PATH}, and this clone has none; nothing was committed",
            hint=f"run it where `git config user.signingkey` is such a key, or list one in "
                 f"{SIGNERS_PATH} (a change of the law)")
    return False
