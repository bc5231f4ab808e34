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
from gitstate.errors import InvalidFile
from gitstate.runtime.claude_code.settings import merge
from gitstate.runtime.registry import RUNTIMES

SETTINGS = ".gemini/settings.json"
SHIM = ".gemini/hooks/gitstate"
COMMAND = f'"$(git rev-parse --show-toplevel)"/{SHIM} '
SUFFIX = " --runtime gemini"
OURS = (COMMAND,)
MCP_NAME = "gitstate"
MCP_SERVER = {"command": "sh",
              "args": ["-c", f'exec "$(git rev-parse --show-toplevel)/{SHIM}" mcp']}
HOOKS: dict[str, tuple] = RUNTIMES["gemini"].hooks
SHIM_TEXT = r"""#!/bin/sh
# gitstate-shim: gemini -- written by `gitstate init --runtime gemini`; run it again to update
# this file. Gemini CLI runs it for gitstate's hooks and MCP server (.gemini/settings.json):
# `gitstate hook NAME` (or `gitstate mcp`) with the gitstate this clone uses, found as the git
# hooks find it.
case $1 in
    mcp) what="gitstate's MCP server (.gemini/settings.json)" ;;
    *) what="the Gemini CLI hook '$1'"; set -- hook "$@" ;;
esac
dir=$(dirname "$0")
py=${GITSTATE_PYTHON:-$(git -C "$dir" config --get gitstate.python 2>/dev/null)}
if [ -n "$py" ] && [ -x "$py" ]; then exec "$py" -m gitstate "$@"; fi
if command -v gitstate >/dev/null 2>&1; then exec gitstate "$@"; fi
for py in python3 python; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import gitstate' 2>/dev/null; then
        exec "$py" -m gitstate "$@"
    fi
done
echo "gitstate: $what cannot run: gitstate is not found (no gitstate.python in this" \
     "clone's git config, no gitstate on PATH). Run 'gitstate init' in this clone, or set" \
     "GITSTATE_PYTHON to a Python that has gitstate." >&2
exit 1   # a non-blocking error: Gemini CLI shows it and goes on
"""
TRUST = ("Gemini CLI loads a project's .gemini/settings.json (its hooks and MCP servers) only "
         "in a trusted folder, and `gemini -p` refuses to run in one that is not: run "
         "`gemini` here once and trust the folder (it is recorded in ~/.gemini/"
         "trustedFolders.json), or pass --skip-trust. `gitstate doctor` says whether it is "
         "trusted.")


def runs_our_mcp(server: object) -> bool:
    """Is an `mcpServers` entry gitstate's server (the shim, `gitstate mcp`, `python -m
    gitstate mcp`)?"""
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        return False
    args = server.get("args") or []
    if not isinstance(args, list):
        return False
    words = [server["command"], *(str(a) for a in args)]
    if any(SHIM in w for w in words):
        return any("mcp" in w.split() or w == "mcp" for w in words)
    return (Path(words[0]).name == "gitstate" and words[1:2] == ["mcp"]) or any(
        words[i:i + 3] == ["-m", "gitstate", "mcp"] for i in range(len(words)))


def merge_mcp(settings: dict) -> tuple[list[str], list[str]]:
    """Merge gitstate's server into `settings` (in place): (servers added or updated, the
    user's servers kept)."""
    servers = settings.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidFile(f"{SETTINGS}: 'mcpServers' must be an object, not "
                          f"{type(servers).__name__}",
                          hint="fix it by hand; gitstate will not replace it")
    ours = [name for name, server in servers.items() if runs_our_mcp(server)]
    kept = [name for name in servers if name not in ours]
    if not ours:
        if MCP_NAME in servers:
            raise InvalidFile(f"{SETTINGS}: the server '{MCP_NAME}' is not gitstate's MCP "
                              "server", hint="rename it; gitstate will not replace it")
        servers[MCP_NAME] = dict(MCP_SERVER)
        return [f"mcpServers.{MCP_NAME}"], kept
    name = MCP_NAME if MCP_NAME in ours else ours[0]
    want = {**servers[name], **MCP_SERVER}
    if servers[name] == want:
        return [], kept
    servers[name] = want
    return [f"mcpServers.{name}"], kept


def install(top: Path) -> list[dict]:
    """Merge into `top/.gemini/settings.json` (hooks and MCP server, read and merged before it
    is written) and write the shim; the `init` report's entry."""
    path = top / SETTINGS
    before = _read_json(path)
    data = json.loads(json.dumps(before))
    merged, changed, kept = merge(data, HOOKS, SETTINGS, COMMAND, SUFFIX, OURS)
    added, theirs = merge_mcp(merged)
    if merged != before:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    shim = write_executable(top / SHIM, SHIM_TEXT)
    return [{"kind": "runtime", "name": "gemini", "path": SETTINGS,
             "changed": merged != before or shim, "added": changed + added,
             "kept": kept + theirs, "then": TRUST}]


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise InvalidFile(f"{SETTINGS}: not valid JSON ({exc})",
                          hint="fix it; gitstate merges, it never replaces") from exc
    if not isinstance(data, dict):
        raise InvalidFile(f"{SETTINGS}: must hold a JSON object")
    return data
