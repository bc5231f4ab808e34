"""`gitstate log` of the whole history, kept as printed.

The plain `log` of a long history is large (70,000 moves: 6 MB of text, 12 MB of JSON), and
making it again from the kept moves costs far more than reading it: every moment said, every
line laid out, every row encoded. So what was printed is kept under `.git/gitstate` as a
folder of parts (`git/cache.py`, each part checked by its keyed hash), with each agent's
last state: when the tip moves on by commits without merges, only the moves since are laid
out, by the same printers, into one new part; any other history is printed anew, CHUNK moves
to a part. Past FOLD parts added, those are written again as one. Only the plain forms are
kept: `log` and compact `log --json` (not a terminal's indented JSON, nor `--at`, `--since`,
`-n`, an agent or `--newest-first`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

FORMAT = 3                  # 3: the moves of the first-parent line alone
FOLD = 32                   # parts added on a kept log before they are written as one
CHUNK = 1 << 14             # moves laid out at a time when the whole log is printed anew
_JSON_OPEN = '{"moves":['   # what json_text writes before the rows of {"moves": rows}...
_JSON_CLOSE = "]}\n"        # ...and after them


def whole_log(repo, as_json: bool) -> list[bytes] | None:
    """The output of `gitstate log` (compact `--json` with `as_json`) at HEAD, in UTF-8, in
    parts to be written one after another (12 MB are not joined to be printed); None where
    nothing is kept (no commit, no cache folder): the caller prints it the usual way."""
    from gitstate import __version__
    from gitstate.git.cache import asked, read_on
    from gitstate.git.repo import on_first_parent_line

    head = repo.head()
    if head is None or not repo.cache_dir:
        return None
    lc = repo.lifecycle(head)
    name = f"log-{'json' if as_json else 'text'}"
    identity = [FORMAT, __version__, list(lc.accept), lc.state_file]

    def kept_at(fresh: bool) -> dict | None:
        return read_on(repo.git, repo.cache_dir, name, identity, head, valid=_valid,
                       anew=lambda tip: _anew(repo, lc, tip, as_json),
                       onward=lambda saved, revs: _onward(repo, lc, name, saved, revs, as_json),
                       parted=True, linear=on_first_parent_line, fresh=fresh)

    rows = asked(kept_at, lambda kept: _parts(repo.cache_dir, name, kept))
    return None if rows is None else _whole(head, rows, as_json)


def _valid(saved: dict) -> bool:
    return isinstance(saved.get("count"), int) and isinstance(saved.get("base"), int) \
        and isinstance(saved.get("last"), dict)


def _parts(cache_dir: str, name: str, kept: dict) -> list[bytes] | None:
    """The kept rows, part by part (None if one does not read back)."""
    from gitstate.git.cache import part
    parts = [part(cache_dir, name, kept, i) for i in range(kept["count"])]
    return None if any(found is None for found in parts) else parts  # type: ignore[return-value]


def _anew(repo, lc, head: str, as_json: bool) -> dict:
    """The whole log laid out from the kept moves, CHUNK moves to a part, unpacked a part at
    a time: a history's moves are never all rows at once (700,000 of them: several hundred
    MB)."""
    from gitstate.history.movelog import moves_in_parts
    parts = moves_in_parts(repo.git, lc, head, repo.cache_dir, CHUNK)
    made: Iterable[list[dict]]
    if parts is None:   # the kept moves cannot be had: the log as the command line reads it
        from gitstate.history.views import log_rows
        made = [log_rows(repo)["moves"]]
    else:
        made = (_as_logged(rows) for rows in parts)
    last: dict[str, str] = {}
    blobs: dict[int, bytes] = {}
    for moves in made:
        for move in moves:
            last[move["agent"]] = move["to"]
        laid = _laid_out(moves, as_json)
        if laid:
            blobs[len(blobs)] = laid
    return {"count": len(blobs), "base": len(blobs), "last": last, "blobs": blobs}


def _as_logged(rows: list) -> list[dict]:
    """Kept move rows as `log_rows` gives them."""
    from gitstate.history.views import move_of
    from gitstate.law.times import iso
    moves = [move_of(row) for row in rows]
    for move in moves:
        move["time"] = iso(move["time"])
    return moves


def _onward(repo, lc, name: str, saved: dict, revs: str, as_json: bool) -> dict | None:
    """`saved` with the moves of `revs` (`TIP..HEAD`, commits without merges) added as a part
    of their own; past FOLD such parts, they are written again as one."""
    from gitstate.history.movelog import moves_since
    tip, _, head = revs.partition("..")
    moves = _as_logged(moves_since(repo.git, lc, tip, head, saved["last"]))
    last = dict(saved["last"])
    for move in moves:
        last[move["agent"]] = move["to"]
    new = _laid_out(moves, as_json)
    count, base = saved["count"], saved["base"]
    kept = {"count": count, "base": base, "last": last, "blobs": {}}
    if not new:
        return kept
    if count - base < FOLD:
        return {**kept, "count": count + 1, "blobs": {count: new}}
    parts = _parts(repo.cache_dir, name, saved)   # the parts added since the log was laid out
    if parts is None:
        return None
    joined = (b"," if as_json else b"").join([*parts[base:], new])
    return {**kept, "count": base + 1,
            "blobs": {base: joined, **{i: None for i in range(base + 1, count)}}}


def _laid_out(moves: list[dict], as_json: bool) -> bytes:
    """The rows of `log`'s output for `moves`, by the command line's own printers (b"" for
    none): JSON rows without the brackets around them, or text lines."""
    from gitstate.cli.text import json_text
    if not moves:
        return b""
    if not as_json:
        return _printed_log(moves).encode()
    text = json_text({"moves": moves})
    if not (text.startswith(_JSON_OPEN) and text.endswith(_JSON_CLOSE)):
        raise ValueError("log rows are not laid out compactly")   # a terminal's JSON
    return text[len(_JSON_OPEN):-len(_JSON_CLOSE)].encode()


def _printed_log(moves: list[dict]) -> str:
    import contextlib
    import io

    from gitstate.cli.text import print_log
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_log({"moves": moves})
    return out.getvalue()


def _whole(head: str, parts: list[bytes], as_json: bool) -> list[bytes]:
    """The whole output around the kept rows, as the printers make it."""
    from gitstate.cli.text import json_text
    if not as_json:
        return parts or [_printed_log([]).encode()]
    empty = json_text({"commit": head, "agent": None, "moves": []})
    out = [empty[:-len(_JSON_CLOSE)].encode()]
    for i, rows in enumerate(parts):
        out += [b",", rows] if i else [rows]
    return out + [_JSON_CLOSE.encode()]
