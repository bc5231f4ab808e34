"""Running the real Gemini CLI in a test: a home of the test's own (`HOME`, whose `.gemini/`
is the user's configuration) that selects the Gemini API key's sign-in, the model pointed at
a scripted Gemini API on 127.0.0.1 (scripted_gemini.py) by GOOGLE_GEMINI_BASE_URL, the project
trusted in `~/.gemini/trustedFolders.json`, and `gemini -p` run as a user runs it (stdin from
/dev/null).

Gemini CLI loads a project's `.gemini/settings.json` (its hooks, its MCP servers) only in a
trusted folder, and in a non-interactive run refuses an untrusted one outright. `--yolo`
approves every tool call (it holds only in a trusted folder). A named model (`-m`) keeps the
CLI from asking a classifier model which model to use first.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

MODEL = "gemini-2.5-flash"


def write_home(home: Path, **more) -> Path:
    """The user's `~/.gemini/settings.json`: sign in with GEMINI_API_KEY (`more`: other
    top-level settings)."""
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "settings.json"
    path.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                **more}))
    return path


def trust(home: Path, project: Path) -> None:
    """Trust the project's folder, as the interactive trust dialog records it."""
    path = home / ".gemini" / "trustedFolders.json"
    found = json.loads(path.read_text()) if path.is_file() else {}
    found[str(project)] = "TRUST_FOLDER"
    path.write_text(json.dumps(found, indent=2))


def environment(home: Path, base_url: str, env: dict | None = None) -> dict:
    """The test's environment with this home and the scripted model, and none of a
    surrounding Gemini session's marks (the suite may run inside one)."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("GEMINI_", "GOOGLE_")) and k != "CI"}
    full.update(HOME=str(home), GEMINI_API_KEY="scripted", GOOGLE_GEMINI_BASE_URL=base_url)
    full.update(env or {})
    return full


def run(gemini: str, home: Path, base_url: str, cwd: Path, prompt: str, *,
        args: tuple[str, ...] = (), env: dict | None = None, timeout: float = 120,
        check: bool = True) -> subprocess.CompletedProcess:
    """`gemini -p PROMPT --yolo -m MODEL` in `cwd`, stdin from /dev/null."""
    command = [gemini, "-p", prompt, "--yolo", "-m", MODEL, *args]
    with subprocess.Popen(command, cwd=cwd, env=environment(home, base_url, env), text=True,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise AssertionError(f"gemini did not end in {timeout}s: {err[-2000:]}") from None
    res = subprocess.CompletedProcess(command, proc.returncode, out, err)
    if check:
        assert res.returncode == 0, (out[-2000:], err[-2000:])
    return res
