"""verify's reading ahead: the commits in batches, and the objects each batch is judged
with (its commit objects, the lifecycles of parents outside it, the state files its changes
name) read by git on another core while Python judges the batch before."""

from __future__ import annotations

from gitstate.git.runner import Git
from gitstate.history.commits import Commit
from gitstate.law.lifecycle import LIFECYCLE_PATH
from gitstate.law.limits import LIFECYCLE_BYTES, STATE_FILE_BYTES

READ_LIMIT = max(STATE_FILE_BYTES, LIFECYCLE_BYTES)   # a larger blob is refused by its size
BATCH = 2000

# Batches whose objects are being read while one is judged: a read waits for Python's lock
# whenever it has work to do, so it starts early. The first batches are small, so that
# judging starts while git is still writing the first ones.
AHEAD, FIRST = 2, 250


def forget(law: dict, judged, done: list[Commit]) -> None:
    """On a line each commit's first parent is the one before it: the laws in force after
    batches judged long ago are asked no more, and are let go (a million commits' would
    hold ~150 MB). A merge's other parent, were it one of them, is read again from git."""
    judged.append([c.sha for c in done])
    if len(judged) > AHEAD + 2:
        for sha in judged.popleft():
            law.pop(sha, None)


def read_ahead(pool, git: Git, commits, law: dict):
    """(batch, its objects as they will be read) AHEAD batches before they are judged."""
    from collections import deque
    pending: deque = deque()
    kept: dict = {}   # the reading thread's alone
    for batch in _batches(commits):
        before = {c.sha for b, _f in pending for c in b}
        pending.append((batch, pool.submit(_fetch, git, batch, law, before, kept)))
        if len(pending) > AHEAD:
            yield pending.popleft()
    yield from pending


def _batches(commits):
    batch: list[Commit] = []
    size = min(FIRST, BATCH)
    for c in commits:
        batch.append(c)
        if len(batch) >= size:
            yield batch
            batch = []
            size = min(size * 2, BATCH)
    if batch:
        yield batch


def _fetch(git: Git, commits: list[Commit], known: dict, before: set[str],
           kept: dict | None = None) -> tuple:
    """The objects a batch is judged with: its commits' objects, the lifecycle of each
    parent outside it (not judged already: `known`, the laws found so far, which grows
    meanwhile; nor in the batches `before` it, whose laws are being worked out), and the
    content of every state file its changes name. `kept` (path -> (blob, content) last read,
    carried from batch to batch): a change's old side, most often read by the batch before,
    is not read again (contents are named by their blob ids)."""
    outside = _outside(commits, known, before)
    contents = {} if kept is None else _kept(commits, kept)
    blobs = _unread(commits, contents)
    specs = [c.sha for c in commits] + [f"{p}:{LIFECYCLE_PATH}" for p in outside]
    found = git.cat_batch(specs)
    _read_blobs(git, blobs, contents)
    if kept is not None:
        _keep(commits, contents, kept)
    return outside, contents, found


def _read_blobs(git: Git, blobs: list[str], contents: dict) -> None:
    """Each blob's content into `contents`: None for one over the limit (its size alone
    refuses it), or no blob."""
    for b, got in zip(blobs, git.cat_batch(blobs, READ_LIMIT)):
        contents[b] = got[2] if got and got[1] == "blob" else None


def _outside(commits: list[Commit], known: dict, before: set[str]) -> list[str]:
    """The parents outside the batch whose law is not known yet."""
    shas = {c.sha for c in commits}
    return sorted(p for p in {p for c in commits for p in c.parents} - shas - before
                  if p not in known)


def _kept(commits: list[Commit], kept: dict) -> dict:
    """blob -> content of the paths the batch changes, as last read."""
    return dict(kept[path] for c in commits for path, *_r in c.changes if path in kept)


def _unread(commits: list[Commit], contents: dict) -> list[str]:
    """The blobs the batch's changes name that are not read yet."""
    return sorted({b for c in commits for _, old, new, _m in c.changes for b in (old, new)
                   if b and b not in contents})


def _keep(commits: list[Commit], contents: dict, kept: dict) -> None:
    """Each path's last content, for the batches after."""
    for c in commits:
        for path, _old, new, _m in c.changes:
            if new is not None:
                kept[path] = (new, contents[new])
    if len(kept) > 100_000:   # (the judgement keeps as many files parsed already)
        kept.clear()
