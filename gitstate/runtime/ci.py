"""`gitstate init --ci github|gitlab [--install SPEC]`: a job that runs `gitstate verify
--no-cache` on every push and pull (merge) request, for hubs that cannot run pre-receive
(docs/explanation/promises.md and docs/how-to/ci.md).

The jobs are the shipped templates `data/ci/github-workflow.yml` and `data/ci/gitlab-ci.yml`
(the GitLab one is also a template to `include:`), with GITSTATE_INSTALL set to what pip
installs: this exact release of `gitstate-agents` from the package index, or SPEC (a git URL
at a tag, a wheel URL), checked in form first (`gitstate.doors.installable`). The whole history
is fetched (`fetch-depth: 0`, `GIT_DEPTH: "0"`): verify replays every commit, and a shallow
clone would hide the commits it must judge (verify fails in one, and says so). A file of the
user's is never overwritten: GitHub gets its own workflow file; on GitLab the job is appended
to an existing `.gitlab-ci.yml` that has none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from gitstate import __version__
from gitstate.doors.installable import DISTRIBUTION, judge
from gitstate.errors import UsageError
from gitstate.resources import read_shipped

RELEASE = f"{DISTRIBUTION}=={__version__}"   # what the job installs unless told otherwise
COMMAND = "gitstate verify --no-cache"
GITHUB_PATH = ".github/workflows/gitstate.yml"
GITLAB_PATH = ".gitlab-ci.yml"
GITLAB_JOB = "gitstate-verify"
TEMPLATES = {"github": "github-workflow.yml", "gitlab": "gitlab-ci.yml"}


def job(forge: str, install: str | None = None) -> str:
    """The CI file (GitHub) or job (GitLab) that installs `install` (default: this release)."""
    spec = install or RELEASE
    status, detail = judge(spec)
    if status == "fail":
        raise UsageError(f"--install {spec}: {detail}",
                         hint=f"e.g. --install {RELEASE}, --install "
                              "'git+https://HOST/OWNER/gitstate@vVERSION', or a wheel's URL")
    text = read_shipped("data", "ci", TEMPLATES[forge])
    # a JSON string is a YAML double-quoted scalar: any spec is written as it is
    return re.sub(r'^(\s*GITSTATE_INSTALL: ).*$', lambda m: m.group(1) + json.dumps(spec),
                  text, count=1, flags=re.M)


def _beside(current: str, forge: str, text: str, report: dict) -> str | None:
    """The file that holds the job beside what `current` holds (`report` says what is kept);
    None where nothing is written."""
    if COMMAND in current or current == text:
        return None   # there already (perhaps edited by the user): theirs to keep
    if forge == "github":
        report["kept"] = [GITHUB_PATH]
        return None   # a file of the user's with the same name: never overwritten
    report["kept"] = ["the jobs already in .gitlab-ci.yml"]
    return current + ("" if current.endswith("\n") else "\n") + "\n" + text


def install(top: Path, forge: str, spec: str | None = None) -> dict:
    if forge not in TEMPLATES:
        raise UsageError(f"--ci {forge!r}: gitstate writes CI for github or gitlab")
    text = job(forge, spec)
    rel = GITHUB_PATH if forge == "github" else GITLAB_PATH
    path = top / rel
    report = {"kind": "ci", "name": forge, "path": rel, "changed": False, "added": [],
              "kept": []}
    found = _beside(path.read_text(encoding="utf-8", errors="replace"), forge, text,
                    report) if path.is_file() else text
    if found is None:
        return report
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(found, encoding="utf-8")
    report["changed"] = True
    report["added"] = ["verify" if forge == "github" else GITLAB_JOB]
    return report
