"""Every move of the history, as `gitstate log` prints it, kept under `.git/gitstate` keyed by
the tip it was read to: a later `log` reads only the commits since.

Each move is [sha, time, author, agent, from, to, text], in the order `log` prints them
(oldest first, merged lines interleaved by time, never a commit before its parents). New
commits on a line of history are appended, their "from" taken from the last move of each
agent; a history with a new merge, or one that no longer holds the saved tip, is read again
in full (a merge may join two lines' moves, whose "from" only the graph can tell). Nothing
here is trusted beyond its seal (`git/cache.py`); deleting it changes no answer.

The file keeps each agent's moves as a `marshal` blob of their own, and the order of the
whole log as a string of agent numbers: `log ID` unpacks one agent's moves, not the
history's (70,000 rows at 100,000 commits), and an update packs again only the agents that
moved.
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
    identity = _identity(lc)
    saved = cache.load(cache_dir, NAME, identity, binary=True) if cache_dir else None
    if saved is not None and saved.get("tip") == head:
        found = _unpack(saved)
        if found is not None:
            return found
    moves, packed = None, {}
    tip = saved.get("tip") if saved is not None else None
    old = _unpack(saved) if isinstance(tip, str) else None
    if saved is not None and isinstance(tip, str) and old is not None \
            and git.ok("merge-base", "--is-ancestor", tip, head) \
            and not git.run("rev-list", "--merges", "-1", f"{tip}..{head}").strip():
        new = _moves(git, lc, [f"{tip}..{head}"], dict(saved.get("last") or {}), None)
        moves = old + new
        moved = {m[3] for m in new}
        packed = {a: b for a, b in saved["agents"].items() if a not in moved}
    if moves is None:
        moves = _moves(git, lc, [head], {}, head)
    if cache_dir:
        cache.store(cache_dir, NAME, identity, _pack(head, moves, packed), binary=True)
    return moves


def agent_moves(git: Git, lc, head: str, cache_dir: str | None, agent: str) -> list[list]:
    """The moves of `agent` up to `head`: from its own blob when the file is at `head`."""
    saved = cache.load(cache_dir, NAME, _identity(lc), binary=True) if cache_dir else None
    if saved is not None and saved.get("tip") == head and isinstance(saved.get("agents"), dict):
        blob = saved["agents"].get(agent)
        if blob is None and isinstance(saved.get("names"), list):
            return []
        rows = _rows(blob)
        if rows is not None:
            return rows
    return [m for m in all_moves(git, lc, head, cache_dir) if m[3] == agent]


def newest_moves(git: Git, lc, head: str, cache_dir: str | None, n: int) -> list[list]:
    """The last `n` moves up to `head` (`log -n N`): only the agents among them unpacked."""
    saved = cache.load(cache_dir, NAME, _identity(lc), binary=True) if cache_dir else None
    if saved is not None and saved.get("tip") == head and isinstance(saved.get("names"), list) \
            and isinstance(saved.get("agents"), dict) and isinstance(saved.get("order"), bytes):
        import array
        order = array.array("I")
        try:
            order.frombytes(saved["order"])
            tail = order[len(order) - n:] if n else order[:0]
            wanted: dict[int, int] = {}
            for i in tail:
                wanted[i] = wanted.get(i, 0) + 1
            rows = {i: _rows(saved["agents"].get(saved["names"][i])) for i in wanted}
            if all(r is not None and len(r) >= wanted[i] for i, r in rows.items()):
                each = {i: iter(r[len(r) - wanted[i]:]) for i, r in rows.items() if r}
                return [next(each[i]) for i in tail]
        except (ValueError, IndexError, StopIteration, TypeError):
            pass
    moves = all_moves(git, lc, head, cache_dir)
    return moves[len(moves) - n:] if n else []


def _identity(lc) -> list:
    return [FORMAT, __version__, list(lc.accept), lc.state_file]


def _pack(head: str, moves: list[list], packed: dict) -> dict:
    """The file's content: each agent's moves marshalled on their own (`packed`: blobs kept
    from before for agents that did not move), and the log's order by agent number."""
    import marshal
    names: list[str] = []
    number: dict[str, int] = {}
    mine: dict[str, list] = {}
    order = []
    for m in moves:
        agent = m[3]
        if agent not in number:
            number[agent] = len(names)
            names.append(agent)
            mine[agent] = []
        mine[agent].append(m)
        order.append(number[agent])
    agents = {a: packed.get(a) or marshal.dumps(rows) for a, rows in mine.items()}
    import array
    return {"tip": head, "names": names, "agents": agents,
            "order": array.array("I", order).tobytes(),
            "last": {m[3]: m[5] for m in moves}}


def _rows(blob) -> list | None:
    import marshal
    try:
        rows = marshal.loads(blob) if isinstance(blob, bytes) else None
    except (ValueError, EOFError, TypeError):
        return None
    return rows if isinstance(rows, list) else None


def _unpack(saved: dict | None) -> list[list] | None:
    """The whole log from the file (None if it does not hold together)."""
    import array
    if saved is None or not isinstance(saved.get("names"), list) \
            or not isinstance(saved.get("agents"), dict) \
            or not isinstance(saved.get("order"), bytes):
        return None
    order = array.array("I")
    try:
        order.frombytes(saved["order"])
    except ValueError:
        return None
    names = saved["names"]
    each = []
    for agent in names:
        rows = _rows(saved["agents"].get(agent))
        if rows is None:
            return None
        each.append(iter(rows))
    try:
        return [next(each[i]) for i in order]
    except (IndexError, StopIteration):
        return None


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
