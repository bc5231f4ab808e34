"""The real Codex CLI (npm @openai/codex, pinned in .ci/npm/package.json) in a git repository,
against a scripted Responses-API model on 127.0.0.1 (tests/runtime/scripted_responses.py),
with its hooks trusted through its own app-server (tests/runtime/codex_harness.py): a shell
call's output, a SessionStart hook's context and a PreToolUse hook's refusal reach the
model's requests."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from codex_harness import hook_lines, run, trust, write_config
from conftest import git, gitstate, make_repo
from npm_tools import codex
from gitstate.runtime.codex.hooks import latest_usage
from gitstate.runtime.registry import RUNTIMES
from scripted_responses import (ScriptedResponses, Turn, call, everything, outputs, shell,
                                spawn, text, wait_for_spawned)
from test_runtime_events_e2e import settled

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def model():
    """One scripted model for the module (each test routes by its own token); without Codex
    installed, the tests skip before starting anything."""
    codex()
    server = ScriptedResponses()
    yield server
    server.close()


@pytest.fixture
def home(tmp_path, model) -> Path:
    """The test's own Codex home, its model the scripted one."""
    path = tmp_path.resolve() / "codex-home"
    write_config(path, model.url)
    return path


@pytest.fixture
def repo(tmp_path) -> Path:
    path = make_repo(tmp_path.resolve() / "repo")
    (path / "README").write_text("hi\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    return path


def hooks_json(repo: Path, hooks: dict) -> None:
    """`.codex/hooks.json` of the project: {event: [(matcher or None, command)]}."""
    table: dict = {}
    for event, entries in hooks.items():
        for matcher, command in entries:
            group: dict = {"hooks": [{"type": "command", "command": command}]}
            if matcher:
                group["matcher"] = matcher
            table.setdefault(event, []).append(group)
    (repo / ".codex").mkdir(exist_ok=True)
    (repo / ".codex" / "hooks.json").write_text(json.dumps({"hooks": table}, indent=2))


def project_hooks(repo: Path, hooks: dict) -> None:
    """Hooks that are python sources ({event: [(matcher or None, source)]}), each a script
    run by this interpreter with the event's JSON on stdin."""
    (repo / ".codex").mkdir(exist_ok=True)
    commands: dict = {}
    for event, entries in hooks.items():
        for n, (matcher, source) in enumerate(entries):
            script = repo / ".codex" / f"{event}-{n}.py"
            script.write_text(source)
            commands.setdefault(event, []).append((matcher, f"{sys.executable} {script}"))
    hooks_json(repo, commands)


def developer_messages(request: dict) -> list[str]:
    return ["\n".join(part.get("text", "") for part in item.get("content") or [])
            for item in request.get("input") or []
            if item.get("type") == "message" and item.get("role") == "developer"]


def test_a_shell_call_runs_and_its_output_reaches_the_next_request(repo, home, model):
    """The harness itself: the model's call of Codex's shell tool runs in the repository, and
    what it printed (not the command line: the arithmetic is the shell's) comes back."""
    token = model.script("codex-echo", Turn(shell("echo hi; echo sum-$((6*7)) > sum.txt")),
                         Turn(text("saw it")))
    before = list(model.other)
    res = run(codex(), home, repo, f"say hi {token}")
    said = model.requests("codex-echo")
    assert len(said) == 2
    assert not outputs(said[0])
    output = outputs(said[1])["exec_command#0"]
    assert "Process exited with code 0" in output and output.endswith("Output:\nhi\n")
    assert (repo / "sum.txt").read_text() == "sum-42\n"
    assert "saw it" in res.stdout
    assert model.other == before      # nothing but POST /v1/responses reached the server
    assert res.session and res.session in json.dumps(said[0])   # its prompt_cache_key


SESSION_START = """\
import json, sys
event = json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
    "additionalContext": "context from the hook: %s %s" % (event["source"],
                                                            event["session_id"])}}))
"""


def test_a_session_start_hook_reaches_the_model_once_trusted_through_the_app_server(
        repo, home, model):
    project_hooks(repo, {"SessionStart": [(None, SESSION_START)]})
    # untrusted (and in an untrusted project): skipped, without a word
    token = model.script("codex-untrusted", Turn(text("hello")))
    res = run(codex(), home, repo, f"start {token}")
    assert "context from the hook" not in everything(model.requests("codex-untrusted")[0])
    assert hook_lines(res) == []

    listed = trust(codex(), home, repo)
    assert [(h["eventName"], h["source"], h["trustStatus"]) for h in listed] == \
        [("sessionStart", "project", "trusted")]
    assert listed[0]["key"] == f"{repo / '.codex' / 'hooks.json'}:session_start:0:0"
    token = model.script("codex-trusted", Turn(text("hello")))
    res = run(codex(), home, repo, f"start {token}")
    request = model.requests("codex-trusted")[0]
    assert f"context from the hook: startup {res.session}" in developer_messages(request)
    assert hook_lines(res) == ["hook: SessionStart", "hook: SessionStart Completed"]

    # a changed entry is no longer trusted: skipped again until trusted again
    table = json.loads((repo / ".codex" / "hooks.json").read_text())
    table["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = 30
    (repo / ".codex" / "hooks.json").write_text(json.dumps(table))
    token = model.script("codex-modified", Turn(text("hello")))
    res = run(codex(), home, repo, f"start {token}")
    assert "context from the hook" not in everything(model.requests("codex-modified")[0])
    assert hook_lines(res) == []
    assert [h["trustStatus"] for h in trust(codex(), home, repo)] == ["trusted"]


PRE_TOOL_USE = """\
import json, pathlib, sys
event = json.load(sys.stdin)
with open(pathlib.Path(__file__).with_name("pre-tool-use.jsonl"), "a") as log:
    log.write(json.dumps(event) + "\\n")
if "touch" in event["tool_input"]["command"]:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no touching in this repository"}}))
"""


def test_a_pre_tool_use_hook_denies_a_shell_call_and_the_model_reads_why(repo, home, model):
    project_hooks(repo, {"PreToolUse": [("Bash", PRE_TOOL_USE)]})
    assert [h["trustStatus"] for h in trust(codex(), home, repo)] == ["trusted"]
    token = model.script("codex-deny", Turn(shell("touch touched.txt")),
                         Turn(shell("echo still here")), Turn(text("done")))
    res = run(codex(), home, repo, f"touch it {token}")
    said = model.requests("codex-deny")
    assert len(said) == 3
    refused = outputs(said[1])["exec_command#0"]
    assert refused.startswith("Command blocked by PreToolUse hook: no touching in this "
                              "repository.")
    assert not (repo / "touched.txt").exists()
    assert outputs(said[2])["exec_command#1"].endswith("Output:\nstill here\n")
    assert "hook: PreToolUse Blocked" in hook_lines(res)
    seen = [json.loads(line) for line in
            (repo / ".codex" / "pre-tool-use.jsonl").read_text().splitlines()]
    assert [(e["tool_name"], e["tool_input"], e["session_id"]) for e in seen] == [
        ("Bash", {"command": "touch touched.txt"}, res.session),
        ("Bash", {"command": "echo still here"}, res.session)]
    assert all(Path(e["transcript_path"]).is_file() for e in seen)


# -- gitstate's Codex hooks -------------------------------------------------------------------

GITSTATE = f"{sys.executable} -m gitstate hook"


@pytest.fixture
def managed(repo) -> Path:
    res = gitstate(repo, "init")
    assert res.returncode == 0, res.stderr
    return repo


def test_the_briefing_reaches_a_codex_session_bound_by_its_id_or_by_gitstate_agent(
        managed, home, model):
    hooks_json(managed, {"SessionStart": [(None, f"{GITSTATE} session-start --runtime "
                                                  "codex")]})
    assert [h["trustStatus"] for h in trust(codex(), home, managed)] == ["trusted"]

    token = model.script("codex-unbound", Turn(text("who am I")))
    first = run(codex(), home, managed, f"start {token}")
    said = "\n".join(developer_messages(model.requests("codex-unbound")[0]))
    assert "gitstate: no agent is bound to this session." in said
    assert f"`gitstate spawn <your-id> --session {first.session}`" in said

    # bound by the session's id, which the briefing gave: the resumed session is alice's
    assert gitstate(managed, "spawn", "alice", "--role", "architect", "--session",
                    first.session).returncode == 0
    token = model.script("codex-resumed", Turn(text("back")))
    again = run(codex(), home, managed, f"again {token}", resume=first.session)
    assert again.session == first.session
    said = "\n".join(developer_messages(model.requests("codex-resumed")[-1]))
    assert "gitstate briefing (resumed) alice: bootstrap" in said
    assert "role: architect" in said

    # bound by the environment `codex exec` runs in
    assert gitstate(managed, "spawn", "bob").returncode == 0
    token = model.script("codex-env", Turn(text("hello")))
    run(codex(), home, managed, f"start {token}", env={"GITSTATE_AGENT": "bob"})
    said = "\n".join(developer_messages(model.requests("codex-env")[0]))
    assert "gitstate briefing (started) bob: bootstrap" in said
    assert "alice" not in said.split("\n")[0]


MEASURE = """\
import json, sys
from gitstate.runtime.codex.hooks import latest_usage
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(latest_usage(event["transcript_path"])) + "\\n")
"""


def test_the_rollout_holds_the_input_tokens_of_the_response_that_made_each_call(
        repo, home, model, tmp_path):
    """What a PostToolUse hook reads of the rollout, at the call: the tokens the model
    reported for the response that made it, and the context window."""
    log = tmp_path / "measured.jsonl"
    (repo / ".codex").mkdir()
    (repo / ".codex" / "measure.py").write_text(MEASURE)
    hooks_json(repo, {"PostToolUse": [("Bash", f"{sys.executable} "
                                               f"{repo / '.codex' / 'measure.py'} {log}")]})
    assert [h["trustStatus"] for h in trust(codex(), home, repo)] == ["trusted"]
    token = model.script("codex-measure", Turn(shell("true"), input_tokens=30_000),
                         Turn(shell("true"), input_tokens=110_000),
                         Turn(text("done"), input_tokens=111_000))
    res = run(codex(), home, repo, f"think {token}")
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        [30_000, 258_400], [110_000, 258_400]]
    rollout = next((home / "sessions").rglob(f"rollout-*-{res.session}.jsonl"))
    assert latest_usage(str(rollout)) == (111_000, 258_400)


def test_a_shell_move_lands_as_one_commit_and_an_illegal_one_is_refused_in_its_output(
        managed, tmp_path, model):
    """The model's shell runs `gitstate` as the agent the environment names. Codex runs a
    command in a login shell by default, whose /etc/profile may reset PATH (losing a venv's
    gitstate): `allow_login_shell = false` keeps the PATH `codex exec` was given."""
    home = tmp_path.resolve() / "codex-home"
    write_config(home, model.url, top="allow_login_shell = false\n")
    assert gitstate(managed, "spawn", "alice").returncode == 0
    tip = git(managed, "rev-parse", "HEAD").stdout.strip()
    token = model.script("codex-move",
                         Turn(shell('gitstate transition "$GITSTATE_AGENT" inbox '
                                    '-m "ready for work"')),
                         Turn(shell("gitstate transition alice deep_work")),
                         Turn(text("done")))
    run(codex(), home, managed, f"work {token}", env={"GITSTATE_AGENT": "alice"})
    said = model.requests("codex-move")
    moved = outputs(said[1])["exec_command#0"]
    assert "Process exited with code 0" in moved and "alice: bootstrap -> inbox" in moved
    assert git(managed, "log", "--format=%an|%s", f"{tip}..HEAD").stdout.splitlines() == [
        "Test Person|@alice: [STATE:inbox] ready for work"]
    refused = outputs(said[2])["exec_command#1"]
    assert "Process exited with code 0" not in refused
    assert "[illegal-transition]" in refused and "not deep_work" in refused
    assert "state: inbox" in git(managed, "show", "HEAD:agent/alice/_state.md").stdout
    assert gitstate(managed, "verify", "--no-cache").returncode == 0


def test_an_api_error_ends_the_run_without_a_retry(repo, home, model):
    """The scripted model's error turn: a 400 is not retried, and `codex exec` fails."""
    token = model.script("codex-error", Turn(error=400))
    res = run(codex(), home, repo, f"fail {token}", check=False)
    assert res.returncode != 0
    assert len(model.requests("codex-error")) == 1
    assert "scripted failure" in res.stderr


def test_a_sub_agent_past_max_depth_is_refused_before_it_exists(managed, home, model):
    """PreToolUse on `spawn_agent` runs gitstate's spawn guard: the root agent may spawn, an
    agent at the lifecycle's deepest level may not, and its model reads why."""
    hooks_json(managed, {"PreToolUse": [("spawn_agent",
                                         f"{GITSTATE} spawn-guard --runtime codex")],
                         "SubagentStart": [(None, f"{sys.executable} -c "
                                                  "\"import sys; open(sys.argv[1], 'a')"
                                                  ".write(sys.stdin.read() + '\\\\n')\" "
                                                  f"{managed / '.codex' / 'started.jsonl'}")]})
    assert [h["trustStatus"] for h in trust(codex(), home, managed)] == ["trusted"] * 2
    started = managed / ".codex" / "started.jsonl"
    assert gitstate(managed, "spawn", "root").returncode == 0
    token = model.script("codex-spawn-ok", Turn(spawn("look around")), Turn(text("done")))
    run(codex(), home, managed, f"delegate {token}", env={"GITSTATE_AGENT": "root"})
    allowed = outputs(model.requests("codex-spawn-ok")[-1])["spawn_agent#0"]
    assert '"agent_id"' in allowed
    assert len(started.read_text().splitlines()) == 1

    for parent, kid in (("root", "c1"), ("c1", "c2"), ("c2", "c3")):
        assert gitstate(managed, "spawn", kid, "--parent", parent).returncode == 0
    token = model.script("codex-spawn-deep", Turn(spawn("dig deeper")),
                         Turn(text("refused, fine")))
    run(codex(), home, managed, f"delegate {token}", env={"GITSTATE_AGENT": "c3"})
    refused = outputs(model.requests("codex-spawn-deep")[-1])["spawn_agent#0"]
    assert "gitstate refuses this sub-agent" in refused and "[max-depth]" in refused
    assert '"agent_id"' not in refused
    assert len(started.read_text().splitlines()) == 1     # no second sub-agent started


# -- a project set up by `gitstate init --runtime codex` ---------------------------------------


def initialized(tmp_path: Path, codex_home: Path, preset: str = "haak") -> Path:
    """A repository set up as a user sets it up: `gitstate init --runtime codex`, then the
    project and every hook it wrote trusted through Codex's app-server (nothing hand-written)."""
    path = make_repo(tmp_path.resolve() / "project")
    (path / "README").write_text("hi\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    res = gitstate(path, "init", "--lifecycle", preset, "--runtime", "codex")
    assert res.returncode == 0, res.stderr
    assert "trusted project" in res.stdout       # init says how to trust, and asks nothing
    listed = trust(codex(), codex_home, path)
    assert sorted((h["source"], h["trustStatus"]) for h in listed) == \
        [("project", "trusted")] * len(RUNTIMES["codex"].hooks)
    return path


def authored(repo: Path, since: str) -> list[str]:
    return git(repo, "log", "--reverse", "--format=%an|%s", f"{since}..HEAD").stdout.splitlines()


def test_init_gives_a_codex_agent_its_briefing_and_its_shell_moves(tmp_path, home, model):
    """The briefing reaches the model; `allow_login_shell = false` of the project's config
    keeps gitstate on the shell's PATH: a move lands as one commit, an illegal one is refused
    in the call's output."""
    repo = initialized(tmp_path, home)
    assert gitstate(repo, "spawn", "alice").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-move",
                         Turn(shell('gitstate transition "$GITSTATE_AGENT" inbox '
                                    '-m "ready for work"')),
                         Turn(shell("gitstate transition alice deep_work")),
                         Turn(text("done")))
    res = run(codex(), home, repo, f"work {token}", env={"GITSTATE_AGENT": "alice"})
    said = model.requests("init-move")
    assert "gitstate briefing (started) alice: bootstrap" in "\n".join(
        developer_messages(said[0]))
    moved = outputs(said[1])["exec_command#0"]
    assert "Process exited with code 0" in moved and "alice: bootstrap -> inbox" in moved
    refused = outputs(said[2])["exec_command#1"]
    assert "[illegal-transition]" in refused and "not deep_work" in refused
    log = authored(repo, tip)
    assert [line for line in log if not line.startswith("gitstate|")] == [
        "Test Person|@alice: [STATE:inbox] ready for work"]
    assert all("runtime: " in line for line in log if line.startswith("gitstate|")), log
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    assert "hook: SessionStart Completed" in hook_lines(res)
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_the_context_measured_from_the_rollout_is_recorded_once_per_phase(
        tmp_path, home, model):
    repo = initialized(tmp_path, home)
    assert gitstate(repo, "spawn", "alice").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-context", Turn(shell("true"), input_tokens=30_000),
                         Turn(shell("true"), input_tokens=140_000),
                         Turn(shell("true"), input_tokens=150_000),
                         Turn(shell("true"), input_tokens=200_000),
                         Turn(text("done"), input_tokens=201_000))
    run(codex(), home, repo, f"think {token}", env={"GITSTATE_AGENT": "alice"})
    assert [line for line in authored(repo, tip) if "] context " in line] == [
        "gitstate|@alice: [STATE:bootstrap] context 54.2% (140,000 of 258,400 tokens): "
        "midlife",
        "gitstate|@alice: [STATE:bootstrap] context 77.4% (200,000 of 258,400 tokens): "
        "legacy"]
    said = [everything(r) for r in model.requests("init-context")]
    assert "mortality phase midlife" in said[2] and "mortality phase midlife" not in said[1]
    assert "mortality phase legacy" in said[4] and "mortality phase legacy" not in said[3]


def test_init_s_spawn_guard_refuses_a_sub_agent_too_deep(tmp_path, home, model):
    repo = initialized(tmp_path, home)
    for parent, kid in ((None, "root"), ("root", "c1"), ("c1", "c2"), ("c2", "c3")):
        args = ("--parent", parent) if parent else ()
        assert gitstate(repo, "spawn", kid, *args).returncode == 0
    token = model.script("init-spawn-deep", Turn(spawn("dig deeper")),
                         Turn(text("refused, fine")))
    res = run(codex(), home, repo, f"delegate {token}", env={"GITSTATE_AGENT": "c3"})
    refused = outputs(model.requests("init-spawn-deep")[-1])["spawn_agent#0"]
    assert "gitstate refuses this sub-agent" in refused and "[max-depth]" in refused
    assert "hook: PreToolUse Blocked" in hook_lines(res)
    assert "hook: SubagentStart" not in hook_lines(res)


def test_squad_a_prompt_makes_the_codex_agent_active_and_its_turn_ends_idle(
        tmp_path, home, model):
    """The runtime events of the squad preset, from Codex's UserPromptSubmit and Stop."""
    repo = initialized(tmp_path, home, "squad")
    assert gitstate(repo, "spawn", "sam", "--role", "specialist").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-squad", Turn(shell("true")), Turn(text("fixed")))
    res = run(codex(), home, repo, f"fix it {token}", env={"GITSTATE_AGENT": "sam"})
    settled(repo, res.session, "stop")
    log = authored(repo, tip)
    assert "gitstate|@sam: [STATE:active] runtime: prompt" in log, log
    assert log[-1] == "gitstate|@sam: [STATE:idle] runtime: stop", log
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_the_model_calls_gitstates_mcp_server_and_its_move_lands(tmp_path, home, model):
    """`[mcp_servers.gitstate]` of the project's config: Codex shows its tools to the model as
    the namespace `mcp__gitstate`; a call of `transition` is one commit."""
    repo = initialized(tmp_path, home)
    # Codex starts a server with little of its environment (no GIT_AUTHOR_*): the identity is
    # the repository's, as a user's clone has one
    git(repo, "config", "user.email", "zach@example.com")
    assert gitstate(repo, "spawn", "alice").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("init-mcp", Turn(dict(call("transition", {
        "agent": "alice", "state": "inbox", "message": "ready via mcp"}),
        namespace="mcp__gitstate")), Turn(text("done")))
    run(codex(), home, repo, f"move {token}", env={"GITSTATE_AGENT": "alice"})
    said = model.requests("init-mcp")
    tools = {t.get("name"): t for t in said[0]["tools"]}
    assert "transition" in [t["name"] for t in tools["mcp__gitstate"]["tools"]]
    result = next(v for k, v in outputs(said[1]).items() if k.startswith("transition"))
    assert "inbox" in result, result
    assert [line for line in authored(repo, tip) if "STATE:inbox" in line] == [
        "zach|@alice: [STATE:inbox] ready via mcp"]
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout


def test_doctor_asks_codex_which_of_gitstates_hooks_it_trusts(tmp_path, home, monkeypatch):
    """With `codex` on PATH, doctor reads the trust of each hook from its app-server's
    `hooks/list`: a changed entry is no longer trusted, and doctor says which."""
    repo = initialized(tmp_path, home)
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("PATH", f"{Path(codex()).parent}:{os.environ['PATH']}")

    def trust_finding() -> dict:
        res = gitstate(repo, "doctor", "--json")
        rows = json.loads(res.stdout)
        rows = rows["findings"] if isinstance(rows, dict) else rows
        return next(f for f in rows if f["check"] == "codex-trust")

    found = trust_finding()
    assert (found["status"], found["detail"]) == (
        "ok", f"the project and gitstate's {len(RUNTIMES['codex'].hooks)} hooks are trusted "
              "(codex app-server)")
    path = repo / ".codex" / "hooks.json"
    table = json.loads(path.read_text())
    table["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 31
    path.write_text(json.dumps(table))
    found = trust_finding()
    assert found["status"] == "warn" and found["detail"].endswith("does not trust: stop")


def test_an_allowed_sub_agent_is_told_its_parent_and_depth(tmp_path, home, model):
    """SubagentStart (init's hook) tells the child what the spawn guard recorded of it."""
    repo = initialized(tmp_path, home)
    assert gitstate(repo, "spawn", "root").returncode == 0
    child = model.script("init-child", Turn(text("looked")))
    token = model.script("init-spawn-ok", Turn(spawn(f"look around {child}")),
                         Turn(wait_for_spawned), Turn(text("done")))
    run(codex(), home, repo, f"delegate {token}", env={"GITSTATE_AGENT": "root"})
    said = outputs(model.requests("init-spawn-ok")[-1])
    assert '"agent_id"' in said["spawn_agent#0"] and "looked" in said["wait_agent#0"]
    told = "\n".join(developer_messages(model.requests("init-child")[0]))
    assert "gitstate: you are a sub-agent (general-purpose) of root, at depth 1" in told
