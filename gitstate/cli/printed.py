"""`gitstate log` of the whole history, kept as printed.

The plain `log` of a long history is large (70,000 moves: 6 MB of text, 12 MB of JSON), and
making it again from the kept moves costs far more than reading it: every moment said, every
line laid out, every row encoded. So what was printed is kept under `.git/gitstate` (sealed,
as every file there) with the tip it describes and each agent's last state; when the tip moves
on by commits without merges, only the moves since are laid out and added, by the same
printers; any other history is printed anew. Only the plain forms are kept: `log` and compact
`log --json` (not a terminal's indented JSON, nor `--at`, `--since`, `-n`, an agent or
`--newest-first`).
"""

from __future__ import annotations

FORMAT = 1
_JSON_OPEN = '{"moves":['   # what json_text writes before the rows of {"moves": rows}...
_JSON_CLOSE = "]}\n"        # ...and after them


def whole_log(repo, as_json: bool) -> list[bytes] | None:
    """The output of `gitstate log` (compact `--json` with `as_json`) at HEAD, in UTF-8, in
    parts to be written one after another (12 MB are not joined to be printed); None where
    nothing is kept (no commit, no cache folder): the caller prints it the usual way."""
    from gitstate import __version__
    from gitstate.git import cache

    head = repo.git.head()
    if head is None or not repo.cache_dir:
        return None
    lc = repo.lifecycle(head)
    name = f"log-{'json' if as_json else 'text'}.bin"
    identity = [FORMAT, __version__, list(lc.accept), lc.state_file]
    saved = cache.load(repo.cache_dir, name, identity, binary=True)
    if saved is not None and not _valid(saved):
        saved = None
    kept = saved if saved is not None and saved["tip"] == head else None
    if kept is None and saved is not None:
        kept = _onward(repo, lc, saved, head, as_json)
    if kept is None:
        kept = _anew(repo, as_json)
    if kept is not saved:
        cache.store(repo.cache_dir, name, identity, kept, binary=True)
    return _whole(kept, as_json)


def _valid(saved: dict) -> bool:
    return isinstance(saved.get("tip"), str) and isinstance(saved.get("body"), bytes) \
        and isinstance(saved.get("last"), dict)


def _anew(repo, as_json: bool) -> dict:
    """The whole log laid out from the kept moves."""
    from gitstate.history.views import log_rows
    data = log_rows(repo)
    last: dict[str, str] = {}
    for move in data["moves"]:
        last[move["agent"]] = move["to"]
    return {"tip": data["commit"], "body": _laid_out(data["moves"], as_json), "last": last}


def _onward(repo, lc, saved: dict, head: str, as_json: bool) -> dict | None:
    """`saved` with the moves of `saved.tip..head` added, if `head` is `saved.tip` plus
    commits without merges; else None."""
    from gitstate.history.movelog import moves_since
    from gitstate.history.views import move_of
    from gitstate.law.times import iso
    tip = saved["tip"]
    if not repo.git.ok("merge-base", "--is-ancestor", tip, head) \
            or repo.git.run("rev-list", "--merges", "-1", f"{tip}..{head}").strip():
        return None
    moves = [move_of(row) for row in moves_since(repo.git, lc, tip, head, saved["last"])]
    last = dict(saved["last"])
    for move in moves:
        move["time"] = iso(move["time"])   # as log_rows says them
        last[move["agent"]] = move["to"]
    new = _laid_out(moves, as_json)
    comma = b"," if as_json and saved["body"] and new else b""
    return {"tip": head, "body": saved["body"] + comma + new, "last": last}


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


def _whole(kept: dict, as_json: bool) -> list[bytes]:
    """The whole output around the kept rows, as the printers make it."""
    from gitstate.cli.text import json_text
    if as_json:
        empty = json_text({"commit": kept["tip"], "agent": None, "moves": []})
        return [empty[:-len(_JSON_CLOSE)].encode(), kept["body"], _JSON_CLOSE.encode()]
    return [kept["body"] or _printed_log([]).encode()]
