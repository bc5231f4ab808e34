"""`gitstate init --runtime gemini`: gitstate's hooks and its MCP server merged into the
project's `.gemini/settings.json`, and the shim both run.

The file is Gemini CLI's project settings; its `hooks` have Claude Code's shape (`{"<Event>":
[{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": ms}]}]}`, the
timeout in milliseconds) and are merged by Claude Code's merge: a group per event of the
registry's Gemini entry, the user's groups never dropped, edited or reordered, gitstate's
updated where it stands. Every other key of the file (the user's settings, `hooks.enabled`,
other servers) is kept as it is, and nothing is written when nothing changes. Gemini CLI runs a
hook's command with `bash -c` in the session's folder; the command is `"$(git rev-parse
--show-toplevel)"/.gemini/hooks/gitstate NAME --runtime gemini`, a committed shell script that
finds gitstate at run time (the clone's `gitstate.python`, else `gitstate` on PATH, else a
Python that imports it): no path of one machine is committed.

`mcpServers.gitstate` runs the shim's `mcp` from the top of the work tree: added when absent,
updated where it stands when it is gitstate's in another form, refused when a server of that
name is someone else's.

Trust is Gemini CLI's own: a project's settings (its hooks and servers) load only in a
trusted folder, and `gemini -p` refuses an untrusted one; `init` says so and prompts for
nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from gitstate.doors.shims import write_executable
from gitstate.runtime import shared
from gitstate.runtime.claude_code.settings import merge
from gitstate.runtime.registry import RUNTIMES
from gitstate.runtime.shared import merge_servers, read_json, shim_text, write_json

SETTINGS = ".gemini/settings.json"
SHIM = ".gemini/hooks/gitstate"
COMMAND = f'"$(git rev-parse --show-toplevel)"/{SHIM} '
SUFFIX = " --runtime gemini"
OURS = (COMMAND,)
MCP_NAME = "gitstate"
MCP_SERVER = {"command": "sh",
              "args": ["-c", f'exec "$(git rev-parse --show-toplevel)/{SHIM}" mcp']}
HOOKS: dict[str, tuple] = RUNTIMES["gemini"].hooks
SHIM_TEXT = shim_text("""\
# gitstate-shim: gemini -- written by `gitstate init --runtime gemini`; run it again to update
# this file. Gemini CLI runs it for gitstate's hooks and MCP server (.gemini/settings.json):
# `gitstate hook NAME` (or `gitstate mcp`) with the gitstate this clone uses, found as the git
# hooks find it.
""", SETTINGS, "Gemini CLI", exit_note="   # a non-blocking error: Gemini CLI shows it and goes on")
TRUST = ("Gemini CLI loads a project's .gemini/settings.json (its hooks and MCP servers) only "
         "in a trusted folder, and `gemini -p` refuses to run in one that is not: run "
         "`gemini` here once and trust the folder (it is recorded in ~/.gemini/"
         "trustedFolders.json), or pass --skip-trust. `gitstate doctor` says whether it is "
         "trusted.")


def runs_our_mcp(server: object) -> bool:
    """Is an `mcpServers` entry gitstate's server (the shim, `gitstate mcp`, `python -m
    gitstate mcp`)?"""
    return shared.runs_our_mcp(server, SHIM)


def merge_mcp(settings: dict) -> tuple[list[str], list[str]]:
    """Merge gitstate's server into `settings` (in place): (servers added or updated, the
    user's servers kept)."""
    added, kept = merge_servers(settings, SETTINGS, MCP_NAME, MCP_SERVER, runs_our_mcp)
    return [f"mcpServers.{name}" for name in added], kept


def install(top: Path) -> list[dict]:
    """Merge into `top/.gemini/settings.json` (hooks and MCP server, read and merged before it
    is written) and write the shim; the `init` report's entry."""
    path = top / SETTINGS
    before = read_json(path, SETTINGS)
    data = json.loads(json.dumps(before))
    merged, changed, kept = merge(data, HOOKS, SETTINGS, COMMAND, SUFFIX, OURS)
    added, theirs = merge_mcp(merged)
    if merged != before:
        write_json(path, merged)
    shim = write_executable(top / SHIM, SHIM_TEXT)
    return [{"kind": "runtime", "name": "gemini", "path": SETTINGS,
             "changed": merged != before or shim, "added": changed + added,
             "kept": kept + theirs, "then": TRUST}]

