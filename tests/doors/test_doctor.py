"""`gitstate doctor`: whether this clone's doors hold, said plainly."""

from __future__ import annotations

import json

from conftest import git, gitstate


def findings(repo) -> tuple[int, dict]:
    res = gitstate(repo, "doctor", "--json")
    data = json.loads(res.stdout)
    return res.returncode, {(f["check"], f["status"]) for f in data["findings"]}


def test_a_fresh_clone_is_protected(repo):
    code, found = findings(repo)
    assert code == 0
    assert {("law", "ok"), ("hooks", "ok"), ("gitstate", "ok"), ("cache", "ok")} <= found
    assert ("approvals", "warn") in found      # no allowed_signers: approvals unauthenticated
    text = gitstate(repo, "doctor").stdout
    assert "doors hold" in text and "Approved-by" in text


def test_a_modified_hook_is_an_open_door(repo):
    hook = repo / ".git" / "hooks" / "reference-transaction"
    hook.write_text(hook.read_text().replace("exit 0", "exit 0  # edited", 1))
    code, found = findings(repo)
    assert code == 1 and ("hooks", "fail") in found
    res = gitstate(repo, "doctor")
    assert "reference-transaction" in res.stdout and "gitstate init" in res.stdout
    assert gitstate(repo, "init").returncode == 0        # the fix it names works
    assert findings(repo)[0] == 0


def test_hooks_run_from_tracked_files_are_an_open_door(repo):
    git(repo, "config", "core.hooksPath", ".githooks")
    code, found = findings(repo)
    assert code == 1 and ("hooks", "fail") in found
    assert "tracked" in gitstate(repo, "doctor").stdout


def test_a_missing_hook_and_a_hub(repo, tmp_path):
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", str(hub))
    git(repo, "remote", "add", "origin", str(hub))
    code, found = findings(repo)
    assert code == 1 and ("hooks", "fail") in found and ("hub", "ok") in found
