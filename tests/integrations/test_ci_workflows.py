"""`gitstate init --ci github|gitlab`: a workflow of the right shape (valid YAML, on pushes and
pull requests, the whole history fetched) whose command passes on a legal history and fails on
one with a commit made without hooks."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import yaml

from conftest import UNHOOKED, git, gitstate, set_state_line


def _run(repo, command):
    """A workflow's command as the CI runner's shell would run it (gitstate from this venv)."""
    argv = shlex.split(command)
    assert argv[0] == "gitstate"
    return subprocess.run([sys.executable, "-m", "gitstate", *argv[1:]], cwd=repo,
                          capture_output=True, text=True)


def _illegal_commit(repo):
    gitstate(repo, "spawn", "alice")
    set_state_line(repo, "alice", "state", "deep_work")
    git(repo, "add", "-A")
    git(repo, *UNHOOKED, "commit", "-q", "-m", "@alice: [STATE:deep_work] skipping ahead")


def test_github_workflow(repo):
    res = gitstate(repo, "init", "--ci", "github", "--json")
    assert res.returncode == 0, res.stderr
    entry = json.loads(res.stdout)["integrations"][0]
    assert entry == {"kind": "ci", "name": "github", "path": ".github/workflows/gitstate.yml",
                     "changed": True, "added": ["verify"], "kept": []}
    flow = yaml.safe_load((repo / entry["path"]).read_text())
    triggers = flow.get("on", flow.get(True))            # YAML 1.1 reads `on` as true
    assert set(triggers) == {"push", "pull_request"}
    steps = flow["jobs"]["verify"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    command = steps[-1]["run"]
    assert command == "gitstate verify --no-cache"
    assert any("pip install" in s.get("run", "") for s in steps)
    assert _run(repo, command).returncode == 0
    _illegal_commit(repo)
    failed = _run(repo, command)
    assert failed.returncode == 1 and "[illegal-transition]" in failed.stdout
    again = json.loads(gitstate(repo, "init", "--ci", "github", "--json").stdout)
    assert again["integrations"][0]["changed"] is False
    assert "ci" in gitstate(repo, "doctor").stdout


def test_gitlab_job_is_appended_to_the_users_pipeline(repo):
    mine = "stages: [test]\n\nunit:\n  stage: test\n  script:\n    - make test\n"
    (repo / ".gitlab-ci.yml").write_text(mine)
    res = gitstate(repo, "init", "--ci", "gitlab", "--json")
    assert res.returncode == 0, res.stderr
    entry = json.loads(res.stdout)["integrations"][0]
    assert entry["changed"] and entry["added"] == ["gitstate-verify"] and entry["kept"]
    text = (repo / ".gitlab-ci.yml").read_text()
    assert text.startswith(mine)                          # the user's pipeline, byte for byte
    pipeline = yaml.safe_load(text)
    assert pipeline["unit"]["script"] == ["make test"]
    job = pipeline["gitstate-verify"]
    assert job["variables"]["GIT_DEPTH"] == "0"
    assert [r["if"] for r in job["rules"]] == ['$CI_PIPELINE_SOURCE == "push"',
                                               '$CI_PIPELINE_SOURCE == "merge_request_event"']
    command = job["script"][-1]
    assert command == "gitstate verify --no-cache"
    assert _run(repo, command).returncode == 0
    _illegal_commit(repo)
    assert _run(repo, command).returncode == 1
    gitstate(repo, "init", "--ci", "gitlab")
    assert (repo / ".gitlab-ci.yml").read_text() == text  # idempotent


def test_a_users_own_github_workflow_is_never_overwritten(repo):
    flow = repo / ".github" / "workflows" / "gitstate.yml"
    flow.parent.mkdir(parents=True)
    flow.write_text("name: mine\n")
    entry = json.loads(gitstate(repo, "init", "--ci", "github", "--json").stdout)[
        "integrations"][0]
    assert entry["changed"] is False and entry["kept"] == [".github/workflows/gitstate.yml"]
    assert flow.read_text() == "name: mine\n"
