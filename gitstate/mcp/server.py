"""The commands as MCP tools over stdio, on the official MCP Python SDK (`pip install
'gitstate-agents[mcp]'`).

Each tool calls the very function its command gets its data from (in gitstate/history/,
gitstate/moves/, gitstate/doors/), with the same arguments under the command line's names, and
returns that data typed by the command's model (gitstate.schema): a move is judged exactly as
`gitstate transition` judges it, and a refusal is a tool error with the command's own words.
Every tool and argument is described; annotations tell a client which tools only read and which
commit (gitstate/mcp/strict.py: unknown arguments refused, the repository chosen). A move is made
only as the agent the server is bound to (gitstate/mcp/binding.py); unbound, the server reads.

Every move lands on the team line as `--push` lands it when the branch's upstream is a hub (a
remote's branch): the tools that commit take `push` (default true; false commits here only),
and a move's result holds how it landed under `push`. `sync` lands what this branch holds that
the hub has not got, as `gitstate sync` does.

Each tool's structured result is its command's own object (`status` too: one object schema,
gitstate.schema.models.Status), never the SDK's `{"result": ...}`. The agents' state files are
resources (`gitstate://agent/{agent}/state`, read at the team line's tip, and listed), and
the SessionStart briefing is the prompt `briefing`; both only read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from gitstate import __version__
from gitstate.doors.check import check as checked
from gitstate.errors import GitstateError
from gitstate.git.repo import Managed, open_managed
from gitstate.history import views as reads
from gitstate.history.status import status as status_of
from gitstate.mcp.binding import bound_to, unbound
from gitstate.mcp.strict import StrictServer
from gitstate.moves import commands
from gitstate.moves.chain import committer
from gitstate.moves.operations import await_agents, reap as do_reap, shutdown as do_shutdown
from gitstate.moves.principals import acting_as
from gitstate.moves.workfile import carried
from gitstate.schema import models as m

INSTRUCTIONS = """gitstate keeps each agent's lifecycle state in git: every move is one commit,
judged by the repository's lifecycle (protocols/lifecycle.yaml). Start with `status` (yours:
pass your agent id), read `inbox`, move with `transition`, and speak to another agent with
`say`; a refused move says which moves are legal instead. A move commits your state file and
only the `paths` you name. Moves are made as your agent: the one whose state file records your
session (`session:`); until one does, the tools read and every move is refused, saying how to
register."""

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)
MOVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                       open_world_hint=False)
ENDS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                       open_world_hint=False)
ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)


def _d(text: str) -> Any:
    return Field(description=text)


Repository = Annotated[str | None, _d(
    "A path in the repository's work tree (a bare repository for the reads of a hub). "
    "Default: the client's first file:// root, else where the server was started.")]
Agent = Annotated[str, _d("The agent's id (lower case letters, digits, '-', '_').")]
MaybeAgent = Annotated[str | None, _d("An agent's id; none: every agent.")]
At = Annotated[str | None, _d("A commit or a date: the view as it was then (default: HEAD).")]
Message = Annotated[str | None, _d("Text of the commit subject (the command's -m/--message).")]
Sets = Annotated[list[str] | None, _d("KEY=VALUE pairs set in the front matter (--set).")]
Approved = Annotated[str | None, _d(
    "The human (one of the lifecycle's `humans`) who approved a gated move (--approved-by).")]
Push = Annotated[bool, _d(
    "Land the move on the team line (--push) when this branch's upstream is a hub: the "
    "result's `push` says how it landed (landed, illegal or gave-up). Without such an "
    "upstream, or false: committed here only.")]


def lands(repo: Managed, push: bool) -> bool:
    """Whether a move the tools make in `repo` lands (`push`, and the branch's upstream is a
    hub's branch)."""
    from gitstate.git.upstream import hub_upstream
    return push and repo.top is not None and hub_upstream(repo.git, repo.line_ref())


def acting(repo: Managed, tool: str, agent_flag: str | None) -> str:
    """The agent the server moves as in `repo`, its git processes (the hooks, the ref guard)
    told so too; refused (`unbound-mover`) when bound to none."""
    agent, why = bound_to(repo, agent_flag)
    if agent is None:
        raise unbound(tool, why)
    repo.git.env = {**os.environ, "GITSTATE_AGENT": agent}
    return agent


def build(directory: str | None = None, agent_flag: str | None = None) -> StrictServer:
    """The server for `directory`; `agent_flag`: the one agent it moves as (`--agent`), else
    the runtime session's."""
    server = StrictServer("gitstate", instructions=INSTRUCTIONS, version=__version__)

    def here(repository: str | None, bare_ok: bool = False) -> Managed:
        return open_managed(repository or directory, bare_ok=bare_ok)

    def moving(command: str, repository: str | None, fn: Callable[[Managed], Any]) -> Any:
        """`fn`'s move, made as the agent the server is bound to."""
        def run(repo: Managed) -> Any:
            with acting_as(acting(repo, command, agent_flag)):
                return fn(repo)
        return call(command, repository, run)

    def operating(command: str, repository: str | None, fn: Callable) -> m.OperationLog:
        def run(repo: Managed, say: Callable) -> Any:
            with acting_as(acting(repo, command, agent_flag)):
                return fn(repo, say)
        return operation(repository or directory, run)

    def call(command: str, repository: str | None, fn: Callable[[Managed], Any], *,
             bare_ok: bool = False) -> Any:
        """`fn`'s data from the repository, typed by `command`'s model."""
        try:
            data = fn(here(repository, bare_ok))
        except GitstateError as exc:
            raise ToolError(str(exc)) from None
        return m.adapter(command).validate_python(data)

    def move(command: str, repository: str | None, moved: str, fn: Callable[..., Any],
             paths: list[str] | None = None) -> Any:
        """A move of `moved`: refused when the index holds changes it does not name."""
        return moving(command, repository,
                      lambda repo: fn(repo, carried(repo, moved, paths or ())))

    @server.tool(annotations=READ)
    def status(agent: MaybeAgent = None, at: At = None,
               repository: Repository = None) -> m.Status:
        """State, roster, mortality phase and legal next states of an agent (or of everyone)."""
        return call("status", repository, lambda repo: status_of(repo, agent, at))

    @server.tool(annotations=READ)
    def roster(at: At = None, repository: Repository = None) -> m.Roster:
        """Living, freezer and cemetery, derived from history."""
        return call("roster", repository, lambda repo: reads.roster(repo, at))

    @server.tool(annotations=READ)
    def vacancies(at: At = None, repository: Repository = None) -> m.Vacancies:
        """Roles whose holders froze or died, and roles never filled."""
        return call("vacancies", repository, lambda repo: reads.vacant_roles(repo, at))

    @server.tool(annotations=READ)
    def log(agent: MaybeAgent = None,
            limit: Annotated[int | None, Field(ge=0, description=(
                "Only the N newest moves (-n/--limit)."))] = None,
            since: Annotated[str | None, _d(
                "Only moves committed since this date, as git reads one ('2026-11-01', "
                "'2 days ago').")] = None,
            newest_first: Annotated[bool, _d("Newest first (default: oldest first).")] = False,
            at: At = None, repository: Repository = None) -> m.TransitionLog:
        """Transitions (of an agent, or of everyone)."""
        return call("log", repository, lambda repo: reads.log_rows(
            repo, agent, limit=limit, since=since, newest_first=newest_first, at=at))

    @server.tool(annotations=ONCE)
    def inbox(agent: Agent, mark_read: Annotated[bool, _d(
                  "Move the agent's last_read_commit to HEAD (one progress commit).")] = False,
              at: At = None, push: Push = True, repository: Repository = None) -> m.Inbox:
        """Messages that @mention the agent since its last_read_commit."""
        if not mark_read:
            return call("inbox", repository, lambda repo: commands.inbox(repo, agent, at=at))
        return move("inbox", repository, agent, lambda repo, _: commands.inbox(
            repo, agent, mark_read=True, push=lands(repo, push)))

    @server.tool(annotations=READ)
    def show(agent: Agent, at: At = None, repository: Repository = None) -> m.FreezeState:
        """A frozen agent's freeze-state: ask it without waking it."""
        return call("show", repository, lambda repo: reads.freeze_state(repo, agent, at))

    @server.tool(annotations=READ)
    def lifecycle(repository: Repository = None) -> m.LifecycleDoc:
        """This repository's lifecycle: states, transitions, roles, policies."""
        return call("lifecycle", repository, lambda repo: repo.lifecycle().to_dict())

    @server.tool(annotations=READ)
    def check(repository: Repository = None) -> m.CheckResult:
        """Validate the lifecycle and every state file in the work tree."""
        return call("check", repository, checked)

    @server.tool(annotations=READ)
    def verify(no_cache: Annotated[bool, _d(
                   "Judge every commit again, ignoring the verdicts kept from earlier runs."
               )] = True, repository: Repository = None) -> m.VerifyResult:
        """Replay HEAD's history through the rules; every commit that broke them."""
        return call("verify", repository,
                    lambda repo: reads.verified(repo, no_cache=no_cache), bare_ok=True)

    @server.tool(annotations=READ)
    def situations(at: At = None, repository: Repository = None) -> m.Situations:
        """The entity graph of agent sessions, from history (not written to SQLite here)."""
        from gitstate.history.entities import situations as graph
        return call("situations", repository,
                    lambda repo: graph(repo, no_sqlite=True, at=at))

    @server.tool(annotations=READ)
    def doctor(repository: Repository = None) -> m.DoctorResult:
        """Is this clone protected? Hooks active and unmodified, gitstate found, caches sane,
        approvals authenticated, hub, CI and the agent runtime's hooks."""
        def run(repo: Managed) -> dict:
            if repo.top is None:
                from gitstate.doors.hub import diagnose_hub
                findings = diagnose_hub(repo.git)
            else:
                from gitstate.runtime.doctor import diagnose
                findings = diagnose(repo)
            return {"ok": not any(f["status"] == "fail" for f in findings),
                    "findings": findings}
        return call("doctor", repository, run, bare_ok=True)

    @server.tool(annotations=MOVE)
    def spawn(agent: Agent,
              role: Annotated[str | None, _d("The role this agent holds.")] = None,
              model: Annotated[str | None, _d("The model behind the agent.")] = None,
              parent: Annotated[str | None, _d("The agent that spawned this one.")] = None,
              session: Annotated[str | None, _d(
                  "The agent runtime's session id (recorded as `session:`).")] = None,
              sets: Sets = None, message: Message = None,
              key: Annotated[str | None, _d(
                  "An SSH public key for the agent, or `new` to make one (its moves must "
                  "then be signed).")] = None,
              new_role: Annotated[bool, _d(
                  "The role is a new one the lifecycle does not declare (--new-role; trailer "
                  "`New-role:`).")] = False,
              push: Push = True, repository: Repository = None) -> m.Move:
        """Register an agent in the lifecycle's initial state (one commit)."""
        return move("spawn", repository, agent, lambda repo, _: commands.spawn(
            repo, agent, role=role, model=model, parent=parent, sets=tuple(sets or ()),
            text=message, session=session, key=key, new_role=new_role,
            push=lands(repo, push)))

    @server.tool(annotations=MOVE)
    def transition(agent: Agent, state: Annotated[str, _d("The state to move to.")],
                   message: Message = None,
                   body: Annotated[str, _d("A longer commit body (may @mention agents).")] = "",
                   sets: Sets = None, approved_by: Approved = None,
                   paths: Annotated[list[str] | None, _d(
                       "Files of the work tree to commit with the move, by their path from "
                       "the repository's top. Nothing else staged is committed: a move is "
                       "refused while the index holds changes it does not name.")] = None,
                   push: Push = True, repository: Repository = None) -> m.Move:
        """Move an agent to a state: one atomic commit of its state file and the `paths`."""
        return move("transition", repository, agent, lambda repo, files: commands.transition(
            repo, agent, state, text=message, body=body, sets=tuple(sets or ()),
            approved_by=approved_by, files=files, push=lands(repo, push)), paths)

    @server.tool(annotations=MOVE)
    def freeze(agent: Agent, message: Message = None,
               situation: Annotated[str | None, _d(
                   "primary_situation for a new freeze-state.")] = None,
               sets: Sets = None, push: Push = True,
               repository: Repository = None) -> m.Move:
        """Write (or check) the agent's freeze-state and freeze, in one commit."""
        return move("freeze", repository, agent, lambda repo, _: commands.freeze(
            repo, agent, text=message, situation=situation, sets=tuple(sets or ()),
            push=lands(repo, push)))

    @server.tool(annotations=MOVE)
    def wake(agent: Agent, approved_by: Annotated[str, _d(
                 "The human (one of the lifecycle's `humans`) who decided to wake it.")],
             state: Annotated[str | None, _d(
                 "Where to wake it to (default: the first living state it may reach).")] = None,
             message: Message = None, push: Push = True,
             repository: Repository = None) -> m.Move:
        """Resume a frozen agent: a human's decision."""
        return move("wake", repository, agent, lambda repo, _: commands.wake(
            repo, agent, approved_by, state=state, text=message, push=lands(repo, push)))

    @server.tool(annotations=ENDS)
    def bury(agent: Agent, summary: Annotated[str, _d("The final summary (required to die).")],
             approved_by: Approved = None,
             transfer_role_to: Annotated[str | None, _d(
                 "Hand the role to this agent in the same commit (no vacancy).")] = None,
             message: Message = None, push: Push = True,
             repository: Repository = None) -> m.Burial:
        """The agent dies with a final summary; says which roles fall vacant."""
        return move("bury", repository, agent, lambda repo, _: commands.bury(
            repo, agent, summary, approved_by=approved_by, transfer_to=transfer_role_to,
            text=message, push=lands(repo, push)))

    @server.tool(annotations=MOVE)
    def handover(role: Annotated[str, _d("The role handed over.")],
                 to: Annotated[str, _d("The agent that takes the role.")],
                 giver: Annotated[str | None, _d(
                     "The holder that gives it (default: the one living holder).")] = None,
                 message: Message = None, push: Push = True,
                 repository: Repository = None) -> m.Move:
        """A holder of a role hands it to another agent in one commit and keeps its state."""
        return move("handover", repository, to, lambda repo, _: commands.handover(
            repo, role, to, giver=giver, text=message, push=lands(repo, push)))

    @server.tool(annotations=MOVE)
    def logout(agent: Agent, note: Annotated[str, _d(
                   "One line for the shared log: where you stopped.")],
               sets: Sets = None, message: Message = None, push: Push = True,
               repository: Repository = None) -> m.Move:
        """Append the agent's note to the lifecycle's log and move to the state that keeps
        it, in one commit."""
        return move("logout", repository, agent, lambda repo, _: commands.logout(
            repo, agent, note, text=message, sets=tuple(sets or ()), push=lands(repo, push)))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=True, open_world_hint=False))
    def sync(push: Annotated[bool, _d(
                 "Land each replayed move on the hub (default); false: only replay them here "
                 "(--no-push).")] = True,
             repository: Repository = None) -> m.SyncResult:
        """Get back in step with the hub: replay this branch's unlanded moves (and those kept
        on gitstate/unlanded/* branches) onto the upstream tip, deciding each again from the
        new state, and land them; what cannot land is kept on a side branch, with why."""
        from gitstate.moves.sync import sync as replay
        return moving("sync", repository, lambda repo: replay(repo, push=push))

    @server.tool(annotations=MOVE)
    def say(to: Annotated[list[str], _d(
                "The agents it speaks to, by id (several, or [\"ALL\"] for every agent).")],
            message: Annotated[str, _d(
                "What to say: the first line is the commit's subject, the rest its body; "
                "it may @mention other agents.")],
            repository: Repository = None) -> m.Said:
        """Send a message, as your agent, in one commit that changes no file and moves no
        agent (`@you: to @ana: ...`); `inbox` reads it."""
        from gitstate.moves.say import say as said
        return moving("say", repository, lambda repo: said(repo, to, message))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                             idempotent_hint=True, open_world_hint=False))
    def sweep(dry_run: Annotated[bool, _d("Only list what is due.")] = False,
              push: Push = True, repository: Repository = None) -> m.SweepResult:
        """Commit every timed transition that is due, as the system (each landed as it is
        made; one that does not land stops it, with the reason)."""
        if dry_run:
            return call("sweep", repository, lambda repo: commands.sweep(repo, dry_run=True))
        return moving("sweep", repository, lambda repo: commands.sweep(
            repo, dry_run=False, push=lands(repo, push)))

    @server.tool(name="await", annotations=READ)
    def await_(agents: Annotated[list[str], _d("The agents to wait for.")],
               timeout: Annotated[float, _d("Give up after this many seconds (exit 124).")]
               = 60.0, repository: Repository = None) -> m.OperationLog:
        """Block until each agent ends (exit 0 all succeeded, 1 any failed, 124 timeout)."""
        return operation(repository or directory,
                         lambda repo, say: await_agents(repo, agents, timeout, say))

    @server.tool(annotations=ENDS)
    def reap(host: Annotated[str | None, _d(
                 "Which host's agents to check (default: this one).")] = None,
             push: Push = True, repository: Repository = None) -> m.OperationLog:
        """Mark every living agent of this host whose process (pid) is gone as failed."""
        def run(repo, say):
            if not do_reap(repo, say, host, commit=committer(repo, lands(repo, push))):
                say("no agent has lost its process")   # the command's words
            return 0
        return operating("reap", repository, run)

    @server.tool(annotations=ENDS)
    def shutdown(approved_by: Approved = None, push: Push = True,
                 repository: Repository = None) -> m.OperationLog:
        """Move every living agent to a frozen or terminal state, children first."""
        return operating("shutdown", repository, lambda repo, say: 1 if do_shutdown(
            repo, say, approved_by, committer(repo, lands(repo, push))) else 0)

    from gitstate.mcp.readable import add_readable
    add_readable(server, here, lambda repo: bound_to(repo, agent_flag)[0], directory)
    return server


def operation(directory: str | None, fn: Callable) -> m.OperationLog:
    """An operation of gitstate.moves.operations, as its command runs it, its lines kept."""
    lines: list[str] = []
    try:
        code = fn(open_managed(directory), lines.append)
    except GitstateError as exc:
        raise ToolError(str(exc)) from None
    return m.OperationLog(exit_code=int(code or 0), lines=lines)


def serve(directory: str | None = None, agent_flag: str | None = None) -> None:
    build(directory, agent_flag).run("stdio")
