"""Every message of the history (a commit that mentions `@ID` or `@ALL` besides its own
prefix), kept under `.git/gitstate` keyed by the tip it was read up to: a later inbox reads
only the commits since, so a warm inbox costs no walk of the whole history.

The first read parses every commit with an `@` once (git filters on `-F --grep=@`); after
that, `git log TIP..HEAD` gives the new ones. A history that no longer contains the saved tip
(rewritten, force-pushed) is read again in full. Nothing here is trusted beyond its seal
(`git/cache.py`); deleting it changes no answer.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.git import cache
from gitstate.git.runner import Git
from gitstate.law.grammar import parse_message

NAME = "mentions.bin"
FORMAT = 1
_FIELDS = ["%H", "%ct", "%an", "%B"]


class _Msg:
    """What the inbox asks of a parsed message."""
    __slots__ = ("prefix", "mentions", "subject", "body")

    def __init__(self, prefix, mentions, subject, body):
        self.prefix, self.mentions, self.subject, self.body = prefix, mentions, subject, body


def messages(git: Git, lc, head: str, cache_dir: str | None) -> list[tuple]:
    """(sha, time, author, message) of every commit of `head`'s history that mentions
    someone besides its own prefix, newest first."""
    identity = [FORMAT, __version__, list(lc.accept)]
    saved = cache.load(cache_dir, NAME, identity, binary=True) if cache_dir else None
    items: list = []
    revs = [head]
    if saved and isinstance(saved.get("items"), list) and saved.get("tip"):
        if saved["tip"] == head:
            return [_unpack(i) for i in saved["items"]]
        if git.ok("merge-base", "--is-ancestor", saved["tip"], head):
            items, revs = saved["items"], [f"{saved['tip']}..{head}"]
    items = _read(git, lc, revs) + items
    if cache_dir:
        cache.store(cache_dir, NAME, identity, {"tip": head, "items": items}, binary=True)
    return [_unpack(i) for i in items]


def messages_since(git: Git, lc, old: str, head: str) -> list[tuple]:
    """The messages of `old..head` (newest first), for a caller holding those up to `old`."""
    return [_unpack(i) for i in _read(git, lc, [f"{old}..{head}"])]


def _read(git: Git, lc, revs: list[str]) -> list[list]:
    accept = lc.accept_patterns()
    new = []
    for sha, ct, author, body in git.log_records(_FIELDS, "-F", "--grep=@", *revs, "--"):
        msg = parse_message(body, accept)
        if msg.mentions:
            new.append([sha, int(ct) if ct.isdigit() else 0, author, msg.prefix,
                        sorted(msg.mentions), msg.subject, msg.body])
    return new


def _unpack(item: list) -> tuple:
    sha, ct, author, prefix, mentions, subject, body = item
    return sha, ct, author, _Msg(prefix, frozenset(mentions), subject, body)


def unknown_mentions(repo, message: str, rev: str | None) -> list[str]:
    """The `@id`s of a commit message that name no agent of the repository at `rev`, each
    with the closest known id where one is near (`@bobb (did you mean @bob?)`): a message to
    nobody, which no inbox will ever show."""
    from gitstate.law.grammar import find_mentions, split_message
    from gitstate.law.suggest import closest
    subject, body = split_message(message)
    prefix = subject.split(":", 1)[0].lstrip("@").lower() if subject.startswith("@") else None
    ids = sorted(a for a in find_mentions(subject, body, prefix) if a != "all" and a != prefix)
    if not ids or rev is None:
        return []
    lc = repo.lifecycle(rev)
    datas = repo.git.cat_files(f"{rev}:{lc.state_path(a)}" for a in ids)
    missing = [a for a, d in zip(ids, datas) if d is None]
    if not missing:
        return []
    known = repo.agent_ids(lc, rev)
    out = []
    for a in missing:
        near = closest(a, known)
        out.append(f"@{a}" + (f" (did you mean @{near}?)" if near else ""))
    return out
