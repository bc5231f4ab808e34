"""What the MCP server offers besides its tools: each agent's committed state file as a resource
(`gitstate://agent/{agent}/state`, at the team line's tip, with a listing), and the briefing
the SessionStart hook gives, as a prompt (it only reads)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import Resource as MCPResource
from pydantic import Field

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed
from gitstate.law.grammar import canonical_id

STATE_URI = "gitstate://agent/{agent}/state"


def _front_state(data: bytes, path: str) -> str | None:
    from gitstate.law import statefile
    try:
        state = statefile.parse_bytes(data, path).front.get("state")
    except GitstateError:
        return None
    return state if isinstance(state, str) else None


def _d(text: str) -> Any:
    return Field(description=text)


def add_readable(server: Any, here: Callable[..., Managed], bound: Callable[[Managed], str | None],
                 directory: str | None) -> None:
    """Add the state files (resources) and the briefing (a prompt) to `server`: `here` opens
    the repository as the tools do, `bound` names the agent the server is bound to."""
    def team_line(repository: str | None) -> tuple[Managed, Any, str | None]:
        repo = here(repository, bare_ok=True)
        head = repo.head()         # the team line's tip (HEAD when on it)
        return repo, repo.lifecycle(head), head

    @server.resource(STATE_URI, name="state", mime_type="text/markdown",
                     description="An agent's committed state file (`agent/<id>/_state.md`) at "
                                 "the team line's tip: front matter and body, as committed.")
    def state_file(agent: str) -> str:
        try:
            who = canonical_id(agent)
            repo, lc, head = team_line(directory)
            path = lc.state_path(who)
            data = repo.git.cat_files([f"{head}:{path}"])[0] if head else None
        except GitstateError as exc:
            raise ResourceError(str(exc)) from None
        if data is None:
            raise ResourceNotFoundError(
                f"agent '{who}' is not registered here ({path} is not committed on the team "
                "line)")
        return data.decode("utf-8", errors="replace")

    def state_files() -> list[MCPResource]:
        """resources/list: one state file per agent committed on the team line."""
        try:
            repo, lc, head = team_line(directory)
            found = repo.agents_at(lc, head)
        except GitstateError:
            return []
        out = []
        for agent, data in sorted(found.items()):
            state = _front_state(data, lc.state_path(agent))
            out.append(MCPResource(
                uri=STATE_URI.replace("{agent}", agent), name=f"{agent}/_state.md",
                title=f"{agent}: {state or '?'}", mime_type="text/markdown",
                description=f"{agent}'s state file ({lc.state_path(agent)}) on the team line"
                            + (f": {state}" if state else "")))
        return out

    server.more_resources = state_files

    @server.prompt(name="briefing", description=(
        "What gitstate's SessionStart hook tells an agent: its state and what its protocol "
        "asks, its context, inbox, the roster and vacant roles. `agent` defaults to the agent "
        "this server is bound to."))
    def briefing_prompt(agent: Annotated[str | None, _d(
                            "The agent briefed (default: the bound agent).")] = None,
                        source: Annotated[str | None, _d(
                            "How the session began: startup (default), resume, compact or "
                            "clear.")] = None) -> str:
        from gitstate.runtime.briefing import briefing
        try:
            repo = here(None)
            who = canonical_id(agent) if agent else bound(repo)
            # no session id: the briefing binds nothing and writes nothing, it only reads
            return briefing({"cwd": str(repo.top or directory or "."),
                             "source": source or "startup"}, who)
        except GitstateError as exc:
            raise ValueError(str(exc)) from None
