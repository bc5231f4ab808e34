"""The commands as MCP tools over stdio, on the official MCP Python SDK (`pip install
'gitstate-agents[mcp]'`).

Each tool calls the very function its command gets its data from (in gitstate/history/,
gitstate/moves/, gitstate/doors/), with the same arguments, and returns that data typed by the
command's model (gitstate.schema): a move is judged exactly as `gitstate transition` judges
it, and a refusal is a tool error with the command's own words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from gitstate import __version__
from gitstate.doors.check import check as checked
from gitstate.errors import GitstateError
from gitstate.git.repo import Managed, open_managed
from gitstate.history import views as reads
from gitstate.history.status import status as status_of
from gitstate.moves import commands
from gitstate.moves.operations import await_agents, reap as do_reap, shutdown as do_shutdown
from gitstate.schema import models as m
from gitstate.schema.records import AgentStatusAt

INSTRUCTIONS = """gitstate keeps each agent's lifecycle state in git: every move is one commit,
judged by the repository's lifecycle (protocols/lifecycle.yaml). Start with `status` (yours:
pass your agent id), read `inbox`, and move with `transition`; a refused move says which moves
are legal instead."""


def build(directory: str | None = None) -> MCPServer:
    server = MCPServer("gitstate", instructions=INSTRUCTIONS, version=__version__)

    def call(command: str, fn: Callable[[Managed], Any], *, bare_ok: bool = False) -> Any:
        """`fn`'s data from the repository, typed by `command`'s model."""
        try:
            data = fn(open_managed(directory, bare_ok=bare_ok))
        except GitstateError as exc:
            raise ToolError(str(exc)) from None
        return m.adapter(command).validate_python(data)

    @server.tool()
    def status(agent: str | None = None, at: str | None = None) -> AgentStatusAt | m.StatusAll:
        """State, roster, mortality phase and legal next states of AGENT (or of everyone;
        `at`: a commit or a date)."""
        return call("status", lambda repo: status_of(repo, agent, at))

    @server.tool()
    def roster(at: str | None = None) -> m.Roster:
        """Living, freezer and cemetery, derived from history (`at`: a commit or a date)."""
        return call("roster", lambda repo: reads.roster(repo, at))

    @server.tool()
    def vacancies(at: str | None = None) -> m.Vacancies:
        """Roles whose holders froze or died, and roles never filled."""
        return call("vacancies", lambda repo: reads.vacant_roles(repo, at))

    @server.tool()
    def log(agent: str | None = None, at: str | None = None) -> m.TransitionLog:
        """Transitions (of AGENT, or of everyone), oldest first (`at`: as of then)."""
        return call("log", lambda repo: reads.log_rows(repo, agent, at=at))

    @server.tool()
    def inbox(agent: str, mark_read: bool = False) -> m.Inbox:
        """Messages to AGENT since its last_read_commit; `mark_read` moves the checkpoint."""
        return call("inbox", lambda repo: commands.inbox(repo, agent, mark_read=mark_read))

    @server.tool()
    def show(agent: str) -> m.FreezeState:
        """A frozen agent's freeze-state: ask it without waking it."""
        return call("show", lambda repo: reads.freeze_state(repo, agent))

    @server.tool()
    def lifecycle() -> m.LifecycleDoc:
        """This repository's lifecycle: states, transitions, roles, policies."""
        return call("lifecycle", lambda repo: repo.lifecycle().to_dict())

    @server.tool()
    def check() -> m.CheckResult:
        """Validate the lifecycle and every state file in the work tree."""
        return call("check", checked)

    @server.tool()
    def verify(no_cache: bool = True) -> m.VerifyResult:
        """Replay HEAD's history through the rules; every commit that broke them."""
        return call("verify", lambda repo: reads.verified(repo, no_cache=no_cache),
                    bare_ok=True)

    @server.tool()
    def spawn(agent: str, role: str | None = None, model: str | None = None,
              parent: str | None = None, session: str | None = None,
              sets: list[str] | None = None, text: str | None = None,
              key: str | None = None, new_role: bool = False) -> m.Move:
        """Register AGENT in the initial state (one commit). `sets`: KEY=VALUE pairs. `key`:
        an SSH public key for the agent, or `new` to make one (its moves must be signed).
        `new_role`: ROLE is a new one the lifecycle does not declare (trailer `New-role:`)."""
        return call("spawn", lambda repo: commands.spawn(
            repo, agent, role=role, model=model, parent=parent, sets=tuple(sets or ()),
            text=text, session=session, key=key, new_role=new_role))

    @server.tool()
    def transition(agent: str, state: str, text: str | None = None, body: str = "",
                   sets: list[str] | None = None, approved_by: str | None = None) -> m.Move:
        """Move AGENT to STATE: one atomic commit of its state file and whatever is staged."""
        return call("transition", lambda repo: commands.transition(
            repo, agent, state, text=text, body=body, sets=tuple(sets or ()),
            approved_by=approved_by))

    @server.tool()
    def freeze(agent: str, text: str | None = None, situation: str | None = None,
               sets: list[str] | None = None) -> m.Move:
        """Write (or check) the agent's freeze-state and freeze, in one commit."""
        return call("freeze", lambda repo: commands.freeze(
            repo, agent, text=text, situation=situation, sets=tuple(sets or ())))

    @server.tool()
    def wake(agent: str, approved_by: str, state: str | None = None,
             text: str | None = None) -> m.Move:
        """Resume a frozen agent: a human's decision (approved_by)."""
        return call("wake", lambda repo: commands.wake(repo, agent, approved_by, state=state,
                                                       text=text))

    @server.tool()
    def bury(agent: str, summary: str, approved_by: str | None = None,
             transfer_role_to: str | None = None, text: str | None = None) -> m.Burial:
        """AGENT dies with a final summary; says which roles fall vacant."""
        return call("bury", lambda repo: commands.bury(
            repo, agent, summary, approved_by=approved_by, transfer_to=transfer_role_to,
            text=text))

    @server.tool()
    def sweep(dry_run: bool = False) -> m.SweepResult:
        """Commit every timed transition that is due, as the system."""
        return call("sweep", lambda repo: commands.sweep(repo, dry_run=dry_run))

    @server.tool(name="await")
    def await_(agents: list[str], timeout: float = 60.0) -> m.OperationLog:
        """Block until each agent ends (exit 0 all succeeded, 1 any failed, 124 timeout)."""
        return operation(directory, lambda repo, say: await_agents(repo, agents, timeout, say))

    @server.tool()
    def reap(host: str | None = None) -> m.OperationLog:
        """Mark every living agent of this host whose process (pid) is gone as failed."""
        def run(repo, say):
            if not do_reap(repo, say, host):
                say("no agent has lost its process")   # the command's words
            return 0
        return operation(directory, run)

    @server.tool()
    def shutdown(approved_by: str | None = None) -> m.OperationLog:
        """Move every living agent to a frozen or terminal state, children first."""
        return operation(directory,
                         lambda repo, say: 1 if do_shutdown(repo, say, approved_by) else 0)

    return server


def operation(directory: str | None, fn: Callable) -> m.OperationLog:
    """An operation of gitstate.moves.operations, as its command runs it, its lines kept."""
    lines: list[str] = []
    try:
        code = fn(open_managed(directory), lines.append)
    except GitstateError as exc:
        raise ToolError(str(exc)) from None
    return m.OperationLog(exit_code=int(code or 0), lines=lines)


def serve(directory: str | None = None) -> None:
    build(directory).run("stdio")
