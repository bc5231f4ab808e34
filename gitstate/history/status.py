"""`gitstate status`: each agent's state, roster, mortality phase and the next states the hooks
would accept now, as a plain record (its model is `AgentStatus` in gitstate/schema/records.py;
pydantic stays off this path, which agents poll)."""

from __future__ import annotations

import time

from gitstate.law import statefile
from gitstate.law.lifecycle import Lifecycle


def status(repo, agent: str | None = None, at: str | None = None) -> dict:
    """The agent's record with the commit it was read at, or {"commit", "agents"}: every
    agent's (from the index, which parses each state file's blob once). `at`: as it was at a
    revision or a date, by the law of then. How long each has been in its state (for the
    timed moves not yet due) comes from the index's tracks."""
    from gitstate.history.index import Index
    from gitstate.law.grammar import canonical_id
    if at is None:
        head = repo.head()
        lc = repo.lifecycle(head)
        now = time.time()
    else:
        from gitstate.history.views import read_at
        head, lc = read_at(repo, at)
        now = float(repo.git.text("log", "-1", "--format=%ct", head)) if head else time.time()
    index = Index(repo.git, lc, repo.cache_dir)
    timed = bool(lc.policies.timeouts)
    tracks = index.tracks(head) if timed and head else {}

    def waited(a: str, front: dict) -> float | None:
        track = tracks.get(a)
        if track is None or track.tag != front.get("state"):
            return None
        return now - track.entered[1]

    if agent:
        return _one(repo, canonical_id(agent), head, lc, index if timed else None, waited)
    if head is None:
        return {"commit": None, "agents": []}
    if at is None and not timed:   # each agent's row kept, carried on agent by agent
        from gitstate.history.kept_rows import statuses
        kept = statuses(repo, lc, head, lambda a, path, front, problem: status_of(
            a, path, front, lc) if front is not None else unreadable(a, path, problem, lc))
        if kept is not None:
            return {"commit": head, "agents": kept}
    rows = [status_of(a, path, front, lc, waited(a, front)) if front is not None
            else unreadable(a, path, problem, lc)
            for a, (path, front, problem) in sorted(index.fronts(head).items())]
    index.save()
    return {"commit": head, "agents": rows}


def _one(repo, agent: str, head: str | None, lc: Lifecycle, index, waited) -> dict:
    """One agent's record with the commit it was read at (`index`: saved, when its tracks
    were read)."""
    path = lc.state_path(agent)
    data = repo.git.cat_files([f"{head}:{path}"])[0] if head else None
    if data is None:
        raise repo.unknown_agent(agent, head, lc)
    if index is not None:
        index.save()
    try:
        front = statefile.parse_bytes(data, path).front
    except Exception as exc:  # InvalidFile, shown rather than raised: one bad file
        return {"commit": head, **unreadable(agent, path, str(exc), lc)}
    return {"commit": head, **status_of(agent, path, front, lc, waited(agent, front))}


def status_of(agent: str, path: str, front: dict, lc: Lifecycle,
              waited: float | None = None) -> dict:
    """The status of an agent whose front matter is read (e.g. from the index); `waited`:
    seconds it has been in its state, where known."""
    state = front.get("state") if isinstance(front.get("state"), str) else None
    pct = front.get("context_pct")
    pct = float(pct) if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None
    phase = lc.mortality.phase(pct)
    role = statefile.as_text(front.get("role"))
    nxt = _next(lc, state, role, pct, waited, front)
    return {"agent": agent, "path": path, "state": state,
            "roster": lc.roster_of(state) if state else None,
            "role": role,
            "model": statefile.as_text(front.get("model")), "context_pct": pct,
            "phase": phase,
            "next": nxt,
            "thread": statefile.as_text(front.get("thread")),
            "summary": statefile.as_text(front.get("summary")),
            "problem": None if state in lc.states
            else f"'{state}' is not a state of lifecycle {lc.name}",
            "advice": lc.phase_advice(phase, agent)}


def _next(lc: Lifecycle, state: str | None, role: str | None, pct: float | None,
          waited: float | None, front: dict) -> list[str]:
    """The states the hooks would accept next (the state itself not, past its token limit)."""
    if state not in lc.states:
        return []
    nxt = lc.open_moves(state, role=role, context_pct=pct, waited=waited)
    used, most = front.get("tokens"), front.get("max_tokens")
    if state in nxt and lc.states[state].token_limit and isinstance(used, int) \
            and isinstance(most, int) and used >= most:
        nxt.remove(state)     # the token limit ends the state
    return nxt


def unreadable(agent: str, path: str, problem: str | None, lc: Lifecycle) -> dict:
    """The status of an agent whose state file could not be read: why, and nothing else."""
    return {**status_of(agent, path, {}, lc), "problem": problem}
