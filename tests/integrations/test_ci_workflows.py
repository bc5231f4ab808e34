"""`gitstate init --ci github|gitlab`: a workflow valid by the forges' own schemas (those that
`check-jsonschema` vendors), on pushes and pull requests, the whole history fetched, installing
exactly this release (or what `--install` names), whose command passes on a legal history and
fails on one with a commit made without hooks; `doctor` judges the install line; the GitHub
Action at the repository's root and the GitLab template are valid too."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import UNHOOKED, git, gitstate, set_state_line


def _run(repo, command):
    """A workflow's command as the CI runner's shell would run it (gitstate from this venv)."""
    argv = shlex.split(command)
    assert argv[0] == "gitstate"
    return subprocess.run([sys.executable, "-m", "gitstate", *argv[1:]], cwd=repo,
                          capture_output=True, text=True)


ROOT = Path(__file__).resolve().parents[2]


def schema_check(schema: str, *files: Path) -> None:
    """The files validate against a forge's schema as vendored by check-jsonschema (no
    network: `--builtin-schema`)."""
    tool = shutil.which("check-jsonschema") or str(Path(sys.executable).parent
                                                    / "check-jsonschema")
    if not Path(tool).exists():
        pytest.skip("check-jsonschema is not installed: pip install '.[test]'")
    res = subprocess.run([tool, "--builtin-schema", f"vendor.{schema}", *map(str, files)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def _illegal_commit(repo):
    gitstate(repo, "spawn", "alice")
    set_state_line(repo, "alice", "state", "deep_work")
    git(repo, "add", "-A")
    git(repo, *UNHOOKED, "commit", "-q", "-m", "@alice: [STATE:deep_work] skipping ahead")


def test_github_workflow(repo):
    res = gitstate(repo, "init", "--ci", "github", "--json")
    assert res.returncode == 0, res.stderr
    assert "until that release is published there, give --install" in res.stderr
    entry = json.loads(res.stdout)["integrations"][0]
    assert entry == {"kind": "ci", "name": "github", "path": ".github/workflows/gitstate.yml",
                     "changed": True, "added": ["verify"], "kept": []}
    schema_check("github-workflows", repo / entry["path"])
    flow = yaml.safe_load((repo / entry["path"]).read_text())
    triggers = flow.get("on", flow.get(True))            # YAML 1.1 reads `on` as true
    assert set(triggers) == {"push", "pull_request"}
    job = flow["jobs"]["verify"]
    assert flow["permissions"] == job["permissions"] == {"contents": "read"}
    from gitstate import __version__
    assert job["env"]["GITSTATE_INSTALL"] == f"gitstate-agents=={__version__}"
    steps = job["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    command = steps[-1]["run"]
    assert command == "gitstate verify --no-cache"
    assert steps[-2]["run"] == 'pip install "$GITSTATE_INSTALL"'
    assert _run(repo, command).returncode == 0
    _illegal_commit(repo)
    failed = _run(repo, command)
    assert failed.returncode == 1 and "[illegal-transition]" in failed.stdout
    again = json.loads(gitstate(repo, "init", "--ci", "github", "--json").stdout)
    assert again["integrations"][0]["changed"] is False
    ci = _ci_findings(repo)
    assert [f["status"] for f in ci] == ["ok"], ci
    assert f"installs gitstate-agents {__version__}" in ci[0]["detail"]
    assert "not checked here" in ci[0]["detail"]              # what it cannot know, said


def test_gitlab_job_is_appended_to_the_users_pipeline(repo):
    mine = "stages: [test]\n\nunit:\n  stage: test\n  script:\n    - make test\n"
    (repo / ".gitlab-ci.yml").write_text(mine)
    res = gitstate(repo, "init", "--ci", "gitlab", "--json")
    assert res.returncode == 0, res.stderr
    entry = json.loads(res.stdout)["integrations"][0]
    assert entry["changed"] and entry["added"] == ["gitstate-verify"] and entry["kept"]
    text = (repo / ".gitlab-ci.yml").read_text()
    assert text.startswith(mine)                          # the user's pipeline, byte for byte
    schema_check("gitlab-ci", repo / ".gitlab-ci.yml")
    pipeline = yaml.safe_load(text)
    assert pipeline["unit"]["script"] == ["make test"]
    job = pipeline["gitstate-verify"]
    assert job["variables"]["GIT_DEPTH"] == "0"
    # merge request pipelines, and branch pipelines only for a branch without an open merge
    # request: never the job twice for one push
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'},
                            {"if": "$CI_COMMIT_BRANCH && $CI_OPEN_MERGE_REQUESTS",
                             "when": "never"},
                            {"if": "$CI_COMMIT_BRANCH"}]
    assert job["script"][0] == 'pip install "$GITSTATE_INSTALL"'
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


def _ci_findings(repo):
    res = gitstate(repo, "doctor", "--json")
    return [f for f in json.loads(res.stdout)["findings"] if f["check"] == "ci"]


def test_init_ci_install_writes_what_it_is_given_and_refuses_what_cannot_install(repo):
    url = "git+https://git.example.org/tools/gitstate@v0.1.0"
    res = gitstate(repo, "init", "--ci", "gitlab", "--install", url)
    assert res.returncode == 0, res.stderr
    job = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())["gitstate-verify"]
    assert job["variables"]["GITSTATE_INSTALL"] == url
    schema_check("gitlab-ci", repo / ".gitlab-ci.yml")
    assert "installs gitstate from git at v0.1.0" in _ci_findings(repo)[0]["detail"]
    head = git(repo, "rev-parse", "HEAD").stdout
    for bad in ("gitstate==0.1.0", "https://example.org/other-1.0-py3-none-any.whl"):
        res = gitstate(repo, "init", "--ci", "github", "--install", bad)
        assert res.returncode == 2 and "--install" in res.stderr, res.stderr
    assert not (repo / ".github").exists() and git(repo, "rev-parse", "HEAD").stdout == head
    res = gitstate(repo, "init", "--install", url)
    assert res.returncode == 2 and "--ci" in res.stderr


@pytest.mark.parametrize("line, status, says", [
    ("gitstate==0.1.0", "fail", "unrelated project"),
    ("gitstate-agents", "warn", "no exact version"),
    ("git+https://git.example.org/gitstate", "warn", "without @TAG"),
    ("https://files.example.org/gitstate_agents-0.1.0-py3-none-any.whl", "ok", "0.1.0"),
])
def test_doctor_judges_a_ci_install_line_by_its_form(repo, line, status, says):
    flow = repo / ".github" / "workflows" / "verify.yml"
    flow.parent.mkdir(parents=True)
    flow.write_text("on: push\njobs:\n  v:\n    runs-on: ubuntu-latest\n    steps:\n"
                    f"      - run: pip install -q '{line}'\n      - run: gitstate verify\n")
    [found] = _ci_findings(repo)
    assert found["status"] == status and says in found["detail"], found
    assert (found["fix"] is None) == (status == "ok")


def test_the_action_and_the_gitlab_template_are_valid_and_install_this_release():
    from gitstate import __version__
    schema_check("github-actions", ROOT / "action.yml")
    schema_check("gitlab-ci", ROOT / "data" / "ci" / "gitlab-ci.yml")
    schema_check("github-workflows", ROOT / "data" / "ci" / "github-workflow.yml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    runs = [s["run"] for s in action["runs"]["steps"] if "run" in s]
    assert runs[1:] == ['pip install "${GITSTATE_INSTALL:-$ACTION_PATH}"',
                        "gitstate verify $ARGS"]
    assert "--is-shallow-repository" in runs[0]       # first: a shallow checkout is refused
    for name in ("github-workflow.yml", "gitlab-ci.yml"):   # the release they were shipped with
        text = (ROOT / "data" / "ci" / name).read_text()
        assert f'GITSTATE_INSTALL: "gitstate-agents=={__version__}"' in text, name


def _shallow(tmp_path, repo, name="shallow"):
    clone = tmp_path / name
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    return clone


@pytest.mark.parametrize("forge", ["github", "gitlab"])
def test_a_jobs_verify_fails_in_a_shallow_clone_and_says_the_fix(repo, tmp_path, forge):
    """The jobs fetch the whole history; where a clone is shallow anyway, verify fails."""
    assert gitstate(repo, "init", "--ci", forge).returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ci")
    if forge == "github":
        flow = yaml.safe_load((repo / ".github" / "workflows" / "gitstate.yml").read_text())
        steps = flow["jobs"]["verify"]["steps"]
        assert next(s for s in steps if "checkout" in s.get("uses", ""))["with"] == \
            {"fetch-depth": 0}
        command, fix = steps[-1]["run"], "fetch-depth: 0"
    else:
        job = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())["gitstate-verify"]
        assert job["variables"]["GIT_DEPTH"] == "0"
        command, fix = job["script"][-1], "GIT_DEPTH: 0"
    assert _run(repo, command).returncode == 0
    res = _run(_shallow(tmp_path, repo), command)
    assert res.returncode == 1 and fix in res.stdout and "could not be judged" in res.stdout


def test_the_action_refuses_a_shallow_checkout_before_it_installs_anything(repo, tmp_path):
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    first = action["runs"]["steps"][0]
    assert first["shell"] == "bash"

    def step(where):
        return subprocess.run(["bash", "-e", "-c", first["run"]], cwd=where,
                              capture_output=True, text=True)

    ok = step(repo)
    assert ok.returncode == 0 and ok.stdout == ""
    refused = step(_shallow(tmp_path, repo))
    assert refused.returncode == 1
    assert refused.stdout.startswith("::error ") and "fetch-depth: 0" in refused.stdout
