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
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = re.compile(r"\[script:([A-Za-z0-9_./-]+)\]")
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


class Turn:
    """What the model answers once: its output items and the input tokens it reports."""

    def __init__(self, *items: dict, input_tokens: int = 1_000, error: int | None = None
                 ) -> None:
        self.items = list(items)
        self.input_tokens = input_tokens
        self.error = error    # answer with this HTTP status and an API error instead


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
    steps = [int(found.group(1)) for i in items if i.get("type") == "function_call"
             for found in [STEP.match(str(i.get("call_id", "")))] if found]
    if steps:
        return max(steps) + 1
    return sum(1 for i in items if i.get("type") == "message" and i.get("role") == "assistant")


class ScriptedResponses:
    def __init__(self) -> None:
        self.scripts: dict[str, list[Turn]] = {}
        self.seen: dict[str, list[dict]] = {}
        self.other: list[tuple[str, str]] = []    # requests that were not a routed turn
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        """The provider's `base_url`."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, name: str, *turns: Turn) -> str:
        """Register a script; returns the token to put in a prompt."""
        with self.lock:
            self.scripts[name] = list(turns)
            self.seen[name] = []
        return f"[script:{name}]"

    def requests(self, name: str) -> list[dict]:
        with self.lock:
            return list(self.seen.get(name, []))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- answering -----------------------------------------------------------------------------

    def answer(self, request: dict) -> tuple[list[dict], int, int]:
        """(output items, input tokens, HTTP status) for a request."""
        items = [i for i in request.get("input") or [] if isinstance(i, dict)]
        name, at = None, 0
        for n, item in enumerate(items):
            found = TOKEN.findall(words(item)) \
                if item.get("type", "message") == "message" and item.get("role") == "user" \
                else []
            if found:
                name, at = found[-1], n
        if name is None or not request.get("tools"):
            return [text("ok")], 100, 200
        with self.lock:
            self.seen.setdefault(name, []).append(request)
            turns = self.scripts.get(name, [])
        step = _step(items[at:])
        if step >= len(turns):
            return [text("done")], 1_000, 200
        turn = turns[step]
        if turn.error:
            return [], 0, turn.error
        out = []
        for n, item in enumerate(turn.items):
            if callable(item):    # made from what the model has read so far
                item = item(request)
            if item["type"] == "function_call":
                item = dict(item, call_id=f"call_{step}_{n}_{uuid.uuid4().hex[:8]}")
            out.append(dict(item, id=f"item_{uuid.uuid4().hex[:12]}"))
        return out, turn.input_tokens, 200

    def _handler(self):
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:   # quiet
                pass

            def do_GET(self) -> None:   # e.g. /v1/models: none to list
                with model.lock:
                    model.other.append(("GET", self.path))
                self._json(404, {"error": {"type": "not_found", "message": self.path}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    request = json.loads(raw or b"{}")
                except ValueError:
                    request = {}
                if self.path.rstrip("/") != "/v1/responses":
                    with model.lock:
                        model.other.append(("POST", self.path))
                    self._json(404, {"error": {"type": "not_found", "message": self.path}})
                    return
                items, tokens, status = model.answer(request)
                if status != 200:    # 400 is not retried
                    self._json(status, {"error": {"type": "invalid_request_error",
                                                  "code": "scripted_failure",
                                                  "message": "scripted failure"}})
                    return
                self._stream(items, tokens)

            def _json(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, items: list[dict], tokens: int) -> None:
                rid = f"resp_{uuid.uuid4().hex[:12]}"
                events: list[dict] = [{"type": "response.created",
                                       "response": {"id": rid, "status": "in_progress"}}]
                for n, item in enumerate(items):
                    events.append({"type": "response.output_item.added", "output_index": n,
                                   "item": item})
                    if item["type"] == "message":
                        events.append({"type": "response.output_text.delta",
                                       "output_index": n, "content_index": 0,
                                       "item_id": item["id"], "delta": plain(item["content"])})
                    events.append({"type": "response.output_item.done", "output_index": n,
                                   "item": item})
                events.append({"type": "response.completed", "response": {
                    "id": rid, "status": "completed",
                    "usage": {"input_tokens": tokens,
                              "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": 10,
                              "output_tokens_details": {"reasoning_tokens": 0},
                              "total_tokens": tokens + 10}}})
                body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
                               for e in events).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
