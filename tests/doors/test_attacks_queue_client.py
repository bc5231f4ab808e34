"""Attacks on a clone's side of the landing queue: how it learns that a hub queues
(`refs/gitstate/hub`, remembered in `.git/gitstate/queueing-hubs`) and falls back to a plain
push when the hub does not. Real hubs, real pushes."""

from __future__ import annotations

import pytest

from conftest import git, gitstate, make_repo
from hubs import pushed


@pytest.mark.xfail(strict=True, reason="gitstate/git/push.py (_queue_gone) believes the hub's "
                   "refs/gitstate/hub over the hub's own answer: a hub that wrote the queue "
                   "ref itself keeps no queue, whatever that ref says")
def test_a_plain_hub_on_which_someone_pushed_the_queue_mark_still_takes_moves(tmp_path):
    """A hub with no gitstate hooks (as GitHub is) takes any ref: one push of
    `refs/gitstate/hub` there made every clone queue its moves, the hub wrote each as a ref
    of its own, and every `--push` ended `illegal`, its move set aside and a stray queue ref
    left on the hub."""
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    seed = make_repo(tmp_path / "seed")
    (seed / "README").write_text("hello\n")
    git(seed, "add", "README")
    git(seed, "commit", "-q", "-m", "first")
    assert gitstate(seed, "init").returncode == 0
    git(seed, "remote", "add", "origin", str(hub))
    git(seed, "push", "-q", "-u", "origin", "main")
    blob = git(seed, "hash-object", "-w", "--stdin", input="anything\n").stdout.strip()
    git(seed, "push", "-q", "origin", f"{blob}:refs/gitstate/hub")   # anyone with push access
    code, out = pushed(seed, "spawn", "alice")
    assert code == 0 and out["outcome"] == "landed", out
    assert git(hub, "for-each-ref", "refs/gitstate/queue").stdout == ""
