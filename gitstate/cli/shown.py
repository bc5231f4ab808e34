"""The views of every agent — `roster`, `status`, `vacancies`, `situations --no-sqlite` — kept
as printed at the tip they were read at.

Their cost grows with the agents, not the history: at 10,000 agents a warm read checked and
unpacked the index of parsed state files (1.7 MB) and made a record per agent (~10-15 µs
each) before printing ~200 ms of output. What was printed is kept instead (`git/cache.py`,
sealed, one file per view and face), keyed by the tip it was read at: a read at the same tip
checks one file and prints it. The one thing in these views that moves with the clock, each
roster row's time in its state, is kept as the moment that state began and said again at
each read (`seconds_in_state`, or its `3d4h in state`). A `status` whose lifecycle has timed
moves (its `next` moves with the clock) is not kept, nor one of a lifecycle not committed at
the tip (the law then comes from the index or the work tree), nor `--at`: each is read the
usual way. Any other tip reads the view anew and keeps it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

FORMAT = 1
KEPT = ("roster", "status", "vacancies", "situations")
_DAY = 86400


def keepable(command: str, params: dict) -> bool:
    """Is this view's output kept (the plain forms of the views of every agent)?"""
    return command in KEPT and params.get("at") is None and not params.get("agent") \
        and (command != "situations" or bool(params.get("no_sqlite")))


def kept_view(repo, command: str, params: dict, data_of: Callable[[], dict],
              render: Callable[[dict], str], mode: str) -> str | None:
    """The output of the view `command` at the tip (`render(data_of())` as it would print
    now), from what is kept when it was printed at this tip; None where nothing can be kept
    (no tip, no cache folder): the caller reads it the usual way. `mode` names the face
    (text, compact or indented JSON)."""
    from gitstate import __version__
    from gitstate.git.cache import load, store
    head = repo.head() if repo.cache_dir else None
    if head is None:
        return None
    name, identity = f"shown-{command}-{mode}", [FORMAT, __version__]
    saved = load(repo.cache_dir, name, identity, binary=True)
    if saved is not None and saved.get("tip") == head and _valid(saved):
        return filled(saved["pieces"], saved["since"], mode != "text")
    data = data_of()
    laid = _laid_out(data, render, mode != "text") if data.get("commit") == head else None
    if laid is None:
        return render(data)
    pieces, since = laid
    if _law_at(repo, head, command):
        store(repo.cache_dir, name, identity, {"tip": head, "pieces": pieces, "since": since},
              binary=True)
    return filled(pieces, since, mode != "text")


def _valid(saved: dict) -> bool:
    pieces, since = saved.get("pieces"), saved.get("since")
    return isinstance(pieces, list) and isinstance(since, list) \
        and len(pieces) == len(since) + 1 and all(isinstance(p, str) for p in pieces) \
        and all(isinstance(s, int) for s in since)


def _law_at(repo, head: str, command: str) -> bool:
    """Does the view at `head` depend on nothing but `head`: its lifecycle committed there
    (not staged or in the work tree), and (`status`) without timed moves?"""
    from gitstate.law.lifecycle import LIFECYCLE_PATH
    found = repo.git.cat_batch([f"{head}:{LIFECYCLE_PATH}"])[0]
    if found is None or found[1] != "blob":
        return False
    return command != "status" or not repo.lifecycle(head).policies.timeouts


def _laid_out(data: dict, render: Callable[[dict], str],
              as_json: bool) -> tuple[list[str], list[int]] | None:
    """(the printed view cut where each roster row's time in its state is said, the moment
    each of those states began), or None when it cannot be cut so.

    Each such time is printed as a mark no real one can be (hundreds of thousands of years,
    a number drawn for this print), then cut out."""
    import os

    from gitstate.law.times import parse_iso
    rows = _timed_rows(data)
    base = 10 ** 8 + int.from_bytes(os.urandom(4), "big") % 10 ** 8
    since = [parse_iso(row["in_state_since"]) for row in rows]
    for i, row in enumerate(rows):
        row["seconds_in_state"] = (base + i) * _DAY
    marks = [str((base + i) * _DAY) if as_json else f"{base + i}d" for i in range(len(rows))]
    pieces = _cut(render(data), marks)
    return None if pieces is None else (pieces, since)


def _timed_rows(data: dict) -> list[dict]:
    """The roster rows that say how long they have been in their state."""
    return [r for key in ("living", "freezer", "cemetery", "unknown")
            for r in data.get(key) or () if r.get("seconds_in_state") is not None]


def _cut(text: str, marks: list[str]) -> list[str] | None:
    """`text` cut at each of `marks` in turn, the marks left out; None if one is missing."""
    pieces, at = [], 0
    for mark in marks:
        found = text.find(mark, at)
        if found < 0:
            return None
        pieces.append(text[at:found])
        at = found + len(mark)
    pieces.append(text[at:])
    return pieces


def filled(pieces: list[str], since: list[int], as_json: bool) -> str:
    """The kept print with each time in state said as of now."""
    if not since:
        return pieces[0]
    import time
    now = int(time.time())
    say = str if as_json else durations
    said = [say(max(0, now - s)) for s in since]
    out = [pieces[0]]
    for text, piece in zip(said, pieces[1:]):
        out += (text, piece)
    return "".join(out)


def durations(seconds: int) -> str:
    """`law.times.duration` (the largest unit and, when not zero, the one below it), said
    for 10,000 rows at a time: one division and one format each."""
    for size, below, units in _STEPS:
        if seconds >= size:
            big, rest = divmod(seconds, size)
            small = rest // below
            return f"{big}{units[0]}{small}{units[1]}" if small else f"{big}{units[0]}"
    return f"{seconds}s"


# (a unit's seconds, the next unit's, their letters), the largest first
_STEPS = ((86400, 3600, "dh"), (3600, 60, "hm"), (60, 1, "ms"))
