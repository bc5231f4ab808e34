"""`.pre-commit-hooks.yaml`: the real `pre-commit` tool installs gitstate's hooks from this
repository (given as a local path at a commit) into a temporary repository, which then refuses
an illegal state commit and accepts a legal one; after `gitstate init`, the README's commands
leave each check running once, and `doctor` counts pre-commit's hooks as shut doors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import UNHOOKED, built_once, git, gitstate, make_repo

SOURCE = Path(__file__).resolve().parents[2]


def test_the_hooks_file_declares_both_stages():
    hooks = yaml.safe_load((SOURCE / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert by_id["gitstate"]["entry"] == "gitstate hook pre-commit"
    assert by_id["gitstate"]["stages"] == ["pre-commit"]
    assert by_id["gitstate-commit-msg"]["stages"] == ["commit-msg"]
    assert all(h["language"] == "python" for h in hooks)


def _pre_commit() -> list[str]:
    exe = Path(sys.executable).parent / "pre-commit"
    if exe.exists():
        return [str(exe)]
    if shutil.which("pre-commit"):
        return ["pre-commit"]
    pytest.skip("the pre-commit tool is not installed (pip install '.[test]')")


def _source_rev() -> str:
    if not (SOURCE / ".git").exists():
        pytest.skip("gitstate is not a git checkout here: pre-commit needs a repository")
    rev = git(SOURCE, "rev-parse", "HEAD").stdout.strip()
    if git(SOURCE, "cat-file", "-e", f"{rev}:.pre-commit-hooks.yaml", check=False).returncode:
        pytest.skip("HEAD of this checkout has no .pre-commit-hooks.yaml yet")
    return rev


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory):
    """One cache of pre-commit's environments for the tests of this file, whichever
    pytest-xdist workers run them (pre-commit locks its own store while it installs)."""
    return built_once(tmp_path_factory, "pre-commit-home", lambda where: None)


def _install(tool, repo, env, *extra):
    inst = subprocess.run([*tool, "install", *extra, "--hook-type", "pre-commit", "--hook-type",
                           "commit-msg", "--install-hooks"], cwd=repo, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if inst.returncode != 0 and ("pip" in inst.stdout + inst.stderr or
                                 "Could not" in inst.stdout + inst.stderr):
        pytest.skip("pre-commit could not install gitstate's environment offline:\n"
                    + (inst.stdout + inst.stderr)[-1500:])
    assert inst.returncode == 0, inst.stdout + inst.stderr
    return inst


@pytest.mark.e2e
def test_pre_commit_installs_gitstate_and_judges_state_commits(tmp_path, pre_commit_home):
    tool = _pre_commit()
    rev = _source_rev()
    repo = make_repo(tmp_path / "team")
    lifecycle = SOURCE / "protocols" / "haak" / "lifecycle.yaml"
    (repo / "protocols").mkdir()
    shutil.copy(lifecycle, repo / "protocols" / "lifecycle.yaml")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {SOURCE}\n    rev: {rev}\n    hooks:\n"
        "      - id: gitstate\n      - id: gitstate-commit-msg\n")
    git(repo, "add", ".")
    git(repo, *UNHOOKED, "commit", "-q", "-m", "manage with lifecycle haak")
    env = dict(os.environ, PRE_COMMIT_HOME=str(pre_commit_home))
    _install(tool, repo, env)

    def commit(message):
        return subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)

    state = repo / "agent" / "alice" / "_state.md"
    state.parent.mkdir(parents=True)
    state.write_text("---\nagent: alice\nstate: bootstrap\n---\n")
    git(repo, "add", ".")
    res = commit("@alice: [STATE:bootstrap] born")
    assert res.returncode == 0, res.stdout + res.stderr                 # accepted
    state.write_text("---\nagent: alice\nstate: deep_work\n---\n")
    git(repo, "add", ".")
    res = commit("@alice: [STATE:deep_work] skipping ahead")
    assert res.returncode != 0
    assert "[illegal-transition]" in res.stdout + res.stderr            # refused
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "@alice: [STATE:bootstrap] born"
    state.write_text("---\nagent: alice\nstate: inbox\n---\n")
    git(repo, "add", ".")
    res = commit("@alice: [STATE:deep_work] wrong tag")
    assert res.returncode != 0 and "[tag-mismatch]" in res.stdout + res.stderr
    res = commit("@alice: [STATE:inbox] restored")
    assert res.returncode == 0, res.stdout + res.stderr


def _doors(repo):
    import json
    return [f for f in json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
            if f["check"] == "hooks"]


@pytest.mark.e2e
def test_after_gitstate_init_the_readme_commands_run_each_check_once(tmp_path,
                                                                     pre_commit_home):
    """The README's order: `gitstate init`, then `pre-commit install -f ...`. Without -f,
    pre-commit's migration mode would run gitstate's shim and its hook both (each refusal said
    twice): doctor says so; with -f each check runs once, doctor counts pre-commit's hooks as
    shut doors, and `gitstate init` again leaves them to pre-commit."""
    tool = _pre_commit()
    rev = _source_rev()
    repo = make_repo(tmp_path / "team")
    assert gitstate(repo, "init").returncode == 0
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {SOURCE}\n    rev: {rev}\n    hooks:\n"
        "      - id: gitstate\n      - id: gitstate-commit-msg\n")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, *UNHOOKED, "commit", "-q", "-m", "pre-commit config")
    env = dict(os.environ, PRE_COMMIT_HOME=str(pre_commit_home))

    _install(tool, repo, env)                                 # migration mode
    twice = [f for f in _doors(repo) if f["status"] == "warn"]
    assert twice and "twice" in twice[0]["detail"] and "-f" in twice[0]["fix"]

    _install(tool, repo, env, "-f")                           # the README's command
    hooks = _doors(repo)
    assert [f["status"] for f in hooks] == ["ok"], hooks
    assert "pre-commit framework (.pre-commit-config.yaml)" in hooks[0]["detail"]
    assert all(f["status"] != "fail" for f in json_findings(repo))

    def commit(message):
        return subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert gitstate(repo, "spawn", "alice").returncode == 0    # through pre-commit's hooks
    state = repo / "agent" / "alice" / "_state.md"
    state.write_text(state.read_text().replace("state: bootstrap", "state: deep_work"))
    git(repo, "add", ".")
    res = commit("@alice: [STATE:deep_work] skipping ahead")
    assert res.returncode != 0
    assert (res.stdout + res.stderr).count("[illegal-transition]") == 1, res.stdout + res.stderr

    hook = (repo / ".git" / "hooks" / "pre-commit").read_text()
    again = gitstate(repo, "init")
    assert again.returncode == 0 and "left the pre-commit hook to pre-commit" in again.stdout
    assert (repo / ".git" / "hooks" / "pre-commit").read_text() == hook


def json_findings(repo):
    import json
    return json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
