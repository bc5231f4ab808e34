"""What `gitstate doctor` says of gitstate's Claude Code plugin (gitstate/claude_plugin): which
runs gitstate's hooks and MCP server in this project, the plugin or the project's settings
(`init --runtime claude-code`), never both. The plugin's shim stands down for a part the
project's settings run, as far as it can tell from their text (doors/shims.py names the words
it looks for); where it cannot tell, both would run, and this check warns.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gitstate.doors.doctor import finding as found
from gitstate.doors.shims import (
    BARE_COMMAND,
    MCP_CONFIG,
    PROJECT_HOOK_MARKS,
    PROJECT_MCP_MARK,
    RUNTIME_COMMAND,
    RUNTIME_SHIM,
    runs_our_mcp,
)
from gitstate.git.repo import Managed
from gitstate.runtime.claude_code.setup_checks import _json, _python, plugin_enabled


def project_parts(top: Path) -> dict[str, tuple[bool, bool]]:
    """{"hooks" | "MCP server": (the project's settings run gitstate's, the plugin's shim sees
    so and stands down)}."""
    settings, servers = top / ".claude" / "settings.json", top / MCP_CONFIG
    hooks = _json(settings).get("hooks")
    commands = [h.get("command") for groups in hooks.values() if isinstance(groups, list)
                for g in groups if isinstance(g, dict) for h in g.get("hooks") or []
                if isinstance(h, dict)] if isinstance(hooks, dict) else []
    runs = any(isinstance(c, str) and c.startswith((RUNTIME_COMMAND, BARE_COMMAND))
               for c in commands)
    mcp = _json(servers).get("mcpServers")
    serves = isinstance(mcp, dict) and any(runs_our_mcp(s) for s in mcp.values())
    return {"hooks": (runs, any(m in _text(settings) for m in PROJECT_HOOK_MARKS)),
            "MCP server": (serves, PROJECT_MCP_MARK in _text(servers))}


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def findings(repo: Managed) -> list[dict]:
    if repo.top is None:
        return []
    said = finding(repo, Path(repo.top))
    return [said] if said else []


def finding(repo: Managed, top: Path) -> dict | None:
    """Which runs gitstate's hooks and MCP server here: the plugin, or the project's settings
    (whose parts the plugin's shim leaves to them), never both."""
    enabled = plugin_enabled(top)
    parts = project_parts(top)
    mine = [part for part, (runs, _) in parts.items() if runs]
    if enabled is None:
        return found("ok", "plugin", f"this project's settings run gitstate's "
                     f"{' and '.join(mine)} (`init --runtime claude-code`); gitstate's "
                     "Claude Code plugin is not enabled") if mine else None
    plugin, where = enabled
    twice = [part for part, (runs, seen) in parts.items() if runs and not seen]
    if twice:
        return found("warn", "plugin", f"gitstate's {' and '.join(twice)} run twice: from "
                     f"the plugin {plugin} (enabled in {where}) and from this project's "
                     "settings, in an older form the plugin does not recognise",
                     "`gitstate init --runtime claude-code` (it rewrites them to run "
                     f"{RUNTIME_SHIM}, and the plugin then leaves them to the project), or "
                     f"`claude plugin disable {plugin}`")
    theirs = [part for part in parts if part not in mine]
    if theirs and _python(repo) is None and shutil.which("gitstate") is None:
        return found("fail", "plugin", f"the plugin {plugin} (enabled in {where}) finds no "
                     "gitstate in this clone (no gitstate.python in its git config, none on "
                     f"PATH): its {' and '.join(theirs)} cannot run",
                     "`gitstate init` in this clone (it records the gitstate it runs)")
    return found("ok", "plugin", _who_runs(plugin, where, theirs, mine))


def _who_runs(plugin: str, where: str, theirs: list[str], mine: list[str]) -> str:
    """Which parts the plugin runs (`theirs`), which the project's settings (`mine`)."""
    said = [f"the plugin {plugin} (enabled in {where}) runs gitstate's "
            f"{' and '.join(theirs)}"] if theirs else []
    if mine:
        said.append(f"this project's settings run its {' and '.join(mine)} "
                    "(`init --runtime claude-code`), and the plugin's stand down")
    return "; ".join(said)
