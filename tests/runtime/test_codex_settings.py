"""`gitstate init --runtime codex` (gitstate/runtime/codex/settings.py) and what `doctor` says
of Codex (gitstate/runtime/codex/doctor.py), without the binary: the merge keeps what is the
user's, changes nothing twice, and refuses a server of someone else's; doctor says nothing in
a project that does not use Codex."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from conftest import gitstate

from gitstate.runtime.codex import doctor, settings

USER_HOOKS = {"hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo mine"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint"}]}],
    "Interrupt": [{"hooks": [{"type": "command", "command": "./bye"}]}]}}
USER_CONFIG = """\
# the team's Codex settings
model = "gpt-5"   # theirs

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]

[mcp_servers.docs.env]
TOKEN_FILE = "~/.docs"
"""


def init(repo: Path, *more: str):
    res = gitstate(repo, "init", "--runtime", "codex", "--json", *more)
    return res, (json.loads(res.stdout) if res.returncode == 0 else None)


def reports(data: dict) -> dict:
    return {i["path"]: i for i in data["integrations"]}


def test_init_merges_into_the_users_files_and_a_second_run_writes_nothing(repo):
    (repo / ".codex").mkdir()
    (repo / ".codex" / "hooks.json").write_text(json.dumps(USER_HOOKS, indent=1))
    (repo / ".codex" / "config.toml").write_text(USER_CONFIG)
    res, data = init(repo)
    assert res.returncode == 0, res.stderr
    hooks = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    # the user's groups first, where they were; gitstate's after them, one per event
    assert hooks["SessionStart"][0] == USER_HOOKS["hooks"]["SessionStart"][0]
    assert hooks["PreToolUse"][0] == USER_HOOKS["hooks"]["PreToolUse"][0]
    assert hooks["Interrupt"] == USER_HOOKS["hooks"]["Interrupt"]
    assert hooks["PreToolUse"][1] == {"matcher": "spawn_agent", "hooks": [{
        "type": "command", "timeout": 30,
        "command": '"$(git rev-parse --show-toplevel)"/.codex/hooks/gitstate spawn-guard '
                   '--runtime codex'}]}
    assert sorted(hooks) == sorted({*settings.HOOKS, "Interrupt"})
    text = (repo / ".codex" / "config.toml").read_text()
    assert USER_CONFIG.split("[mcp_servers.docs]")[1] in text    # their tables, as written
    config = tomllib.loads(text)
    assert config["model"] == "gpt-5" and config["allow_login_shell"] is False
    assert config["mcp_servers"]["docs"] == {"command": "docs-server", "args": ["--port", "0"],
                                             "env": {"TOKEN_FILE": "~/.docs"}}
    assert config["mcp_servers"]["gitstate"] == settings.MCP_SERVER
    shim = repo / ".codex" / "hooks" / "gitstate"
    assert shim.stat().st_mode & 0o111 and str(Path.cwd()) not in shim.read_text()
    got = reports(data)
    assert got[".codex/hooks.json"]["kept"] == ["SessionStart", "PreToolUse"]
    assert got[".codex/config.toml"]["kept"] == ["docs"]
    assert "trusted" in got[".codex/config.toml"]["then"]

    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (repo / ".codex").rglob("*")
              if p.is_file()}
    res, data = init(repo)
    assert res.returncode == 0, res.stderr
    assert [i["changed"] for i in data["integrations"]] == [False, False]
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (repo / ".codex").rglob("*")
            if p.is_file()} == before


def test_gitstates_own_entries_are_updated_where_they_stand(repo):
    assert init(repo)[0].returncode == 0
    path = repo / ".codex" / "hooks.json"
    table = json.loads(path.read_text())
    table["hooks"]["Stop"].insert(0, {"hooks": [{"type": "command", "command": "./mine"}]})
    table["hooks"]["Stop"][1]["hooks"][0]["timeout"] = 5
    path.write_text(json.dumps(table))
    config = repo / ".codex" / "config.toml"
    config.write_text('allow_login_shell = true\n\n[mcp_servers.gitstate]\ncommand = '
                      '"gitstate"\nargs = ["mcp"]\nstartup_timeout_sec = 20\n\n'
                      '[mcp_servers.gitstate.env]\nX = "1"\n\n[other]\nkey = 1\n')
    res, data = init(repo)
    assert res.returncode == 0, res.stderr
    stop = json.loads(path.read_text())["hooks"]["Stop"]
    assert [g["hooks"][0]["command"] for g in stop] == [
        "./mine", f"{settings.COMMAND}stop --runtime codex"]
    assert stop[1]["hooks"][0]["timeout"] == 30
    got = tomllib.loads(config.read_text())
    assert got["allow_login_shell"] is True          # the user's choice is kept
    assert got["mcp_servers"]["gitstate"] == {**settings.MCP_SERVER,
                                              "startup_timeout_sec": 20, "env": {"X": "1"}}
    assert got["other"] == {"key": 1}
    assert reports(data)[".codex/config.toml"]["added"] == ["mcp_servers.gitstate"]


def test_a_gitstate_server_of_someone_elses_is_refused_and_nothing_is_written(repo):
    (repo / ".codex").mkdir()
    config = repo / ".codex" / "config.toml"
    config.write_text('[mcp_servers.gitstate]\ncommand = "npx"\nargs = ["gitstate-mcp"]\n')
    res, _ = init(repo)
    assert res.returncode != 0
    assert "not gitstate's MCP server" in res.stderr + res.stdout
    assert config.read_text() == '[mcp_servers.gitstate]\ncommand = "npx"\nargs = ' \
                                 '["gitstate-mcp"]\n'
    assert not (repo / ".codex" / "hooks.json").exists()


def codex_findings(repo: Path) -> list[dict]:
    res = gitstate(repo, "doctor", "--json")
    found = json.loads(res.stdout)
    rows = found["findings"] if isinstance(found, dict) else found
    return [(f["status"], f["check"], f["detail"]) for f in rows
            if f["check"].startswith("codex")]


def test_doctor_says_nothing_of_codex_in_a_project_that_does_not_use_it(repo, tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "nowhere"))
    assert codex_findings(repo) == []
    (repo / ".codex").mkdir()      # Codex's own files, not gitstate's hooks: still nothing
    (repo / ".codex" / "hooks.json").write_text(json.dumps(USER_HOOKS))
    assert codex_findings(repo) == []


def test_doctor_checks_the_hooks_and_whether_codex_trusts_them(repo, tmp_path, monkeypatch):
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)   # no app-server to ask
    assert init(repo)[0].returncode == 0
    found = codex_findings(repo)
    assert found[0][:2] == ("ok", "codex-hooks")
    assert found[1][:2] == ("warn", "codex-trust") and "does not trust" in found[1][2]

    top = str(repo.resolve())
    keys = [f"{top}/.codex/hooks.json:{doctor.snake(event)}:0:0" for event in settings.HOOKS]
    assert keys[0].endswith(":session_start:0:0") and keys[1].endswith(":post_tool_use:0:0")
    state = "".join(f'[hooks.state."{k}"]\ntrusted_hash = "sha256:0"\n' for k in keys[:3])
    (home / "config.toml").write_text(f'[projects."{top}"]\ntrust_level = "trusted"\n'
                                      + state)
    found = codex_findings(repo)
    assert found[1] == ("warn", "codex-trust", f"trust recorded for 3 of {len(keys)} of "
                        "gitstate's hooks: Codex skips the others")
    state = "".join(f'[hooks.state."{k}"]\ntrusted_hash = "sha256:0"\n' for k in keys)
    (home / "config.toml").write_text(f'[projects."{top}"]\ntrust_level = "trusted"\n'
                                      + state)
    assert codex_findings(repo)[1][0] == "ok"

    # a hook that cannot run is a failure
    shim = repo / ".codex" / "hooks" / "gitstate"
    shim.write_text("#!/bin/sh\necho broken >&2\nexit 3\n")
    assert codex_findings(repo)[0] == ("fail", "codex-hooks",
                                       "gitstate's Codex hook fails (exit 3): broken")


@pytest.mark.parametrize("event,key", [("SessionStart", "session_start"),
                                       ("PostToolUse", "post_tool_use"),
                                       ("UserPromptSubmit", "user_prompt_submit")])
def test_a_hooks_key_names_its_event_as_codex_does(event, key):
    assert doctor.snake(event) == key
