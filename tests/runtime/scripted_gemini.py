"""A scripted model on 127.0.0.1 that speaks the Gemini API as Gemini CLI calls it
(`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, server-sent events of
`{"candidates": [{"content": {"role": "model", "parts": [...]}}], "usageMetadata": {...}}`),
so that the real `gemini` binary can be driven through a session whose every model turn a
test decides: the counterpart of scripted_model.py (Claude Code) and scripted_responses.py
(Codex CLI). `gemini` is pointed at it by GOOGLE_GEMINI_BASE_URL (and any GEMINI_API_KEY).

A request is `{"contents": [{"role": "user"|"model", "parts": [...]}], "systemInstruction",
"tools": [{"functionDeclarations": [...]}], ...}`; a part is `{"text"}`, the model's
`{"functionCall": {"name", "args", "id"}}` or the answer to one, `{"functionResponse": {"name",
"id", "response": {"output"|"error": ...}}}`.

A conversation is routed to its script by the last token in its user text (`[script:NAME]`,
which the test puts in the prompt). A script is a list of turns; the turn answered is read
from the ids of the calls already made since that prompt (which carry it), else counted from
the model's contents, so a conversation replays the same way however often `gemini` asks. A
turn is a list of parts: `text(...)`, `shell(cmd)` (Gemini CLI's shell tool,
`run_shell_command`), `call(name, args)`, or a function of the request that makes one of
these, with the prompt tokens the model reports. Past the last turn, and for requests without
a token or without tools (a check of who speaks next, a summary), the model answers with plain
text.

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
SHELL = "run_shell_command"    # Gemini CLI 0.61.0's shell tool: {"command": "...", ...}


def text(words: str) -> dict:
    return {"text": words}


def call(name: str, args: dict) -> dict:
    return {"functionCall": {"name": name, "args": args}}


def shell(command: str, **more) -> dict:
    """A call of Gemini CLI's shell tool."""
    return call(SHELL, {"command": command, **more})


class Turn:
    """What the model answers once: its parts and the prompt tokens it reports."""

    def __init__(self, *parts: dict, prompt_tokens: int = 1_000, error: int | None = None
                 ) -> None:
        self.parts = list(parts)
        self.prompt_tokens = prompt_tokens
        self.error = error    # answer with this HTTP status and an API error instead


def words(part: dict) -> str:
    """What the model reads of one part: its text, a call's response (its `output` or
    `error` text, else its JSON)."""
    if isinstance(part.get("text"), str):
        return part["text"]
    answer = part.get("functionResponse")
    if isinstance(answer, dict):
        got = answer.get("response")
        if isinstance(got, dict) and len(got) == 1 and isinstance(
                got.get("output", got.get("error")), str):
            return got.get("output", got.get("error"))
        return got if isinstance(got, str) else json.dumps(got)
    return ""


def everything(request: dict) -> str:
    """Every word of a request the model reads: the system instruction and the contents."""
    system = request.get("systemInstruction") or {}
    parts = [p for p in (system.get("parts") or []) if isinstance(p, dict)] \
        if isinstance(system, dict) else []
    for content in request.get("contents") or []:
        if isinstance(content, dict):
            parts += [p for p in content.get("parts") or [] if isinstance(p, dict)]
    return "\n".join(words(p) for p in parts)


def outputs(request: dict) -> dict[str, str]:
    """What each call the request answers gave back, by the call's name and order
    (`run_shell_command#0`, ...)."""
    found: dict[str, str] = {}
    for content in request.get("contents") or []:
        for part in content.get("parts") or [] if isinstance(content, dict) else []:
            answer = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(answer, dict):
                name = str(answer.get("name", "?"))
                at = sum(1 for key in found if key.startswith(f"{name}#"))
                found[f"{name}#{at}"] = words(part)
    return found


def _step(contents: list[dict]) -> int:
    calls = [p["functionCall"] for c in contents if c.get("role") == "model"
             for p in c.get("parts") or [] if isinstance(p, dict)
             and isinstance(p.get("functionCall"), dict)]
    steps = [int(found.group(1)) for f in calls
             for found in [STEP.match(str(f.get("id", "")))] if found]
    if steps:
        return max(steps) + 1
    return sum(1 for c in contents if c.get("role") == "model")


class ScriptedGemini:
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
        """GOOGLE_GEMINI_BASE_URL."""
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

    def answer(self, request: dict) -> tuple[list[dict], int, int]:
        """(parts, prompt tokens, HTTP status) for a request."""
        contents = [c for c in request.get("contents") or [] if isinstance(c, dict)]
        name, at = None, 0
        for n, content in enumerate(contents):
            if content.get("role") != "user":
                continue
            found = TOKEN.findall("\n".join(
                p["text"] for p in content.get("parts") or []
                if isinstance(p, dict) and isinstance(p.get("text"), str)))
            if found:
                name, at = found[-1], n
        if name is None or not request.get("tools"):
            return [text("ok")], 100, 200
        with self.lock:
            self.seen.setdefault(name, []).append(request)
            turns = self.scripts.get(name, [])
        step = _step(contents[at:])
        if step >= len(turns):
            return [text("done")], 1_000, 200
        turn = turns[step]
        if turn.error:
            return [], 0, turn.error
        out = []
        for n, part in enumerate(turn.parts):
            if callable(part):    # made from what the model has read so far
                part = part(request)
            if "functionCall" in part:
                part = {"functionCall": dict(part["functionCall"],
                                             id=f"call_{step}_{n}_{uuid.uuid4().hex[:8]}")}
            out.append(part)
        return out, turn.prompt_tokens, 200

    def _handler(self):
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:   # quiet
                pass

            def do_GET(self) -> None:   # e.g. a list of models: none
                with model.lock:
                    model.other.append(("GET", self.path))
                self._json(404, {"error": {"code": 404, "message": self.path,
                                           "status": "NOT_FOUND"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    request = json.loads(raw or b"{}")
                except ValueError:
                    request = {}
                path = self.path.split("?", 1)[0]
                method = path.rsplit(":", 1)[-1] if ":" in path else ""
                if method == "countTokens":
                    with model.lock:
                        model.other.append(("POST", self.path))
                    self._json(200, {"totalTokens": len(json.dumps(request)) // 4})
                    return
                if method not in ("streamGenerateContent", "generateContent"):
                    with model.lock:
                        model.other.append(("POST", self.path))
                    self._json(404, {"error": {"code": 404, "message": self.path,
                                               "status": "NOT_FOUND"}})
                    return
                parts, tokens, status = model.answer(request)
                if status != 200:
                    self._json(status, {"error": {"code": status, "message": "scripted failure",
                                                  "status": "INVALID_ARGUMENT"}})
                    return
                body = {"candidates": [{"content": {"role": "model", "parts": parts},
                                        "finishReason": "STOP", "index": 0}],
                        "usageMetadata": {"promptTokenCount": tokens,
                                          "candidatesTokenCount": 10,
                                          "totalTokenCount": tokens + 10},
                        "modelVersion": "scripted", "responseId": uuid.uuid4().hex[:16]}
                if method == "generateContent":
                    self._json(200, body)
                    return
                data = f"data: {json.dumps(body)}\r\n\r\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
