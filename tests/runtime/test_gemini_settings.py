"""`gitstate init --runtime gemini` (gitstate/runtime/gemini/settings.py) and what `doctor`
says of Gemini CLI (gitstate/runtime/gemini/doctor.py), without the binary: the merge keeps
the user's settings, hooks and servers, changes nothing twice, and refuses a server of
someone else's; doctor says nothing in a project that does not use Gemini CLI."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import gitstate

from gitstate.runtime.gemini import doctor, settings

USER = {"general": {"vimMode": True},
        "hooks": {"enabled": True,
                  "BeforeTool": [{"matcher": "run_shell_command",
                                  "hooks": [{"type": "command", "command": "./lint"}]}],
                  "PreCompress": [{"hooks": [{"type": "command", "command": "./note"}]}]},
        "mcpServers": {"docs": {"command": "docs-server", "args": ["--port", "0"]}}}


def init(repo: Path):
    res = gitstate(repo, "init", "--runtime", "gemini", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_init_merges_into_the_users_settings_and_a_second_run_writes_nothing(repo):
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text(json.dumps(USER, indent=1))
    data = init(repo)
    written = json.loads((repo / ".gemini" / "settings.json").read_text())
    assert written["general"] == USER["general"]
    hooks = written["hooks"]
    assert hooks["enabled"] is True
    assert hooks["PreCompress"] == USER["hooks"]["PreCompress"]
    assert hooks["BeforeTool"][0] == USER["hooks"]["BeforeTool"][0]
    assert hooks["BeforeTool"][1] == {"matcher": "invoke_agent", "hooks": [{
        "type": "command", "timeout": 30_000,
        "command": '"$(git rev-parse --show-toplevel)"/.gemini/hooks/gitstate spawn-guard '
                   '--runtime gemini'}]}
    assert sorted(k for k in hooks if k != "enabled") == sorted({*settings.HOOKS,
                                                                "PreCompress"})
    assert all(h["timeout"] == 30_000 for e in settings.HOOKS for g in hooks[e]
               for h in g["hooks"] if h["command"].startswith(settings.COMMAND))
    assert written["mcpServers"]["docs"] == USER["mcpServers"]["docs"]
    assert written["mcpServers"]["gitstate"] == settings.MCP_SERVER
    shim = repo / ".gemini" / "hooks" / "gitstate"
    assert shim.is_file() and shim.stat().st_mode & 0o111
    entry = [i for i in data["integrations"] if i["path"] == ".gemini/settings.json"][0]
    assert entry["changed"] and "mcpServers.gitstate" in entry["added"]
    assert "docs" in entry["kept"] and "trusted folder" in entry["then"]

    before = (repo / ".gemini" / "settings.json").stat().st_mtime_ns
    again = init(repo)
    entry = [i for i in again["integrations"] if i["path"] == ".gemini/settings.json"][0]
    assert not entry["changed"] and entry["added"] == []
    assert (repo / ".gemini" / "settings.json").stat().st_mtime_ns == before


def test_a_server_named_gitstate_that_is_someone_elses_is_refused(repo):
    (repo / ".gemini").mkdir()
    theirs = {"mcpServers": {"gitstate": {"command": "not-ours"}}}
    (repo / ".gemini" / "settings.json").write_text(json.dumps(theirs))
    res = gitstate(repo, "init", "--runtime", "gemini")
    assert res.returncode != 0
    assert "not gitstate's MCP server" in res.stderr
    assert json.loads((repo / ".gemini" / "settings.json").read_text()) == theirs


def _managed(repo: Path):
    from gitstate.git.repo import Managed
    return Managed(None, repo)    # type: ignore[arg-type]  # findings read only `top`


def test_doctor_says_nothing_without_gemini_and_checks_hooks_and_trust_with_it(
        repo, tmp_path, monkeypatch):
    assert doctor.findings(_managed(repo)) == []
    init(repo)
    rules = tmp_path / "trustedFolders.json"
    monkeypatch.setenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", str(rules))
    found = {f["check"]: f for f in doctor.findings(_managed(repo))}
    assert found["gemini-hooks"]["status"] == "ok", found
    assert found["gemini-trust"]["status"] == "warn"
    rules.write_text(json.dumps({str(repo.resolve()): "TRUST_FOLDER"}))
    found = {f["check"]: f for f in doctor.findings(_managed(repo))}
    assert found["gemini-trust"]["status"] == "ok"
    rules.write_text(json.dumps({str(repo.resolve()): "DO_NOT_TRUST"}))
    found = {f["check"]: f for f in doctor.findings(_managed(repo))}
    assert "refuses" in found["gemini-trust"]["detail"]


def test_gitstate_doctor_reports_the_gemini_checks(repo, tmp_path, monkeypatch):
    """Through the registry: `gitstate doctor` adds Gemini CLI's findings where it is used."""
    init(repo)
    monkeypatch.setenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", str(tmp_path / "none.json"))
    rows = json.loads(gitstate(repo, "doctor", "--json").stdout)
    rows = rows["findings"] if isinstance(rows, dict) else rows
    found = {f["check"]: f["status"] for f in rows if f["check"].startswith("gemini-")}
    assert found == {"gemini-hooks": "ok", "gemini-trust": "warn"}
