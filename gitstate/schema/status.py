"""The records every face shares: a status line, a rule's problem, and what a mortality phase
asks of an agent."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

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


def agent_status(agent: str, path: str, data: bytes | None, lc: Lifecycle) -> AgentStatus:
    """The typed status record (the command line builds the plain one: no pydantic there)."""
    from gitstate.history.status import agent_status as plain
    return AgentStatus(**plain(agent, path, data, lc))
