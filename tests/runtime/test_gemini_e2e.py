"""The real Gemini CLI (npm @google/gemini-cli, pinned in .ci/npm/package.json) in a git
repository, against a scripted Gemini API on 127.0.0.1 (tests/runtime/scripted_gemini.py),
run by tests/runtime/gemini_harness.py: a shell call's output reaches the model's next
request; in a project set up by `gitstate init --runtime gemini`, the briefing reaches the
model, a shell move lands (an illegal one is refused), the squad's runtime events move the
agent, and the spawn guard refuses a sub-agent too deep."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from conftest import git, gitstate, make_repo
from gemini_harness import MODEL, run, trust, write_home
from npm_tools import gemini
from scripted_gemini import ScriptedGemini, Turn, call, everything, outputs, shell, text
from test_runtime_events_e2e import settled

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def model():
    """One scripted model for the module (each test routes by its own token); without Gemini
    CLI installed, the tests skip before starting anything."""
    gemini()
    server = ScriptedGemini()
    yield server
    server.close()


@pytest.fixture
def home(tmp_path) -> Path:
    path = tmp_path.resolve() / "home"
    write_home(path)
    return path


@pytest.fixture
def repo(tmp_path, home) -> Path:
    path = make_repo(tmp_path.resolve() / "repo")
    (path / "README").write_text("hi\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    trust(home, path)
    return path


def test_a_shell_call_runs_and_its_output_reaches_the_next_request(repo, home, model):
    """The harness itself: the model's call of Gemini CLI's shell tool runs in the repository,
    and what it printed comes back. A command substitution (`$(...)`, even `$((...))`) is
    refused by the tool before it runs: the model reads why."""
    token = model.script("gemini-echo", Turn(shell("echo hi; expr 6 '*' 7 > sum.txt")),
                         Turn(text("saw it")))
    before = list(model.other)
    res = run(gemini(), home, model.url, repo, f"say hi {token}")
    said = model.requests("gemini-echo")
    assert len(said) == 2
    assert not outputs(said[0])
    output = outputs(said[1])["run_shell_command#0"]
    assert "Output: hi\n" in output
    # the product went to the file, not to the output (whose process group id may hold "42")
    assert not {"42", "Output: 42"} & set(output.splitlines())
    assert (repo / "sum.txt").read_text() == "42\n"
    assert "saw it" in res.stdout
    assert model.other == before      # nothing but the model's own calls reached the server

    token = model.script("gemini-substitution", Turn(shell("echo $((6*7)) > sub.txt")),
                         Turn(text("refused")))
    run(gemini(), home, model.url, repo, f"compute {token}")
    refused = outputs(model.requests("gemini-substitution")[1])["run_shell_command#0"]
    assert "Command injection detected: command substitution" in refused
    assert not (repo / "sub.txt").exists()


def test_an_untrusted_folder_is_refused_in_a_non_interactive_run(tmp_path, home, model):
    path = make_repo(tmp_path.resolve() / "untrusted")
    token = model.script("gemini-untrusted", Turn(text("hello")))
    res = run(gemini(), home, model.url, path, f"hi {token}", check=False)
    assert res.returncode != 0
    assert "not running in a trusted directory" in res.stderr
    assert model.requests("gemini-untrusted") == []


# -- a project set up by `gitstate init --runtime gemini` --------------------------------------


def initialized(tmp_path: Path, home: Path, preset: str = "haak") -> Path:
    """A repository set up as a user sets it up: `gitstate init --runtime gemini`, then the
    folder trusted (as Gemini CLI's trust dialog records it; nothing else hand-written)."""
    path = make_repo(tmp_path.resolve() / "project")
    (path / "README").write_text("hi\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    res = gitstate(path, "init", "--lifecycle", preset, "--runtime", "gemini")
    assert res.returncode == 0, res.stderr
    assert "trusted folder" in res.stdout       # init says how to trust, and asks nothing
    trust(home, path)
    return path


def authored(repo: Path, since: str) -> list[str]:
    return git(repo, "log", "--reverse", "--format=%an|%s", f"{since}..HEAD").stdout.splitlines()


def first_prompt(request: dict) -> str:
    """The user's words of a request's first content: the prompt, after the session context
    and a SessionStart hook's `<hook_context>`."""
    return "\n".join(p.get("text", "") for p in request["contents"][0]["parts"])


def test_init_gives_a_gemini_agent_its_briefing_and_its_shell_moves(tmp_path, home, model):
    """The briefing reaches the model (before the prompt, its `<` and `>` escaped by Gemini
    CLI); a move in the shell lands as one commit, an illegal one is refused in the call's
    output (a variable in the command is not a substitution, which the shell tool refuses)."""
    repo = initialized(tmp_path, home)
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "alice", "--session", session).returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-move",
                         Turn(shell('gitstate transition "$GITSTATE_AGENT" inbox '
                                    '-m "ready for work"')),
                         Turn(shell("gitstate transition alice deep_work")),
                         Turn(text("done")))
    res = run(gemini(), home, model.url, repo, f"work {token}",
              args=("--session-id", session), env={"GITSTATE_AGENT": "alice"})
    said = model.requests("init-move")
    prompt = first_prompt(said[0])
    assert "<hook_context>gitstate briefing (started) alice: bootstrap" in prompt
    assert prompt.index("<hook_context>") < prompt.index(token)
    moved = outputs(said[1])["run_shell_command#0"]
    assert "alice: bootstrap -> inbox" in moved and "Exit Code" not in moved
    refused = outputs(said[2])["run_shell_command#1"]
    assert "[illegal-transition]" in refused and "not deep_work" in refused
    assert "Exit Code: " in refused
    log = authored(repo, tip)
    assert [line for line in log if not line.startswith("gitstate|")] == [
        "Test Person|@alice: [STATE:inbox] ready for work"]
    assert all("runtime: " in line for line in log if line.startswith("gitstate|")), log
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    assert "done" in res.stdout
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_squad_a_prompt_makes_the_gemini_agent_active_and_its_turn_ends_idle(
        tmp_path, home, model):
    """The runtime events of the squad preset, from Gemini CLI's BeforeAgent and AfterAgent
    (both fire in `gemini -p`)."""
    repo = initialized(tmp_path, home, "squad")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "sam", "--role", "specialist", "--session",
                    session).returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-squad", Turn(shell("true")), Turn(text("fixed")))
    run(gemini(), home, model.url, repo, f"fix it {token}", args=("--session-id", session))
    settled(repo, session, "stop")
    log = authored(repo, tip)
    assert "gitstate|@sam: [STATE:active] runtime: prompt" in log, log
    assert log[-1] == "gitstate|@sam: [STATE:idle] runtime: stop", log
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_init_s_spawn_guard_refuses_a_sub_agent_too_deep(tmp_path, home, model):
    """BeforeTool on `invoke_agent` runs gitstate's spawn guard: an agent at the lifecycle's
    deepest level may not start one, and its model reads why (Gemini's refusal)."""
    repo = initialized(tmp_path, home)
    for parent, kid in ((None, "root"), ("root", "c1"), ("c1", "c2"), ("c2", "c3")):
        args = ("--parent", parent) if parent else ()
        assert gitstate(repo, "spawn", kid, *args).returncode == 0
    token = model.script("init-spawn-deep",
                         Turn(call("invoke_agent", {"agent_name": "codebase_investigator",
                                                    "prompt": "dig deeper"})),
                         Turn(text("refused, fine")))
    run(gemini(), home, model.url, repo, f"delegate {token}", env={"GITSTATE_AGENT": "c3"})
    refused = outputs(model.requests("init-spawn-deep")[-1])["invoke_agent#0"]
    assert refused.startswith("Tool execution blocked: ")
    assert "gitstate refuses this sub-agent" in refused and "[max-depth]" in refused


def test_the_context_measured_from_the_transcript_is_recorded_once_per_phase(
        tmp_path, home, model):
    """AfterTool measures the newest response's input tokens in Gemini's transcript against
    the model's window (1,048,576 for a `gemini-` model). Gemini CLI compresses the chat past
    half its window by default: this home sets the threshold higher, so the chat stays whole."""
    write_home(home, model={"compressionThreshold": 0.95})
    repo = initialized(tmp_path, home)
    assert gitstate(repo, "spawn", "alice").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-context", Turn(shell("true"), prompt_tokens=30_000),
                         Turn(shell("true"), prompt_tokens=560_000),
                         Turn(shell("true"), prompt_tokens=570_000),
                         Turn(shell("true"), prompt_tokens=800_000),
                         Turn(text("done"), prompt_tokens=801_000))
    run(gemini(), home, model.url, repo, f"think {token}", env={"GITSTATE_AGENT": "alice"})
    assert MODEL.startswith("gemini-")
    assert [line for line in authored(repo, tip) if "] context " in line] == [
        "gitstate|@alice: [STATE:bootstrap] context 53.4% (560,000 of 1,048,576 tokens): "
        "midlife",
        "gitstate|@alice: [STATE:bootstrap] context 76.3% (800,000 of 1,048,576 tokens): "
        "legacy"]
    said = [everything(r) for r in model.requests("init-context")]
    assert len(said) == 5
    assert "mortality phase midlife" in said[2] and "mortality phase midlife" not in said[1]
    assert "mortality phase legacy" in said[4] and "mortality phase legacy" not in said[3]


def test_the_model_calls_gitstates_mcp_server_and_its_move_lands(tmp_path, home, model):
    """`mcpServers.gitstate` of the project's settings: Gemini CLI starts it and shows its
    tools to the model as `mcp_gitstate_<tool>`; a call of `transition` is one commit. Gemini
    CLI drops from a server's environment every variable whose name holds AUTH, KEY, TOKEN,
    ... (GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL too): the identity is the clone's, as a user's
    clone has one."""
    repo = initialized(tmp_path, home)
    git(repo, "config", "user.email", "zach@example.com")
    assert gitstate(repo, "spawn", "alice").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-mcp", Turn(call("mcp_gitstate_transition", {
        "agent": "alice", "state": "inbox", "message": "ready via mcp"})), Turn(text("done")))
    run(gemini(), home, model.url, repo, f"move {token}", env={"GITSTATE_AGENT": "alice"})
    said = model.requests("init-mcp")
    names = [f["name"] for t in said[0]["tools"] for f in t.get("functionDeclarations", [])]
    assert {"mcp_gitstate_transition", "mcp_gitstate_status"} <= set(names)
    result = outputs(said[1])["mcp_gitstate_transition#0"]
    assert "inbox" in result, result
    assert "error" not in result.lower(), result[:1500]
    assert [line for line in authored(repo, tip) if "STATE:inbox" in line] == [
        "zach|@alice: [STATE:inbox] ready via mcp"]
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout
