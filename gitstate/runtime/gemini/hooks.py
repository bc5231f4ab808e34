"""Gemini CLI's hooks: `gitstate hook NAME --runtime gemini` with Gemini CLI's JSON on stdin.

Gemini's payloads carry Claude Code's field names (`session_id`, `cwd`, `transcript_path`,
`hook_event_name`, `source`, `tool_name`, `tool_input`, `prompt`), so Claude Code's entry
answers them (gitstate.runtime.claude_code.run) once `as_claude_code` has mapped what differs:
the sub-agent tool (`invoke_agent` with `agent_name` and `prompt`), the shell tool
(`run_shell_command`, as `Bash`), the turn's last words (`prompt_response`, as
`last_assistant_message`) and a notification's type. The answer is mapped back by `reply`:
a refusal is Gemini's `decision: "deny"` and `reason`. The context is measured from Gemini's
transcript (`measure`: the newest model response's `tokens.input`).

Whatever goes wrong, a hook never stops the runtime: it says so on stderr and exits 0.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

from gitstate.runtime.claude_code.transcript import TAIL as TAIL, known_window, share, tail_lines

SUBAGENT_TOOL = "invoke_agent"
SHELL_TOOL = "run_shell_command"
NOTICES = {"ToolPermission": "permission_prompt"}
WINDOWS = {"gemini-": 1_048_576}    # Gemini 2.5 and 3 models take 1M tokens


def as_claude_code(event: dict) -> dict:
    """Gemini CLI's hook payload in the shape gitstate's Claude Code code reads."""
    out = dict(event)
    name = event.get("tool_name")
    found = event.get("tool_input")
    given: dict = found if isinstance(found, dict) else {}
    if name == SUBAGENT_TOOL:
        out["tool_name"], out["tool_input"] = "Agent", _agent_input(given)
    elif name == SHELL_TOOL:
        out["tool_name"] = "Bash"
    if isinstance(event.get("prompt_response"), str):
        out.setdefault("last_assistant_message", event["prompt_response"])
    kind = event.get("notification_type")
    if isinstance(kind, str) and kind in NOTICES:
        out["notification_type"] = NOTICES[kind]
    return out


def _agent_input(given: dict) -> dict:
    task = str(given.get("prompt") or "")
    return {"subagent_type": str(given.get("agent_name") or "general-purpose"),
            "prompt": task, "description": task}


def reply(text: str) -> str:
    """Claude Code's answer (stdout) as Gemini CLI reads it: a PreToolUse refusal becomes
    `decision: "deny"` with its reason; the rest (`additionalContext`) is read as it is."""
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        data = _denied(data, specific)
    return json.dumps(data) + "\n"


def _denied(data: dict, specific: dict) -> dict:
    """A refusal as Gemini CLI reads it: `decision` and `reason`, and whatever else the
    answer said."""
    data = dict(data, decision="deny",
                reason=specific.get("permissionDecisionReason") or "refused by gitstate")
    rest = {k: v for k, v in specific.items()
            if k not in ("permissionDecision", "permissionDecisionReason")}
    if set(rest) - {"hookEventName"}:
        data["hookSpecificOutput"] = rest
    else:
        data.pop("hookSpecificOutput")
    return data


def latest_usage(path: str | None) -> tuple[int, str | None] | None:
    """(input tokens, model) of the newest model response in a Gemini transcript, or None."""
    for raw in reversed(tail_lines(path)):
        found = _response(raw) if b'"gemini"' in raw and b'"tokens"' in raw else None
        if found is not None:
            return found
    return None


def _response(raw: bytes) -> tuple[int, str | None] | None:
    """(input tokens, model) of a transcript's line that is a model response, else None."""
    try:
        line = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(line, dict):
        return None
    tokens = line.get("tokens")
    found = tokens.get("input") if isinstance(tokens, dict) else None
    if line.get("type") != "gemini" or not isinstance(found, int):
        return None
    model = line.get("model")
    return found, model if isinstance(model, str) else None


def window_of(model: str | None, policy_window: int | None) -> int | None:
    return int(policy_window) if policy_window else known_window(model, WINDOWS)


def measure(path: str | None, policy_window: int | None = None, model: str | None = None,
            tool_use_id: str | None = None) -> tuple[float, int, int] | None:
    """(context %, tokens, window) from a Gemini transcript, as Claude Code's transcript
    measure gives it: the window is the lifecycle's `policies.context_window`, else the
    known window of the response's model. Gemini writes the response before it runs the
    call's hooks: nothing to wait for (there is no call id)."""
    found = latest_usage(path)
    if found is None:
        return None
    tokens, named = found
    return share(tokens, window_of(named or model, policy_window))


def run(name: str, args: list[str]) -> int:
    """`gitstate hook NAME --runtime gemini`: Claude Code's entry, given the mapped payload
    and the transcript's measure, its answer mapped back."""
    from gitstate.runtime.claude_code import _stdin_json, run as answer
    event = as_claude_code(_stdin_json())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = answer(name, args, event, measure)
    sys.stdout.write(reply(out.getvalue()))
    sys.stdout.flush()
    return code
