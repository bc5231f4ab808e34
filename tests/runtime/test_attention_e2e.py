"""The real Claude Code (pinned in .ci/npm/package.json) fires `Notification` in an interactive
session: `claude` on a pseudo-terminal, against the scripted model, asks the person's
permission for a Bash call; its `permission_prompt` notice is recorded by the hook `init
--runtime claude-code` installed, and the agent's move that the allowed call makes clears it."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import time
import uuid
from pathlib import Path

import pytest

from conftest import from_template, git, gitstate, make_repo
from npm_tools import claude
from scripted_model import ScriptedModel, Turn, text, tool

pytestmark = pytest.mark.e2e

MODEL = "claude-sonnet-4-5"
ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[a-zA-Z~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]|\s")


@pytest.fixture(scope="module")
def model():
    claude()
    server = ScriptedModel()
    yield server
    server.close()


def _claude_repo(root: Path) -> None:
    repo = make_repo(root / "repo")
    (repo / "README").write_text("hi\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    res = gitstate(repo, "init", "--runtime", "claude-code")
    assert res.returncode == 0, res.stderr


@pytest.fixture
def repo(tmp_path) -> Path:
    return from_template(tmp_path, "claude-repo", _claude_repo) / "repo"


def waiting(repo: Path) -> list[dict]:
    res = gitstate(repo, "attention", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["waiting"]


def test_a_permission_prompt_of_the_real_binary_waits_until_the_agent_moves(repo, model):
    import pty
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "alice", "--session", session).returncode == 0
    spawned = git(repo, "rev-parse", "HEAD").stdout.strip()
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text(json.dumps({   # a user who has run claude before,
        "hasCompletedOnboarding": True,                # approved the key, trusted the folder
        "customApiKeyResponses": {"approved": ["anything"], "rejected": []},
        "projects": {str(repo): {"hasTrustDialogAccepted": True}}}))
    settings = home / ".claude" / "settings.json"      # no MCP server dialog: not this test's
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"disabledMcpjsonServers": ["gitstate"]}))
    token = model.script("attention", Turn(tool("Bash", {
        "command": 'gitstate transition alice inbox -m "allowed"', "description": "move"})),
        Turn(text("moved")))
    binary = claude()
    env = dict(os.environ, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="anything",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", TERM="xterm-256color")
    for key in ("CLAUDECODE", "CLAUDE_PROJECT_DIR", "CI"):   # a person at a terminal
        env.pop(key, None)
    pid, fd = pty.fork()
    if pid == 0:              # the child: claude on a terminal, asking before each Bash call
        os.chdir(repo)
        os.execve(binary, [binary, "--model", MODEL, "--session-id", session], env)
    screen = b""

    def visible() -> bytes:
        return ANSI.sub(b"", screen)

    def until(done, seconds: float = 90) -> bool:
        nonlocal screen
        deadline = time.monotonic() + seconds
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                try:
                    screen += os.read(fd, 65536)
                except OSError:
                    raise AssertionError(f"claude ended: {visible()[-1500:]!r}") from None
        return True

    notices = repo / ".git" / "gitstate" / "runtime" / "attention"
    bound = repo / ".git" / "gitstate" / "runtime" / "sessions" / f"{session}.json"
    try:
        # the prompt is drawn, and SessionStart has bound the session to alice
        assert until(lambda: "\u276f".encode() in visible() and bound.is_file()), \
            visible()[-1500:]
        os.write(fd, f"move [script:{token}]".encode())
        os.write(fd, b"\r")
        assert until(lambda: b"Doyouwanttoproceed?" in visible()), visible()[-1500:]
        # Claude Code notifies a few seconds after it starts to wait
        assert until(lambda: notices.is_dir() and any(notices.iterdir()), 60), \
            visible()[-1500:]
        [waits] = waiting(repo)
        assert (waits["agent"], waits["state"], waits["session"], waits["kind"]) == (
            "alice", "bootstrap", session, "permission_prompt")
        assert waits["message"] and "permission" in waits["message"]
        # no commit for it: since the spawn, only what SessionStart recorded of the runtime
        log = git(repo, "log", "--format=%s", f"{spawned}..HEAD").stdout.splitlines()
        assert len(log) <= 1 and all(" runtime: pid " in s for s in log), log
        os.write(fd, b"\r")                          # "1. Yes"
        assert until(lambda: "@alice: [STATE:inbox] allowed" in git(
            repo, "log", "-1", "--format=%s").stdout, 60), visible()[-1500:]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    assert waiting(repo) == []                      # alice moved on
