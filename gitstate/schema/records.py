"""The base every model shares (an exact record), and the records several outputs hold: an
agent's status and roster entry, a commit."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    """A `--json` record: exactly its fields (an unknown key is a bug, caught by the tests)."""
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Commit(Record):
    sha: str
    time: int


class Agent(Record):
    """What `status` and the roster both say of an agent."""
    agent: str
    path: str
    state: str | None
    roster: str | None
    role: str | None = None
    model: str | None = None
    context_pct: float | None = None
    phase: str = "unknown"


class AgentStatus(Agent):
    next: list[str] = []
    thread: str | None = None
    summary: str | None = None
    problem: str | None = Field(None, description="why the state file could not be read")
    advice: str | None = Field(None, description="what the mortality phase asks of the agent")


class RosterRow(Agent):
    thread: str | None = None
    summary: str | None = None
    person: str | None = None
    project: str | None = None
    parent: str | None = None
    depth: int | None = None
    last_read_commit: str | None = None
    freeze_state: str | None = None
    final_summary: str | None = None
    task: str | None = None
    instructions: str | None = None
    started: str | None = Field(None, description="when it was born (its state file says)")
    ended: str | None = None
    born: int | None = Field(None, description="order of birth in history (instances are "
                                               "numbered by it)")
    first_commit: Commit | None = None
    last_commit: Commit | None = None
    in_state_since: Commit | None = None
    entered_order: int | None = Field(None, description="place in history of the move into "
                                                        "this state")
    seconds_in_state: int | None = None
    instance: int | None = None
    problem: str | None = None
