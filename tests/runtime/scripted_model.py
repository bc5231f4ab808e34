"""A scripted model on 127.0.0.1 that speaks Anthropic's Messages API as Claude Code calls it
(`POST /v1/messages?beta=true`, `stream: true`, server-sent events), so that the real Claude
Code binary can be driven through a session whose every model turn a test decides.

A conversation is routed to its script by the last token in its user messages
(`[script:NAME]`, which the test puts in the prompt, and in the prompt of any sub-agent it
asks for; a resumed session's new prompt carries a new one). A script is a list of turns; the
turn answered is the number of assistant messages since that prompt, so a conversation replays
the same way however often Claude Code asks. A turn is a
list of blocks: `text(...)` or `tool(name, input)`, with the `usage` the model reports (what
the context hook measures). Past the last turn, and for requests without tools (titles,
summaries), the model answers with plain text.

Every request is kept (`server.requests(NAME)`), for the tests to read what reached the
model: the briefing, tool results, a hook's deny reason.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = re.compile(r"\[script:([A-Za-z0-9_./-]+)\]")


def text(words: str) -> dict:
    return {"type": "text", "text": words}


def tool(name: str, tool_input: dict) -> dict:
    return {"type": "tool_use", "name": name, "input": tool_input}


STEP = re.compile(r"toolu_(\d+)_")


def _step(messages: list[dict]) -> int:
    """How many turns of the script were answered: Claude Code merges consecutive assistant
    turns into one message, so the turn is read from the ids of the tool calls (which carry
    it), else counted from the assistant messages."""
    steps = [int(found.group(1)) for m in messages if m.get("role") == "assistant"
             and isinstance(m.get("content"), list)
             for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"
             for found in [STEP.match(str(b.get("id", "")))] if found]
    if steps:
        return max(steps) + 1
    return sum(1 for m in messages if m.get("role") == "assistant")


class Turn:
    """What the model answers once: its blocks and the usage it reports."""

    def __init__(self, *blocks: dict, input_tokens: int = 1_000, error: int | None = None
                 ) -> None:
        self.blocks = list(blocks)
        self.input_tokens = input_tokens
        self.error = error    # answer with this HTTP status and an API error instead


def plain(content) -> str:
    """All the text of a message's content (strings, text blocks, tool results)."""
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.append(plain(block.get("content")))
    return "\n".join(out)


def everything(request: dict) -> str:
    """Every word of a request the model reads: system prompt and messages."""
    system = request.get("system")
    parts = [plain(system) if not isinstance(system, str) else system]
    parts += [plain(m.get("content")) for m in request.get("messages") or []]
    return "\n".join(parts)


class ScriptedModel:
    def __init__(self) -> None:
        self.scripts: dict[str, list[Turn]] = {}
        self.seen: dict[str, list[dict]] = {}
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

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

    def answer(self, request: dict) -> tuple[list[dict], int, str]:
        """(blocks, input tokens, stop reason) for a request."""
        messages = request.get("messages") or []
        name, at = None, 0
        for i, message in enumerate(messages):
            found = TOKEN.findall(plain(message.get("content"))) \
                if message.get("role") == "user" else []
            if found:
                name, at = found[-1], i
        if not request.get("tools") or name is None:
            return [text("ok")], 100, "end_turn"
        with self.lock:
            self.seen.setdefault(name, []).append(request)
            turns = self.scripts.get(name, [])
        step = _step(messages[at:])
        if step >= len(turns):
            return [text("done")], 1_000, "end_turn"
        turn = turns[step]
        if turn.error:
            return [], turn.error, "error"
        blocks = [dict(b, id=f"toolu_{step}_{i}_{uuid.uuid4().hex[:8]}")
                  if b["type"] == "tool_use" else b for i, b in enumerate(turn.blocks)]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return blocks, turn.input_tokens, stop

    def _handler(self):
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:   # quiet
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": self.path}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    request = json.loads(raw or b"{}")
                except ValueError:
                    request = {}
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    if "count_tokens" in self.path:
                        self._json(200, {"input_tokens": 1_000})
                    else:
                        self._json(404, {"type": "error", "error": {
                            "type": "not_found_error", "message": self.path}})
                    return
                blocks, tokens, stop = model.answer(request)
                if stop == "error":    # `tokens` is the status: 400 is never retried
                    self._json(tokens, {"type": "error", "error": {
                        "type": "invalid_request_error", "message": "scripted failure"}})
                elif request.get("stream"):
                    self._stream(request, blocks, tokens, stop)
                else:
                    self._json(200, {"id": "msg_scripted", "type": "message",
                                     "role": "assistant", "model": request.get("model"),
                                     "content": blocks, "stop_reason": stop,
                                     "stop_sequence": None,
                                     "usage": {"input_tokens": tokens, "output_tokens": 10}})

            def _json(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, request: dict, blocks: list[dict], tokens: int,
                        stop: str) -> None:
                events = [("message_start", {"type": "message_start", "message": {
                    "id": "msg_scripted", "type": "message", "role": "assistant",
                    "model": request.get("model"), "content": [], "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "cache_read_input_tokens": tokens - 10,
                              "cache_creation_input_tokens": 0, "output_tokens": 1}}})]
                for i, block in enumerate(blocks):
                    if block["type"] == "text":
                        events += [
                            ("content_block_start", {"type": "content_block_start", "index": i,
                                                     "content_block": {"type": "text",
                                                                       "text": ""}}),
                            ("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "text_delta",
                                                               "text": block["text"]}})]
                    else:
                        events += [
                            ("content_block_start", {"type": "content_block_start", "index": i,
                                                     "content_block": {
                                                         "type": "tool_use", "id": block["id"],
                                                         "name": block["name"], "input": {}}}),
                            ("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "input_json_delta",
                                                               "partial_json": json.dumps(
                                                                   block["input"])}})]
                    events.append(("content_block_stop", {"type": "content_block_stop",
                                                          "index": i}))
                events += [("message_delta", {"type": "message_delta",
                                              "delta": {"stop_reason": stop,
                                                        "stop_sequence": None},
                                              "usage": {"output_tokens": 10}}),
                           ("message_stop", {"type": "message_stop"})]
                body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                               for name, data in events).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
