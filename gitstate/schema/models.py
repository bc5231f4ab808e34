"""The `--json` output of every command, as pydantic models: the one declaration of each
shape, which the tests check every output against (`$GITSTATE_CHECK_JSON`), the MCP tools
return, and `gitstate schema` prints. The commands build their records as plain dicts (no
pydantic on the paths agents poll); where the data side declares a record as a law record
(`gitstate.law.record`: the lifecycle, a landing, an init report), its model is described from
it (`described.py`), not written again. The moves' and operations' models are in `moves.py`.

Field names follow the JSON exactly; `from` (a Python keyword) is spelled `from_` with the
alias `from`. One dialect: keys in snake_case, times as ISO 8601 strings in UTC, commit ids in
keys of their own, every output an object, and every view says the `commit` it describes.
Every field has a description (the docstring under it; for records described from the law,
the `about` it is declared with): `gitstate schema` prints them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, RootModel, TypeAdapter

from gitstate.schema import records
from gitstate.schema.described import LifecycleDoc, Pushed
from gitstate.schema.move_output import (
    AwaitResult,
    Burial,
    DrainResult,
    Error,
    Move,
    OperationLog,
    OperationResult,
    Said,
    SiteResult,
    SweepResult,
    SyncResult,
    WatchRound,
    WorktreeAdded,
    WorktreeRemoved,
)
from gitstate.schema.records import AgentStatus, AgentStatusAt, Attention, JsonModel, RosterRow
from gitstate.schema.setup_output import InitReport, PresetList

__all__ = ["LifecycleDoc", "Pushed", "Move", "Burial", "Said", "SyncResult", "SweepResult",
           "WatchRound", "AwaitResult", "OperationResult", "OperationLog", "DrainResult",
           "SiteResult", "Error", "AgentStatus", "AgentStatusAt", "RosterRow", "WorktreeAdded",
           "WorktreeRemoved"]

# -- setup (init's and presets' models are in `setup.py`) ----------------------------------


class Problem(JsonModel):
    """A problem `check` found."""
    file: str
    """the file"""
    line: int | None = None
    """the line in it, when known"""
    rule: str
    """the rule it breaks"""
    message: str
    """what is wrong, and what would be right"""


class CheckResult(records.Warned):
    """`gitstate check`: the lifecycle and the state files in the work tree."""
    ok: bool
    """true when nothing is wrong"""
    problems: list[Problem]
    """every problem found"""


class Finding(JsonModel):
    """One thing `doctor` looked at."""
    check: str
    """what was looked at"""
    status: Literal["ok", "warn", "fail"]
    """ok, warn or fail"""
    detail: str
    """what was found"""
    fix: str | None = None
    """the command that mends it"""


class DoctorResult(JsonModel):
    """`gitstate doctor`: whether this clone's doors are shut."""
    ok: bool
    """true when nothing failed"""
    findings: list[Finding]
    """everything looked at"""


# -- views ----------------------------------------------------------------------------------


class StatusAll(records.Warned):
    """`gitstate status`: every agent's status."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    agents: list[AgentStatus]
    """every agent with a state file, by id"""


class Status(RootModel[AgentStatusAt | StatusAll]):
    """`gitstate status AGENT` (one agent's status) or `gitstate status` (every agent's): an
    object either way, told apart by its keys (`agent` or `agents`), published as an object
    so that an MCP client takes it as the tool's structured result as it is, unwrapped."""
    model_config = ConfigDict(json_schema_extra={"type": "object"})


class Roster(JsonModel):
    """`gitstate roster`: living, freezer and cemetery."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    lifecycle: str
    """the lifecycle's name at that commit"""
    living: list[RosterRow] = []
    """agents in a living state"""
    freezer: list[RosterRow] = []
    """agents in a frozen state"""
    cemetery: list[RosterRow] = []
    """agents in a terminal state"""
    unknown: list[RosterRow] | None = None
    """agents whose state could not be read (only when there are some)"""


class Vacancy(JsonModel):
    """A role without a living holder."""
    role: str
    """the role"""
    status: Literal["vacant", "unfilled"]
    """vacant (its holders froze or died) or unfilled (never held)"""
    mandate: str | None
    """what the role is for"""
    last_holder: str | None
    """the holder whose state began last"""
    last_holder_state: str | None = None
    """that holder's state"""
    since: str | None
    """when that holder entered its state (ISO 8601, UTC)"""
    since_commit: str | None
    """the commit of that move"""
    frozen_holders: list[str]
    """holders that are frozen (may be woken)"""


class Vacancies(JsonModel):
    """`gitstate vacancies`."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    vacancies: list[Vacancy]
    """every role without a living holder"""


class Transition(JsonModel):
    """One move in history."""
    agent: str
    """the agent that moved"""
    from_: str | None = Field(alias="from", description="the state it left (null: its birth)")
    to: str
    """the state it entered"""
    commit: str
    """the move's commit"""
    author: str
    """the commit's author"""
    time: str
    """when it was committed (ISO 8601, UTC)"""
    text: str
    """the commit subject's text after its tag"""


class TransitionLog(JsonModel):
    """`gitstate log`: the moves, oldest first unless --newest-first."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    agent: str | None
    """whose moves (null: everyone's)"""
    moves: list[Transition]
    """the moves"""


class Notice(JsonModel):
    """One notice of the board (seed 000's board posts), derived from a commit."""
    commit: str
    """the commit that posts it"""
    time: str
    """when it was committed (ISO 8601, UTC)"""
    author: str
    """the commit's author"""
    agent: str
    """the agent it is about"""
    kind: Literal["freeze", "wake", "death", "vacancy", "handover", "assume", "role"]
    """what happened"""
    role: str | None
    """the role concerned, or the agent's role (null: none)"""
    text: str
    """the notice in the seed's words ('Frozen at 85% context. Freeze-state at ... Wake me
    if ...'; "Role 'architect' is now vacant. ...")"""


class Board(JsonModel):
    """`gitstate board`: the notices, oldest first."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    agent: str | None
    """whose notices (null: everyone's)"""
    notices: list[Notice]
    """the notices"""


class Message(JsonModel):
    """A commit that speaks to the agent (@AGENT or @ALL)."""
    commit: str
    """the commit"""
    time: str
    """when it was committed (ISO 8601, UTC)"""
    author: str
    """the commit's author"""
    from_: str | None = Field(alias="from", description="the agent that wrote it ('@alice: ...'"
                                                        "), when it says")
    subject: str
    """the commit's subject"""
    body: str
    """the commit's body"""
    to_all: bool
    """true when it speaks to @ALL, not to the agent by name"""


class MarkedRead(JsonModel):
    """The checkpoint `--mark-read` committed."""
    commit: str
    """the commit that moved the checkpoint"""
    last_read_commit: str
    """the agent's last_read_commit now"""


class Inbox(JsonModel):
    """`gitstate inbox AGENT`: messages since its last_read_commit."""
    commit: str | None
    """the commit read up to (HEAD, or `--at`)"""
    agent: str
    """whose inbox"""
    last_read_commit: str | None
    """the agent's checkpoint: messages after it are listed (null: from the beginning)"""
    messages: list[Message]
    """the messages, oldest first"""
    marked_read: MarkedRead | None = None
    """with --mark-read: the checkpoint it committed (absent when nothing was unread)"""
    push: Pushed | None = Field(None, description="with --mark-read --push: how the "
                                                  "checkpoint landed")


class Entity(JsonModel):
    """An entity of the graph."""
    id: str
    """its id (`situation:session-alice`, `role:architect`, ...)"""
    type: str
    """its type"""
    name: str
    """its name"""
    started_at: str | None
    """when it began (ISO 8601, UTC)"""
    ended_at: str | None
    """when it ended (ISO 8601, UTC)"""
    quality: str | None
    """live, frozen or dead (sessions)"""


class Belonging(JsonModel):
    """An entity belonging to another."""
    member: str
    """the entity that belongs"""
    owner: str
    """the entity it belongs to"""
    quality: str
    """how: actor, method, domain, description"""
    value: str | None
    """the text (descriptions)"""


class SqliteWritten(JsonModel):
    """Where the graph was upserted."""
    path: str
    """the SQLite file"""
    entities: int
    """entities written"""
    belongings: int
    """belongings written"""


class Situations(JsonModel):
    """`gitstate situations`: the entity graph of agent sessions."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    entities: list[Entity]
    """every entity"""
    belongings: list[Belonging]
    """every belonging"""
    sqlite: SqliteWritten | None = None
    """where it was written (absent with --no-sqlite)"""


class VerifyProblem(JsonModel):
    """A commit that broke a rule."""
    commit: str
    """the commit"""
    subject: str
    """its subject"""
    author: str
    """its author"""
    time: str
    """when it was committed (ISO 8601, UTC)"""
    rule: str
    """the rule it broke"""
    message: str
    """what was wrong"""
    where: str | None = None
    """the file, when one"""


class VerifyResult(JsonModel):
    """`gitstate verify`."""
    commit: str | None
    """the commit whose history was judged (HEAD; null in an empty repository)"""
    ok: bool
    """true when no commit broke a rule and every commit could be judged"""
    problems: list[VerifyProblem]
    """every problem"""
    judged: int
    """commits judged in this run (0: the answer kept for this HEAD)"""
    judged_by_tag: list[str] = []
    """commits older than the lifecycle, judged by their tags alone"""
    lifecycle_committed: bool = True
    """false when no lifecycle is committed yet: only tags could be judged"""
    line: str | None = None
    """the team line the law in force declares (null: the line rule is not in force)"""
    line_from: str | None = None
    """the commit from which the law declares the team line, where it is in what was judged"""
    merges_not_judged: int = 0
    """merges read but not judged: made before the law declared the team line"""
    unjudged: list[str] = []
    """commits that could not be judged: where a shallow clone's history stops (their parents
    are not in it, nor anything before them; `git fetch --unshallow` fetches them)"""


class FreezeState(JsonModel):
    """`gitstate show AGENT`: its committed freeze-state."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    agent: str
    """the agent"""
    state: str
    """its state"""
    path: str
    """the freeze-state file"""
    front: dict[str, Any]
    """the file's front matter"""
    sections: dict[str, str]
    """its `## ` sections, keyed by title in snake_case (`Key Decisions`: key_decisions)"""
    titles: dict[str, str]
    """each section's title as written, by its key"""
    written_by: str | None = None
    """who wrote it when not the agent (`gitstate shutdown` writes placeholders)"""


# The model of each command's `--json` output (the MCP tools return the same).
COMMANDS: dict[str, Any] = {
    "init": InitReport,
    "presets": PresetList,
    "lifecycle": LifecycleDoc,
    "check": CheckResult,
    "doctor": DoctorResult,
    "status": Status,
    "roster": Roster,
    "vacancies": Vacancies,
    "log": TransitionLog,
    "board": Board,
    "inbox": Inbox,
    "situations": Situations,
    "attention": Attention,
    "verify": VerifyResult,
    "show": FreezeState,
    "spawn": Move,
    "transition": Move,
    "freeze": Move,
    "wake": Move,
    "bury": Burial,
    "handover": Move,
    "assume": Move,
    "logout": Move,
    "say": Said,
    "worktree-add": WorktreeAdded,
    "worktree-remove": WorktreeRemoved,
    "sync": SyncResult,
    "sweep": SweepResult,
    "await": AwaitResult,
    "reap": OperationResult,
    "shutdown": OperationResult,
    "watch": WatchRound,
    "hub-drain": DrainResult,
    "site": SiteResult,
    "error": Error,
}


def adapter(command: str) -> TypeAdapter:
    return TypeAdapter(COMMANDS[command])


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema of `command`'s `--json` output."""
    schema = adapter(command).json_schema(by_alias=True)
    schema.setdefault("title", command)
    return schema


def validated(command: str, data: Any) -> Any:
    """`data` checked against `command`'s model, as plain JSON-ready data (aliases kept)."""
    ta = adapter(command)
    # exclude_unset: the output keeps exactly the keys the command gave (no added defaults)
    return ta.dump_python(ta.validate_python(data), mode="json", by_alias=True,
                          exclude_unset=True)
