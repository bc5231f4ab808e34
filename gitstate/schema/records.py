"""The base every model shares (an exact record, each field described), and the records
several outputs hold: an agent's status and roster entry.

Times are ISO 8601 strings in UTC (`2026-11-22T03:46:05Z`, `gitstate.law.times.iso`); a commit
is its full id in a key of its own. A field's description is the docstring under it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """A `--json` record: exactly its fields (an unknown key is a bug, caught by the tests)."""
    model_config = ConfigDict(extra="forbid", populate_by_name=True,
                              use_attribute_docstrings=True)


class Agent(Record):
    """What `status` and the roster both say of an agent."""
    agent: str
    """the agent's id"""
    path: str
    """its state file"""
    state: str | None
    """its state (null when the state file could not be read)"""
    roster: str | None
    """the roster of its state: living, frozen or dead"""
    role: str | None = None
    """the role it holds"""
    model: str | None = None
    """the model it runs on, as its state file says"""
    context_pct: float | None = None
    """how full its context window is, in percent (always a number, or null when unknown)"""
    phase: str = "unknown"
    """its mortality phase by context_pct: young, midlife, legacy, urgent or unknown"""


class AgentStatus(Agent):
    """One agent's status."""
    next: list[str] = []
    """the states it may move to next"""
    thread: str | None = None
    """what it is working on"""
    summary: str | None = None
    """its latest summary"""
    problem: str | None = None
    """why the state file could not be read, or its state is not in the lifecycle"""
    advice: str | None = None
    """what the mortality phase asks of the agent"""


class AgentStatusAt(AgentStatus):
    """`status AGENT`: one agent's status, and the commit it was read at."""
    commit: str | None
    """the commit the status was read at (HEAD, or `--at`)"""


class RosterRow(Agent):
    """One agent in the roster."""
    thread: str | None = None
    """what it is working on"""
    summary: str | None = None
    """its latest summary"""
    person: str | None = None
    """the person it works for"""
    project: str | None = None
    """the project it works in"""
    parent: str | None = None
    """the agent that spawned it"""
    depth: int | None = None
    """how many parents it has above it"""
    last_read_commit: str | None = None
    """the commit up to which it has read its inbox"""
    freeze_state: str | None = None
    """its freeze-state file (frozen agents)"""
    final_summary: str | None = None
    """what it said when it ended (dead agents)"""
    task: str | None = None
    """the task it was given"""
    instructions: str | None = None
    """instructions it was given"""
    started: str | None = None
    """when it was born, as its state file says"""
    ended: str | None = None
    """when it ended, as its state file says"""
    born: int | None = None
    """order of birth in history (instances are numbered by it)"""
    first_commit: str | None = None
    """its first state commit"""
    first_commit_at: str | None = None
    """when that commit was made (ISO 8601, UTC)"""
    last_commit: str | None = None
    """its latest state commit"""
    last_commit_at: str | None = None
    """when that commit was made (ISO 8601, UTC)"""
    in_state_since: str | None = None
    """when it entered its state (ISO 8601, UTC)"""
    in_state_since_commit: str | None = None
    """the commit of that move"""
    entered_order: int | None = None
    """place in history of the move into this state"""
    seconds_in_state: int | None = None
    """seconds since it entered its state (to the commit read, or now)"""
    instance: int | None = None
    """its number among the holders of its role, in order of birth"""
    problem: str | None = None
    """why its state file could not be read"""


class Waiting(Record):
    """An agent that waits for a person (Claude Code's `Notification`)."""
    agent: str
    """the agent's id (the one its runtime session is bound to)"""
    state: str | None
    """its state on the line read (null when history does not know it)"""
    session: str
    """the runtime session that waits"""
    kind: str
    """Claude Code's notification_type: permission_prompt, idle_prompt, elicitation_dialog,
    agent_needs_input or agent_completed"""
    waits_for: str
    """what it waits for, in words"""
    message: str | None
    """what Claude Code said"""
    title: str | None
    """the notice's title, where Claude Code gave one"""
    since: str
    """when the notice came (ISO 8601, UTC)"""


class Attention(Record):
    """`gitstate attention`: who waits for a person now."""
    commit: str | None
    """the commit whose history cleared the notices (an agent's state commit since clears
    its notice)"""
    waiting: list[Waiting] = []
    """the agents that wait, longest first"""
