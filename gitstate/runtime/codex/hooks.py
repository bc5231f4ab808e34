"""Codex CLI's hooks: `gitstate hook NAME --runtime codex` with Codex's JSON on stdin.

Codex's payloads carry Claude Code's field names (`session_id`, `cwd`, `transcript_path`,
`hook_event_name`, `model`, `source`, `tool_name`, `tool_input`, `tool_use_id`, `agent_id`),
so Claude Code's entry answers them (gitstate.runtime.claude_code.run: the briefing, the spawn
guard, the runtime events) once `as_claude_code` has mapped what differs: a SessionStart
`source` Claude Code does not have (`fork`, a new session that carries an old one's history:
briefed as a resumed one), the sub-agent tool (`spawn_agent`, whose `message` is the task;
Codex names no kind of sub-agent) and the kind of a sub-agent that starts or stops
(`default`). The shell tool already arrives as `tool_name: "Bash"` with
`tool_input.command`. The transcript is Codex's rollout file: `context` measures it with
`measure` (`latest_usage`) and records the crossings of the mortality marks with Claude Code's
code. A reply in `hookSpecificOutput` has the same shape for both runtimes.

Whatever goes wrong, a hook never stops the runtime: it says so on stderr and exits 0.
"""

from __future__ import annotations

import json

from gitstate.runtime.claude_code.transcript import TAIL as TAIL, share, tail_lines, window_of

SOURCES = {"startup": "startup", "resume": "resume", "clear": "clear", "compact": "compact",
           "fork": "resume"}
SUBAGENT_TOOL = "spawn_agent"
KINDS = {"default": "general-purpose"}   # Codex's sub-agent kind -> the spawn guard's


def as_claude_code(event: dict) -> dict:
    """Codex's hook payload in the shape gitstate's Claude Code code reads."""
    out = dict(event)
    if "source" in event:
        out["source"] = SOURCES.get(str(event["source"]), "startup")
    kind = event.get("agent_type")
    if isinstance(kind, str) and kind in KINDS:
        out["agent_type"] = KINDS[kind]
    name = event.get("tool_name")
    if isinstance(name, str) and name.rsplit(".", 1)[-1] == SUBAGENT_TOOL:
        given = event.get("tool_input")
        task = (given.get("message") if isinstance(given, dict) else None) or ""
        out["tool_name"] = "Agent"
        out["tool_input"] = {"subagent_type": "general-purpose", "prompt": task,
                             "description": task}
    return out


def latest_usage(path: str | None) -> tuple[int, int | None] | None:
    """(input tokens of the newest model response, the context window) from a Codex rollout:
    its newest `token_usage_record` (the response that made the call being judged) and the
    newest `model_context_window`, of a `token_count` event or, before the first of those
    (which follows a call's output), of the turn's `task_started`; None before the first
    response."""
    found: dict[str, int] = {}
    for raw in reversed(tail_lines(path)):
        if len(found) == len(_READ):
            break
        if b"token_usage_record" in raw or b"model_context_window" in raw:
            _read(raw, found)
    tokens = found.get("token_usage_record")
    return None if tokens is None else (tokens, found.get("event_msg"))


def _read(raw: bytes, found: dict[str, int]) -> None:
    """What a rollout's line gives (`_READ`), kept in `found` unless a newer line gave it."""
    kind, payload = _entry(raw)
    read = _READ.get(str(kind)) if str(kind) not in found else None
    value = read(payload) if read else None
    if value is not None:
        found[str(kind)] = value


def _tokens(payload: dict) -> int | None:
    return _int(payload.get("usage"), "input_tokens")


def _window(payload: dict) -> int | None:
    info = payload.get("info")    # token_count's, or task_started's own field
    return _int(info if isinstance(info, dict) else payload, "model_context_window")


# a rollout line's type -> what it gives: the response's input tokens, the context window
_READ = {"token_usage_record": _tokens, "event_msg": _window}


def _entry(raw: bytes) -> tuple[object, dict]:
    """(type, payload) of a rollout's line; (None, {}) when it has no payload."""
    try:
        line = json.loads(raw)
    except ValueError:
        return None, {}
    payload = line.get("payload") if isinstance(line, dict) else None
    return (line.get("type"), payload) if isinstance(payload, dict) else (None, {})


def _int(found: object, key: str) -> int | None:
    value = found.get(key) if isinstance(found, dict) else None
    return value if isinstance(value, int) else None


def measure(path: str | None, policy_window: int | None = None, model: str | None = None,
            tool_use_id: str | None = None) -> tuple[float, int, int] | None:
    """(context %, tokens, window) from a rollout, as Claude Code's transcript measure gives
    it: the window is the lifecycle's `policies.context_window`, else the rollout's, else
    the known window of the model. Codex writes the response's usage before it runs the
    call's hooks: nothing to wait for (`tool_use_id` is not needed)."""
    found = latest_usage(path)
    if found is None:
        return None
    tokens, window = found
    if policy_window or not window:
        window = window_of(model, policy_window)
    return share(tokens, window)


def run(name: str, args: list[str]) -> int:
    """`gitstate hook NAME --runtime codex`: Claude Code's entry, given the mapped payload and
    the rollout's measure."""
    from gitstate.runtime.claude_code import _stdin_json, run as answer
    return answer(name, args, as_claude_code(_stdin_json()), measure)
