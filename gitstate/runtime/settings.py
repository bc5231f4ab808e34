"""`gitstate init --runtime claude-code`: gitstate's hooks merged into `.claude/settings.json`.

The file is Claude Code's project settings (https://code.claude.com/docs/en/hooks):
`hooks.<Event>` is a list of groups `{"matcher": ..., "hooks": [{"type": "command",
"command": ..., "timeout": seconds}]}`. gitstate adds one group per event and never drops,
edits or reorders anything of the user's: a group of gitstate's (a command that runs the
shim below, or the bare `gitstate hook ` of older versions) is updated where it stands, any
other group is kept as it is, and a run that changes nothing writes nothing.

The command is `"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate NAME`: a small shell script,
committed with the settings, that finds gitstate at run time as the git hook shims do (the
`gitstate.python` of this clone's git config, else `gitstate` on PATH, else a Python that
imports it). No path of one machine is written into a file a team commits.
"""

from __future__ import annotations

import json
from pathlib import Path

from gitstate.doors.shims import BARE_COMMAND, RUNTIME_COMMAND, RUNTIME_SHIM, write_executable
from gitstate.errors import InvalidFile

SETTINGS = ".claude/settings.json"
OURS = (RUNTIME_COMMAND, BARE_COMMAND)
SHIM = r"""#!/bin/sh
# gitstate-shim: claude-code -- written by `gitstate init --runtime claude-code`; run it again
# to update this file. Claude Code runs it for gitstate's hooks (.claude/settings.json):
# `gitstate hook NAME` with the gitstate this clone uses, found as the git hooks find it.
dir=${CLAUDE_PROJECT_DIR:-.}
py=${GITSTATE_PYTHON:-$(git -C "$dir" config --get gitstate.python 2>/dev/null)}
if [ -n "$py" ] && [ -x "$py" ]; then exec "$py" -m gitstate hook "$@"; fi
if command -v gitstate >/dev/null 2>&1; then exec gitstate hook "$@"; fi
for py in python3 python; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import gitstate' 2>/dev/null; then
        exec "$py" -m gitstate hook "$@"
    fi
done
echo "gitstate: the Claude Code hook '$1' cannot run: gitstate is not found (no" \
     "gitstate.python in this clone's git config, no gitstate on PATH). Run 'gitstate init'" \
     "in this clone, or set GITSTATE_PYTHON to a Python that has gitstate." >&2
exit 1   # a non-blocking error: Claude Code shows it and goes on
"""
TIMEOUT = 30   # seconds; the hooks take well under one (bench/README.md)

# event -> (matcher or None, hook name). The sub-agent tool is `Agent` (called `Task` before
# Claude Code 2.1.63); SessionStart's matcher is the session's source.
HOOKS = {
    "SessionStart": ("startup|resume|clear|compact", "session-start"),
    "PostToolUse": ("*", "context"),
    "PreToolUse": ("Agent|Task", "spawn-guard"),
    "SubagentStart": (None, "subagent-start"),
}


def group(matcher: str | None, name: str) -> dict:
    g: dict = {} if matcher is None else {"matcher": matcher}
    g["hooks"] = [{"type": "command", "command": f"{RUNTIME_COMMAND}{name}",
                   "timeout": TIMEOUT}]
    return g


def runs(command: str, name: str | None = None) -> bool:
    """Is `command` gitstate's hook (NAME), in either of its forms?"""
    return any(command.startswith(f"{ours}{name or ''}") for ours in OURS)


def _is_ours(g) -> bool:
    return isinstance(g, dict) and any(
        isinstance(h, dict) and runs(str(h.get("command", ""))) for h in g.get("hooks") or [])


def merge(settings: dict) -> tuple[dict, list[str], list[str]]:
    """(merged settings, events whose gitstate group was added or updated, events where the
    user's own groups were kept)."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidFile(f"{SETTINGS}: 'hooks' must be an object, not {type(hooks).__name__}",
                          hint="fix it by hand; gitstate will not replace it")
    changed, kept = [], []
    for event, (matcher, name) in HOOKS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidFile(f"{SETTINGS}: hooks.{event} must be a list",
                              hint="fix it by hand; gitstate will not replace it")
        want = group(matcher, name)
        if any(not _is_ours(g) for g in groups):
            kept.append(event)
        mine = [i for i, g in enumerate(groups) if _is_ours(g)
                and any(runs(str(h.get("command", "")), name)
                        for h in g.get("hooks") or [] if isinstance(h, dict))]
        if not mine:
            groups.append(want)
            changed.append(event)
        elif groups[mine[0]] != want:
            groups[mine[0]] = want
            changed.append(event)
    return settings, changed, kept


def install(top: Path) -> dict:
    """Merge into `top/.claude/settings.json`; what changed (the `init` report's entry)."""
    path = top / SETTINGS
    settings: dict = {}
    if path.is_file():
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            settings = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise InvalidFile(f"{SETTINGS}:{getattr(exc, 'lineno', '?')}: not valid JSON "
                              f"({exc})",
                              hint="fix it; gitstate merges, it never replaces") from exc
        if not isinstance(settings, dict):
            raise InvalidFile(f"{SETTINGS}: must hold a JSON object")
    merged, changed, kept = merge(settings)
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    shim = write_executable(top / RUNTIME_SHIM, SHIM)
    return {"kind": "runtime", "name": "claude-code", "path": SETTINGS,
            "changed": bool(changed) or shim, "added": changed, "kept": kept}
