"""`gitstate init --runtime claude-code`: gitstate's hooks merged into `.claude/settings.json`.

The file is Claude Code's project settings (https://code.claude.com/docs/en/hooks):
`hooks.<Event>` is a list of groups `{"matcher": ..., "hooks": [{"type": "command",
"command": ..., "timeout": seconds}]}`. gitstate adds one group per event and never drops,
edits or reorders anything of the user's: a group of gitstate's (a command starting with
`gitstate hook `) is updated where it stands, any other group is kept as it is, and a run that
changes nothing writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from gitstate.errors import InvalidFile

SETTINGS = ".claude/settings.json"
OURS = "gitstate hook "
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
    g["hooks"] = [{"type": "command", "command": f"{OURS}{name}", "timeout": TIMEOUT}]
    return g


def _is_ours(g) -> bool:
    return isinstance(g, dict) and any(
        isinstance(h, dict) and str(h.get("command", "")).startswith(OURS)
        for h in g.get("hooks") or [])


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
                and any(str(h.get("command", "")).startswith(f"{OURS}{name}")
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
    return {"kind": "runtime", "name": "claude-code", "path": SETTINGS,
            "changed": bool(changed), "added": changed, "kept": kept}
