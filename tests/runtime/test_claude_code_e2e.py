"""The real Claude Code (npm @anthropic-ai/claude-code, pinned in .ci/npm/package.json) in a
repository set up by `gitstate init --runtime claude-code`, against a scripted model on
127.0.0.1 (tests/runtime/scripted_model.py): what gitstate's hooks say reaches the model's
requests, what the model's tool calls do lands in git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import from_template, git, gitstate, make_repo, walk
from npm_tools import claude
from scripted_model import ScriptedModel, Turn, everything, text, tool

pytestmark = pytest.mark.e2e

MODEL = "claude-sonnet-4-5"


@pytest.fixture(scope="session")
def model():
    """One scripted model server for the whole session (each test routes by its own token);
    without Claude Code installed, the tests skip before building anything."""
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


def run(repo: Path, model: ScriptedModel, prompt: str, session: str, *, resume: bool = False,
        tools: str = "Bash", env: dict | None = None, timeout: float = 120):
    """`claude -p PROMPT` as a user runs it against the scripted model."""
    binary = claude()
    # MCP_CONNECTION_NONBLOCKING=0: the model's first turn waits for the MCP servers to connect
    # (by default `claude -p` does not wait, and a slow start races the first tool call)
    full = dict(os.environ, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="anything",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", MCP_CONNECTION_NONBLOCKING="0",
                **(env or {}))
    full.pop("CLAUDECODE", None)
    args = [binary, "-p", prompt, "--model", MODEL, "--allowedTools", tools,
            "--resume" if resume else "--session-id", session]
    with subprocess.Popen(args, cwd=repo, env=full, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    res = subprocess.CompletedProcess(args, proc.returncode, out, err)
    assert res.returncode == 0, (res.stdout, res.stderr)
    res.pid = proc.pid   # type: ignore[attr-defined]   # the runtime's process
    return res


def bash(command: str) -> dict:
    return tool("Bash", {"command": command, "description": "run it"})


def test_the_briefing_reaches_the_model_at_startup_resume_and_compact(repo, model):
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "alice", "--role", "architect", "--session",
                    session).returncode == 0
    token = model.script("brief-start", Turn(text("hello")))
    run(repo, model, f"start {token}", session, env={"PATH": "/usr/bin:/bin"})  # no gitstate
    first = everything(model.requests("brief-start")[0])
    assert "gitstate briefing (started) alice: bootstrap" in first
    assert "Vacant roles" in first or "never been filled" in first

    token = model.script("brief-resume", Turn(text("back")))
    run(repo, model, f"again {token}", session, resume=True)
    assert "gitstate briefing (resumed) alice: bootstrap" in everything(
        model.requests("brief-resume")[-1])

    run(repo, model, "/compact", session, resume=True)
    token = model.script("brief-compact", Turn(text("where was I")))
    run(repo, model, f"go on {token}", session, resume=True)
    after = everything(model.requests("brief-compact")[-1])
    assert "gitstate briefing (after compaction) alice: bootstrap" in after
    assert "role: architect" in after


def test_a_bash_transition_lands_as_the_agent_the_session_exported(repo, model):
    """SessionStart exports GITSTATE_AGENT through $CLAUDE_ENV_FILE; the model's Bash call
    uses it to move, and the move is one commit judged by the hooks."""
    session = str(uuid.uuid4())
    gitstate(repo, "spawn", "alice", "--session", session)
    token = model.script("bash-move", Turn(bash('echo "I am $GITSTATE_AGENT"')),
                         Turn(bash('gitstate transition "$GITSTATE_AGENT" inbox '
                                   '-m "ready for work"')),
                         Turn(bash("gitstate transition alice deep_work")),
                         Turn(text("done")))
    run(repo, model, f"work {token}", session)
    said = [everything(r) for r in model.requests("bash-move")]
    assert "I am alice" in said[1]
    assert "alice: bootstrap -> inbox" in said[2]
    assert git(repo, "log", "-1", "--format=%an|%s").stdout.strip() == \
        "Test Person|@alice: [STATE:inbox] ready for work"
    # an illegal move reaches the model as the command's refusal, and commits nothing
    assert "[illegal-transition]" in said[3] and "not deep_work" in said[3]
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_measured_context_is_recorded_once_per_phase(repo, model):
    """The context hook reads the usage the model reported (in the session's transcript) after
    each tool call and commits once per mortality phase crossed, as gitstate."""
    session = str(uuid.uuid4())
    gitstate(repo, "spawn", "alice", "--session", session)
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("context", Turn(bash("true"), input_tokens=30_000),
                         Turn(bash("true"), input_tokens=110_000),
                         Turn(bash("true"), input_tokens=120_000),
                         Turn(bash("true"), input_tokens=160_000),
                         Turn(text("done"), input_tokens=161_000))
    res = run(repo, model, f"think {token}", session)
    log = git(repo, "log", "--format=%an|%s", f"{tip}..HEAD").stdout.splitlines()
    assert log[:2] == [
        "gitstate|@alice: [STATE:bootstrap] context 80% (160,000 of 200,000 tokens): legacy",
        "gitstate|@alice: [STATE:bootstrap] context 55% (110,000 of 200,000 tokens): midlife"]
    # and first, once, what the runtime knows: the claude process itself, above the shells
    assert len(log) == 3 and log[2].startswith(
        f"gitstate|@alice: [STATE:bootstrap] runtime: pid {res.pid}, host "), log
    assert f"worktree {repo}" in log[2]
    said = [everything(r) for r in model.requests("context")]
    assert "mortality phase midlife" in said[2] and "mortality phase midlife" not in said[1]
    assert "mortality phase legacy" in said[4] and "freeze-state" in said[4]


def test_sub_agents_are_judged_before_they_exist_and_told_their_parent(repo, model):
    session = str(uuid.uuid4())
    gitstate(repo, "spawn", "root", "--session", session)
    token = model.script(
        "spawn-ok",
        Turn(tool("Agent", {"description": "look around", "subagent_type": "general-purpose",
                            "prompt": "find the bug [script:spawn-ok-child]"})),
        Turn(text("done")))
    model.script("spawn-ok-child", Turn(text("found nothing")))
    run(repo, model, f"delegate {token}", session, tools="Bash,Agent")
    child = everything(model.requests("spawn-ok-child")[0])
    assert "gitstate: you are a sub-agent (general-purpose) of root, at depth 1" in child
    assert "found nothing" in everything(model.requests("spawn-ok")[-1])

    # c3 is at depth 3, the deepest haak allows: its sub-agent is refused before it exists
    for parent, kid in (("root", "c1"), ("c1", "c2"), ("c2", "c3")):
        assert gitstate(repo, "spawn", kid, "--parent", parent).returncode == 0
    deep = str(uuid.uuid4())
    gitstate(repo, "transition", "c3", "inbox", "--set", f"session={deep}")
    token = model.script(
        "spawn-deep",
        Turn(tool("Agent", {"description": "dig", "subagent_type": "general-purpose",
                            "prompt": "dig deeper [script:spawn-deep-child]"})),
        Turn(text("refused, fine")))
    model.script("spawn-deep-child", Turn(text("I should not exist")))
    run(repo, model, f"delegate {token}", deep, tools="Bash,Agent")
    assert model.requests("spawn-deep-child") == []
    refused = everything(model.requests("spawn-deep")[-1])
    assert "gitstate refuses this sub-agent" in refused and "[max-depth]" in refused


def test_an_unbound_session_binds_itself_as_its_briefing_says(repo, model):
    session = str(uuid.uuid4())
    token = model.script("unbound", Turn(bash(f"gitstate spawn newbie --session {session}")),
                         Turn(text("bound")))
    run(repo, model, f"who am I {token}", session)
    said = [everything(r) for r in model.requests("unbound")]
    assert f"`gitstate spawn <your-id> --session {session}`" in said[0]
    assert "gitstate briefing (started) newbie: bootstrap" in said[1]
    assert f"session: {session}" in git(repo, "show", "HEAD:agent/newbie/_state.md").stdout


def test_an_agents_bash_runs_the_briefings_commands_with_no_gitstate_on_path(repo, model):
    """Claude Code started with a PATH that has no gitstate (the README's venv, not
    activated): the briefing's own command binds the session, and the agent moves with
    `gitstate` in its Bash, which SessionStart gave it (one folder, first on PATH)."""
    session = str(uuid.uuid4())
    gitstate(repo, "spawn", "bob")
    token = model.script("bare-path", Turn(bash(f"gitstate spawn newbie --session {session}")),
                         Turn(bash('gitstate transition newbie inbox -m "ready" && '
                                   'echo "PATH=$PATH" && command -v python3')),
                         Turn(bash('echo "PATH=$PATH"')),
                         Turn(text("done")))
    run(repo, model, f"who am I {token}", session, env={"PATH": "/usr/bin:/bin"})
    said = [everything(r) for r in model.requests("bare-path")]
    assert f"`gitstate spawn <your-id> --session {session}`" in said[0]
    assert "gitstate briefing (started) newbie: bootstrap" in said[1]   # bound by its command
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@newbie: [STATE:inbox] ready"
    folder = repo / ".git" / "gitstate" / "bin"
    assert f"PATH={folder}:/usr/bin:/bin\n/usr/bin/python3" in said[2]    # python unchanged
    again = said[3][said[3].rfind("PATH="):]            # the next call: the folder once
    assert again.startswith(f"PATH={folder}:/usr/bin:/bin\n"), again
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def approve_as_a_user(repo: Path, model: ScriptedModel, server: str = "gitstate",
                      wait: float = 90) -> None:
    """What a user does: start `claude` in the project, trust the folder, and choose "Use this
    MCP server" in the dialog Claude Code shows for a new .mcp.json server; then leave."""
    import pty
    import re
    import select
    import signal
    import time
    binary = claude()
    home = Path(os.environ["HOME"])
    config = home / ".claude.json"          # a user who has run claude before
    known = json.loads(config.read_text()) if config.is_file() else {}
    config.write_text(json.dumps({**known, "hasCompletedOnboarding": True}))
    env = dict(os.environ, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="anything",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", PATH="/usr/bin:/bin",
               TERM="xterm-256color")
    env.pop("CLAUDECODE", None)
    env.pop("CI", None)     # a person at a terminal: under CI=true Claude Code offers no MCP dialog
    local = repo / ".claude" / "settings.local.json"
    pid, fd = pty.fork()
    if pid == 0:                                   # the child: claude on a terminal
        os.chdir(repo)
        os.execve(binary, [binary, "--model", MODEL], env)
    screen = b""
    ansi = re.compile(rb"\x1b\[[0-9;?<>=]*[a-zA-Z~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|"
                      rb"\x1b[=>]|\s")

    def read(done, seconds: float) -> bool:
        """Read what claude draws until `done()`, for at most `seconds`."""
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
                except OSError:     # the terminal closed: claude ended
                    raise AssertionError("claude ended: "
                                         f"{ansi.sub(b'', screen)[-1500:]!r}") from None
        return True

    def shows(words: str):
        return lambda: words.replace(" ", "").encode() in ansi.sub(b"", screen)

    def answer(option: str, key: bytes, then) -> None:
        """Move the dialog's pointer to `option` with `key`, and enter, until `then()` (the
        dialog may be drawn anew, its pointer back on its default, while it settles)."""
        pointed = ("\u276f" + option.replace(" ", "")).encode()
        deadline = time.monotonic() + wait
        while not then():
            if time.monotonic() > deadline:
                raise AssertionError(f"claude never took {option!r}: "
                                     f"{ansi.sub(b'', screen)[-1500:]!r}")
            visible = ansi.sub(b"", screen)
            on_it = visible[visible.rfind("\u276f".encode()):].startswith(pointed)
            os.write(fd, b"\r" if on_it else key)
            seen = len(screen)
            read(lambda at=seen: then() or "\u276f".encode() in screen[at:], 5)  # drawn again

    try:
        if not read(shows("Yes, I trust this folder"), wait):
            raise AssertionError(f"no trust dialog: {ansi.sub(b'', screen)[-1500:]!r}")
        answer("Yes, I trust this folder", b"\x1b[B",
               shows(f"New MCP server found in this project: {server}"))
        answer("Use this MCP server", b"\x1b[A", lambda: local.is_file() and server in json.loads(
            local.read_text() or "{}").get("enabledMcpjsonServers", []))
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)


def warm(repo: Path) -> None:
    """Compile the MCP server's modules into the test session's bytecode cache (each worker
    starts with an empty one) before Claude Code starts the server: compiling the SDK on a
    loaded machine can outlast the budget Claude Code gives a server to answer its probe."""
    res = subprocess.run([sys.executable, "-c", "import gitstate.mcp.server"], cwd=repo,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr


def approve_in_user_settings(server: str = "gitstate") -> None:
    """The other way a user approves a project's server: `enabledMcpjsonServers` in
    ~/.claude/settings.json (for every folder)."""
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledMcpjsonServers": [server]}))


def claude_mcp(repo: Path, *args: str) -> str:
    res = subprocess.run([claude(), "mcp", *args], cwd=repo, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL,
                         env=dict(os.environ, PATH="/usr/bin:/bin",
                                  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"))
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_the_mcp_server_init_registers_is_approved_as_a_user_does_and_serves_the_model(
        repo, model):
    """`init --runtime claude-code` put gitstate's server in .mcp.json. Claude Code holds it
    until the user approves it, and doctor says so and how; the user approves it in Claude
    Code's own dialog; then Claude Code connects to it with no gitstate on PATH, and the
    model's call lands as a commit."""
    def doctor_says() -> dict:
        found = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
        return next(f for f in found if f["check"] == "mcp")

    warm(repo)
    assert "Pending approval" in claude_mcp(repo, "get", "gitstate")
    pending = doctor_says()
    assert pending["status"] == "warn" and "waits for your approval" in pending["detail"]
    approve_as_a_user(repo, model)
    assert doctor_says()["detail"].endswith("approved in .claude/settings.local.json")
    got = claude_mcp(repo, "get", "gitstate")
    assert "Connected" in got and "Scope: Project config" in got, got

    session = str(uuid.uuid4())
    gitstate(repo, "spawn", "alice", "--session", session)
    token = model.script(
        "mcp-json", Turn(tool("mcp__gitstate__transition", {"agent": "alice", "state": "inbox",
                                                             "message": "over .mcp.json"})),
        Turn(text("done")))
    run(repo, model, f"move {token}", session, tools="mcp__gitstate",
        env={"PATH": "/usr/bin:/bin"})
    said = [everything(r) for r in model.requests("mcp-json")]
    assert "@alice: [STATE:inbox] over .mcp.json" in said[1]
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@alice: [STATE:inbox] over .mcp.json"


def test_the_model_calls_gitstates_mcp_server_through_claude_code(repo, model):
    """The server `init --runtime claude-code` registered in .mcp.json, approved for every
    folder in the user's settings, then the model's tool call reaches the server and commits
    the move."""
    approve_in_user_settings()
    warm(repo)
    assert "Connected" in claude_mcp(repo, "get", "gitstate")
    session = str(uuid.uuid4())
    gitstate(repo, "spawn", "alice", "--session", session)
    gitstate(repo, "spawn", "bob")
    token = model.script(
        "mcp", Turn(tool("mcp__gitstate__transition", {"agent": "alice", "state": "inbox",
                                                        "message": "moved over MCP"})),
        Turn(tool("mcp__gitstate__transition", {"agent": "alice", "state": "distill",
                                                 "text": "the CLI says -m"})),
        Turn(tool("mcp__gitstate__transition", {"agent": "bob", "state": "inbox"})),
        Turn(text("done")))
    run(repo, model, f"move {token}", session, tools="mcp__gitstate")
    said = [everything(r) for r in model.requests("mcp")]
    tools = [t["name"] for t in model.requests("mcp")[0]["tools"]]
    assert "ToolSearch" in tools or "mcp__gitstate__transition" in tools   # maybe deferred
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@alice: [STATE:inbox] moved over MCP"
    # the server was bound by the session Claude Code handed it (CLAUDE_CODE_SESSION_ID):
    # alice's moves land, bob's are not hers to make
    assert "@alice: [STATE:inbox] moved over MCP" in said[1]     # the Move record
    assert "unknown argument 'text' (did you mean 'message'?)" in said[2]
    assert "[not-yours]" in said[3] and "alice may not move bob" in said[3]
    assert "state: bootstrap" in git(repo, "show", "HEAD:agent/bob/_state.md").stdout


def test_an_mcp_server_of_a_session_no_agent_records_moves_nothing(repo, model):
    """The attack it closes: a server that is nobody's moved bob for whoever asked. (Not
    approved: `claude -p` starts a project's server without asking.)"""
    warm(repo)
    gitstate(repo, "spawn", "bob")
    tip = git(repo, "rev-parse", "HEAD").stdout
    session = str(uuid.uuid4())
    token = model.script(
        "mcp-unbound", Turn(tool("mcp__gitstate__transition", {"agent": "bob",
                                                                "state": "inbox"})),
        Turn(text("done")))
    run(repo, model, f"move {token}", session, tools="mcp__gitstate")
    said = [everything(r) for r in model.requests("mcp-unbound")]
    assert "[unbound-mover]" in said[1], said[1][-1500:]
    assert f"gitstate spawn <your-id> --session {session}" in said[1]   # its own session
    assert git(repo, "rev-parse", "HEAD").stdout == tip


def test_the_status_line_records_the_context_claude_code_reports(repo, model):
    """Claude Code runs the status line in an interactive session only: `claude` on a
    pseudo-terminal (the folder trusted before), one prompt typed; the model's answer fills
    55 % of the window, and the status line `init --runtime claude-code` wrote into
    .claude/settings.local.json shows it and records the crossing into midlife once (no tool
    call: the context hook does not run)."""
    import pty
    import re
    import select
    import signal
    import time
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "sal", "--session", session).returncode == 0
    assert "statusLine" in json.loads((repo / ".claude" / "settings.local.json").read_text())
    home = Path(os.environ["HOME"])
    config = home / ".claude.json"            # a user who has run claude and approved the key
    config.write_text(json.dumps({"hasCompletedOnboarding": True,   # and trusted the folder
                                  "customApiKeyResponses": {"approved": ["anything"],
                                                            "rejected": []},
                                  "projects": {str(repo): {"hasTrustDialogAccepted": True}}}))
    settings = home / ".claude" / "settings.json"   # no MCP server dialog: not this test's
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"disabledMcpjsonServers": ["gitstate"]}))
    token = model.script("statusline", Turn(text("noted"), input_tokens=110_000))
    binary = claude()
    env = dict(os.environ, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="anything",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", TERM="xterm-256color")
    env.pop("CLAUDECODE", None)
    env.pop("CLAUDE_PROJECT_DIR", None)
    env.pop("CI", None)     # a person at a terminal, as in approve_as_a_user
    pid, fd = pty.fork()
    if pid == 0:                                   # the child: claude on a terminal
        os.chdir(repo)
        os.execve(binary, [binary, "--model", MODEL, "--session-id", session], env)
    screen = b""
    ansi = re.compile(rb"\x1b\[[0-9;?<>=]*[a-zA-Z~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|"
                      rb"\x1b[=>]|\s")

    def visible() -> bytes:
        return ansi.sub(b"", screen)

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

    def recorded() -> list[str]:
        return [s for s in git(repo, "log", "--format=%an|%s").stdout.splitlines()
                if "context" in s and "midlife" in s]

    try:
        # The first line may be drawn before SessionStart has bound the session ("gitstate:
        # no agent bound ..."); Claude Code then redraws only the cells that change, so the
        # bound line reaches the terminal as "sal: ..." after the "gitstate" already shown.
        assert until(lambda: b"sal:" in visible()), visible()[-1500:]
        os.write(fd, f"remember this [script:{token}]".encode())
        os.write(fd, b"\r")
        assert until(lambda: bool(recorded()), 120), visible()[-2000:]
        assert until(lambda: b"midlife\xc2\xb7context55%" in visible(), 30), visible()[-1500:]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    assert recorded() == ["gitstate|@sal: [STATE:bootstrap] context 55% (110,000 of 200,000 "
                          "tokens): midlife"]


def test_an_agent_made_by_worktree_add_works_in_its_worktree_and_moves_the_team_line(
        repo, model, tmp_path):
    """The lead's one step: `gitstate worktree add` (the Claude Code settings committed), then
    the printed command, run as printed: the session is bound to the agent, its Bash runs
    gitstate without it on PATH, and its move lands on the lead's team line."""
    git(repo, "add", ".claude", ".mcp.json")
    git(repo, "commit", "-q", "-m", "Claude Code runs gitstate's hooks")
    made = json.loads(gitstate(repo, "worktree", "add", "ana", "--runtime", "claude-code",
                               "--path", str(tmp_path / "ana"), "--json").stdout)
    where, session = Path(made["path"]), made["session"]
    assert made["start"] == f"cd {where} && claude --session-id {session}"
    token = model.script("worktree-agent",
                         Turn(bash('gitstate transition "$GITSTATE_AGENT" inbox -m "on it"')),
                         Turn(text("done")))
    run(where, model, f"work {token}", session, env={"PATH": "/usr/bin:/bin"})
    first = everything(model.requests("worktree-agent")[0])
    assert "gitstate briefing (started) ana: bootstrap" in first
    said = everything(model.requests("worktree-agent")[1])
    assert "ana: bootstrap -> inbox" in said and "on main" in said
    assert git(repo, "log", "-1", "--format=%s", "main").stdout.strip() == \
        "@ana: [STATE:inbox] on it"
    assert git(repo, "status", "--porcelain").stdout == ""      # the lead's worktree followed
    assert git(where, "log", "-1", "--format=%s").stdout.startswith("@ana: [STATE:bootstrap]")
