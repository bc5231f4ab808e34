"""Every move of the history, as `gitstate log` prints it, kept under `.git/gitstate` keyed by
the tip it was read to: a later `log` reads only the commits since.

Each move is [sha, time, author, agent, from, to, text], in the order `log` prints them
(oldest first, merged lines interleaved by time, never a commit before its parents). New
commits on a line of history are appended, their "from" taken from the last move of each
agent; a history with a new merge, or one that no longer holds the saved tip, is read again
in full (a merge may join two lines' moves, whose "from" only the graph can tell). Nothing
here is trusted beyond its seal (`git/cache.py`); deleting it changes no answer.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.git import cache
from gitstate.git.runner import Git
from gitstate.history.fold import tag_events

NAME = "moves.bin"
FORMAT = 1


def all_moves(git: Git, lc, head: str, cache_dir: str | None) -> list[list]:
    identity = [FORMAT, __version__, list(lc.accept), lc.state_file]
    saved = cache.load(cache_dir, NAME, identity, binary=True) if cache_dir else None
    if saved and saved.get("tip") == head and isinstance(saved.get("moves"), list):
        return saved["moves"]
    moves = None
    if saved and isinstance(saved.get("moves"), list) and saved.get("tip") \
            and git.ok("merge-base", "--is-ancestor", saved["tip"], head) \
            and not git.run("rev-list", "--merges", "-1", f"{saved['tip']}..{head}").strip():
        moves = saved["moves"] + _moves(git, lc, [f"{saved['tip']}..{head}"],
                                        dict(saved.get("last") or {}), None)
    if moves is None:
        moves = _moves(git, lc, [head], {}, head)
    last = {m[3]: m[5] for m in moves}
    if cache_dir:
        cache.store(cache_dir, NAME, identity, {"tip": head, "moves": moves, "last": last},
                    binary=True)
    return moves


def moves_since(git: Git, lc, old: str, head: str, last: dict) -> list[list]:
    """The moves of `old..head`, for a caller holding the moves up to `old` (whose `last`
    state of each agent gives each new move its "from"); `head` must be `old` plus commits
    without merges (the caller checks)."""
    return _moves(git, lc, [f"{old}..{head}"], dict(last), None)


def _moves(git: Git, lc, revs: list[str], last: dict, lineage_head: str | None) -> list[list]:
    events = tag_events(git, lc, revs, order="--date-order")
    lines: dict = {}
    if lineage_head is not None and events \
            and git.run("rev-list", "--merges", "-1", lineage_head, "--").strip():
        from gitstate.history.lineage import moves_from
        lines = moves_from(git, lineage_head, {e[0]: (e[3], e[4]) for e in events})
    out = []
    for sha, when, author, who, state, text in events:
        before = lines[sha] if sha in lines else last.get(who)
        last[who] = state
        out.append([sha, when, author, who, before, state, text])
    return out
