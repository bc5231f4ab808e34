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

import inspect
import os
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from gitstate import __version__
from gitstate.cli.declared import DECLARED, Command, Param, data_args, view_data
from gitstate.errors import GitstateError
from gitstate.git.repo import Managed, open_managed
from gitstate.mcp.binding import bound_to, unbound
from gitstate.mcp.strict import StrictServer
from gitstate.moves import commands
from gitstate.moves.chain import committer
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


def _hint(read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


# a command's `hint` (cli/declared.py): what its tool tells a client
HINTS = {"read": _hint(True, False, True), "move": _hint(False, False, False),
         "ends": _hint(False, True, False), "once": _hint(False, False, True),
         "sweep": _hint(False, True, True)}

Repository = Annotated[str | None, Field(description=(
    "A path in the repository's work tree (a bare repository for the reads of a hub). "
    "Default: the client's first file:// root, else where the server was started."))]
KINDS: dict[type, Any] = {str: str, int: int, float: float, bool: bool, list: list[str]}


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


class Tools:
    """How a tool reaches its data function: the repository it names, read, moved as the
    agent the server is bound to, or operated on; a refusal is a tool error in the command's
    words, and the data is typed by the command's model."""

    def __init__(self, directory: str | None, agent_flag: str | None) -> None:
        self.directory, self.agent_flag = directory, agent_flag

    def here(self, repository: str | None, bare_ok: bool = False) -> Managed:
        return open_managed(repository or self.directory, bare_ok=bare_ok)

    def call(self, command: str, repository: str | None, fn: Callable[[Managed], Any], *,
             bare_ok: bool = False) -> Any:
        """`fn`'s data from the repository, typed by `command`'s model."""
        try:
            data = fn(self.here(repository, bare_ok))
        except GitstateError as exc:
            raise ToolError(str(exc)) from None
        return m.adapter(command).validate_python(data)

    def moving(self, command: str, repository: str | None,
               fn: Callable[[Managed], Any]) -> Any:
        """`fn`'s move, made as the agent the server is bound to."""
        def run(repo: Managed) -> Any:
            with acting_as(acting(repo, command, self.agent_flag)):
                return fn(repo)
        return self.call(command, repository, run)

    def move(self, command: str, repository: str | None, moved: str,
             fn: Callable[[Managed, Any], Any], paths: list[str] | None = None) -> Any:
        """A move of `moved`: refused when the index holds changes it does not name."""
        return self.moving(command, repository,
                           lambda repo: fn(repo, carried(repo, moved, paths or ())))

    def operation(self, repository: str | None, fn: Callable,
                  acting_for: str | None = None) -> m.OperationLog:
        """An operation of gitstate.moves.operations, as its command runs it, its lines kept
        (`acting_for`: the command, made as the agent the server is bound to)."""
        lines: list[str] = []
        try:
            repo = open_managed(repository or self.directory)
            if acting_for is None:
                code = fn(repo, lines.append)
            else:
                with acting_as(acting(repo, acting_for, self.agent_flag)):
                    code = fn(repo, lines.append)
        except GitstateError as exc:
            raise ToolError(str(exc)) from None
        return m.OperationLog(exit_code=int(code or 0), lines=lines)


# What a tool does with its arguments (named as declared in gitstate/cli/declared.py), where
# it is more than its command's data function called with them.

def _situations(t: Tools, repository: str | None, at: str | None) -> Any:
    from gitstate.history.entities import situations as graph
    return t.call("situations", repository, lambda repo: graph(repo, no_sqlite=True, at=at))


def _inbox(t: Tools, repository: str | None, agent: str, mark_read: bool, at: str | None,
           push: bool) -> Any:
    if not mark_read:
        return t.call("inbox", repository, lambda repo: commands.inbox(repo, agent, at=at))
    return t.move("inbox", repository, agent, lambda repo, _: commands.inbox(
        repo, agent, mark_read=True, push=lands(repo, push)))


def _verify(t: Tools, repository: str | None, no_cache: bool) -> Any:
    from gitstate.history.views import verified
    return t.call("verify", repository, lambda repo: verified(repo, no_cache=no_cache),
                  bare_ok=True)


def _lifecycle(t: Tools, repository: str | None) -> Any:
    return t.call("lifecycle", repository, lambda repo: repo.lifecycle().to_dict())


def _check(t: Tools, repository: str | None) -> Any:
    from gitstate.doors.check import check
    return t.call("check", repository, check)


def _doctor(t: Tools, repository: str | None) -> Any:
    return t.call("doctor", repository, _diagnosed, bare_ok=True)


def _diagnosed(repo: Managed) -> dict:
    """`doctor`'s findings: a hub's, else the clone's and its runtime's."""
    if repo.top is None:
        from gitstate.doors.hub import diagnose_hub
        findings = diagnose_hub(repo.git)
    else:
        from gitstate.runtime.diagnosis import diagnose
        findings = diagnose(repo)
    return {"ok": not any(f["status"] == "fail" for f in findings), "findings": findings}


def _move(name: str, moved: str = "agent") -> Callable[..., Any]:
    """A move of gitstate/moves/commands.py, of the agent named by the argument `moved`."""
    def run(t: Tools, repository: str | None, push: bool, **args: Any) -> Any:
        carries = "paths" in args    # the move takes the files it names, and only those
        paths = args.pop("paths", None)

        def made(repo: Managed, files: Any) -> Any:
            given = {"files": files} if carries else {}
            return getattr(commands, name)(repo, **data_args(args), **given,
                                           push=lands(repo, push))
        return t.move(name, repository, args[moved], made, paths)
    return run


def _sync(t: Tools, repository: str | None, push: bool) -> Any:
    from gitstate.moves.sync import sync
    return t.moving("sync", repository, lambda repo: sync(repo, push=push))


def _say(t: Tools, repository: str | None, to: list[str], message: str) -> Any:
    from gitstate.moves.say import say
    return t.moving("say", repository, lambda repo: say(repo, to, message))


def _sweep(t: Tools, repository: str | None, dry_run: bool, push: bool) -> Any:
    if dry_run:
        return t.call("sweep", repository, lambda repo: commands.sweep(repo, dry_run=True))
    return t.moving("sweep", repository, lambda repo: commands.sweep(
        repo, dry_run=False, push=lands(repo, push)))


def _await(t: Tools, repository: str | None, agents: list[str], timeout: float) -> Any:
    from gitstate.moves.operations import await_agents
    return t.operation(repository, lambda repo, say: await_agents(repo, agents, timeout, say))


def _reap(t: Tools, repository: str | None, host: str | None, push: bool) -> Any:
    from gitstate.moves.operations import reap

    def run(repo: Managed, say: Callable[[str], None]) -> int:
        if not reap(repo, say, host, commit=committer(repo, lands(repo, push))):
            say("no agent has lost its process")   # the command's words
        return 0
    return t.operation(repository, run, acting_for="reap")


def _shutdown(t: Tools, repository: str | None, approved_by: str | None, push: bool) -> Any:
    from gitstate.moves.operations import shutdown
    return t.operation(repository, lambda repo, say: 1 if shutdown(
        repo, say, approved_by, committer(repo, lands(repo, push))) else 0,
        acting_for="shutdown")


BODIES: dict[str, Callable[..., Any]] = {
    "situations": _situations, "inbox": _inbox, "verify": _verify, "lifecycle": _lifecycle,
    "check": _check, "doctor": _doctor, "sync": _sync, "say": _say, "sweep": _sweep,
    "await": _await, "reap": _reap, "shutdown": _shutdown,
    **{name: _move(name) for name in ("spawn", "transition", "freeze", "wake", "bury",
                                      "logout")},
    "handover": _move("handover", moved="to")}


def _view(command: Command) -> Callable[..., Any]:
    """A view's tool: its data function called with the tool's arguments."""
    def run(t: Tools, repository: str | None, **args: Any) -> Any:
        return t.call(command.name, repository,
                      lambda repo: view_data(command, repo, args))
    return run


def _annotation(param: Param) -> Any:
    """A declared parameter's type, as a tool publishes it (with its help)."""
    kind = KINDS[param.kind]
    if not param.required and param.tool_default is None and param.kind is not bool:
        kind = kind | None
    return Annotated[kind, Field(description=param.help, ge=param.least)]


def add_tool(server: StrictServer, tools: Tools, command: Command) -> None:
    """`command`'s tool: its declared parameters and `repository`, typed by its model."""
    run = BODIES.get(command.name) or _view(command)
    empty, named = inspect.Parameter.empty, inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter(p.name, named, annotation=_annotation(p),
                                default=empty if p.required else p.tool_default)
              for p in command.of("tool")]
    params.append(inspect.Parameter("repository", named, default=None, annotation=Repository))

    def tool(**args: Any) -> Any:
        return run(tools, **args)
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, return_annotation=getattr(m, command.model))
    server.add_tool(tool, name=command.name, description=command.help,
                    annotations=HINTS[command.hint])


def build(directory: str | None = None, agent_flag: str | None = None) -> StrictServer:
    """The server for `directory`; `agent_flag`: the one agent it moves as (`--agent`), else
    the runtime session's."""
    server = StrictServer("gitstate", instructions=INSTRUCTIONS, version=__version__)
    tools = Tools(directory, agent_flag)
    for command in DECLARED.values():
        if "tool" in command.faces:
            add_tool(server, tools, command)
    from gitstate.mcp.readable import add_readable
    add_readable(server, tools.here, lambda repo: bound_to(repo, agent_flag)[0], directory)
    return server


def serve(directory: str | None = None, agent_flag: str | None = None) -> None:
    build(directory, agent_flag).run("stdio")
