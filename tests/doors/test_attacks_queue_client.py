"""Attacks on a clone's side of the landing queue: how it learns that a hub queues
(`refs/gitstate/hub`, remembered in `.git/gitstate/queueing-hubs`) and falls back to a plain
push when the hub does not. Real hubs, real pushes."""

from __future__ import annotations

from conftest import git
from hubs import pushed, seeded


def test_a_plain_hub_on_which_someone_pushed_the_queue_mark_still_takes_moves(tmp_path):
    """A hub with no gitstate hooks (as GitHub is) takes any ref: one push of
    `refs/gitstate/hub` there made every clone queue its moves, the hub wrote each as a ref
    of its own, and every `--push` ended `illegal`, its move set aside and a stray queue ref
    left on the hub."""
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    seed = seeded(tmp_path, hub)
    blob = git(seed, "hash-object", "-w", "--stdin", input="anything\n").stdout.strip()
    git(seed, "push", "-q", "origin", f"{blob}:refs/gitstate/hub")   # anyone with push access
    code, out = pushed(seed, "spawn", "alice")
    assert code == 0 and out["outcome"] == "landed", out
    assert git(hub, "for-each-ref", "refs/gitstate/queue").stdout == ""
    memory = (seed / ".git" / "gitstate" / "queueing-hubs").read_text().splitlines()
    assert memory == [f"plain {hub}"], memory
    # remembered: the next move goes to the branch at once, leaving no queue ref either
    code, out = pushed(seed, "transition", "alice", "inbox")
    assert code == 0 and out["outcome"] == "landed" and out["attempts"] == 1, out
    assert git(hub, "for-each-ref", "refs/gitstate/queue").stdout == ""
    assert git(hub, "log", "-1", "--format=%s", "main").stdout.startswith("@alice: [STATE:inbox]")
