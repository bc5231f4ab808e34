"""Codex CLI's hooks: `gitstate hook codex-NAME` with Codex's JSON on stdin.

Codex's payloads carry Claude Code's field names (`session_id`, `cwd`, `transcript_path`,
`hook_event_name`, `model`, `source`, `tool_name`, `tool_input`, `tool_use_id`, `agent_id`),
so gitstate's runtime code reads them once `as_claude_code` has mapped what differs: a
SessionStart `source` Claude Code does not have (`fork`, a new session that carries an old
one's history: briefed as a resumed one) and the sub-agent tool (`spawn_agent`, whose
`message` is the task; Codex names no kind of sub-agent). The shell tool already arrives as
`tool_name: "Bash"` with `tool_input.command`. The transcript is Codex's rollout file, read by
`latest_usage`. A reply in `hookSpecificOutput` has the same shape for both runtimes.

Wired so far:
- codex-session-start (SessionStart): the briefing (gitstate.runtime.briefing), the session
  bound to its agent by `$GITSTATE_AGENT` or the state file that records its `session:`.
- codex-spawn-guard (PreToolUse, matcher `spawn_agent`): Claude Code's spawn guard judges the
  sub-agent before it exists (SubagentStart can only add context).

Whatever goes wrong, a hook never stops the runtime: it says so on stderr and exits 0.
"""

from __future__ import annotations

import json
import os
import sys

SOURCES = {"startup": "startup", "resume": "resume", "clear": "clear", "compact": "compact",
           "fork": "resume"}
SUBAGENT_TOOL = "spawn_agent"
NAMES = ("codex-session-start", "codex-spawn-guard")
TAIL = 256 * 1024   # how much of the rollout's end is read: the newest response is there


def as_claude_code(event: dict) -> dict:
    """Codex's hook payload in the shape gitstate's Claude Code code reads."""
    out = dict(event)
    if "source" in event:
        out["source"] = SOURCES.get(str(event["source"]), "startup")
    name = event.get("tool_name")
    if isinstance(name, str) and name.rsplit(".", 1)[-1] == SUBAGENT_TOOL:
        given = event.get("tool_input")
        task = given.get("message") if isinstance(given, dict) else None
        out["tool_name"] = "Agent"
        out["tool_input"] = {"subagent_type": "general-purpose", "prompt": task or "",
                             "description": task or ""}
    return out


def latest_usage(path: str | None) -> tuple[int, int | None] | None:
    """(input tokens of the newest model response, the context window) from a Codex rollout:
    its newest `token_usage_record` (the response that made the call being judged) and the
    newest `model_context_window`, of a `token_count` event or, before the first of those
    (which follows a call's output), of the turn's `task_started`; None before the first
    response."""
    if not path:
        return None
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - TAIL))
            data = fh.read()
    except OSError:
        return None
    lines = data.splitlines()
    if size > TAIL:
        lines = lines[1:]    # the first may be cut
    tokens: int | None = None
    window: int | None = None
    for raw in reversed(lines):
        if tokens is not None and window is not None:
            break
        if b"token_usage_record" not in raw and b"model_context_window" not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        payload = line.get("payload") if isinstance(line, dict) else None
        if not isinstance(payload, dict):
            continue
        if tokens is None and line.get("type") == "token_usage_record":
            usage = payload.get("usage")
            found = usage.get("input_tokens") if isinstance(usage, dict) else None
            if isinstance(found, int):
                tokens = found
        elif window is None and line.get("type") == "event_msg":
            info = payload.get("info")    # token_count's, or task_started's own field
            found = info.get("model_context_window") if isinstance(info, dict) \
                else payload.get("model_context_window")
            if isinstance(found, int):
                window = found
    return None if tokens is None else (tokens, window)


def _stdin_json() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        data = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _say(reply: dict | str | None) -> int:
    if isinstance(reply, str):
        sys.stdout.write(reply + "\n")
    elif reply:
        sys.stdout.write(json.dumps(reply) + "\n")
    return 0


def run(name: str, args: list[str]) -> int:
    event = as_claude_code(_stdin_json())
    agent_arg = args[args.index("--agent") + 1] if "--agent" in args[:-1] else None
    try:
        if name == "codex-session-start":
            from gitstate.runtime.briefing import session_start
            return _say(session_start(event, agent_arg))
        if name == "codex-spawn-guard":
            from gitstate.runtime.claude_code import spawn_guard
            return _say(spawn_guard(event))
    except Exception as exc:  # noqa: BLE001 — a hook must never stop the runtime
        if os.environ.get("GITSTATE_DEBUG"):
            raise
        print(f"gitstate: {name} hook: {exc}", file=sys.stderr)
        return 0
    print(f"gitstate: unknown Codex hook '{name}'; known: {', '.join(NAMES)}", file=sys.stderr)
    return 2
