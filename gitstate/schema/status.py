"""The records every face shares: a status line, a rule's problem, and what a mortality phase
asks of an agent."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from gitstate.law import statefile
from gitstate.law.lifecycle import Lifecycle


class Record(BaseModel):
    """A `--json` record: exactly its fields (an unknown key is a bug, caught by the tests)."""
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class AgentStatus(Record):
    agent: str
    path: str
    state: str | None
    roster: str | None
    role: str | None = None
    model: str | None = None
    context_pct: float | None = None
    phase: str = "unknown"
    next: list[str] = []
    thread: str | None = None
    summary: str | None = None
    problem: str | None = None    # why the state file could not be read
    advice: str | None = None     # what the mortality phase asks of the agent


class Problem(Record):
    file: str
    line: int | None = None
    rule: str
    message: str

    @classmethod
    def from_violation(cls, v) -> Problem:
        """A rule's violation, its `where` ("file:line" or "file") split in two."""
        where = v.where or ""
        path, _, line = where.rpartition(":")
        if path and line.isdigit():
            return cls(file=path, line=int(line), rule=v.rule, message=v.message)
        return cls(file=where, rule=v.rule, message=v.message)


PHASE_ADVICE = {
    "midlife": "midlife: make sure key decisions are written down",
    "legacy": "legacy: consolidate; fewer new reads, more writes; write your freeze-state "
              "(`gitstate freeze ID` writes the template)",
    "urgent": "urgent: externalize now, then freeze or die; no new work",
}


def agent_status(agent: str, path: str, data: bytes | None, lc: Lifecycle) -> AgentStatus:
    try:
        doc = statefile.parse_bytes(data or b"", path)
    except Exception as exc:  # InvalidFile, shown rather than raised: one bad file
        return AgentStatus(agent=agent, path=path, state=None, roster=None, problem=str(exc))
    state = doc.state if isinstance(doc.state, str) else None
    pct = doc.get("context_pct")
    pct = float(pct) if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None
    phase = lc.mortality.phase(pct)
    problem = None if state in lc.states else f"'{state}' is not a state of lifecycle {lc.name}"
    return AgentStatus(
        agent=agent, path=path, state=state, roster=lc.roster_of(state) if state else None,
        role=statefile.as_text(doc.get("role")), model=statefile.as_text(doc.get("model")),
        context_pct=pct, phase=phase, next=list(lc.allowed_from(state)) if state else [],
        thread=statefile.as_text(doc.get("thread")), summary=statefile.as_text(doc.get("summary")),
        problem=problem, advice=PHASE_ADVICE.get(phase))
