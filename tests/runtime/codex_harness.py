"""Running the real Codex CLI in a test: a Codex home of the test's own whose configuration
points the model at a scripted Responses server on 127.0.0.1 (scripted_responses.py), the
trust of a project and its hooks granted through Codex's own `app-server`, and `codex exec`
run as a user runs it (stdin from /dev/null).

Codex runs a hook only when its entry is trusted (`[hooks.state."<key>"] trusted_hash` in the
user's config.toml), and loads a project's `.codex/` only in a trusted project (`[projects.
"<path>"] trust_level = "trusted"`): an untrusted hook is skipped without a word, so `trust`
returns what `hooks/list` says after the writes, for the test to check.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

MODEL = "scripted-model"     # a name Codex has no metadata for: it warns, and carries on
PROVIDER = "scripted"
KEY_ENV = "SCRIPTED_API_KEY"

CONFIG = """\
{top}model = "{model}"
model_provider = "{provider}"

[model_providers.{provider}]
name = "{provider}"
base_url = "{base_url}"
wire_api = "responses"
env_key = "{key_env}"

# no plugin repository: the tests stay on loopback
[features]
plugins = false
remote_plugin = false
"""

SESSION = re.compile(r"^session id: (\S+)$", re.M)


def write_config(home: Path, base_url: str, top: str = "", extra: str = "") -> Path:
    """A Codex home (`CODEX_HOME`) whose model is the scripted server at `base_url`; `top`
    holds more top-level keys, `extra` more tables."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(CONFIG.format(top=top, model=MODEL, provider=PROVIDER, base_url=base_url,
                                  key_env=KEY_ENV) + extra)
    return path


def environment(home: Path, env: dict | None = None) -> dict:
    """The test's environment, with this Codex home and none of a surrounding Codex session's
    marks (the suite may run inside one)."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith("CODEX_") and k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    full.update(CODEX_HOME=str(home), **{KEY_ENV: "scripted"})
    full.update(env or {})
    return full


class AppServer:
    """`codex app-server` on stdio: JSON-RPC 2.0, one JSON object a line."""

    def __init__(self, codex: str, home: Path, cwd: Path, timeout: float = 60) -> None:
        self.timeout = timeout
        self.proc = subprocess.Popen([codex, "app-server"], cwd=cwd, env=environment(home),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True,
                                     start_new_session=True)
        self.next_id = 0
        self.notifications: list[dict] = []
        self.request("initialize", {"clientInfo": {"name": "gitstate-tests", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "initialized"})

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        """The result of one request; an error answer fails the test."""
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()   # the app-server answers or exits
            assert line, f"codex app-server exited before answering {method}"
            message = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, (method, message["error"])
                return message["result"]
            self.notifications.append(message)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> AppServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def hooks(server: AppServer, project: Path) -> list[dict]:
    """What `hooks/list` finds for a project: each hook's key, event, source, hash, trust."""
    found = server.request("hooks/list", {"cwds": [str(project)]})["data"]
    assert all(not entry["errors"] for entry in found), found
    return [hook for entry in found for hook in entry["hooks"]]


def trust(codex: str, home: Path, project: Path) -> list[dict]:
    """Trust the project, then every hook it and the user declare that is not trusted yet
    (new, or changed since), as Codex's own clients do: through its app-server, which writes
    the user's config.toml. Returns the hooks as `hooks/list` lists them afterwards."""
    with AppServer(codex, home, project) as server:
        server.request("config/batchWrite", {"edits": [{
            "keyPath": "projects", "mergeStrategy": "upsert",
            "value": {str(project): {"trust_level": "trusted"}}}], "reloadUserConfig": True})
        pending = {hook["key"]: {"trusted_hash": hook["currentHash"]}
                   for hook in hooks(server, project)
                   if hook["trustStatus"] in ("untrusted", "modified")}
        if pending:   # the keys hold dots: they go in the value, not in the dotted keyPath
            server.request("config/batchWrite", {"edits": [{
                "keyPath": "hooks.state", "mergeStrategy": "upsert", "value": pending}],
                "reloadUserConfig": True})
        return hooks(server, project)


def run(codex: str, home: Path, cwd: Path, prompt: str, *, resume: str | None = None,
        args: tuple[str, ...] = (), env: dict | None = None, timeout: float = 120,
        check: bool = True) -> subprocess.CompletedProcess:
    """`codex exec PROMPT` (or `codex exec resume SESSION PROMPT`) as a user runs it, with a
    sandbox that lets the model's commands write `.git` (workspace-write keeps it read-only).
    The answer carries the session's id (`.session`), read from the plain-text header."""
    command = [codex, "exec", "-s", "danger-full-access", *args]
    command += ["resume", resume, prompt] if resume else [prompt]
    with subprocess.Popen(command, cwd=cwd, env=environment(home, env), text=True,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise AssertionError(f"codex exec did not end in {timeout}s: {err[-2000:]}")
    res = subprocess.CompletedProcess(command, proc.returncode, out, err)
    if check:
        assert res.returncode == 0, (out[-2000:], err[-2000:])
    found = SESSION.search(err)
    res.session = found.group(1) if found else None   # type: ignore[attr-defined]
    return res


def hook_lines(res: subprocess.CompletedProcess) -> list[str]:
    """What Codex said of its hooks (`hook: <Event>`, `hook: <Event> Completed`, ...): only
    the plain-text output says it."""
    return [line for line in res.stderr.splitlines() if line.startswith("hook: ")]
