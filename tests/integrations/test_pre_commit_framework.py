"""`.pre-commit-hooks.yaml`: the real `pre-commit` tool installs gitstate's hooks from this
repository (given as a local path at a commit) into a temporary repository, which then refuses
an illegal state commit and accepts a legal one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import UNHOOKED, git, make_repo

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


@pytest.mark.e2e
def test_pre_commit_installs_gitstate_and_judges_state_commits(tmp_path):
    tool = _pre_commit()
    if not (SOURCE / ".git").exists():
        pytest.skip("gitstate is not a git checkout here: pre-commit needs a repository")
    rev = git(SOURCE, "rev-parse", "HEAD").stdout.strip()
    if git(SOURCE, "cat-file", "-e", f"{rev}:.pre-commit-hooks.yaml", check=False).returncode:
        pytest.skip("HEAD of this checkout has no .pre-commit-hooks.yaml yet")
    repo = make_repo(tmp_path / "team")
    lifecycle = SOURCE / "protocols" / "haak" / "lifecycle.yaml"
    (repo / "protocols").mkdir()
    shutil.copy(lifecycle, repo / "protocols" / "lifecycle.yaml")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {SOURCE}\n    rev: {rev}\n    hooks:\n"
        "      - id: gitstate\n      - id: gitstate-commit-msg\n")
    git(repo, "add", ".")
    git(repo, *UNHOOKED, "commit", "-q", "-m", "manage with lifecycle haak")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    inst = subprocess.run([*tool, "install", "--hook-type", "pre-commit", "--hook-type",
                           "commit-msg", "--install-hooks"], cwd=repo, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if inst.returncode != 0 and ("pip" in inst.stdout + inst.stderr or
                                 "Could not" in inst.stdout + inst.stderr):
        pytest.skip("pre-commit could not install gitstate's environment offline:\n"
                    + (inst.stdout + inst.stderr)[-1500:])
    assert inst.returncode == 0, inst.stdout + inst.stderr

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
