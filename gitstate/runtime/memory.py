"""What the runtime hooks remember between calls, under `.git/gitstate/runtime/`: which agent
a runtime session is bound to (with what the context hook needs to know of the law), the
mortality phase last measured for each agent (and a lock, so that one process records a
crossing), and what the status line read of an agent's state, with the refs it read it at.
Who waits for a person (runtime/attention.py) is kept under the common git folder instead,
`.git/gitstate/runtime/attention/`, one file per session, for every worktree of the clone.

Light on purpose: the context hook runs on every tool call and must start no git process when
no phase is crossed, so the git folder is found by walking up from the runtime's `cwd`.
Losing these files loses nothing but a notice that a session waits: SessionStart writes the
rest again.
"""

from __future__ import annotations

import json
import os
import re

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def git_dir(cwd: str | None) -> str | None:
    """The git folder of the work tree around `cwd` (a worktree's own), without running git."""
    here = os.path.abspath(cwd or ".")
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            return _linked(here, dot)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _linked(here: str, dot: str) -> str | None:
    """The git folder a `.git` file names (`gitdir: PATH`, a worktree's or a submodule's)."""
    with open(dot, encoding="utf-8", errors="replace") as fh:
        line = fh.readline().strip()
    if not line.startswith("gitdir:"):
        return None
    target = os.path.normpath(os.path.join(here, line[len("gitdir:"):].strip()))
    # a git folder, or nothing: the hooks write nowhere a .git file merely points
    return target if os.path.isfile(os.path.join(target, "HEAD")) else None


def _folder(gdir: str) -> str:
    return os.path.join(gdir, "gitstate", "runtime")


def _key(text: str) -> str:
    return _SAFE.sub("_", text)[:128] or "_"


def _file(gdir: str, kind: str, name: str, ext: str = ".json") -> str:
    """Where `name`'s record of `kind` (sessions, phases, status, ...) is kept."""
    return os.path.join(_folder(gdir), kind, _key(name) + ext)


def _read(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _write(path: str, data: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


def binding(gdir: str, session: str) -> dict | None:
    """{agent, window, mortality: [midlife, legacy, urgent]} of a bound session."""
    return _read(_file(gdir, "sessions", session))


def bind(gdir: str, session: str, data: dict) -> None:
    _write(_file(gdir, "sessions", session), data)


def unbind(gdir: str, session: str) -> None:
    try:
        os.remove(_file(gdir, "sessions", session))
    except OSError:
        pass


def bound_agent(event: dict, gdir: str | None) -> tuple[str | None, dict | None]:
    """(agent, binding) of the runtime session: the binding SessionStart recorded, else
    `$GITSTATE_AGENT` when it was set for this very session (or for none in particular)."""
    session = event.get("session_id")
    found = binding(gdir, session) if gdir and isinstance(session, str) else None
    if found and found.get("agent"):
        return found["agent"], found
    return _named_agent(session), found


def _named_agent(session) -> str | None:
    """`$GITSTATE_AGENT`, when set for this very session (or for none in particular)."""
    env = os.environ.get("GITSTATE_AGENT")
    env_session = os.environ.get("GITSTATE_SESSION")
    return env.lower() if env and (not env_session or env_session == session) else None


def last_phase(gdir: str, agent: str) -> str | None:
    found = phase_record(gdir, agent)
    return found.get("phase") if found else None


def remember_phase(gdir: str, agent: str, phase: str, pct: float) -> None:
    _write(_file(gdir, "phases", agent), {"phase": phase, "context_pct": pct})


def phase_record(gdir: str, agent: str) -> dict | None:
    """{phase, context_pct} last measured for `agent`."""
    return _read(_file(gdir, "phases", agent))


def kept_status(gdir: str, agent: str) -> dict | None:
    """What the status line read of `agent` last, with the refs it read it at."""
    return _read(_file(gdir, "status", agent))


def keep_status(gdir: str, agent: str, data: dict) -> None:
    _write(_file(gdir, "status", agent), data)


class Recording:
    """`with Recording(gdir, agent) as mine:` mine is True in the one process that holds the
    agent's recording lock (a crossing of the context is recorded once); False when another
    holds it. The lock goes with the process that held it, however it ends."""

    def __init__(self, gdir: str, agent: str):
        self.path = _file(gdir, "phases", agent, ".lock")
        self.fd: int | None = None

    def __enter__(self) -> bool:
        import fcntl
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            self.fd = None
            return False
        return True

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)   # and with it the lock


def record_child(gdir: str, session: str, child: dict) -> None:
    """A sub-agent about to be spawned by the session's agent (what SubagentStart tells it)."""
    path = _file(gdir, "children", session)
    found = _read(path) or {"pending": []}
    found["pending"] = (found.get("pending") or [])[-20:] + [child]
    _write(path, found)


def take_child(gdir: str, session: str, kind: str | None) -> dict | None:
    """The oldest pending sub-agent of this kind (any kind when `kind` is None)."""
    path = _file(gdir, "children", session)
    found = _read(path)
    if not found:
        return None
    pending = found.get("pending") or []
    for i, child in enumerate(pending):
        if kind is None or child.get("kind") == kind:
            del pending[i]
            _write(path, {"pending": pending})
            return child
    return None


def count_call(gdir: str, session: str) -> int:
    """One more tool call of the session; how many so far."""
    path = _file(gdir, "calls", session)
    found = _read(path)
    calls = found.get("calls") if found else None
    n = (calls if isinstance(calls, int) else 0) + 1
    _write(path, {"calls": n})
    return n


class EventOrder:
    """`with EventOrder(gdir, session, ticket) as in_order:` the session's runtime events one
    at a time, and in the order they were sent: in_order is False for an event older (its
    `ticket`, the time its hook started) than one of the session already decided."""

    def __init__(self, gdir: str, session: str, ticket: int):
        self.path = _file(gdir, "events", session, "")
        self.ticket, self.fd = ticket, -1

    def __enter__(self) -> bool:
        import fcntl
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        last = (_read(self.path + ".json") or {}).get("ticket")
        if isinstance(last, int) and last > self.ticket:
            return False
        _write(self.path + ".json", {"ticket": self.ticket})
        return True

    def __exit__(self, *exc) -> None:
        os.close(self.fd)   # and with it the lock


def remember_subagent(gdir: str, agent_id: str, agent: str, **said: str) -> None:
    """The gitstate agent a runtime's sub-agent (its `agent_id`) was registered as, and what
    it is to be told (`update`: the instruction appended to its instructions)."""
    _write(_file(gdir, "subagents", agent_id), {"agent": agent, **said})


def subagent_record(gdir: str, agent_id: str) -> dict:
    """What `remember_subagent` kept of a runtime's sub-agent ({} when nothing)."""
    found = _read(_file(gdir, "subagents", agent_id)) if agent_id else None
    return found if isinstance(found, dict) else {}


def subagent(gdir: str, agent_id: str) -> str | None:
    found = subagent_record(gdir, agent_id).get("agent")
    return found if isinstance(found, str) else None


EVENTS_LOG_BYTES = 1 << 20   # the events log is kept to about this size (one older copy)


def log_event(gdir: str, entry: dict) -> None:
    """One line of `events.jsonl`: what a runtime event decided (appended whole: one write)."""
    path = os.path.join(_folder(gdir), "events.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # each text cut, never the line: every line stays one whole JSON object
    line = (json.dumps({k: v[:2000] if isinstance(v, str) else v for k, v in entry.items()})
            + "\n").encode()
    try:
        if os.path.getsize(path) > EVENTS_LOG_BYTES:
            os.replace(path, path + ".1")
    except OSError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


# -- who waits for a person (runtime/attention.py) --------------------------------------------


def common_dir(gdir: str) -> str:
    """The repository's common git folder (a worktree's git folder names it in `commondir`):
    what every worktree of the clone shares."""
    try:
        with open(os.path.join(gdir, "commondir"), encoding="utf-8") as fh:
            return os.path.normpath(os.path.join(gdir, fh.read().strip()))
    except OSError:
        return gdir


def _attention(gdir: str) -> str:
    return os.path.join(common_dir(gdir), "gitstate", "runtime", "attention")


def note_attention(gdir: str, session: str, notice: dict) -> None:
    """The session's newest notice that it waits for a person (it replaces the one before)."""
    _write(os.path.join(_attention(gdir), _key(session) + ".json"), notice)


def attention_notices(gdir: str) -> list[dict]:
    """Every session's newest notice, oldest first (no git)."""
    folder = _attention(gdir)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json")]
    except OSError:
        return []
    found = [_read(os.path.join(folder, n)) for n in names]
    def when(n: dict) -> float:
        at = n.get("at")
        return at if isinstance(at, (int, float)) and not isinstance(at, bool) and at == at \
            else 0.0
    return sorted((n for n in found if n), key=when)


def clear_attention(gdir: str, session: str) -> None:
    """The session no longer waits (a prompt submitted by its person, its end)."""
    try:
        os.remove(os.path.join(_attention(gdir), _key(session) + ".json"))
    except OSError:
        pass
