"""`gitstate statusline`: Claude Code's `statusLine` command. Claude Code runs it after each
assistant message (and after /compact, a change of permission mode...), with the session's
JSON on stdin (https://code.claude.com/docs/en/statusline): `session_id`, `cwd`, `model`,
`workspace` and `context_window`, whose `used_percentage` is the share of the window the
context fills, as Claude Code itself counts it (null before the session's first answer), with
`context_window_size` and `current_usage` (the latest answer's input, cache read and cache
creation tokens). The first line printed is the status line.

It prints one short line, `gitstate alice: deep_work · midlife · context 62%`: the session's
agent (its binding, as the hooks find it), its state, its mortality phase and its context.
The context is recorded as the context hook records it, at a mortality mark crossed upwards
only (one progress commit by gitstate), never once per message: the same memory under
`.git/gitstate/runtime/` tells both what was recorded last, so a crossing seen by both is
recorded once, by whichever sees it first.

It runs after every message, so it starts no git process while the team line stays where it
was: the agent's state is kept under `.git/gitstate/runtime/status/` with the refs it was read
at (the stat of HEAD, the line's ref file, packed-refs, the reftable list and the config), and
read again, with git, only once one of them changed. Neither click nor pydantic is imported.
Whatever goes wrong, it prints a short line saying so and exits 0: a status line never stops
the session.
"""

from __future__ import annotations

import os
import sys

from gitstate.runtime import memory
from gitstate.runtime.claude_code import _stdin_json, marks_of, phase_of, record_crossing
from gitstate.runtime.memory import bound_agent


def run(args: list[str]) -> int:
    event = _stdin_json()
    try:
        line = status_line(event)
    except Exception as exc:  # noqa: BLE001 — a status line must never stop the session
        if os.environ.get("GITSTATE_DEBUG"):
            raise
        line = f"gitstate: {type(exc).__name__}: {exc}"[:100]
    if line:
        sys.stdout.write(line + "\n")
    return 0


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def status_line(event: dict) -> str:
    """The line: agent, state, phase, context; the context recorded at a phase crossing."""
    workspace = _mapping(event.get("workspace"))
    cwd = event.get("cwd") or workspace.get("current_dir") or workspace.get("project_dir")
    gdir = memory.git_dir(cwd if isinstance(cwd, str) else None)
    if gdir is None:
        return ""   # not in a repository: gitstate has nothing to say here
    agent, bound = bound_agent(event, gdir)
    if agent is None:
        return _unbound(event.get("session_id"))
    window = _mapping(event.get("context_window"))
    pct = _number(window.get("used_percentage"))
    marks = marks_of(bound)
    recorded = None
    if pct is not None and bound is not None:   # the law's marks are known: SessionStart's
        recorded = _record(cwd, gdir, agent, window, pct, marks, bound)
    return f"gitstate {agent}: " + " · ".join(_parts(gdir, cwd, agent, pct, marks)) + (
        " (recorded)" if recorded else "")


def _parts(gdir: str, cwd, agent: str, pct: float | None, marks: list) -> list[str]:
    """The agent's state, phase and context (before the session's first answer: the last
    figure measured)."""
    if pct is None:
        pct = _number((memory.phase_record(gdir, agent) or {}).get("context_pct"))
    parts = [state_of(gdir, cwd, agent)]
    return parts + ([phase_of(pct, marks), f"context {pct:.0f}%"] if pct is not None else [])


def _unbound(session) -> str:
    return "gitstate: no agent bound to this session" + (
        f" ({session[:8]})" if isinstance(session, str) and session else "")


def _record(cwd, gdir: str, agent: str, window: dict, pct: float, marks: list,
            bound: dict) -> str | None:
    """The context the status line was given, recorded where it crosses a phase."""
    size = int(_number(window.get("context_window_size")) or bound.get("window") or 200_000)
    return record_crossing(cwd, gdir, agent, round(pct, 1), marks,
                           _tokens(window.get("current_usage"), pct, size), size)


def _tokens(usage, pct: float, size: int) -> int:
    """The context's tokens: the latest answer's input as Claude Code reports it (fresh, cache
    read, cache creation), else the share of the window."""
    found = [n for k in ("input_tokens", "cache_read_input_tokens",
                         "cache_creation_input_tokens")
             if (n := _number(_mapping(usage).get(k))) is not None]
    return int(sum(found)) if found else round(pct * size / 100)


# -- the agent's state, read with git only when the refs moved --------------------------------


def _refs_key(gdir: str, ref: str | None) -> list:
    """What changes when a commit lands where the state is read: the stat of HEAD, of `ref`'s
    loose file, of packed-refs, of a reftable's table list, and of the config (which names the
    team line)."""
    common = memory.common_dir(gdir)
    paths = [os.path.join(gdir, "HEAD"), os.path.join(common, "packed-refs"),
             os.path.join(common, "reftable", "tables.list"), os.path.join(common, "config")]
    if ref:
        paths.append(os.path.join(common, *ref.split("/")))
    key: list[list[int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
            key.append([st.st_ino, st.st_mtime_ns, st.st_size])
        except OSError:
            key.append(None)
    return key


def _branch(repo) -> str | None:
    code, out, _ = repo.git.call("symbolic-ref", "-q", "HEAD")
    return out.decode().strip() if code == 0 else None


def state_of(gdir: str, cwd: str | None, agent: str) -> str:
    """The agent's state on the team line (as `status` reads it), from what was kept while the
    refs stay where they were; else read with git, and kept."""
    kept = memory.kept_status(gdir, agent)
    if kept and kept.get("key") == _refs_key(gdir, kept.get("ref")):
        return str(kept.get("state"))
    from gitstate.git.repo import open_managed
    from gitstate.law import statefile
    repo = open_managed(cwd)
    ref = repo.line_ref() or _branch(repo)
    key = _refs_key(gdir, ref)   # taken before reading: a commit meanwhile is read next time
    head = repo.head()
    lc = repo.lifecycle(head)
    data = repo.git.cat_files([f"{head}:{lc.state_path(agent)}"])[0] if head else None
    state = statefile.parse_bytes(data, lc.state_path(agent)).state if data else None
    text = state if isinstance(state, str) else "not registered"
    memory.keep_status(gdir, agent, {"key": key, "ref": ref, "state": text})
    return text

