"""One agent's status as `gitstate status` shows it: a plain record (the typed model of
`--json` is `schema.status.AgentStatus`; building it is left to whoever validates)."""

from __future__ import annotations

from gitstate.law import statefile
from gitstate.law.lifecycle import PHASE_ADVICE, Lifecycle


def status_rows(repo, agent: str | None = None) -> list[dict]:
    """`gitstate status`: the agent's record, or every agent's (from the index, which parses
    each state file's blob once)."""
    from gitstate.law.grammar import canonical_id
    head = repo.git.head()
    lc = repo.lifecycle(head)
    if agent:
        agent = canonical_id(agent)
        path = lc.state_path(agent)
        data = repo.git.cat_files([f"{head}:{path}"])[0] if head else None
        if data is None:
            raise repo.unknown_agent(agent, head, lc)
        return [agent_status(agent, path, data, lc)]
    from gitstate.history.index import Index
    index = Index(repo.git, lc, repo.cache_dir)
    rows = [status_of(a, path, front, lc) if front is not None
            else {**agent_status(a, path, b"", lc), "problem": problem}
            for a, (path, front, problem) in sorted(index.fronts(head).items())]
    index.save()
    return rows


def agent_status(agent: str, path: str, data: bytes | None, lc: Lifecycle) -> dict:
    try:
        doc = statefile.parse_bytes(data or b"", path)
    except Exception as exc:  # InvalidFile, shown rather than raised: one bad file
        return _record(agent, path, problem=str(exc))
    return status_of(agent, path, doc.front, lc)


def status_of(agent: str, path: str, front: dict, lc: Lifecycle) -> dict:
    """The status of an agent whose front matter is read (e.g. from the index)."""
    doc = _Doc(front)
    state = doc.state if isinstance(doc.state, str) else None
    pct = doc.get("context_pct")
    pct = float(pct) if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None
    phase = lc.mortality.phase(pct)
    return _record(
        agent, path, state=state, roster=lc.roster_of(state) if state else None,
        role=statefile.as_text(doc.get("role")), model=statefile.as_text(doc.get("model")),
        context_pct=pct, phase=phase, next=list(lc.allowed_from(state)) if state else [],
        thread=statefile.as_text(doc.get("thread")), summary=statefile.as_text(doc.get("summary")),
        problem=None if state in lc.states else f"'{state}' is not a state of lifecycle {lc.name}",
        advice=PHASE_ADVICE.get(phase))


def _record(agent: str, path: str, **fields) -> dict:
    out = {"agent": agent, "path": path, "state": None, "roster": None, "role": None,
           "model": None, "context_pct": None, "phase": "unknown", "next": [], "thread": None,
           "summary": None, "problem": None, "advice": None}
    out.update(fields)
    return out


class _Doc:
    def __init__(self, front: dict):
        self.front, self.state = front, front.get("state")

    def get(self, key: str):
        return self.front.get(key)
