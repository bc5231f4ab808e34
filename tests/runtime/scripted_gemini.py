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
import uuid

import scripted_server
from scripted_server import ScriptedServer, steps

STEP = re.compile(r"call_(\d+)_")
SHELL = "run_shell_command"    # Gemini CLI 0.61.0's shell tool: {"command": "...", ...}


def text(words: str) -> dict:
    return {"text": words}


def call(name: str, args: dict) -> dict:
    return {"functionCall": {"name": name, "args": args}}


def shell(command: str, **more) -> dict:
    """A call of Gemini CLI's shell tool."""
    return call(SHELL, {"command": command, **more})


class Turn(scripted_server.Turn):
    """What the model answers once: its parts and the prompt tokens it reports."""

    def __init__(self, *parts: dict, prompt_tokens: int = 1_000, error: int | None = None
                 ) -> None:
        super().__init__(*parts, tokens=prompt_tokens, error=error)


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
    found = steps([str(f.get("id", "")) for f in calls], STEP)
    return found if found is not None else sum(1 for c in contents if c.get("role") == "model")


NOT_FOUND = "NOT_FOUND"


class Handler(scripted_server.Handler):
    def do_GET(self) -> None:   # e.g. a list of models: none
        self.other("GET")
        self.send_json(404, {"error": {"code": 404, "message": self.path, "status": NOT_FOUND}})

    def do_POST(self) -> None:
        request = self.read_json()
        path = self.path.split("?", 1)[0]
        method = path.rsplit(":", 1)[-1] if ":" in path else ""
        if method == "countTokens":
            self.other("POST")
            self.send_json(200, {"totalTokens": len(json.dumps(request)) // 4})
            return
        if method not in ("streamGenerateContent", "generateContent"):
            self.other("POST")
            self.send_json(404, {"error": {"code": 404, "message": self.path,
                                           "status": NOT_FOUND}})
            return
        parts, tokens, status = self.model.answer(request)
        if status != 200:
            self.send_json(status, {"error": {"code": status, "message": "scripted failure",
                                              "status": "INVALID_ARGUMENT"}})
            return
        body = {"candidates": [{"content": {"role": "model", "parts": parts},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 10,
                                  "totalTokenCount": tokens + 10},
                "modelVersion": "scripted", "responseId": uuid.uuid4().hex[:16]}
        if method == "generateContent":
            self.send_json(200, body)
        else:
            self.send_events(f"data: {json.dumps(body)}\r\n\r\n".encode(), cache=False)


class ScriptedGemini(ScriptedServer):
    Handler = Handler    # its `url` is GOOGLE_GEMINI_BASE_URL

    def items(self, request: dict) -> list[dict]:
        return [c for c in request.get("contents") or [] if isinstance(c, dict)]

    def user_text(self, content: dict) -> str:
        if content.get("role") != "user":
            return ""
        return "\n".join(p["text"] for p in content.get("parts") or []
                         if isinstance(p, dict) and isinstance(p.get("text"), str))

    def step(self, items: list[dict]) -> int:
        return _step(items)

    def text(self, words: str) -> dict:
        return text(words)

    def made(self, part: dict, step: int, n: int) -> dict:
        if "functionCall" in part:
            return {"functionCall": dict(part["functionCall"],
                                         id=f"call_{step}_{n}_{uuid.uuid4().hex[:8]}")}
        return part
