"""A scripted model on 127.0.0.1 that speaks OpenAI's Responses API as Codex CLI calls it
(`POST /v1/responses`, `stream: true`, server-sent events), so that the real `codex` binary
can be driven through a session whose every model turn a test decides: the counterpart of
scripted_model.py (Anthropic's Messages API, for Claude Code).

Codex sends no `instructions`: its system prompt, AGENTS.md, a hook's context and the user's
prompt all arrive as items of `input` (messages of role developer or user), and a tool's result
comes back as a `function_call_output` item naming the call's `call_id`.

A conversation is routed to its script by the last token in its user messages
(`[script:NAME]`, which the test puts in the prompt). A script is a list of turns; the turn
answered is read from the ids of the calls already made since that prompt (which carry it),
else counted from the assistant messages, so a conversation replays the same way however often
Codex asks. A turn is a list of items: `text(...)`, `shell(cmd)` (Codex's shell tool,
`exec_command`), `spawn(message)` (its sub-agent tool), `call(name, arguments)`, or a function
of the request that makes one of these, with the input tokens the model reports. Past the
last turn, and for requests without a token, the model answers with plain text.

Every routed request is kept (`server.requests(NAME)`), for the tests to read what reached the
model: a hook's context, a command's output, a hook's deny reason.
"""

from __future__ import annotations

import json
import re
import uuid

import scripted_server
from scripted_server import ScriptedServer, steps

STEP = re.compile(r"call_(\d+)_")
SHELL = "exec_command"    # Codex 0.171.0's shell tool (unified exec): {"cmd": "...", ...}


def text(words: str) -> dict:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": words, "annotations": []}]}


def call(name: str, arguments: dict) -> dict:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


def spawn(message: str) -> dict:
    """A call of Codex's sub-agent tool (`spawn_agent`, in the `multi_agent_v1` namespace)."""
    return dict(call("spawn_agent", {"message": message}), namespace="multi_agent_v1")


def wait_for_spawned(request: dict) -> dict:
    """A call of Codex's `wait_agent` for the sub-agents the conversation's `spawn_agent`
    calls started (their ids, read from those calls' outputs in `request`)."""
    ids = [json.loads(out)["agent_id"] for name, out in outputs(request).items()
           if name.startswith("spawn_agent#") and '"agent_id"' in out]
    return dict(call("wait_agent", {"targets": ids, "timeout_ms": 60_000}),
                namespace="multi_agent_v1")


def shell(cmd: str, **more) -> dict:
    """A call of Codex's shell tool; `login=False` keeps /etc/profile from resetting PATH."""
    return call(SHELL, {"cmd": cmd, **more})


class Turn(scripted_server.Turn):
    """What the model answers once: its output items and the input tokens it reports."""

    def __init__(self, *items: dict, input_tokens: int = 1_000, error: int | None = None
                 ) -> None:
        super().__init__(*items, tokens=input_tokens, error=error)


def plain(content) -> str:
    """All the text of an item's content: a string, or a list of input/output text parts."""
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(out)


def words(item: dict) -> str:
    """What the model reads of one input item: a message's text, a tool call's output."""
    kind = item.get("type", "message")
    if kind == "message":
        return plain(item.get("content"))
    if kind in ("function_call_output", "custom_tool_call_output"):
        return plain(item.get("output"))
    return ""


def everything(request: dict) -> str:
    """Every word of a request the model reads (instructions, were there any, and input)."""
    items = request.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    parts = [request.get("instructions") or ""] + [words(i) for i in items or []
                                                   if isinstance(i, dict)]
    return "\n".join(parts)


def outputs(request: dict) -> dict[str, str]:
    """The output of each tool call the request answers, by the call's name and order
    (`exec_command#0`, ...): what the model reads back from its calls."""
    names = {i.get("call_id"): i.get("name") for i in request.get("input") or []
             if isinstance(i, dict) and i.get("type") == "function_call"}
    found: dict[str, str] = {}
    for item in request.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            name = names.get(item.get("call_id"), "?")
            at = sum(1 for key in found if key.startswith(f"{name}#"))
            found[f"{name}#{at}"] = plain(item.get("output"))
    return found


def _step(items: list[dict]) -> int:
    found = steps([str(i.get("call_id", "")) for i in items if i.get("type") == "function_call"],
                  STEP)
    return found if found is not None else sum(
        1 for i in items if i.get("type") == "message" and i.get("role") == "assistant")


class Handler(scripted_server.Handler):
    def do_GET(self) -> None:   # e.g. /v1/models: none to list
        self.other("GET")
        self.send_json(404, {"error": {"type": "not_found", "message": self.path}})

    def do_POST(self) -> None:
        request = self.read_json()
        if self.path.rstrip("/") != "/v1/responses":
            self.other("POST")
            self.send_json(404, {"error": {"type": "not_found", "message": self.path}})
            return
        items, tokens, status = self.model.answer(request)
        if status != 200:    # 400 is not retried
            self.send_json(status, {"error": {"type": "invalid_request_error",
                                              "code": "scripted_failure",
                                              "message": "scripted failure"}})
            return
        self.send_events(_events(items, tokens))


def _events(items: list[dict], tokens: int) -> bytes:
    """The answer as the Responses API streams it."""
    rid = f"resp_{uuid.uuid4().hex[:12]}"
    events: list[dict] = [{"type": "response.created",
                           "response": {"id": rid, "status": "in_progress"}}]
    for n, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": n, "item": item})
        if item["type"] == "message":
            events.append({"type": "response.output_text.delta", "output_index": n,
                           "content_index": 0, "item_id": item["id"],
                           "delta": plain(item["content"])})
        events.append({"type": "response.output_item.done", "output_index": n, "item": item})
    events.append({"type": "response.completed", "response": {
        "id": rid, "status": "completed",
        "usage": {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": tokens + 10}}})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class ScriptedResponses(ScriptedServer):
    PATH = "/v1"    # the provider's `base_url`
    Handler = Handler

    def items(self, request: dict) -> list[dict]:
        return [i for i in request.get("input") or [] if isinstance(i, dict)]

    def user_text(self, item: dict) -> str:
        return words(item) if item.get("type", "message") == "message" \
            and item.get("role") == "user" else ""

    def step(self, items: list[dict]) -> int:
        return _step(items)

    def text(self, words: str) -> dict:
        return text(words)

    def made(self, item: dict, step: int, n: int) -> dict:
        if item["type"] == "function_call":
            item = dict(item, call_id=f"call_{step}_{n}_{uuid.uuid4().hex[:8]}")
        return dict(item, id=f"item_{uuid.uuid4().hex[:12]}")
