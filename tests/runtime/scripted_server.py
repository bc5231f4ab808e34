"""What the scripted models share (scripted_model.py for Claude Code, scripted_responses.py for
Codex CLI, scripted_gemini.py for Gemini CLI): an HTTP server on 127.0.0.1 in a thread of its
own, the scripts by name, every routed request kept, and how a request is routed and answered.

A conversation is routed to its script by the last token in its user text (`[script:NAME]`,
which the test puts in a prompt). A script is a list of turns; the turn answered is read from
the ids of the calls already made since that prompt (which carry the turn's number), else
counted from the model's messages, so a conversation replays the same way however often the
runtime asks. Past the last turn, and for requests without a token or without tools, the
model answers with plain text. Each API's module gives its wire: how a request's messages are
read (`items`, `user_text`, `step`), what a turn's parts become (`made`) and its `Handler`.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = re.compile(r"\[script:([A-Za-z0-9_./-]+)\]")


class Turn:
    """What the model answers once: its parts (or functions of the request that make one),
    the prompt tokens it reports, or an HTTP status to fail with (`error`)."""

    def __init__(self, *said, tokens: int = 1_000, error: int | None = None) -> None:
        self.said = list(said)
        self.tokens = tokens
        self.error = error    # answer with this HTTP status and an API error instead


def steps(ids: list[str], pattern: re.Pattern) -> int | None:
    """The turn after the newest one whose number the call ids carry; None: none does."""
    found = [int(m.group(1)) for i in ids for m in [pattern.match(i)] if m]
    return max(found) + 1 if found else None


class Handler(BaseHTTPRequestHandler):
    """A scripted model's requests; `model` is its server."""

    protocol_version = "HTTP/1.1"
    model: ScriptedServer

    def log_message(self, *args) -> None:   # quiet
        pass

    def read_json(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def other(self, method: str) -> None:
        """A request that is not a turn, kept."""
        with self.model.lock:
            self.model.other.append((method, self.path))

    def send_json(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, body: bytes, cache: bool = True) -> None:
        """Server-sent events (`cache`: with `Cache-Control: no-cache`)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if cache:
            self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ScriptedServer:
    """A scripted model's server; a subclass gives its API's wire."""

    PATH = ""          # after the host and port in `url`
    Handler = Handler

    def __init__(self) -> None:
        self.scripts: dict[str, list[Turn]] = {}
        self.seen: dict[str, list[dict]] = {}
        self.other: list[tuple[str, str]] = []    # requests that were not a routed turn
        self.lock = threading.Lock()
        handler = type("Handler", (self.Handler,), {"model": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.PATH}"

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
        """(what the model says, the tokens it reports, the HTTP status) for a request."""
        items = self.items(request)
        name, at = None, 0
        for n, item in enumerate(items):
            found = TOKEN.findall(self.user_text(item))
            if found:
                name, at = found[-1], n
        if name is None or not request.get("tools"):
            return [self.text("ok")], 100, 200
        with self.lock:
            self.seen.setdefault(name, []).append(request)
            turns = self.scripts.get(name, [])
        step = self.step(items[at:])
        if step >= len(turns):
            return [self.text("done")], 1_000, 200
        turn = turns[step]
        if turn.error:
            return [], 0, turn.error
        return [self.made(part(request) if callable(part) else part, step, n)
                for n, part in enumerate(turn.said)], turn.tokens, 200

    # a subclass's wire
    def items(self, request: dict) -> list[dict]:
        raise NotImplementedError

    def user_text(self, item: dict) -> str:
        """The text of a user's message (else nothing)."""
        raise NotImplementedError

    def step(self, items: list[dict]) -> int:
        raise NotImplementedError

    def text(self, words: str) -> dict:
        raise NotImplementedError

    def made(self, part: dict, step: int, n: int) -> dict:
        """The `n`th part of turn `step` as it is sent (a call given its id)."""
        return part
