"""`gitstate status`: each agent's state, roster, mortality phase and legal next states, as a
plain record (its model is `AgentStatus` in gitstate/schema/records.py; pydantic stays off this
path, which agents poll)."""

from __future__ import annotations

from gitstate.law import statefile
from gitstate.law.lifecycle import PHASE_ADVICE, Lifecycle


def status(repo, agent: str | None = None, at: str | None = None) -> dict:
    """The agent's record with the commit it was read at, or {"commit", "agents"}: every
    agent's (from the index, which parses each state file's blob once). `at`: as it was at a
    revision or a date, by the law of then."""
    from gitstate.law.grammar import canonical_id
    if at is None:
        head = repo.git.head()
        lc = repo.lifecycle(head)
    else:
        from gitstate.history.views import read_at
        head, lc = read_at(repo, at)
    if agent:
        agent = canonical_id(agent)
        path = lc.state_path(agent)
        data = repo.git.cat_files([f"{head}:{path}"])[0] if head else None
        if data is None:
            raise repo.unknown_agent(agent, head, lc)
        try:
            front = statefile.parse_bytes(data, path).front
        except Exception as exc:  # InvalidFile, shown rather than raised: one bad file
            return {"commit": head, **unreadable(agent, path, str(exc), lc)}
        return {"commit": head, **status_of(agent, path, front, lc)}
    if head is None:
        return {"commit": None, "agents": []}
    from gitstate.history.index import Index
    index = Index(repo.git, lc, repo.cache_dir)
    rows = [status_of(a, path, front, lc) if front is not None
            else unreadable(a, path, problem, lc)
            for a, (path, front, problem) in sorted(index.fronts(head).items())]
    index.save()
    return {"commit": head, "agents": rows}


def status_of(agent: str, path: str, front: dict, lc: Lifecycle) -> dict:
    """The status of an agent whose front matter is read (e.g. from the index)."""
    state = front.get("state") if isinstance(front.get("state"), str) else None
    pct = front.get("context_pct")
    pct = float(pct) if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None
    phase = lc.mortality.phase(pct)
    return {"agent": agent, "path": path, "state": state,
            "roster": lc.roster_of(state) if state else None,
            "role": statefile.as_text(front.get("role")),
            "model": statefile.as_text(front.get("model")), "context_pct": pct,
            "phase": phase, "next": list(lc.allowed_from(state)) if state else [],
            "thread": statefile.as_text(front.get("thread")),
            "summary": statefile.as_text(front.get("summary")),
            "problem": None if state in lc.states
            else f"'{state}' is not a state of lifecycle {lc.name}",
            "advice": PHASE_ADVICE.get(phase)}


def unreadable(agent: str, path: str, problem: str | None, lc: Lifecycle) -> dict:
    """The status of an agent whose state file could not be read: why, and nothing else."""
    return {**status_of(agent, path, {}, lc), "problem": problem}
