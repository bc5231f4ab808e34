"""Logging out with a note in a shared log: era's `logout.log`, appended to in the commit
that enters the state whose `log:` names it."""

from __future__ import annotations

from typing import Any

from gitstate.errors import GitstateError
from gitstate.git.atomic import Result
from gitstate.git.repo import Managed
from gitstate.law.grammar import canonical_id
from gitstate.moves.agent import current_state, now_iso, transition


def log_tail(repo: Managed, log: str, count: int = 3) -> list[str]:
    """The last `count` entries of a committed log (what the next one reads first)."""
    lines = [ln for ln in _committed(repo, log).decode("utf-8", "replace").splitlines()
             if ln.strip()]
    return lines[-count:]


def _committed(repo: Managed, log: str) -> bytes:
    """The log as HEAD has it (b"" when there is none)."""
    head = repo.head()
    return (repo.git.cat_files([f"{head}:{log}"])[0] if head else None) or b""


def logout(repo: Managed, agent: str, note: str, *, text: str | None = None,
           sets: dict[str, Any] | None = None, with_work: bool = True,
           moved_by: str | None = None) -> tuple[Result, str]:
    """Move `agent` to the state (one move away) that keeps a log, appending its note to that
    log in the same commit. Returns the move and the log's path. Without `with_work` (the
    runtime's move), nothing staged or edited here comes along."""
    agent = canonical_id(agent)
    if not note.strip() or "\n" in note.strip():
        raise GitstateError("--note takes one line of text: what the next session should know")
    lc, state, front = current_state(repo, agent)
    target = _logging_state(lc, agent, state)
    log = lc.states[target].log
    old = _committed(repo, log)
    old += b"\n" if old and not old.endswith(b"\n") else b""
    pct = (sets or {}).get("context_pct", front.get("context_pct"))
    entry = f"{now_iso()}  {agent}  context {pct}%  {note.strip()}\n"
    result = transition(repo, agent, target, text=text or f"Context: {pct}%, see {log}",
                        sets=sets, files={log: old + entry.encode()}, action="logout",
                        with_work=with_work, moved_by=moved_by)
    return result, log


def _logging_state(lc, agent: str, state: str) -> str:
    """The state one move away that keeps a log; refused, with the legal moves, when none."""
    from gitstate.law.rules import legal_moves
    target = next((t for t in lc.targets(state) if lc.states[t].log), None)
    if target is None:
        raise GitstateError(f"{agent} cannot log out from {state}: no state with a log is one "
                            f"move away; {legal_moves(lc, state)}")
    return target
