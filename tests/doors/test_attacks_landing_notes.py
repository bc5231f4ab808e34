"""Attacks on the hub's newest doors: the pre-receive and post-receive shims that read the
pushed refs with shell builtins, and the lander's record of when each move arrived (its
notes commit and its marks). Real hubs (`git init --bare` + `gitstate init --server`), real
pushes."""

from __future__ import annotations

import json
import time

from conftest import git, gitstate
from hubs import hub_and_clones

NOTES = "refs/notes/gitstate-received"


def note_of(hub, sha: str) -> str | None:
    res = git(hub, "notes", f"--ref={NOTES}", "show", sha, check=False)
    return res.stdout.strip() if res.returncode == 0 else None


def test_a_push_naming_more_queue_refs_than_the_hub_takes_is_refused_whole_by_pre_receive(
        tmp_path):
    """The shim reads at most what one push may queue; past that, the refs go to the full
    judgement, which bounds a push by `gitstate.maxRefsPerPush` (reading a huge push line
    by line into a shell variable costs the hub time that grows with the square of its
    size: 20,000 refs took 42 s of a core)."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    git(hub, "config", "gitstate.maxRefsPerPush", "20")
    refspecs = [f"HEAD:refs/gitstate/queue/b{i}" for i in range(21)]
    res = git(a, "push", "origin", *refspecs, check=False)
    assert res.returncode != 0
    assert "this push updates 21 refs" in res.stderr and "[too-many-refs]" in res.stderr
    assert not (hub / "gitstate" / "queue").exists() or not [
        p for p in (hub / "gitstate" / "queue").iterdir() if p.name[0].isdigit()]


def test_a_landing_finished_after_the_lander_died_is_noted_with_its_arrival(tmp_path):
    """A lander killed after the branch moved, before its notes commit: the pass that
    finishes its requests notes the moves with the time each arrived. Unnoted, the hub's
    clock would read the committer's own date for them, which a pusher may set years back."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "alice").returncode == 0
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    git(hub, "fetch", "-q", str(a), "HEAD:refs/heads/objects")   # the hub has its objects
    git(hub, "update-ref", "-d", "refs/heads/objects")
    tip = git(hub, "rev-parse", "main").stdout.strip()
    git(hub, "update-ref", "refs/heads/main", move, tip)   # the lander's one update-ref...
    assert note_of(hub, move) is None                      # ...and then it was killed
    queue = hub / "gitstate" / "queue"
    queue.mkdir(parents=True, exist_ok=True)
    arrived = time.time_ns()
    (queue / f"{arrived:020d}-1-{move[:12]}").write_text(json.dumps(
        {"branch": "refs/heads/main", "move": move, "landing": {"commit": move, "old": tip}}))
    res = gitstate(hub, "hub", "drain", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["moves"][0]["landed"] == move
    assert note_of(hub, move) == f"received {arrived // 10**9}"


def test_a_merge_that_brings_an_agents_birth_is_noted_when_the_hub_receives_it(
        tmp_path, monkeypatch):
    """Off the team line a merge may bring an agent's state file: on the branch's first-parent
    line the merge is then the agent's birth, which timed moves (`sweep`) count from by the
    hub's clock. The hub notes it when it receives it; unnoted, the clock would read the
    merge's own committer date, which the pusher backdated to 2001."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "carol").returncode == 0
    git(a, "branch", "side")                  # carol's birth, on a side branch only
    git(a, "switch", "-q", "-c", "work", "origin/main")
    (a / "notes.txt").write_text("work\n")
    git(a, "add", "notes.txt")
    git(a, "commit", "-q", "-m", "notes")
    with monkeypatch.context() as m:
        m.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00Z")
        git(a, "merge", "-q", "--no-ff", "--no-edit", "side")
    merge = git(a, "rev-parse", "HEAD").stdout.strip()
    res = git(a, "push", "origin", "work", check=False)
    assert res.returncode == 0, res.stderr
    born = git(hub, "log", "-1", "--first-parent", "--diff-filter=A", "--format=%H", "work",
               "--", "agent/carol/_state.md").stdout.strip()
    assert born == merge
    note = note_of(hub, merge)
    assert note is not None and int(note.split()[-1]) > time.time() - 600
