"""The base every model shares (an exact record, each field described), and the records
several outputs hold: an agent's status and roster entry (described from the row's one
declaration, `gitstate.history.fold.RosterRow`).

Times are ISO 8601 strings in UTC (`2026-11-22T03:46:05Z`, `gitstate.law.times.iso`); a commit
is its full id in a key of its own. A field's description is the docstring under it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from gitstate.history import fold
from gitstate.law import record as law_record


class JsonModel(BaseModel):
    """A `--json` record: exactly its fields (an unknown key is a bug, caught by the tests)."""
    model_config = ConfigDict(extra="forbid", populate_by_name=True,
                              use_attribute_docstrings=True)


def declared(record: type[law_record.Record], name: str, fields: tuple[str, ...], *,
             base: type[JsonModel] = JsonModel, doc: str | None = None) -> Any:
    """The pydantic model of `fields` of a law record (`gitstate.law.record`), each with the
    default and the description it is declared with (a field without a default is
    required)."""
    from pydantic import create_model
    hints, defaults = record.__annotations__, record._defaults
    described: dict[str, Any] = {   # eval: an annotation of gitstate's own, never input
        f: (eval(hints[f], {}), Field(defaults.get(f, ...), description=record._about[f]))
        for f in fields}
    return create_model(name, __base__=base, __doc__=doc or record.__doc__, **described)


# Described from the roster row as history/fold.py declares it; mypy checks them as the base.
if TYPE_CHECKING:
    Agent = JsonModel
    RosterRow = JsonModel
else:
    _AGENT = fold.RosterRow._fields[:8]   # agent, path, state, ... phase: status's too
    Agent = declared(fold.RosterRow, "Agent", _AGENT,
                     doc="What `status` and the roster both say of an agent.")
    RosterRow = declared(fold.RosterRow, "RosterRow", tuple(
        f for f in fold.RosterRow._fields if f not in _AGENT), base=Agent)


class Warned(JsonModel):
    """A read that says what the law lets be and the team should know."""
    warnings: list[str] = []
    """each a warning, e.g. a role whose max is a convention (max_advisory) held by more
    living agents than it says"""


class RetryNext(JsonModel):
    """A failed agent's retry (`policies.retry`): a move back to work, legal once its backoff
    has passed."""
    to: list[str]
    """the states the retry may enter"""
    retries: int
    """the retries made already"""
    max: int
    """the most the policy allows"""
    due_in: int | None
    """seconds until it is legal (0: now, and `next` lists its states); null when the time
    the agent failed is not known"""


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
    retry: RetryNext | None = None
    """under `policies.retry`, a failed agent's retry, where the policy lets it be retried
    (null: not, or the law has no retry policy)"""


class AgentStatusAt(AgentStatus):
    """`status AGENT`: one agent's status, and the commit it was read at."""
    commit: str | None
    """the commit the status was read at (HEAD, or `--at`)"""


class Waiting(JsonModel):
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


class Attention(JsonModel):
    """`gitstate attention`: who waits for a person now."""
    commit: str | None
    """the commit whose history cleared the notices (an agent's state commit since clears
    its notice)"""
    waiting: list[Waiting] = []
    """the agents that wait, longest first"""
