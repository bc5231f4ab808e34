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
    MCP_CONFIG,
    PROJECT_HOOK_MARKS,
    PROJECT_MCP_MARK,
    RUNTIME_SHIM,
    runs_our_mcp,
)
from gitstate.git.repo import Managed
from gitstate.runtime.claude_code.setup_checks import _json, _ours, _python, plugin_enabled


def project_parts(top: Path) -> dict[str, tuple[bool, bool]]:
    """{"hooks" | "MCP server": (the project's settings run gitstate's, the plugin's shim sees
    so and stands down)}."""
    settings, servers = top / ".claude" / "settings.json", top / MCP_CONFIG
    mcp = _json(servers).get("mcpServers")
    serves = isinstance(mcp, dict) and any(map(runs_our_mcp, mcp.values()))
    return {"hooks": (any(map(_ours, _commands(settings))),
                      any(m in _text(settings) for m in PROJECT_HOOK_MARKS)),
            "MCP server": (serves, PROJECT_MCP_MARK in _text(servers))}


def _commands(settings: Path) -> list:
    """The commands of the hooks in Claude Code's settings, whatever they are."""
    hooks = _json(settings).get("hooks")
    groups = [g for found in hooks.values() if isinstance(found, list) for g in found
              if isinstance(g, dict)] if isinstance(hooks, dict) else []
    return [h.get("command") for g in groups for h in g.get("hooks") or []
            if isinstance(h, dict)]


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
    theirs = [part for part in parts if part not in mine]
    return _twice(parts, plugin, where) or _unfound(repo, plugin, where, theirs) \
        or found("ok", "plugin", _who_runs(plugin, where, theirs, mine))


def _twice(parts: dict, plugin: str, where: str) -> dict | None:
    """The parts both run: the project's settings, in a form the plugin does not see."""
    twice = [part for part, (runs, seen) in parts.items() if runs and not seen]
    return found("warn", "plugin", f"gitstate's {' and '.join(twice)} run twice: from "
                 f"the plugin {plugin} (enabled in {where}) and from this project's "
                 "settings, in an older form the plugin does not recognise",
                 "`gitstate init --runtime claude-code` (it rewrites them to run "
                 f"{RUNTIME_SHIM}, and the plugin then leaves them to the project), or "
                 f"`claude plugin disable {plugin}`") if twice else None


def _unfound(repo: Managed, plugin: str, where: str, theirs: list[str]) -> dict | None:
    """The plugin's parts, when it finds no gitstate to run them."""
    if not theirs or _python(repo) is not None or shutil.which("gitstate") is not None:
        return None
    return found("fail", "plugin", f"the plugin {plugin} (enabled in {where}) finds no "
                 "gitstate in this clone (no gitstate.python in its git config, none on "
                 f"PATH): its {' and '.join(theirs)} cannot run",
                 "`gitstate init` in this clone (it records the gitstate it runs)")


def _who_runs(plugin: str, where: str, theirs: list[str], mine: list[str]) -> str:
    """Which parts the plugin runs (`theirs`), which the project's settings (`mine`)."""
    said = [f"the plugin {plugin} (enabled in {where}) runs gitstate's "
            f"{' and '.join(theirs)}"] if theirs else []
    if mine:
        said.append(f"this project's settings run its {' and '.join(mine)} "
                    "(`init --runtime claude-code`), and the plugin's stand down")
    return "; ".join(said)
