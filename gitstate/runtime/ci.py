"""`gitstate init --ci github|gitlab`: a job that runs `gitstate verify --no-cache` on every
push and pull (merge) request, for hubs that cannot run pre-receive (the README's "What gitstate
promises" and "Agent runtimes", CI).

The whole history is fetched (`fetch-depth: 0`, `GIT_DEPTH: "0"`): verify replays every
commit, and a shallow clone would hide the commits it must judge. A file of the user's is never
overwritten: GitHub gets its own workflow file; on GitLab the job is appended to an existing
`.gitlab-ci.yml` that has none.
"""

from __future__ import annotations

from pathlib import Path

from gitstate import __version__
from gitstate.errors import UsageError

INSTALL = f"pip install 'gitstate-agents=={__version__}'"   # the distribution's name
COMMAND = "gitstate verify --no-cache"

GITHUB_PATH = ".github/workflows/gitstate.yml"
GITHUB = f"""\
# Written by `gitstate init --ci github`: every push and pull request is replayed through the
# lifecycle's rules, as a hub's pre-receive hook would judge it.
name: gitstate
on:
  push:
  pull_request:
jobs:
  verify:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0   # the whole history: verify judges every commit
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: {INSTALL}
      - run: {COMMAND}
"""

GITLAB_PATH = ".gitlab-ci.yml"
GITLAB_JOB = "gitstate-verify"
GITLAB = f"""\
# Written by `gitstate init --ci gitlab`: every push and merge request is replayed through the
# lifecycle's rules, as a hub's pre-receive hook would judge it.
{GITLAB_JOB}:
  image: python:3.12
  variables:
    GIT_DEPTH: "0"   # the whole history: verify judges every commit
  rules:
    - if: $CI_PIPELINE_SOURCE == "push"
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  script:
    - {INSTALL}
    - {COMMAND}
"""


def install(top: Path, forge: str) -> dict:
    if forge not in ("github", "gitlab"):
        raise UsageError(f"--ci {forge!r}: gitstate writes CI for github or gitlab")
    rel, text = (GITHUB_PATH, GITHUB) if forge == "github" else (GITLAB_PATH, GITLAB)
    path = top / rel
    report = {"kind": "ci", "name": forge, "path": rel, "changed": False, "added": [],
              "kept": []}
    if path.is_file():
        current = path.read_text(encoding="utf-8", errors="replace")
        if COMMAND in current or current == text:
            return report   # there already (perhaps edited by the user): theirs to keep
        if forge == "github":
            report["kept"] = [rel]
            return report   # a file of the user's with the same name: never overwritten
        report["kept"] = ["the jobs already in .gitlab-ci.yml"]
        text = current + ("" if current.endswith("\n") else "\n") + "\n" + text
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    report["changed"] = True
    report["added"] = ["verify" if forge == "github" else GITLAB_JOB]
    return report
