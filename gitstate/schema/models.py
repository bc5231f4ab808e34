"""The `--json` output of every command, as pydantic models: the one declaration of each
shape, which the tests check every output against (`$GITSTATE_CHECK_JSON`), the MCP tools
return, and `gitstate schema` prints. The commands build their records as plain dicts (no
pydantic on the paths agents poll); where the data side declares a record as a law record
(`gitstate.law.record`: the lifecycle, a landing, an init report), its model is described from
it here, not written again.

Field names follow the JSON exactly; `from` (a Python keyword) is spelled `from_` with the
alias `from`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, RootModel, TypeAdapter

from gitstate.doors import install
from gitstate.git import push
from gitstate.law import record as law_record
from gitstate.schema.records import AgentStatus, Commit, Record, RosterRow

# -- setup ----------------------------------------------------------------------------------


class Integration(Record):
    """What `init --runtime NAME` or `--ci NAME` did to its file."""
    kind: Literal["runtime", "ci"]
    name: str
    path: str
    changed: bool
    added: list[str] = []        # hook events (or CI jobs) added or updated
    kept: list[str] = []         # what of the user's was kept as it was


class Preset(Record):
    name: str
    description: str
    initial: str
    states: list[str]
    default: bool


def described(record: type[law_record.Record], names: dict[type[law_record.Record], str]) -> Any:
    """The pydantic model of a law record's plain form (`gitstate.law.record`): the record is
    the one declaration, this only describes it. Every field is required (the plain form
    always has them all). `names`: the records' names in the schema."""
    import re

    from pydantic import create_model

    def resolve(annotation: str) -> Any:
        scope: dict[str, Any] = {"Any": Any}
        for other in names:
            if re.search(rf"\b{other.__name__}\b", annotation):
                scope[other.__name__] = described(other, names)
        return eval(annotation, scope)  # an annotation of gitstate's own, never input

    if record not in _DESCRIBED:
        hints = record.__annotations__
        fields: dict[str, Any] = {
            f: (resolve(hints[f]), ...) for f in record._fields if f not in record._plain_skip}
        model = create_model(names[record], __base__=Record, **fields)
        _DESCRIBED[record] = model
        if record._plain_type:   # written in another form too (a timeout: a bare duration)
            _DESCRIBED[record] = eval(record._plain_type, {record.__name__: model})
    return _DESCRIBED[record]


_DESCRIBED: dict[type, Any] = {}


def _lifecycle_doc() -> type[Record]:
    from gitstate.law import lifecycle as law
    names: dict[type[law_record.Record], str] = {
        law.State: "StateSpec", law.Role: "RoleSpec", law.Mortality: "Mortality",
        law.Timeout: "TimeoutSpec", law.Policies: "Policies", law.Movers: "Movers",
        law.Layout: "Layout",
        law.Grammar: "Grammar", law.Lifecycle: "LifecycleDoc"}
    return described(law.Lifecycle, names)


# Models described at run time; mypy, which cannot follow them, checks them as the base model.
if TYPE_CHECKING:
    LifecycleDoc = Record
    _InitReport = Record
    Pushed = Record
else:
    LifecycleDoc = _lifecycle_doc()
    _InitReport = described(install.InitReport, {install.InitReport: "InitReport"})
    Pushed = described(push.Landing, {push.Landing: "Pushed"})


class InitReport(_InitReport):
    """What `gitstate init` did, and what `--runtime` or `--ci` wrote."""
    integrations: list[Integration] = []


class Problem(Record):
    file: str
    line: int | None = None
    rule: str
    message: str


class CheckResult(Record):
    ok: bool
    problems: list[Problem]


class Finding(Record):
    check: str
    status: Literal["ok", "warn", "fail"]
    detail: str
    fix: str | None = None


class DoctorResult(Record):
    ok: bool
    findings: list[Finding]


# -- views ----------------------------------------------------------------------------------


class Roster(Record):
    commit: str | None
    lifecycle: str
    living: list[RosterRow] = []
    freezer: list[RosterRow] = []
    cemetery: list[RosterRow] = []
    unknown: list[RosterRow] | None = None


class Vacancy(Record):
    role: str
    status: Literal["vacant", "unfilled"]
    mandate: str | None
    last_holder: str | None
    last_holder_state: str | None = None
    since: Commit | None
    frozen_holders: list[str]


class Vacancies(Record):
    commit: str | None
    vacancies: list[Vacancy]


class Transition(Record):
    agent: str
    from_: str | None = Field(alias="from")
    to: str
    commit: str
    author: str
    time: int
    text: str


TransitionLog = RootModel[list[Transition]]


class Message(Record):
    commit: str
    time: int
    author: str
    from_: str | None = Field(alias="from")
    subject: str
    body: str
    to_all: bool


class MarkedRead(Record):
    commit: str
    last_read_commit: str


class Inbox(Record):
    agent: str
    since: str | None
    head: str | None
    messages: list[Message]
    marked_read: MarkedRead | None = None
    push: Pushed | None = Field(None, description="with --mark-read --push: how the "
                                                  "checkpoint landed")


class Entity(Record):
    id: str
    type: str
    name: str
    started_at: str | None
    ended_at: str | None
    quality: str | None


class Belonging(Record):
    member: str
    owner: str
    quality: str
    value: str | None


class SqliteWritten(Record):
    path: str
    entities: int
    belongings: int


class Situations(Record):
    commit: str | None
    entities: list[Entity]
    belongings: list[Belonging]
    sqlite: SqliteWritten | None = None


class VerifyProblem(Record):
    commit: str
    subject: str
    author: str
    time: int
    rule: str
    message: str
    where: str | None = None


class VerifyResult(Record):
    ok: bool
    problems: list[VerifyProblem]
    judged: int
    judged_by_tag: list[str] = []   # commits older than the lifecycle, judged by their tags


class FreezeState(Record):
    agent: str
    state: str
    path: str
    front: dict[str, Any]
    sections: dict[str, str]
    written_by: str | None = None   # who wrote it when not the agent (`gitstate shutdown`)


# -- moves ----------------------------------------------------------------------------------


class Move(Record):
    commit: str
    agent: str
    from_: str | None = Field(alias="from")
    to: str
    path: str
    subject: str
    advice: str | None = None     # what a mortality phase asks, when the move crossed into it
    also_committed: list[str] = []   # staged files that went into the same commit


class Burial(Move):
    vacancies: list[str]


class Landing(Pushed):
    """A move made with `--push`: landed (exit 0), illegal or gave-up (exit 1)."""
    agent: str | None = None
    from_: str | None = Field(default=None, alias="from")
    to: str | None = None
    path: str | None = None
    vacancies: list[str] | None = None


class Replayed(Record):
    """One unlanded commit, and what `gitstate sync` did with it."""
    commit: str                   # the commit as it was found
    subject: str
    agent: str | None
    source: str                   # the branch it was found on
    outcome: Literal["landed", "replayed", "illegal", "gave-up", "kept"]
    how: str | None               # applied, re-decided, fast-forward, merged by the hub, already
    new: str | None               # the commit made again (replayed), or the one on the hub
    reason: str | None
    rule: str | None
    kept: str | None              # the side branch that holds it


class SyncResult(Record):
    """What `gitstate sync` did: exit 0 when every commit landed or was replayed."""
    upstream: str
    branch: str
    aborted: str | None           # the operation it aborted first (a rebase, a merge, ...)
    pushed: bool
    before: str                   # the branch's tip before
    head: str | None              # and after
    side_branches: list[str]      # the gitstate/unlanded/* branches it took
    skipped_merges: list[str]
    moves: list[Replayed]
    ok: bool


class Queued(Record):
    """How the hub's landing queue took one move."""
    outcome: str                  # landed | refused
    move: str
    branch: str
    old: str | None = None        # the branch's tip it landed on
    landed: str | None = None     # the commit on the branch
    rule: str | None = None
    message: str | None = None


class DrainResult(Record):
    landed: int
    refused: int
    moves: list[Queued]


class Due(Record):
    agent: str
    from_: str = Field(alias="from")
    to: str
    after: str
    since: str
    why: str | None = None        # which timeout: a timed move's, or the role's cap


class SweepResult(Record):
    due: list[Due]
    committed: bool


class OperationLog(Record):
    """What an operation on the fleet did, line by line as the command prints it (MCP)."""
    exit_code: int
    lines: list[str]


class Violation(Record):
    rule: str
    message: str
    where: str | None = None


class Error(Record):
    """What any command prints under `--json` when it refuses (exit 1) or is misused (2)."""
    error: str
    message: str
    where: str | None = None
    hint: str | None = None
    violations: list[Violation] | None = None


PresetList = RootModel[list[Preset]]


# The model of each command's `--json` output (the MCP tools return the same).
COMMANDS: dict[str, Any] = {
    "init": InitReport,
    "presets": PresetList,
    "lifecycle": LifecycleDoc,
    "check": CheckResult,
    "doctor": DoctorResult,
    "status": AgentStatus | list[AgentStatus],
    "roster": Roster,
    "vacancies": Vacancies,
    "log": TransitionLog,
    "inbox": Inbox,
    "situations": Situations,
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
    "landing": Landing,
    "sync": SyncResult,
    "sweep": SweepResult,
    "hub-drain": DrainResult,
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
