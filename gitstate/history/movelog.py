"""Every move of the history, as `gitstate log` prints it, kept under `.git/gitstate` keyed by
the tip it was read to: a later `log` reads only the commits since (`git/cache.py`).

Each move is [sha, time, author, agent, from, to, text], in the order `log` prints them
(oldest first, along the first-parent line: the lifecycle's line). New commits on the line
are appended, their "from" taken from the last move of each agent; a history whose line no
longer goes on from the saved tip is read again in full. Nothing
here is trusted beyond its seal (`git/cache.py`); deleting it changes no answer.

The moves are kept as a folder of parts (`cache.store_parts`): each agent's moves a `marshal`
part of their own, and the order of the whole log as agent numbers in parts of 65,536. `log
ID` reads the index and that agent's part; `log -n N` the last part of the order and the
agents among the N; new commits write again only the agents that moved and the order's last
part. None of them reads the history's moves (700,000 at 1,000,000 commits).
"""

from __future__ import annotations

import array
import marshal

from gitstate import __version__
from gitstate.git.cache import Grouped, asked, listed, part, read_on
from gitstate.git.repo import on_first_parent_line
from gitstate.git.runner import Git
from gitstate.history.fold import newest_events, tag_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

NAME = "moves"
FORMAT = 4   # 4: the moves of the first-parent line alone
CHUNK = 1 << 16   # agent numbers in each part of the log's order (256 KiB)


def all_moves(git: Git, lc, head: str, cache_dir: str | None) -> list[list]:
    """Every move up to `head`, in `log`'s order."""
    def ask(kept: dict) -> list[list] | None:
        order = _order(cache_dir, kept, kept["count"])
        each = []
        for agent in kept["names"]:
            rows = _rows(kept, cache_dir, agent)
            if rows is None:
                return None
            each.append(iter(rows))
        try:
            return [next(each[i]) for i in order] if order is not None else None
        except (IndexError, StopIteration):
            return None
    return asked(lambda fresh: _kept(git, lc, head, cache_dir, fresh), ask)


def moves_in_parts(git: Git, lc, head: str, cache_dir: str | None,
                   size: int = CHUNK) -> Iterator[list[list]] | None:
    """Every move up to `head`, in `log`'s order, `size` at a time (None when the kept moves
    cannot be had): never every move unpacked at once (700,000 of them as rows are several
    hundred MB; `marshal`led, a fifth of that)."""
    found = asked(lambda fresh: _kept(git, lc, head, cache_dir, fresh),
                  lambda kept: _windows(kept, cache_dir, size))
    return None if found is None else _unpacked(found[0], found[1], size)


def _windows(kept: dict, cache_dir: str | None,
             size: int) -> tuple[array.array, list[dict]] | None:
    """(the order of the log, and for each window of `size` moves of it: agent number -> its
    moves in that window, `marshal`led), each agent's part read once; None if a part does
    not read back or does not hold the moves the order gives it."""
    order = _order(cache_dir, kept, kept["count"])
    if order is None:
        return None
    windows: list[dict] = [{} for _ in range(0, len(order), size)]
    for i, spans in _where(order, size).items():
        rows = _part(kept, cache_dir, i)
        if rows is None or len(rows) != sum(n for _, n in spans):
            return None
        at = 0
        for w, n in spans:
            windows[w][i] = marshal.dumps(rows[at:at + n])
            at += n
    return order, windows


def _where(order: array.array, size: int) -> dict[int, list]:
    """Agent number -> (window, how many of its moves) of each window of `size` of `order`."""
    from collections import Counter
    where: dict[int, list] = {}
    for w in range(0, len(order), size):
        for i, n in Counter(order[w:w + size]).items():
            where.setdefault(i, []).append((w // size, n))
    return where


def _part(kept: dict, cache_dir: str | None, i: int) -> list | None:
    """The moves of agent number `i`, from its part (let go of, where this read wrote it)."""
    name = kept["names"][i] if i < len(kept["names"]) else None
    rows = _rows(kept, cache_dir, name) if name is not None else None
    (kept.get("blobs") or {}).pop(name, None)
    return rows


def _unpacked(order: array.array, windows: list[dict], size: int) -> Iterator[list[list]]:
    """The moves of each window in order, one window unpacked at a time."""
    for w, window in enumerate(windows):
        each = {i: iter(marshal.loads(blob)) for i, blob in window.items()}
        windows[w] = {}
        yield [next(each[i]) for i in order[w * size:(w + 1) * size]]


def agent_moves(git: Git, lc, head: str, cache_dir: str | None, agent: str) -> list[list]:
    """The moves of `agent` up to `head`, unpacked from its own part."""
    return asked(lambda fresh: _kept(git, lc, head, cache_dir, fresh),
                 lambda kept: _rows(kept, cache_dir, agent))


def newest_moves(git: Git, lc, head: str, cache_dir: str | None, n: int) -> list[list]:
    """The last `n` moves up to `head` (`log -n N`): only the agents among them unpacked."""
    def ask(kept: dict) -> list[list] | None:
        tail = _order(cache_dir, kept, n)
        if tail is None:
            return None
        wanted: dict[int, int] = {}
        for i in tail:
            wanted[i] = wanted.get(i, 0) + 1
        each = {}
        for i, count in wanted.items():
            rows = _rows(kept, cache_dir, kept["names"][i]) if i < len(kept["names"]) else None
            if rows is None or len(rows) < count:
                return None
            each[i] = iter(rows[len(rows) - count:])
        return [next(each[i]) for i in tail]
    return asked(lambda fresh: _kept(git, lc, head, cache_dir, fresh), ask)


def moves_since(git: Git, lc, old: str, head: str, last: dict) -> list[list]:
    """The moves of `old..head`, for a caller holding the moves up to `old` (whose `last`
    state of each agent gives each new move its "from"); `head` must be `old` plus commits
    without merges (the caller checks)."""
    last, out = dict(last), []
    for sha, when, author, who, state, text in tag_events(git, lc, [f"{old}..{head}"], order=None):
        out.append([sha, when, author, who, last.get(who), state, text])
        last[who] = state
    return out


def _kept(git: Git, lc, head: str, cache_dir: str | None, fresh: bool) -> dict | None:
    """The kept moves brought to `head`: as saved, with the commits since packed in (only the
    agents that moved and the last part of the order written again), or read anew."""
    return read_on(git, cache_dir, NAME, [FORMAT, __version__, list(lc.accept), lc.state_file],
                   head, valid=_valid, anew=lambda tip: _pack(git, lc, tip, None, cache_dir),
                   onward=lambda saved, revs: _pack(git, lc, revs, saved, cache_dir),
                   parted=True, linear=on_first_parent_line, fresh=fresh)


def _valid(saved: dict) -> bool:
    return isinstance(saved.get("names"), list) and isinstance(saved.get("count"), int)


def _pack(git: Git, lc, revs: str, saved: dict | None, cache_dir: str | None) -> dict | None:
    """The moves of `revs` packed as git gives them, newest first (a move's "from" is the
    state of its agent's move read next), after those of `saved` (None: `revs` is the whole
    history): each agent that moved gets its part written again, and the order its last
    parts, in parts of CHUNK. The moves are held `marshal`led as they come (`kept.Grouped`).
    None if a part of `saved` that is needed does not read back."""
    names = list(saved["names"]) if saved else []
    events = newest_events(git, lc, [revs], order=None if saved else "--date-order")
    order, grouped = _grouped(events, names)
    blobs = _agent_parts(grouped, names, saved, cache_dir)
    if blobs is None:
        return None
    order.reverse()
    count = _ordered(order, saved, cache_dir, blobs)
    return {"names": names, "count": count, "blobs": blobs} if count is not None else None


def _ordered(order: array.array, saved: dict | None, cache_dir: str | None,
             blobs: dict) -> int | None:
    """The order's last parts put in `blobs`, `order` after the moves of `saved`'s last part;
    how many moves the order then holds (None if that part does not read back)."""
    count = saved["count"] if saved else 0
    first = count - count % CHUNK
    if count % CHUNK:
        found = _order(cache_dir, saved, count % CHUNK) if saved else None
        if found is None:
            return None
        order = found + order
    for at in range(0, len(order), CHUNK):
        blobs[(first + at) // CHUNK] = order[at:at + CHUNK].tobytes()
    return first + len(order)


def _grouped(events, names: list[str]) -> tuple[array.array, Grouped]:
    """(the agents' numbers in the order they moved, newest first; each agent's moves, its
    "from" said): a new agent's name appended to `names`."""
    number = {a: i for i, a in enumerate(names)}
    order = array.array("I")
    grouped = Grouped()
    newer: dict[int, list] = {}    # each agent's move read last: the next one says its "from"
    said: dict[str, str] = {}      # one object for each author and state: `marshal` says it once
    for sha, when, author, who, state, text in events:
        i = number.get(who)
        if i is None:
            i = number[who] = len(names)
            names.append(who)
        order.append(i)
        who = names[i]
        author, state = said.setdefault(author, author), said.setdefault(state, state)
        if i in newer:
            newer[i][4] = state
            grouped.add(i, newer.pop(i))
        newer[i] = [sha, when, author, who, None, state, text]
    for i, row in newer.items():
        grouped.add(i, row)
    return order, grouped


def _agent_parts(grouped: Grouped, names: list[str], saved: dict | None,
                 cache_dir: str | None) -> dict | None:
    """agent -> its part: its moves kept in `saved`, then these, oldest first. None if a part
    of `saved` does not read back."""
    blobs: dict = {}
    for i in grouped.keys():
        rows = grouped.take(i)
        rows.reverse()
        old = _rows(saved, cache_dir, names[i]) if saved else []
        if old is None:
            return None
        if old:
            rows[0][4] = old[-1][5]
        blobs[names[i]] = marshal.dumps(old + rows)
    return blobs


def _rows(kept: dict, cache_dir: str | None, agent: str) -> list | None:
    """The agent's moves ([] for one that never moved), or None if its part does not read
    back."""
    return listed(cache_dir, NAME, kept, agent)


def _order(cache_dir: str | None, kept: dict, n: int) -> array.array | None:
    """The agent numbers of the last `n` moves, from the last parts of the order (None if one
    of them does not read back whole)."""
    count = kept["count"]
    n = max(0, min(n, count))
    out = array.array("I")
    at = (count - 1) // CHUNK
    while len(out) < n:
        blob = part(cache_dir, NAME, kept, at)
        if blob is None or len(blob) != 4 * min(CHUNK, count - at * CHUNK):
            return None
        chunk = array.array("I")
        chunk.frombytes(blob)
        out = chunk + out
        at -= 1
    return out[len(out) - n:]
