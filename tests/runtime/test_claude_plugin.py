"""gitstate's Claude Code plugin (gitstate/claude_plugin): its made files are what
gitstate/runtime/claude_code/plugin.py makes from the one declaration of the hooks, and its shim finds
gitstate, or stands down where the project runs init's hooks and MCP server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import git, gitstate, make_repo

from gitstate.runtime.claude_code import plugin, settings

ROOT = Path(__file__).resolve().parents[2]
SHIM = plugin.ROOT / "bin" / "gitstate"


def test_the_committed_plugin_files_are_what_gitstate_makes():
    """When HOOKS (or the shim, or the version) changes, this fails until the plugin is made
    again: `python -m gitstate.runtime.claude_code.plugin`."""
    assert plugin.stale() == [], \
        "run `python -m gitstate.runtime.claude_code.plugin` and commit the result"
    res = subprocess.run([sys.executable, "-m", "gitstate.runtime.claude_code.plugin", "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_the_plugins_hooks_are_init_s_hooks_run_by_the_plugins_shim(monkeypatch, tmp_path):
    made = plugin.hooks()["hooks"]
    assert list(made) == list(settings.HOOKS)
    for event, spec in settings.HOOKS.items():
        [group] = made[event]
        assert group.get("matcher") == spec[0]
        [hook] = group["hooks"]
        assert hook["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}"/bin/gitstate hook {spec[1]}'
        ours = settings.group(*spec)["hooks"][0]
        assert {k: v for k, v in hook.items() if k != "command"} == \
            {k: v for k, v in ours.items() if k != "command"}
    # a hook that grows an extra key (an async one, say) has it in both places, and the
    # committed file is then stale until made again
    monkeypatch.setitem(settings.HOOKS, "Stop", (None, "stop", {"async": True}))
    assert plugin.hooks()["hooks"]["Stop"] == [{"hooks": [{
        "type": "command", "command": '"${CLAUDE_PLUGIN_ROOT}"/bin/gitstate hook stop',
        "timeout": settings.TIMEOUT, "async": True}]}]
    merged = settings.merge({})[0]["hooks"]["Stop"][0]["hooks"][0]
    assert merged["async"] is True and merged["command"].endswith("/gitstate stop")
    assert plugin.stale() == ["hooks/hooks.json"]
    copy = tmp_path / "plugin"
    shutil.copytree(plugin.ROOT, copy)
    assert plugin.write(copy) == ["hooks/hooks.json"] and plugin.stale(copy) == []


def test_the_manifest_and_the_marketplace_name_the_plugin_and_its_version():
    from gitstate import __version__
    manifest = json.loads((plugin.ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "gitstate" and manifest["version"] == __version__
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    [entry] = market["plugins"]
    assert entry["name"] == "gitstate"
    assert (ROOT / entry["source"]).resolve() == plugin.ROOT
    commands = sorted(p.stem for p in (plugin.ROOT / "commands").glob("*.md"))
    assert commands == ["inbox", "roster", "status", "transition"]
    for name in commands:
        text = (plugin.ROOT / "commands" / f"{name}.md").read_text()
        assert f'"${{CLAUDE_PLUGIN_ROOT}}/bin/gitstate" {name}' in text   # found as hooks are
        # a person's commands: the model may not call them (their arguments reach a shell)
        assert "\ndisable-model-invocation: true\n" in text.split("\n---\n", 1)[0]


def _shim(cwd: Path, *args: str, env: dict | None = None, stdin: str = "{}"):
    full = {k: v for k, v in os.environ.items() if k not in ("GITSTATE_PYTHON",)}
    full.update(CLAUDE_PROJECT_DIR=str(cwd), **(env or {}))
    return subprocess.run(["sh", str(SHIM), *args], cwd=cwd, env=full, input=stdin,
                          capture_output=True, text=True, timeout=60)


def _managed(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    assert gitstate(repo, "init").returncode == 0
    return repo


def test_the_shim_runs_the_gitstate_of_the_clone(tmp_path):
    repo = _managed(tmp_path)
    assert gitstate(repo, "spawn", "ada").returncode == 0
    res = _shim(repo, "status", env={"PATH": "/usr/bin:/bin"})    # gitstate.python, not PATH
    assert res.returncode == 0 and "ada" in res.stdout, res.stderr
    said = _shim(repo, "--version", env={"PATH": "/usr/bin:/bin"})
    assert said.returncode == 0 and "gitstate" in said.stdout, said.stderr
    brief = _shim(repo, "hook", "session-start", stdin=json.dumps(
        {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo),
         "session_id": "s-1"}))
    assert brief.returncode == 0 and "gitstate" in brief.stdout, brief.stderr


def test_the_shim_on_bashs_path_never_runs_itself(tmp_path):
    """Claude Code puts the plugin's bin/ on the Bash tool's PATH: with no other gitstate
    anywhere, `gitstate` says so and ends (it does not exec itself for ever)."""
    alone = tmp_path / "plain"
    alone.mkdir()
    python = tmp_path / "py"
    python.mkdir()
    (python / "python3").symlink_to("/bin/false")    # a Python without gitstate
    res = subprocess.run(["gitstate", "status"], cwd=alone, capture_output=True, text=True,
                         timeout=60, env={"PATH": f"{python}:/usr/bin:/bin:{SHIM.parent}",
                                          "HOME": str(tmp_path)})
    assert res.returncode == 1 and "gitstate is not found" in res.stderr, res.stderr


def test_the_shim_stands_down_where_the_project_runs_init_s_hooks_and_server(tmp_path):
    repo = _managed(tmp_path)
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup",
                        "cwd": str(repo), "session_id": "s-2"})
    assert "gitstate" in _shim(repo, "hook", "session-start", stdin=event).stdout
    assert gitstate(repo, "init", "--runtime", "claude-code").returncode == 0
    quiet = _shim(repo, "hook", "session-start", stdin=event)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    server = _shim(repo, "mcp", stdin="")
    assert server.returncode == 0 and "the plugin's stays off" in server.stderr
    # where .mcp.json no longer names gitstate's server, the plugin's serves (it starts: the
    # SDK answers nothing on an empty stdin and ends)
    (repo / ".mcp.json").write_text('{"mcpServers": {}}')
    assert "stays off" not in _shim(repo, "mcp", stdin="").stderr


def test_the_shims_hooks_are_silent_and_start_no_python_where_gitstate_manages_nothing(
        tmp_path):
    """A plugin installed for the user runs in every project: where gitstate manages nothing
    (no gitstate.python, no lifecycle) its hooks end at once."""
    plain = make_repo(tmp_path / "plain")
    python = tmp_path / "py"
    python.mkdir()
    marker = tmp_path / "ran"
    (python / "gitstate").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (python / "gitstate").chmod(0o755)
    res = _shim(plain, "hook", "context", env={"PATH": f"{python}:/usr/bin:/bin"})
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert not marker.exists()


def _enable_plugin(value: bool = True) -> Path:
    """gitstate's plugin enabled for the user, as `claude plugin install` records it."""
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {"gitstate@gitstate": value}}))
    return settings


def _doctor(repo: Path) -> dict | None:
    found = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
    return next((f for f in found if f["check"] == "plugin"), None)


def test_doctor_says_whether_the_plugin_or_the_projects_settings_run_gitstate(tmp_path,
                                                                              monkeypatch):
    repo = _managed(tmp_path)
    assert _doctor(repo) is None                      # neither: nothing to say
    _enable_plugin()
    said = _doctor(repo)
    assert said["status"] == "ok" and said["detail"] == (
        "the plugin gitstate@gitstate (enabled in ~/.claude/settings.json) runs gitstate's "
        "hooks and MCP server")
    with monkeypatch.context() as clone:            # a clone where no gitstate is found
        clone.setenv("PATH", "/usr/bin:/bin")
        git(repo, "config", "--unset", "gitstate.python")
        said = _doctor(repo)
        assert said["status"] == "fail" and "finds no gitstate in this clone" in said["detail"]
        assert said["fix"].startswith("`gitstate init` in this clone")
        assert gitstate(repo, "init").returncode == 0
    assert _doctor(repo)["status"] == "ok"
    (repo / ".claude").mkdir()                       # Claude Code settings of the user's own
    (repo / ".claude" / "settings.json").write_text('{"hooks": {}}')
    found = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
    assert not [f for f in found if f["check"] == "runtime"]   # no "runs without gitstate's"

    init = gitstate(repo, "init", "--runtime", "claude-code")
    assert "gitstate's Claude Code plugin is enabled (gitstate@gitstate in " \
           "~/.claude/settings.json): in this project it leaves the hooks" in init.stdout
    said = _doctor(repo)
    assert said["status"] == "ok" and said["detail"] == (
        "this project's settings run its hooks and MCP server (`init --runtime claude-code`), "
        "and the plugin's stand down")
    # a person's local settings turn the plugin off for this project
    (repo / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledPlugins": {"gitstate@gitstate": False}}))
    assert _doctor(repo)["detail"].endswith("gitstate's Claude Code plugin is not enabled")


def test_doctor_warns_where_the_plugin_cannot_tell_the_projects_server_and_both_run(
        tmp_path):
    """An older gitstate's settings: hooks that run `gitstate hook` by bare name (the shim
    recognises them and stands down) and an `.mcp.json` server that runs `gitstate mcp` by
    name (it does not): that server would run twice, until init rewrites it."""
    repo = _managed(tmp_path)
    _enable_plugin()
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "gitstate hook session-start"}]}]}}))
    quiet = _shim(repo, "hook", "session-start")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    (repo / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"gs": {"command": "gitstate", "args": ["mcp"]}}}))
    said = _doctor(repo)
    assert said["status"] == "warn" and said["detail"].startswith(
        "gitstate's MCP server run twice: from the plugin gitstate@gitstate"), said
    assert "`gitstate init --runtime claude-code`" in said["fix"]
    assert "stays off" not in _shim(repo, "mcp", stdin="").stderr    # as doctor says: it runs
    assert gitstate(repo, "init", "--runtime", "claude-code").returncode == 0
    assert _doctor(repo)["status"] == "ok"
    assert "stays off" in _shim(repo, "mcp", stdin="").stderr
