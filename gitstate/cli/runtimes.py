"""Faces for agent runtimes started from the command line: `gitstate mcp`."""

from __future__ import annotations

import click

from gitstate.cli.app import cli, directory, example
from gitstate.errors import UsageError
from gitstate.resources import install_extra


@example('gitstate init --runtime claude-code   # Claude Code: registered in .mcp.json',
         'gitstate mcp --agent alice            # a server that moves only as alice')
@cli.command()
@click.option("--agent", "agent", default=None, metavar="ID",
              help="Move only as this agent (a server registered for one worktree); default: "
                   "the agent whose state file records the runtime's session "
                   "(CLAUDE_CODE_SESSION_ID), else $GITSTATE_AGENT.")
def mcp(agent):
    """Serve the commands as MCP tools over stdio (status, roster, vacancies, log, inbox, show,
    lifecycle, check, verify and every move), judged exactly as the commands judge; moves are
    made only as the agent the server is bound to."""
    try:
        from gitstate.mcp.server import serve
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        raise UsageError("`gitstate mcp` needs the MCP Python SDK, which is not installed",
                         hint=f"pip install {install_extra('mcp')}") from None
    serve(directory(), agent)
