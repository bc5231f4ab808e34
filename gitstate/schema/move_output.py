"""The models of what the moves and the operations print under `--json`, and of a refusal."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gitstate.schema.described import Pushed
from gitstate.schema.records import JsonModel


class Move(JsonModel):
    """A move committed here (with `--push`: landed on the team line, exit 0, or not, exit
    1; `push` says how)."""
    commit: str
    """the commit (with --push: the one on the team line when it landed, else the one made
    here)"""
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
    line: str | None = None
    """the team line the move was committed on, when it was made in a worktree on another
    branch (nothing staged there comes along)"""
    push: Pushed | None = Field(None, description="with --push: how the move landed (landed,"
                                                  " illegal or gave-up), and where")


class Burial(Move):
    """`gitstate bury`: the move, and the roles it left vacant."""
    vacancies: list[str]
    """notices of roles left without a living holder"""


class Said(JsonModel):
    """`gitstate say`: a message committed here (with `--push`: landed on the team line, exit
    0, or not, exit 1; `push` says how). It changes no file and moves no agent."""
    commit: str
    """the commit (with --push: the one on the team line when it landed, else the one made
    here)"""
    from_: str | None = Field(alias="from", description="the agent that speaks (the session's "
                                                        "binding); null: a person, git's "
                                                        "author")
    to: list[str]
    """the agents it speaks to, by id ("all": @ALL)"""
    subject: str
    """the commit's subject: `to @ana: ...`, or `@bob: to @ana: ...` from an agent"""
    body: str
    """the lines after the first (may be empty)"""
    push: Pushed | None = Field(None, description="with --push: how the message landed "
                                                  "(landed, illegal or gave-up), and where")


class Replayed(JsonModel):
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


class SyncResult(JsonModel):
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
    work_found: list[str] = []
    """uncommitted files it took as the work of a kept move (as `--push` leaves it): landed
    with it, or left as they were while it is kept"""
    moves: list[Replayed]
    """each unlanded commit"""
    ok: bool
    """true when every commit landed or was replayed"""


class Queued(JsonModel):
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


class DrainResult(JsonModel):
    """`gitstate hub drain`."""
    landed: int
    """moves landed"""
    refused: int
    """moves refused"""
    moves: list[Queued]
    """each move"""


class Due(JsonModel):
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


class SweepResult(JsonModel):
    """`gitstate sweep`."""
    commit: str | None
    """HEAD when it looked"""
    due: list[Due]
    """the timed moves that were due"""
    committed: bool
    """whether they were committed (false with --dry-run)"""


class OperationMove(JsonModel):
    """One move an operation committed."""
    agent: str
    """the agent moved"""
    from_: str | None = Field(alias="from", description="the state it left")
    to: str
    """the state it entered"""
    commit: str
    """the commit it made here (with --push it then landed on the hub, perhaps as another)"""
    subject: str
    """the commit's subject"""


class OperationResult(JsonModel):
    """`gitstate reap` or `shutdown`: what it moved, and what it said."""
    commit: str | None
    """HEAD afterwards"""
    moves: list[OperationMove]
    """every move it committed, in order"""
    left: list[str]
    """agents it left as they were, each with why"""
    ok: bool
    """false when an agent could not be brought to rest (shutdown: exit 1)"""


class WatchDue(JsonModel):
    """A move a round of `gitstate watch` found due."""
    by: Literal["sweep", "reap"]
    """which found it: sweep (a timeout) or reap (a process gone, a heartbeat stopped)"""
    agent: str
    """the agent"""
    from_: str = Field(alias="from", description="its state")
    to: str | None
    """where the move takes it (null: reap found no failure state one move away)"""
    why: str
    """why it is due (`timeout 30m`, `no heartbeat for 45m (heartbeat 30m)`, ...)"""
    since_commit: str | None
    """the commit the time is counted from (entering the state, birth, or the last state
    commit); null for a process that is gone"""


class WatchRound(JsonModel):
    """One round of `gitstate watch --json` (one JSON line per round)."""
    round: int
    """its number, from 1"""
    at: str
    """when it began (ISO 8601, UTC)"""
    commit: str | None
    """HEAD (the team line) after it (null when it stopped on an error)"""
    due: list[WatchDue]
    """every move found due, in the order looked for: sweep's, then reap's"""
    moves: list[OperationMove]
    """every move made (with --push: landed on the hub), in order"""
    synced: list[Replayed]
    """with --push: what this clone held that the hub had not got, landed first (`sync`)"""
    left: list[str]
    """what was said of moves not made, each once (not said again while nothing changes)"""
    ok: bool
    """false when the round stopped on an error (the hub out of reach, ...)"""
    error: str | None
    """that error"""


class AwaitedAgent(JsonModel):
    """An awaited agent at the end."""
    agent: str
    """the agent"""
    state: str | None
    """its state"""
    ended: bool
    """whether that state is terminal"""
    outcome: str | None
    """success or failure, once ended"""


class AwaitResult(JsonModel):
    """`gitstate await`: exit 0 all succeeded, 1 any failed, 124 timed out."""
    commit: str | None
    """HEAD when it stopped waiting"""
    outcome: Literal["succeeded", "failed", "timed-out"]
    """how the wait ended"""
    agents: list[AwaitedAgent]
    """each awaited agent"""


class SiteResult(JsonModel):
    """`gitstate site`: the static pages written."""
    out: str
    """the folder written"""
    commit: str | None
    """the commit the pages show (HEAD, or `--at`)"""
    pages: int
    """files written"""
    agents: int
    """agents with a page"""


class OperationLog(JsonModel):
    """What an operation on the fleet did, line by line as the command prints it (MCP)."""
    exit_code: int
    """the command's exit code"""
    lines: list[str]
    """what it printed"""


class Violation(JsonModel):
    """A rule a refused move broke."""
    rule: str
    """the rule"""
    message: str
    """what was wrong, and what would be legal instead"""
    where: str | None = None
    """the file"""


class Error(JsonModel):
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


class WorktreeAdded(JsonModel):
    """`gitstate worktree add`: the agent spawned (bound to a new session) and its worktree."""
    agent: str
    """the agent"""
    path: str | None
    """its worktree (null: the spawn did not land, so none was made)"""
    branch: str | None
    """the worktree's branch (the agent's id)"""
    upstream: str | None
    """what the branch tracks: the team line, or its hub's copy"""
    session: str
    """the runtime session id the agent is bound to (`session:`)"""
    move: Move
    """the spawn"""
    start: str | None
    """the command that starts the agent's runtime in its worktree"""
    note: str | None = None
    """what is missing for the runtime to be bound, when something is"""


class WorktreeRemoved(JsonModel):
    """`gitstate worktree remove`: the agent ended as the lifecycle ends one, its worktree
    removed (its branch kept)."""
    agent: str
    """the agent"""
    path: str
    """the worktree"""
    removed: bool
    """whether the worktree was removed (false: the burial did not land)"""
    move: Burial | None
    """the burial (null: the agent was dead already)"""
    unmerged: int | None
    """commits of the branch the team line has not got (the branch is kept for them)"""
