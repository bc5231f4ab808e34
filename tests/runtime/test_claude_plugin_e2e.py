"""gitstate's Claude Code plugin in the real binary (npm @anthropic-ai/claude-code, pinned in
.ci/npm/package.json): validated by `claude plugin validate`, added from this repository as a
user adds it (`claude plugin marketplace add`, `claude plugin install`), then a scripted
session (tests/runtime/scripted_model.py) in a repository set up by `gitstate init` alone:
the plugin's hooks brief the session, its MCP server and its commands make moves that land as
commits; and in a project set up by `init --runtime claude-code` only the project's run."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
import test_claude_code_e2e as driven
from conftest import from_template, git, gitstate, make_repo
from npm_tools import claude
from scripted_model import Turn, everything, text, tool

run, warm = driven.run, driven.warm
model = driven.model     # the scripted model server (a fixture, one per test session)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "gitstate" / "claude_plugin"
BRIEFED = "gitstate briefing (started) alice: bootstrap"


def claude_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    res = subprocess.run([claude(), *args], cwd=cwd, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL,
                         env=dict(os.environ, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"))
    assert res.returncode == 0, (args, res.stdout, res.stderr)
    return res


def install() -> None:
    """What a user types: the marketplace (this repository), then the plugin from it."""
    claude_cli("plugin", "marketplace", "add", str(ROOT))
    claude_cli("plugin", "install", "gitstate@gitstate")
    [listed] = [p for p in json.loads(claude_cli("plugin", "list", "--json").stdout)
                if p["id"] == "gitstate@gitstate"]
    assert listed["enabled"] is True, listed


def _plain_repo(root: Path) -> None:
    repo = make_repo(root / "repo")
    (repo / "README").write_text("hi\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    assert gitstate(repo, "init").returncode == 0


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository `gitstate init` manages, with no Claude Code settings of gitstate's."""
    return from_template(tmp_path, "plugin-repo", _plain_repo) / "repo"


def test_claude_plugin_validate_passes_for_the_marketplace_and_the_plugin():
    for path in (ROOT, PLUGIN):
        res = claude_cli("plugin", "validate", "--strict", "--json", str(path))
        report = json.loads(res.stdout)
        assert report["success"] is True and report["manifest"]["errors"] == [], report
    provides = json.loads(claude_cli("plugin", "validate", "--json", str(PLUGIN)).stdout)[
        "provides"]
    from gitstate.runtime.claude_code.settings import HOOKS
    assert [h["event"] for h in provides["hooks"]] == list(HOOKS)
    assert [s["name"] for s in provides["mcpServers"]] == ["gitstate"]
    assert sorted(provides["commands"]) == ["gitstate:inbox", "gitstate:roster",
                                            "gitstate:status", "gitstate:transition"]


def test_the_installed_plugin_briefs_the_session_and_its_server_moves_the_agent(repo, model):
    """No gitstate on the PATH Claude Code starts with: the plugin's shim finds the clone's."""
    install()
    warm(repo)
    servers = claude_cli("mcp", "list", cwd=repo).stdout.splitlines()
    assert [line for line in servers if line.startswith("plugin:gitstate:gitstate: ")
            and "Connected" in line], servers
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "alice", "--session", session).returncode == 0
    doctor = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
    assert {"status": "ok", "check": "plugin", "fix": None, "detail": (
        "the plugin gitstate@gitstate (enabled in ~/.claude/settings.json) runs gitstate's "
        "hooks and MCP server")} in doctor
    token = model.script(
        "plugin-mcp",
        Turn(tool("mcp__plugin_gitstate_gitstate__transition",
                  {"agent": "alice", "state": "inbox", "message": "over the plugin"})),
        Turn(text("done")))
    run(repo, model, f"move {token}", session, tools="mcp__plugin_gitstate_gitstate",
        env={"PATH": "/usr/bin:/bin"})
    said = [everything(r) for r in model.requests("plugin-mcp")]
    assert said[0].count(BRIEFED) == 1                        # the plugin's SessionStart
    assert "@alice: [STATE:inbox] over the plugin" in said[1]
    log = git(repo, "log", "--format=%an|%s", "-2").stdout.splitlines()
    assert log[0] == "Test Person|@alice: [STATE:inbox] over the plugin"
    assert log[1].startswith("gitstate|@alice: [STATE:bootstrap] runtime: pid ")  # recorded once


def test_the_plugins_commands_show_the_inbox_and_make_the_move_a_person_types(repo, model):
    install()
    assert gitstate(repo, "spawn", "bob").returncode == 0
    token = model.script("plugin-inbox", Turn(text("read")))
    assert gitstate(repo, "say", "bob", f"rebase on main, please {token}").returncode == 0
    run(repo, model, "/gitstate:inbox bob", str(uuid.uuid4()), env={"PATH": "/usr/bin:/bin"})
    [asked] = [everything(r) for r in model.requests("plugin-inbox")]
    assert "The gitstate inbox (`gitstate inbox bob`)" in asked
    assert "rebase on main, please" in asked

    token = model.script("plugin-move", Turn(text("moved")))
    run(repo, model, f'/gitstate:transition bob inbox -m "typed {token}"', str(uuid.uuid4()),
        env={"PATH": "/usr/bin:/bin"})
    [asked] = [everything(r) for r in model.requests("plugin-move")]
    assert "bob: bootstrap -> inbox" in asked
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        f"@bob: [STATE:inbox] typed {token}"


def test_in_a_project_set_up_by_init_runtime_only_the_projects_hooks_run(repo, model):
    """Both the plugin and `init --runtime claude-code`: one briefing, one record of the
    runtime's facts, and the plugin's server stays off."""
    install()
    init = gitstate(repo, "init", "--runtime", "claude-code")
    assert "in this project it leaves the hooks and the MCP server to these settings" \
        in init.stdout
    warm(repo)
    session = str(uuid.uuid4())
    gitstate(repo, "spawn", "alice", "--session", session)
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    token = model.script("plugin-both", Turn(text("hello")))
    res = run(repo, model, f"hi {token}", session)
    [asked] = [everything(r) for r in model.requests("plugin-both")]
    assert asked.count(BRIEFED) == 1
    assert "the Claude Code hook" not in res.stderr     # nothing of the plugin's said
    facts = git(repo, "log", "--format=%s", f"{tip}..HEAD").stdout.splitlines()
    assert len(facts) == 1 and "runtime: pid" in facts[0], facts
    servers = claude_cli("mcp", "list", cwd=repo).stdout.splitlines()
    [plugins] = [line for line in servers if line.startswith("plugin:gitstate:gitstate: ")]
    assert "Failed to connect" in plugins, servers       # it ended at once: the project's runs


def test_the_plugins_status_and_roster_commands_give_the_model_gitstates_answer(repo, model):
    """What the commands put before the model is in the session's transcript (the scripted
    model is asked without a script token here: the prompt is the command alone)."""
    install()
    assert gitstate(repo, "spawn", "carol", "--role", "architect").returncode == 0
    for command, shown in (("/gitstate:status carol", "carol: bootstrap (living)"),
                           ("/gitstate:roster", "living (1)")):
        session = str(uuid.uuid4())
        run(repo, model, command, session, env={"PATH": "/usr/bin:/bin"})
        [transcript] = (Path(os.environ["HOME"]) / ".claude" / "projects").glob(
            f"*/{session}.jsonl")
        said = transcript.read_text()
        assert shown in said and "Shell command failed" not in said, said[-2000:]
