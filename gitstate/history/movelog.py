"""Every move of the history, as `gitstate log` prints it, kept under `.git/gitstate` keyed by
the tip it was read to: a later `log` reads only the commits since.

Each move is [sha, time, author, agent, from, to, text], in the order `log` prints them
(oldest first, merged lines interleaved by time, never a commit before its parents). New
commits on a line of history are appended, their "from" taken from the last move of each
agent; a history with a new merge, or one that no longer holds the saved tip, is read again
in full (a merge may join two lines' moves, whose "from" only the graph can tell). Nothing
here is trusted beyond its seal (`git/cache.py`); deleting it changes no answer.

The file keeps each agent's moves as a `marshal` blob of their own, and the order of the
whole log as a string of agent numbers: `log ID` and `log -n N` unpack only the agents they
show, not the history's (70,000 rows at 100,000 commits), and new commits pack again only the
agents that moved.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.git import cache
from gitstate.git.runner import Git
from gitstate.history.fold import tag_events

NAME = "moves.bin"
FORMAT = 2


def all_moves(git: Git, lc, head: str, cache_dir: str | None) -> list[list]:
    """Every move up to `head`, in `log`'s order."""
    found = _unpack(_kept(git, lc, head, cache_dir))
    return found if found is not None else _moves(git, lc, [head], {}, head)


def agent_moves(git: Git, lc, head: str, cache_dir: str | None, agent: str) -> list[list]:
    """The moves of `agent` up to `head`, unpacked from its own blob."""
    kept = _kept(git, lc, head, cache_dir)
    rows = _rows(kept["agents"][agent]) if agent in kept["agents"] else []
    if rows is None:
        return [m for m in _moves(git, lc, [head], {}, head) if m[3] == agent]
    return rows


def newest_moves(git: Git, lc, head: str, cache_dir: str | None, n: int) -> list[list]:
    """The last `n` moves up to `head` (`log -n N`): only the agents among them unpacked."""
    import array
    kept = _kept(git, lc, head, cache_dir)
    order = array.array("I")
    order.frombytes(kept["order"])
    tail = order[len(order) - n:] if n else order[:0]
    wanted: dict[int, int] = {}
    for i in tail:
        wanted[i] = wanted.get(i, 0) + 1
    each = {}
    names = kept["names"]
    for i, count in wanted.items():
        rows = _rows(kept["agents"].get(names[i])) if i < len(names) else None
        if rows is None or len(rows) < count:
            moves = _moves(git, lc, [head], {}, head)
            return moves[len(moves) - n:] if n else []
        each[i] = iter(rows[len(rows) - count:])
    return [next(each[i]) for i in tail]


def moves_since(git: Git, lc, old: str, head: str, last: dict) -> list[list]:
    """The moves of `old..head`, for a caller holding the moves up to `old` (whose `last`
    state of each agent gives each new move its "from"); `head` must be `old` plus commits
    without merges (the caller checks)."""
    return _moves(git, lc, [f"{old}..{head}"], dict(last), None)


def _kept(git: Git, lc, head: str, cache_dir: str | None) -> dict:
    """The kept moves brought to `head`: as saved, with the commits since appended (only the
    agents that moved packed again), or read anew; stored when they changed."""
    identity = [FORMAT, __version__, list(lc.accept), lc.state_file]
    saved = cache.load(cache_dir, NAME, identity, binary=True) if cache_dir else None
    if saved is not None and not _valid(saved):
        saved = None
    if saved is not None and saved["tip"] == head:
        return saved
    data = None
    if saved is not None and git.ok("merge-base", "--is-ancestor", saved["tip"], head) \
            and not git.run("rev-list", "--merges", "-1", f"{saved['tip']}..{head}").strip():
        data = _append(saved, _moves(git, lc, [f"{saved['tip']}..{head}"],
                                     dict(saved["last"]), None), head)
    if data is None:
        data = _pack(head, _moves(git, lc, [head], {}, head))
    if cache_dir:
        cache.store(cache_dir, NAME, identity, data, binary=True)
    return data


def _valid(saved: dict) -> bool:
    return isinstance(saved.get("tip"), str) and isinstance(saved.get("names"), list) \
        and isinstance(saved.get("agents"), dict) and isinstance(saved.get("order"), bytes) \
        and isinstance(saved.get("last"), dict) and len(saved["order"]) % 4 == 0


def _pack(head: str, moves: list[list]) -> dict:
    """The file's content: each agent's moves marshalled on their own, and the log's order by
    agent number."""
    import array
    import marshal
    names: list[str] = []
    number: dict[str, int] = {}
    mine: dict[str, list] = {}
    order = array.array("I")
    for m in moves:
        agent = m[3]
        if agent not in number:
            number[agent] = len(names)
            names.append(agent)
            mine[agent] = []
        mine[agent].append(m)
        order.append(number[agent])
    return {"tip": head, "names": names, "order": order.tobytes(),
            "agents": {a: marshal.dumps(rows) for a, rows in mine.items()},
            "last": {m[3]: m[5] for m in moves}}


def _append(saved: dict, new: list[list], head: str) -> dict | None:
    """`saved` with the moves `new` after it: only the agents that moved packed again (None
    if one of their blobs does not read back)."""
    import array
    import marshal
    names = list(saved["names"])
    number = {a: i for i, a in enumerate(names)}
    order = array.array("I")
    order.frombytes(saved["order"])
    grouped: dict[str, list] = {}
    for m in new:
        agent = m[3]
        if agent not in number:
            number[agent] = len(names)
            names.append(agent)
        grouped.setdefault(agent, []).append(m)
        order.append(number[agent])
    agents = dict(saved["agents"])
    for agent, rows in grouped.items():
        old = _rows(agents[agent]) if agent in agents else []
        if old is None:
            return None
        agents[agent] = marshal.dumps(old + rows)
    last = dict(saved["last"])
    last.update({m[3]: m[5] for m in new})
    return {"tip": head, "names": names, "order": order.tobytes(), "agents": agents,
            "last": last}


def _rows(blob) -> list | None:
    import marshal
    try:
        rows = marshal.loads(blob) if isinstance(blob, bytes) else None
    except (ValueError, EOFError, TypeError):
        return None
    return rows if isinstance(rows, list) else None


def _unpack(kept: dict) -> list[list] | None:
    """The whole log from the kept moves (None if they do not hold together)."""
    import array
    order = array.array("I")
    order.frombytes(kept["order"])
    each = []
    for agent in kept["names"]:
        rows = _rows(kept["agents"].get(agent))
        if rows is None:
            return None
        each.append(iter(rows))
    try:
        return [next(each[i]) for i in order]
    except (IndexError, StopIteration):
        return None


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
