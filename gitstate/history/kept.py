"""What history says, kept under `.git/gitstate` keyed by the tip it was read to and read on
from there: the moves, messages, contexts and hand-overs (`movelog.py`, `mentions.py`,
`contexts.py`, `handovers.py`) each say how to read commits and how to add them to what is
kept; this says when a kept file can be read on, and keeps it.

A later read takes only the commits since the saved tip while the saved tip is an ancestor of
the new one (and, where a merge could change what was read, no merge came since); a history
that no longer holds the saved tip (rewritten, force-pushed) is read again in full. Nothing
here is trusted beyond its seal (`git/cache.py`); deleting it changes no answer.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable

from gitstate.git import cache
from gitstate.git.repo import on_first_parent_line
from gitstate.git.runner import Git


def read_on(git: Git, cache_dir: str | None, name: str, identity: list, head: str, *,
            valid: Callable[[dict], bool], anew: Callable[[str], dict | None] | None,
            onward: Callable[[dict, str], dict | None], parted: bool = False,
            linear: bool = False, fresh: bool = False) -> dict | None:
    """The kept file `name` brought to `head`: as saved when it was saved at `head`; else the
    saved one carried on by `onward(saved, "TIP..HEAD")` (None where it cannot be), or read
    by `anew(head)`; kept when it changed. `valid` says whether a saved one has the shape its
    reader needs; without `anew`, None where nothing saved can be read on; with `fresh`, the
    saved one is not looked at (a part of it did not read back).

    `parted`: the file is a folder of parts (`cache.store_parts`): `anew` and `onward` give
    the index with "blobs", the parts that changed (key -> bytes, None for a key dropped);
    the answer holds "parts" (key -> where) and those "blobs" (see `part`)."""
    saved = None
    if cache_dir and not fresh:
        saved = cache.load_parts(cache_dir, name, identity) if parted else \
            cache.load(cache_dir, name, identity)
        if saved is not None and not (isinstance(saved.get("tip"), str) and valid(saved)):
            saved = None
    if saved is not None and saved["tip"] == head:
        return saved
    data = None
    if saved is not None and git.ok("merge-base", "--is-ancestor", saved["tip"], head) and not (
            linear and not on_first_parent_line(git, saved["tip"], head)):
        data = onward(saved, f"{saved['tip']}..{head}")
    if data is None:
        data, saved = anew(head) if anew is not None else None, None
        if data is None:
            return None
    data["tip"] = head
    if parted:
        blobs = data.pop("blobs")
        data["parts"] = cache.store_parts(cache_dir, name, identity, data, blobs, saved)
        data["blobs"] = blobs
    elif cache_dir:
        cache.store(cache_dir, name, identity, data)
    return data


def part(cache_dir: str | None, name: str, kept: dict, key) -> bytes | None:
    """The bytes of part `key` of a kept folder (`read_on(..., parted=True)`): from memory if
    this read wrote it, else from its pack; None when it is not there or does not read back."""
    blobs = kept.get("blobs") or {}
    if key in blobs:
        return blobs[key]
    where = kept["parts"].get(key)
    return cache.part(cache_dir, name, where) if where is not None else None


def listed(cache_dir: str | None, name: str, kept: dict, key) -> list | None:
    """The `marshal`led list kept as part `key` ([] where there is none), or None if the part
    does not read back."""
    if key not in kept["parts"] and key not in (kept.get("blobs") or {}):
        return []
    blob = part(cache_dir, name, kept, key)
    try:
        found = marshal.loads(blob) if blob is not None else None
    except (ValueError, EOFError, TypeError):
        return None
    return found if isinstance(found, list) else None


def asked(kept_at: Callable[[bool], dict | None], ask: Callable[[dict], object]):
    """`ask(kept)` of the kept folder `kept_at(fresh)`; when a part it needs does not read
    back (`ask` says None: torn, edited, or removed by a writer two tips on), the folder is
    read again from nothing, whose parts are in memory."""
    for fresh in (False, True):
        kept = kept_at(fresh)
        found = ask(kept) if kept is not None else None
        if found is not None:
            return found
    return None


class Grouped:
    """Rows gathered by key as a long history is read, most of them held `marshal`led (a row
    as Python objects takes several times its bytes): 700,000 moves read into parts are not
    700,000 lists at once."""
    BATCH = 1 << 16

    def __init__(self) -> None:
        self.rows: dict = {}
        self.packed: dict = {}
        self.held = 0

    def add(self, key, row) -> None:
        rows = self.rows.get(key)
        if rows is None:
            self.rows[key] = [row]
        else:
            rows.append(row)
        self.held += 1
        if self.held >= self.BATCH:
            for k, rows in self.rows.items():
                self.packed.setdefault(k, []).append(marshal.dumps(rows))
            self.rows, self.held = {}, 0

    def keys(self) -> list:
        return list(self.packed) + [k for k in self.rows if k not in self.packed]

    def take(self, key) -> list:
        """The rows of `key`, in the order they came (no longer held here)."""
        out = [row for blob in self.packed.pop(key, ()) for row in marshal.loads(blob)]
        return out + self.rows.pop(key, [])
