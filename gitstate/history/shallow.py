"""A shallow clone's boundary (`git clone --depth N`): the commits verify cannot judge.

Where a shallow clone's history stops, git shows a commit without parents, though it had
some (it is listed in the clone's `shallow` file). Judged as a history's first commit, a dead
agent revived there would look newly born. So such a commit is never judged: the commits after
it are judged by what their parents hold (as in a range, `origin/main..HEAD`), and it becomes a
`shallow` problem, which says that it, and everything before it, could not be judged, and how
to fetch the rest. Every door that judges with `verify` refuses it so; `gitstate verify` lists
it apart from the commits that broke a rule (`unjudged`).
"""

from __future__ import annotations

import os

from gitstate.git.runner import Git
from gitstate.history.commits import Commit, parse_commit_object
from gitstate.law.rule_ids import Rule
from gitstate.law.times import iso

FIX = ("fetch the whole history: `git fetch --unshallow` (in CI: `fetch-depth: 0` for "
       "actions/checkout, `GIT_DEPTH: 0` on GitLab)")


def within_reach(git: Git, commits, boundary: list[Commit]):
    """`commits` without those where a shallow clone's history stops, which are put in
    `boundary`. Whether the repository is shallow is asked only once a commit without parents
    comes (a full history has one or a few), so a judgement of new commits starts no git."""
    shallow: set[str] | None = None
    for c in commits:
        if not c.parents:
            if shallow is None:
                shallow = shallow_commits(git)
            if c.sha in shallow:
                boundary.append(c)
                continue
        yield c


def shallow_commits(git: Git) -> set[str]:
    """The commits where this clone's history stops (`$GIT_DIR/shallow`); none in a full
    clone."""
    out = git.text("rev-parse", "--is-shallow-repository", "--git-path", "shallow").splitlines()
    if len(out) != 2 or out[0] != "true":
        return set()
    try:
        with open(os.path.join(git.cwd or ".", out[1]), encoding="ascii",
                  errors="replace") as fh:
            return set(fh.read().split())
    except OSError:
        return set()


def unjudged(git: Git, boundary: list[Commit]) -> list[dict]:
    """A `shallow` problem for each commit of `boundary`: not judged, and why."""
    if not boundary:
        return []
    out = []
    for c, obj in zip(boundary, git.cat_batch(c.sha for c in boundary)):
        if obj is not None:
            c.time, c.author, c.message, c.encoding = parse_commit_object(obj[2])
        out.append({"commit": c.sha, "subject": c.subject, "author": c.author,
                    "time": iso(c.time), "rule": Rule.SHALLOW, "where": None,
                    "message": f"{c.sha[:10]} is where this shallow clone's history stops: its "
                               "parents are not here, so it cannot be judged, nor anything "
                               f"before it; {FIX}"})
    return out


def apart(problems: list[dict]) -> tuple[list[dict], list[str]]:
    """(the problems but the `shallow` ones, the commits those say could not be judged)."""
    return ([p for p in problems if p["rule"] != Rule.SHALLOW],
            [p["commit"] for p in problems if p["rule"] == Rule.SHALLOW])
