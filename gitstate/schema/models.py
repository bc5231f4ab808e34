"""The `--json` output of every command, as pydantic models: the one declaration of each
shape, which the tests check every output against (`$GITSTATE_CHECK_JSON`), the MCP tools
return, and `gitstate schema` prints. The commands build their records as plain dicts (no
pydantic on the paths agents poll); where the data side declares a record as a law record
(`gitstate.law.record`: the lifecycle, a landing, an init report), its model is described from
it here, not written again.

Field names follow the JSON exactly; `from` (a Python keyword) is spelled `from_` with the
alias `from`. One dialect: keys in snake_case, times as ISO 8601 strings in UTC, commit ids in
keys of their own, every output an object, and every view says the `commit` it describes.
Every field has a description (the docstring under it; for records described from the law,
`LAW_FIELDS` below): `gitstate schema` prints them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, TypeAdapter

from gitstate.doors import install
from gitstate.git import push
from gitstate.law import record as law_record
from gitstate.schema.records import AgentStatus, AgentStatusAt, Record, RosterRow

# -- descriptions of the records described from the law -------------------------------------

LAW_FIELDS: dict[str, dict[str, str]] = {
    "StateSpec": {
        "roster": "living, frozen or dead: where an agent in this state is listed",
        "terminal": "true when no move leaves this state",
        "requires": "front-matter keys an agent must have to enter this state",
        "description": "what the state means",
        "protocol": "the protocol document an agent in this state follows",
        "outcome": "how an ending here reads to whoever waits on it: success or failure",
        "log": "a shared file that a commit entering this state appends to",
    },
    "RoleSpec": {
        "mandate": "what a holder of the role is for",
        "max": "how many living holders the role may have",
        "description": "what the role is",
        "spawns": "the roles a holder may spawn (null: any)",
        "never_spawns": "the roles a holder must never spawn",
        "self_spawn": "whether a holder may spawn its own role",
        "timeout": "seconds a holder may stay living from birth before `sweep` ends it",
    },
    "Mortality": {
        "midlife": "context_pct from which an agent is in midlife",
        "legacy": "context_pct from which it is in legacy (writes what it leaves behind)",
        "urgent": "context_pct from which it is urgent (must freeze or end)",
        "urgent_forbids": "states an urgent agent may not move to",
    },
    "TimeoutSpec": {
        "after": "seconds in the first state after which the move is due",
        "except_roles": "roles the timeout never applies to",
        "sooner": "whether an agent may make the move itself before it is due",
    },
    "Movers": {
        "parent": "moves ('from -> to') an agent's parent may make of it",
        "roles": "for each role, the moves its living holders may make of any agent",
        "operators": "principals whose signature proves `reap` and `shutdown`",
    },
    "Policies": {
        "humans": "the humans who may approve gated moves",
        "approval": "moves ('from -> to', or `law`) that need a human's approval",
        "mortality": "the context thresholds of the mortality phases",
        "max_living": "how many agents may be living at once",
        "max_depth": "how deep agents may spawn agents",
        "timeouts": "timed moves, keyed 'from -> to'",
        "role_timeout": "seconds a holder of a role without its own timeout may live",
        "heartbeat": "seconds of silence after which `reap` ends a living agent",
        "custom_roles": "whether agents may hold roles the lifecycle does not declare",
        "atomic_commits": "whether a state commit must hold the agent's state file alone",
        "context_window": "tokens of the agents' model window, when not known otherwise",
        "movers": "who may move an agent besides itself",
    },
    "Layout": {"state_file": "where an agent's state file lives (`{id}` is its id)"},
    "Grammar": {"accept": "further patterns of commit subjects read as state commits"},
    "LifecycleDoc": {
        "name": "the lifecycle's name",
        "description": "what it is for",
        "initial": "the state a spawned agent starts in",
        "states": "every state, by name",
        "transitions": "for each state, the states it may move to",
        "roles": "every declared role, by name",
        "policies": "the rules beyond the moves",
        "layout": "where state files live",
        "grammar": "how commit subjects are read",
        "defaults": "front-matter values a spawned agent gets",
    },
    "InitReport": {
        "lifecycle": "the lifecycle the repository is managed with (null on a hub: each push "
                     "is judged by the lifecycle committed in its own history)",
        "hooks_dir": "where the hooks are installed",
        "actions": "what init did, line by line",
        "commit": "the commit that put the lifecycle in history (null: none made)",
    },
    "Pushed": {
        "outcome": "landed, illegal or gave-up",
        "attempts": "how many times it tried to land",
        "commit": "the commit on the hub (landed), or the one kept here",
        "upstream": "the branch it was to land on",
        "reason": "why it did not land (or what could not follow)",
        "rule": "the rule that refused it (illegal)",
        "kept": "the side branch that holds the unlanded work",
        "staged": "work left staged in the index",
    },
}


# -- setup ----------------------------------------------------------------------------------


class Integration(Record):
    """What `init --runtime NAME` or `--ci NAME` did to its file."""
    kind: Literal["runtime", "ci"]
    """runtime or ci"""
    name: str
    """the runtime's or CI's name (claude-code, github, gitlab)"""
    path: str
    """the file it wrote"""
    changed: bool
    """whether the file changed"""
    added: list[str] = []
    """hook events (or CI jobs) added or updated"""
    kept: list[str] = []
    """what of the user's was kept as it was"""


class Preset(Record):
    """A shipped lifecycle."""
    name: str
    """its name (`init --lifecycle NAME`)"""
    description: str
    """what it is for"""
    initial: str
    """the state a spawned agent starts in"""
    states: list[str]
    """its states"""
    default: bool
    """whether `init` takes it when none is named"""


class PresetList(Record):
    """`gitstate presets`: the shipped lifecycles."""
    presets: list[Preset]
    """every shipped preset"""


def described(record: type[law_record.Record], names: dict[type[law_record.Record], str]) -> Any:
    """The pydantic model of a law record's plain form (`gitstate.law.record`): the record is
    the one declaration, this only describes it (`LAW_FIELDS`). Every field is required (the
    plain form always has them all). `names`: the records' names in the schema."""
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
        about = LAW_FIELDS.get(names[record], {})
        fields: dict[str, Any] = {
            f: (resolve(hints[f]), Field(..., description=about.get(f)))
            for f in record._fields if f not in record._plain_skip}
        model = create_model(names[record], __base__=Record, __doc__=record.__doc__, **fields)
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
    """what `--runtime` or `--ci` wrote"""


class Problem(Record):
    """A problem `check` found."""
    file: str
    """the file"""
    line: int | None = None
    """the line in it, when known"""
    rule: str
    """the rule it breaks"""
    message: str
    """what is wrong, and what would be right"""


class CheckResult(Record):
    """`gitstate check`: the lifecycle and the state files in the work tree."""
    ok: bool
    """true when nothing is wrong"""
    problems: list[Problem]
    """every problem found"""


class Finding(Record):
    """One thing `doctor` looked at."""
    check: str
    """what was looked at"""
    status: Literal["ok", "warn", "fail"]
    """ok, warn or fail"""
    detail: str
    """what was found"""
    fix: str | None = None
    """the command that mends it"""


class DoctorResult(Record):
    """`gitstate doctor`: whether this clone's doors are shut."""
    ok: bool
    """true when nothing failed"""
    findings: list[Finding]
    """everything looked at"""


# -- views ----------------------------------------------------------------------------------


class StatusAll(Record):
    """`gitstate status`: every agent's status."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    agents: list[AgentStatus]
    """every agent with a state file, by id"""


class Roster(Record):
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


class Vacancy(Record):
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


class Vacancies(Record):
    """`gitstate vacancies`."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    vacancies: list[Vacancy]
    """every role without a living holder"""


class Transition(Record):
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


class TransitionLog(Record):
    """`gitstate log`: the moves, oldest first unless --newest-first."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    agent: str | None
    """whose moves (null: everyone's)"""
    moves: list[Transition]
    """the moves"""


class Message(Record):
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


class MarkedRead(Record):
    """The checkpoint `--mark-read` committed."""
    commit: str
    """the commit that moved the checkpoint"""
    last_read_commit: str
    """the agent's last_read_commit now"""


class Inbox(Record):
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


class Entity(Record):
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


class Belonging(Record):
    """An entity belonging to another."""
    member: str
    """the entity that belongs"""
    owner: str
    """the entity it belongs to"""
    quality: str
    """how: actor, method, domain, description"""
    value: str | None
    """the text (descriptions)"""


class SqliteWritten(Record):
    """Where the graph was upserted."""
    path: str
    """the SQLite file"""
    entities: int
    """entities written"""
    belongings: int
    """belongings written"""


class Situations(Record):
    """`gitstate situations`: the entity graph of agent sessions."""
    commit: str | None
    """the commit read (HEAD, or `--at`)"""
    entities: list[Entity]
    """every entity"""
    belongings: list[Belonging]
    """every belonging"""
    sqlite: SqliteWritten | None = None
    """where it was written (absent with --no-sqlite)"""


class VerifyProblem(Record):
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


class VerifyResult(Record):
    """`gitstate verify`."""
    commit: str | None
    """the commit whose history was judged (HEAD; null in an empty repository)"""
    ok: bool
    """true when no commit broke a rule"""
    problems: list[VerifyProblem]
    """every problem"""
    judged: int
    """commits judged in this run (0: the answer kept for this HEAD)"""
    judged_by_tag: list[str] = []
    """commits older than the lifecycle, judged by their tags alone"""
    lifecycle_committed: bool = True
    """false when no lifecycle is committed yet: only tags could be judged"""


class FreezeState(Record):
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


# -- moves ----------------------------------------------------------------------------------


class Move(Record):
    """A move committed here."""
    commit: str
    """the commit"""
    agent: str
    """the agent moved"""
    from_: str | None = Field(alias="from", description="the state it left (null: its birth)")
    to: str
    """the state it entered"""
    path: str
    """its state file"""
    subject: str
    """the commit's subject"""
    advice: str | None = None
    """what a mortality phase asks, when the move crossed into it"""
    also_committed: list[str] = []
    """staged files that went into the same commit"""


class Burial(Move):
    """`gitstate bury`: the move, and the roles it left vacant."""
    vacancies: list[str]
    """notices of roles left without a living holder"""


class Landing(Pushed):
    """A move made with `--push`: landed (exit 0), illegal or gave-up (exit 1)."""
    agent: str | None = None
    """the agent moved"""
    from_: str | None = Field(default=None, alias="from", description="the state it left")
    to: str | None = None
    """the state it entered"""
    path: str | None = None
    """its state file"""
    vacancies: list[str] | None = None
    """notices of roles left vacant (bury)"""


class Replayed(Record):
    """One unlanded commit, and what `gitstate sync` did with it."""
    commit: str
    """the commit as it was found"""
    subject: str
    """its subject"""
    agent: str | None
    """the agent it moves"""
    source: str
    """the branch it was found on"""
    outcome: Literal["landed", "replayed", "illegal", "gave-up", "kept"]
    """what became of it"""
    how: str | None
    """applied, re-decided, fast-forward, merged by the hub, already"""
    new: str | None
    """the commit made again (replayed), or the one on the hub"""
    reason: str | None
    """why it did not land"""
    rule: str | None
    """the rule that refused it"""
    kept: str | None
    """the side branch that holds it"""


class SyncResult(Record):
    """What `gitstate sync` did: exit 0 when every commit landed or was replayed."""
    upstream: str
    """the branch it lands on"""
    branch: str
    """this branch"""
    aborted: str | None
    """the operation it aborted first (a rebase, a merge, ...)"""
    pushed: bool
    """whether it pushed"""
    before: str
    """the branch's tip before"""
    head: str | None
    """and after"""
    side_branches: list[str]
    """the gitstate/unlanded/* branches it took"""
    skipped_merges: list[str]
    """merge commits it left alone"""
    moves: list[Replayed]
    """each unlanded commit"""
    ok: bool
    """true when every commit landed or was replayed"""


class Queued(Record):
    """How the hub's landing queue took one move."""
    outcome: str
    """landed or refused"""
    move: str
    """the move's commit"""
    branch: str
    """the branch it was to land on"""
    old: str | None = None
    """the branch's tip it landed on"""
    landed: str | None = None
    """the commit on the branch"""
    rule: str | None = None
    """the rule that refused it"""
    message: str | None = None
    """why it was refused"""


class DrainResult(Record):
    """`gitstate hub drain`."""
    landed: int
    """moves landed"""
    refused: int
    """moves refused"""
    moves: list[Queued]
    """each move"""


class Due(Record):
    """A timed move that is due."""
    agent: str
    """the agent"""
    from_: str = Field(alias="from", description="its state")
    to: str
    """where the timeout takes it"""
    after: str
    """the timeout (`30m`)"""
    since: str
    """when the time began (ISO 8601, UTC): it entered the state, or was born"""
    since_commit: str
    """the commit of that"""
    why: str | None = None
    """which timeout: a timed move's, or the role's cap"""


class SweepResult(Record):
    """`gitstate sweep`."""
    commit: str | None
    """HEAD when it looked"""
    due: list[Due]
    """the timed moves that were due"""
    committed: bool
    """whether they were committed (false with --dry-run)"""


class OperationMove(Record):
    """One move an operation committed."""
    agent: str
    """the agent moved"""
    from_: str | None = Field(alias="from", description="the state it left")
    to: str
    """the state it entered"""
    commit: str
    """the commit (on the hub with --push)"""
    subject: str
    """the commit's subject"""


class OperationResult(Record):
    """`gitstate reap` or `shutdown`: what it moved, and what it said."""
    commit: str | None
    """HEAD afterwards"""
    moves: list[OperationMove]
    """every move it committed, in order"""
    left: list[str]
    """agents it left as they were, each with why"""
    ok: bool
    """false when an agent could not be brought to rest (shutdown: exit 1)"""


class AwaitedAgent(Record):
    """An awaited agent at the end."""
    agent: str
    """the agent"""
    state: str | None
    """its state"""
    ended: bool
    """whether that state is terminal"""
    outcome: str | None
    """success or failure, once ended"""


class AwaitResult(Record):
    """`gitstate await`: exit 0 all succeeded, 1 any failed, 124 timed out."""
    commit: str | None
    """HEAD when it stopped waiting"""
    outcome: Literal["succeeded", "failed", "timed-out"]
    """how the wait ended"""
    agents: list[AwaitedAgent]
    """each awaited agent"""


class SiteResult(Record):
    """`gitstate site`: the static pages written."""
    out: str
    """the folder written"""
    commit: str | None
    """the commit the pages show (HEAD, or `--at`)"""
    pages: int
    """files written"""
    agents: int
    """agents with a page"""


class OperationLog(Record):
    """What an operation on the fleet did, line by line as the command prints it (MCP)."""
    exit_code: int
    """the command's exit code"""
    lines: list[str]
    """what it printed"""


class Violation(Record):
    """A rule a refused move broke."""
    rule: str
    """the rule"""
    message: str
    """what was wrong, and what would be legal instead"""
    where: str | None = None
    """the file"""


class Error(Record):
    """What any command prints under `--json` when it refuses (exit 1) or is misused (2)."""
    error: str
    """the kind of error"""
    message: str
    """what was wrong"""
    where: str | None = None
    """the file (and line)"""
    hint: str | None = None
    """what to do instead"""
    rule: str | None = None
    """the rule that refused it"""
    violations: list[Violation] | None = None
    """each rule a refused move broke"""


# The model of each command's `--json` output (the MCP tools return the same).
COMMANDS: dict[str, Any] = {
    "init": InitReport,
    "presets": PresetList,
    "lifecycle": LifecycleDoc,
    "check": CheckResult,
    "doctor": DoctorResult,
    "status": AgentStatusAt | StatusAll,
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
    "logout": Move,
    "landing": Landing,
    "sync": SyncResult,
    "sweep": SweepResult,
    "await": AwaitResult,
    "reap": OperationResult,
    "shutdown": OperationResult,
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
