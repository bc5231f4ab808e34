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
import uuid

import scripted_server
from scripted_server import ScriptedServer, steps


def text(words: str) -> dict:
    return {"type": "text", "text": words}


def tool(name: str, tool_input: dict) -> dict:
    return {"type": "tool_use", "name": name, "input": tool_input}


STEP = re.compile(r"toolu_(\d+)_")


def _step(messages: list[dict]) -> int:
    """How many turns of the script were answered: Claude Code merges consecutive assistant
    turns into one message, so the turn is read from the ids of the tool calls (which carry
    it), else counted from the assistant messages."""
    found = steps([str(b.get("id", "")) for m in messages if m.get("role") == "assistant"
                   and isinstance(m.get("content"), list)
                   for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"],
                  STEP)
    return found if found is not None else sum(1 for m in messages
                                               if m.get("role") == "assistant")


class Turn(scripted_server.Turn):
    """What the model answers once: its blocks and the usage it reports."""

    def __init__(self, *blocks: dict, input_tokens: int = 1_000, error: int | None = None
                 ) -> None:
        super().__init__(*blocks, tokens=input_tokens, error=error)


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


class Handler(scripted_server.Handler):
    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                        "message": self.path}})

    def do_POST(self) -> None:
        request = self.read_json()
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            if "count_tokens" in self.path:
                self.send_json(200, {"input_tokens": 1_000})
            else:
                self.send_json(404, {"type": "error", "error": {
                    "type": "not_found_error", "message": self.path}})
            return
        blocks, tokens, status = self.model.answer(request)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        if status != 200:    # 400 is never retried
            self.send_json(status, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "scripted failure"}})
        elif request.get("stream"):
            self.send_events(_events(request, blocks, tokens, stop))
        else:
            self.send_json(200, {"id": "msg_scripted", "type": "message",
                                 "role": "assistant", "model": request.get("model"),
                                 "content": blocks, "stop_reason": stop,
                                 "stop_sequence": None,
                                 "usage": {"input_tokens": tokens, "output_tokens": 10}})


def _events(request: dict, blocks: list[dict], tokens: int, stop: str) -> bytes:
    """The answer as the Messages API streams it."""
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
                                         "content_block": {"type": "text", "text": ""}}),
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
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events += [("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 10}}),
               ("message_stop", {"type": "message_stop"})]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                   for name, data in events).encode()


class ScriptedModel(ScriptedServer):
    Handler = Handler

    def items(self, request: dict) -> list[dict]:
        return request.get("messages") or []

    def user_text(self, item: dict) -> str:
        return plain(item.get("content")) if item.get("role") == "user" else ""

    def step(self, items: list[dict]) -> int:
        return _step(items)

    def text(self, words: str) -> dict:
        return text(words)

    def made(self, part: dict, step: int, n: int) -> dict:
        return dict(part, id=f"toolu_{step}_{n}_{uuid.uuid4().hex[:8]}") \
            if part["type"] == "tool_use" else part
