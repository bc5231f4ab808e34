"""Every message of the history (a commit that mentions `@ID` or `@ALL` besides its own
prefix), kept under `.git/gitstate` keyed by the tip it was read up to: a later inbox reads
only the commits since (`git/cache.py`), so a warm inbox costs no walk of the whole history.

The first read parses every commit with an `@` once (git filters on `-F --grep=@`); after
that, `git log TIP..HEAD` gives the new ones. A history that no longer contains the saved tip
(rewritten, force-pushed) is read again in full. The messages are kept as a folder of parts
(`cache.store_parts`): those to each id (and to `@ALL`) a `marshal` part of their own, each
message numbered in the order of history, so that one inbox reads its agent's part and
@ALL's, not the history's messages, and new commits write again only the parts of those they
speak to. Nothing here is trusted beyond its seal (`git/cache.py`); deleting it changes no
answer.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator

from gitstate import __version__
from gitstate.git.cache import Grouped, asked, listed, read_on
from gitstate.git.runner import Git
from gitstate.law.grammar import parse_message

NAME = "mentions"
FORMAT = 2
_FIELDS = ["%H", "%ct", "%an", "%B"]


class _Msg:
    """What the inbox asks of a parsed message."""
    __slots__ = ("prefix", "mentions", "subject", "body")

    def __init__(self, prefix, mentions, subject, body):
        self.prefix, self.mentions, self.subject, self.body = prefix, mentions, subject, body


def messages(git: Git, lc, head: str, cache_dir: str | None,
             to: str | None = None) -> list[tuple]:
    """(sha, time, author, message) of every commit of `head`'s history that mentions
    someone besides its own prefix, newest first; with `to`, only those that speak to that
    id or to @ALL."""
    def ask(kept: dict) -> list[tuple] | None:
        found: dict[int, list] = {}
        for key in ([to, "all"] if to is not None else list(kept["parts"]) +
                    [k for k in kept.get("blobs") or {} if k not in kept["parts"]]):
            items = _items(kept, cache_dir, key)
            if items is None:
                return None
            for item in items:
                found[item[0]] = item
        return [_unpack(found[seq]) for seq in sorted(found, reverse=True)]
    return asked(lambda fresh: _kept(git, lc, head, cache_dir, fresh), ask)


def messages_since(git: Git, lc, old: str, head: str) -> list[tuple]:
    """The messages of `old..head` (newest first), for a caller holding those up to `old`."""
    return [_unpack([0, *i]) for i in _read(git, lc, f"{old}..{head}")]


def _kept(git: Git, lc, head: str, cache_dir: str | None, fresh: bool) -> dict | None:
    return read_on(git, cache_dir, NAME, [FORMAT, __version__, list(lc.accept)], head,
                   valid=lambda saved: isinstance(saved.get("count"), int),
                   anew=lambda tip: _pack(git, lc, tip, None, cache_dir),
                   onward=lambda saved, revs: _pack(git, lc, revs, saved, cache_dir),
                   parted=True, fresh=fresh)


def _pack(git: Git, lc, revs: str, saved: dict | None, cache_dir: str | None) -> dict | None:
    """The messages of `revs` after those of `saved` (None: none), numbered on in the order of
    history, held `marshal`led as git gives them (`kept.Grouped`): only the parts of the ids
    they speak to written again (None if one of those does not read back)."""
    grouped = Grouped()
    n = 0
    for item in _read(git, lc, revs):         # newest first: numbered when all are counted
        for who in item[4]:
            grouped.add(who, [n, *item])
        n += 1
    count = saved["count"] if saved else 0
    blobs = _parts(grouped, count + n - 1, saved, cache_dir)
    return {"count": count + n, "blobs": blobs} if blobs is not None else None


def _parts(grouped: Grouped, last: int, saved: dict | None,
           cache_dir: str | None) -> dict | None:
    """id -> its part: the messages kept for it, then its new ones, numbered on to `last`
    (None if a kept part does not read back)."""
    blobs = {}
    for who in grouped.keys():
        items = grouped.take(who)
        items.reverse()
        for item in items:
            item[0] = last - item[0]
        old = _items(saved, cache_dir, who) if saved else []
        if old is None:
            return None
        blobs[who] = marshal.dumps(old + items)
    return blobs


def _items(kept: dict, cache_dir: str | None, key: str) -> list | None:
    """The messages kept for `key`, oldest first ([] for none), or None if its part does not
    read back."""
    return listed(cache_dir, NAME, kept, key)


def _read(git: Git, lc, revs: str) -> Iterator[list]:
    accept = lc.accept_patterns()
    for sha, ct, author, body in git.log_records(_FIELDS, "-F", "--grep=@", revs, "--"):
        msg = parse_message(body, accept)
        if msg.mentions:
            yield [sha, int(ct) if ct.isdigit() else 0, author, msg.prefix,
                   sorted(msg.mentions), msg.subject, msg.body]


def _unpack(item: list) -> tuple:
    _seq, sha, ct, author, prefix, mentions, subject, body = item
    return sha, ct, author, _Msg(prefix, frozenset(mentions), subject, body)


def unknown_mentions(repo, message: str, rev: str | None) -> list[str]:
    """The `@id`s of a commit message that name no agent of the repository at `rev`, each
    with the closest known id where one is near (`@bobb (did you mean @bob?)`): a message to
    nobody, which no inbox will ever show."""
    ids = _mentioned(message)
    if not ids or rev is None:
        return []
    lc = repo.lifecycle(rev)
    missing = _without_file(repo, lc, rev, ids)
    if not missing:
        return []
    known = repo.agent_ids(lc, rev)
    return [_guessed(a, known) for a in missing]


def _without_file(repo, lc, rev: str, ids: list[str]) -> list[str]:
    """The ids of `ids` with no state file at `rev`."""
    datas = repo.git.cat_files(f"{rev}:{lc.state_path(a)}" for a in ids)
    return [a for a, d in zip(ids, datas) if d is None]


def _guessed(agent: str, known) -> str:
    """`@agent`, with the closest known id where one is near."""
    from gitstate.law.suggest import closest
    near = closest(agent, known)
    return f"@{agent}" + (f" (did you mean @{near}?)" if near else "")


def _mentioned(message: str) -> list[str]:
    """The ids a commit message mentions, but `all` and the agent whose move it is."""
    from gitstate.law.grammar import find_mentions, split_message
    subject, body = split_message(message)
    prefix = subject.split(":", 1)[0].lstrip("@").lower() if subject.startswith("@") else None
    return sorted(a for a in find_mentions(subject, body, prefix) if a != "all" and a != prefix)
