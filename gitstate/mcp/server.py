"""The commands as MCP tools over stdio, on the official MCP Python SDK (`pip install
'gitstate[mcp]'`).

Each tool calls the very `run_*` function its command calls, with the same arguments, and
returns the same data, typed by the same model (gitstate.schema): a move is judged exactly as
`gitstate transition` judges it, and a refusal is a tool error with the command's own words.
"""

from __future__ import annotations

from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from gitstate import __version__
from gitstate.cli import moves, operations, setup, views
from gitstate.cli.app import collecting
from gitstate.errors import GitstateError
from gitstate.moves.operations import await_agents
from gitstate.moves.operations import reap as do_reap
from gitstate.moves.operations import shutdown as do_shutdown
from gitstate.schema import models as m
from gitstate.schema.status import AgentStatus

INSTRUCTIONS = """gitstate keeps each agent's lifecycle state in git: every move is one commit,
judged by the repository's lifecycle (protocols/lifecycle.yaml). Start with `status` (yours:
pass your agent id), read `inbox`, and move with `transition`; a refused move says which moves
are legal instead."""


def call(command: str, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """Run a command's `run_*` function; its `--json` data, checked by its model."""
    with collecting() as out:
        try:
            fn(*args, as_json=True, **kwargs)
        except GitstateError as exc:
            raise ToolError(str(exc)) from None
    if not out:
        raise ToolError(f"{command} gave no data")
    return m.adapter(command).validate_python(out[-1])


def build(directory: str | None = None) -> MCPServer:
    server = MCPServer("gitstate", instructions=INSTRUCTIONS, version=__version__)
    d = directory

    @server.tool()
    def status(agent: str | None = None) -> AgentStatus | list[AgentStatus]:
        """State, roster, mortality phase and legal next states of AGENT (or of everyone)."""
        return call("status", views.run_status, d, agent)

    @server.tool()
    def roster(at: str | None = None) -> m.Roster:
        """Living, freezer and cemetery, derived from history (`at`: a commit or a date)."""
        return call("roster", views.run_roster, d, at)

    @server.tool()
    def vacancies(at: str | None = None) -> m.Vacancies:
        """Roles whose holders froze or died, and roles never filled."""
        return call("vacancies", views.run_vacancies, d, at)

    @server.tool()
    def log(agent: str | None = None) -> list[m.Transition]:
        """Transitions (of AGENT, or of everyone), oldest first."""
        return call("log", views.run_log, d, agent).root

    @server.tool()
    def inbox(agent: str, mark_read: bool = False) -> m.Inbox:
        """Messages to AGENT since its last_read_commit; `mark_read` moves the checkpoint."""
        return call("inbox", views.run_inbox, d, agent, mark_read=mark_read)

    @server.tool()
    def show(agent: str) -> m.FreezeState:
        """A frozen agent's freeze-state: ask it without waking it."""
        return call("show", moves.run_show, d, agent)

    @server.tool()
    def lifecycle() -> m.LifecycleDoc:
        """This repository's lifecycle: states, transitions, roles, policies."""
        return call("lifecycle", setup.run_lifecycle, d)

    @server.tool()
    def check() -> m.CheckResult:
        """Validate the lifecycle and every state file in the work tree."""
        return call("check", setup.run_check, d)

    @server.tool()
    def verify(no_cache: bool = True) -> m.VerifyResult:
        """Replay HEAD's history through the rules; every commit that broke them."""
        return call("verify", views.run_verify, d, (), no_cache=no_cache)

    @server.tool()
    def spawn(agent: str, role: str | None = None, model: str | None = None,
              parent: str | None = None, session: str | None = None,
              sets: list[str] | None = None, text: str | None = None) -> m.Move:
        """Register AGENT in the initial state (one commit). `sets`: KEY=VALUE pairs."""
        return call("spawn", moves.run_spawn, d, agent, role=role, model=model, parent=parent,
                    sets=tuple(sets or ()), text=text, session=session)

    @server.tool()
    def transition(agent: str, state: str, text: str | None = None, body: str = "",
                   sets: list[str] | None = None, approved_by: str | None = None) -> m.Move:
        """Move AGENT to STATE: one atomic commit of its state file and whatever is staged."""
        return call("transition", moves.run_transition, d, agent, state, text=text, body=body,
                    sets=tuple(sets or ()), approved_by=approved_by)

    @server.tool()
    def freeze(agent: str, text: str | None = None, situation: str | None = None,
               sets: list[str] | None = None) -> m.Move:
        """Write (or check) the agent's freeze-state and freeze, in one commit."""
        return call("freeze", moves.run_freeze, d, agent, text=text, situation=situation,
                    sets=tuple(sets or ()))

    @server.tool()
    def wake(agent: str, approved_by: str, state: str | None = None,
             text: str | None = None) -> m.Move:
        """Resume a frozen agent: a human's decision (approved_by)."""
        return call("wake", moves.run_wake, d, agent, approved_by, state=state, text=text)

    @server.tool()
    def bury(agent: str, summary: str, approved_by: str | None = None,
             transfer_role_to: str | None = None, text: str | None = None) -> m.Burial:
        """AGENT dies with a final summary; says which roles fall vacant."""
        return call("bury", moves.run_bury, d, agent, summary, approved_by=approved_by,
                    transfer_to=transfer_role_to, text=text)

    @server.tool()
    def sweep(dry_run: bool = False) -> m.SweepResult:
        """Commit every timed transition that is due, as the system."""
        return call("sweep", operations.run_sweep, d, dry_run=dry_run)

    @server.tool(name="await")
    def await_(agents: list[str], timeout: float = 60.0) -> m.OperationLog:
        """Block until each agent ends (exit 0 all succeeded, 1 any failed, 124 timeout)."""
        return operation(d, lambda repo, say: await_agents(repo, agents, timeout, say))

    @server.tool()
    def reap(host: str | None = None) -> m.OperationLog:
        """Mark every living agent of this host whose process (pid) is gone as failed."""
        def run(repo, say):
            if not do_reap(repo, say, host):
                say("no agent has lost its process")   # the command's words
            return 0
        return operation(d, run)

    @server.tool()
    def shutdown(approved_by: str | None = None) -> m.OperationLog:
        """Move every living agent to a frozen or terminal state, children first."""
        return operation(d, lambda repo, say: 1 if do_shutdown(repo, say, approved_by) else 0)

    return server


def operation(directory: str | None, fn: Callable) -> m.OperationLog:
    """An operation of gitstate.moves.operations, as its command runs it, its lines kept."""
    from gitstate.cli.app import open_repo
    lines: list[str] = []
    try:
        code = fn(open_repo(directory), lines.append)
    except GitstateError as exc:
        raise ToolError(str(exc)) from None
    return m.OperationLog(exit_code=int(code or 0), lines=lines)


def serve(directory: str | None = None) -> None:
    build(directory).run("stdio")
