"""The write commands' core: spawn an agent, move it to a new state.

Each is one atomic commit (see commit.py), judged by the same validator as the hooks before
anything is written, so an illegal move is refused with the same words either way.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from gitstate import statefile, yamlio
from gitstate.commit import Plan, Result, commit_atomically, reject_if
from gitstate.errors import GitstateError, InvalidFile, UsageError
from gitstate.grammar import canonical_id, format_message
from gitstate.repo import GitAncestry, Managed
from gitstate.rules import FileChange, validate

_SET_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
PROTECTED_KEYS = {"agent": "it is the agent's id", "state": "name the state as the STATE argument"}


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_sets(pairs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """`--set K=V` pairs; V is read as YAML (62 -> number, null -> nothing, else text)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not _SET_KEY.match(key):
            raise UsageError(f"--set takes KEY=VALUE, got {pair!r}")
        if key in PROTECTED_KEYS:
            raise UsageError(f"--set {key}=... is not allowed: {PROTECTED_KEYS[key]}")
        value = _read_value(raw, key)
        out[key] = value
    return out


def _read_value(raw: str, key: str) -> Any:
    if raw.strip() == "":
        return None
    try:
        value, _ = yamlio.load(raw, where=f"--set {key}")
    except InvalidFile:
        return raw
    if isinstance(value, (dict, list)) or value is None and raw.strip() not in ("null", "~"):
        return raw
    return value


def _current(repo: Managed, parent: str | None, path: str) -> tuple[bytes | None, bytes | None]:
    """(committed bytes at parent, work tree bytes) of a state file."""
    old = repo.git.cat_files([f"{parent}:{path}"])[0] if parent else None
    work = None
    if repo.top is not None:
        f = repo.top / path
        if f.is_file() and not f.is_symlink():
            work = f.read_bytes()
    return old, work


def spawn(repo: Managed, agent: str, *, role: str | None = None, model: str | None = None,
          parent_agent: str | None = None, sets: dict[str, Any] | None = None,
          text: str | None = None) -> Result:
    """Register `agent` in the lifecycle's initial state, in one commit."""
    agent = canonical_id(agent)
    parent_agent = canonical_id(parent_agent) if parent_agent else None
    sets = dict(sets or {})

    def prepare(head: str | None) -> Plan:
        lc = repo.lifecycle(head)
        path = lc.state_path(agent)
        old, work = _current(repo, head, path)
        if old is not None:
            doc = statefile.parse_bytes(old, path)
            raise GitstateError(f"agent '{agent}' already exists (state {doc.state})",
                                hint=f"move it with `gitstate transition {agent} STATE`")
        fields: dict[str, Any] = {"agent": agent, "state": lc.initial}
        if role is not None:
            fields["role"] = role
        if model is not None:
            fields["model"] = model
        fields["parent"] = parent_agent
        fields["depth"] = _depth_of(repo, lc, head, parent_agent)
        fields.update(sets)
        fields["updated"] = now_iso()
        if work is not None:  # a hand-written file: keep its notes and keys
            base = statefile.parse_bytes(work, path)
        else:
            from gitstate.resources import read_shipped
            base = statefile.parse(read_shipped("agent", "_state.md"), path)
        new = statefile.with_fields(base, fields).encode()
        desc = f"spawned{f' as {role}' if role else ''}{f' by {parent_agent}' if parent_agent else ''}"
        message = format_message(agent, lc.initial, text or desc)
        _judge(repo, lc, head, path, old, new, message, "spawn")
        return Plan({path: new}, message, {"agent": agent, "from": None, "to": lc.initial,
                                          "path": path})

    return commit_atomically(repo.git, repo.top, prepare, reflog="gitstate spawn")


def _depth_of(repo: Managed, lc, head: str | None, parent_agent: str | None) -> int:
    if parent_agent is None:
        return 0
    data = repo.git.cat_files([f"{head}:{lc.state_path(parent_agent)}"])[0] if head else None
    if data is None:
        raise GitstateError(f"parent agent '{parent_agent}' does not exist",
                            hint="spawn the parent first, or leave out --parent")
    depth = statefile.parse_bytes(data, lc.state_path(parent_agent)).get("depth")
    return (depth if isinstance(depth, int) and not isinstance(depth, bool) else 0) + 1


def transition(repo: Managed, agent: str, state: str, *, text: str | None = None,
               sets: dict[str, Any] | None = None, approved_by: str | None = None,
               body: str = "") -> Result:
    """Move `agent` to `state` in one commit, together with whatever is staged."""
    agent = canonical_id(agent)
    sets = dict(sets or {})

    def prepare(head: str | None) -> Plan:
        lc = repo.lifecycle(head)
        path = lc.state_path(agent)
        old, work = _current(repo, head, path)
        if old is None:
            raise GitstateError(f"unknown agent '{agent}': {path} is not committed",
                                hint=f"spawn it first: `gitstate spawn {agent}`")
        base = statefile.parse_bytes(work if work is not None else old, path)
        old_state = _state_or_none(old, path)
        new = statefile.with_fields(base, {"state": state, **sets, "updated": now_iso()}).encode()
        trailers = [("Approved-by", approved_by)] if approved_by else []
        message = format_message(agent, state, text or f"{old_state} -> {state}", body, trailers)
        _judge(repo, lc, head, path, old, new, message, "transition")
        return Plan({path: new}, message, {"agent": agent, "from": old_state, "to": state,
                                          "path": path})

    return commit_atomically(repo.git, repo.top, prepare, reflog="gitstate transition")


def _state_or_none(data: bytes, path: str) -> str | None:
    try:
        s = statefile.parse_bytes(data, path).state
        return s if isinstance(s, str) else None
    except InvalidFile:
        return None


def _judge(repo: Managed, lc, head: str | None, path: str, old: bytes | None, new: bytes,
           message: str, action: str) -> None:
    """Refuse before committing, with exactly the hook's words; staged state files count."""
    changes = [FileChange(path, old, new)] + repo.staged_state_changes(lc, head, skip={path})
    reject_if(validate(changes, lc, message, ancestry=GitAncestry(repo.git, head)), action)


def mark_read(repo: Managed, agent: str, head: str, count: int) -> Result:
    """Move the inbox checkpoint to `head`: a progress update in the agent's current state."""
    agent = canonical_id(agent)
    lc = repo.lifecycle(head)
    data = repo.git.cat_files([f"{head}:{lc.state_path(agent)}"])[0]
    state = _state_or_none(data, lc.state_path(agent)) if data else None
    if state is None:
        raise GitstateError(f"cannot read {agent}'s state to move its checkpoint")
    text = f"inbox: read {count} message{'s' if count != 1 else ''}"
    return transition(repo, agent, state, text=text, sets={"last_read_commit": head})
