"""Everything kept under `.git/gitstate/`, one room with one API: `load` and `store` (one
file), `read_on` with `part`, `listed`, `asked` and `Grouped` (a file or a folder of parts kept
at a tip and carried on as history grows), `load_lifecycle_cached` (checked lifecycles). Only
ever speed: deleting the folder changes no answer; `verify --no-cache` and the hub read none of
it. Measured against one `sqlite3` database in bench/README.md ("The kept files").

A file is JSON or `marshal` (~5x faster to read), stamped with an identity (format, version,
what else its answers depend on, where a shallow history stops; for `marshal`, the Python) and
sealed with a keyed hash (BLAKE2b) whose key lives in the user's cache folder: a missing,
damaged, foreign or edited file reads as None and is rebuilt, and one forged inside `.git/` by
whoever lacks the key is not believed. Writes are atomic; a failed one only costs speed.

A folder of parts: its sealed index holds where each part lies (pack file, offset, length) and
its keyed hash, so a reader reads and checks the one part it wants, and a writer writes the
parts that changed into one new pack (creating a file costs more than writing one: 300 µs). A
named pack is never written into, so a reader holding an older index still finds its parts
(they go one write later); packs holding over twice what is named are written again as one.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from gitstate.git.runner import Git
    from gitstate.law.lifecycle import Lifecycle

_KEY: bytes | None = None
SLACK = 1 << 20   # bytes a kept folder's packs may hold beyond twice what its index names
_PYTHON = [marshal.version, list(sys.version_info[:2])]   # what `marshal`ed files depend on


def _blake2b(data: bytes | memoryview, key: bytes) -> str:
    try:
        from _blake2 import blake2b  # built in; `hashlib` would load OpenSSL on the hook path
    except ImportError:  # pragma: no cover - other Pythons
        from hashlib import blake2b
    return blake2b(data, key=key, digest_size=32).hexdigest()


def _key_path() -> str | None:
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.path.join(os.environ["HOME"], ".cache") if os.environ.get("HOME") else None)
    return os.path.join(base, "gitstate", "cache-key") if base else None


def key() -> bytes | None:
    """This user's sealing key, made on first use; None if it cannot be had (no caches then)."""
    global _KEY
    path = _key_path() if _KEY is None else None
    if path is None:
        return _KEY
    for make in (False, True):
        try:
            if make:
                _make_key(path)
            with open(path, "rb") as fh:
                data = fh.read(64)
            if len(data) == 32:
                _KEY = data
                break
        except OSError:
            pass
    return _KEY


def _make_key(path: str) -> None:
    """A new key written aside, then linked: the first writer wins, and all read its key."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
        fh.write(os.urandom(32))
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    os.unlink(tmp)


def load(cache_dir: str | None, name: str, identity: list,
         binary: bool = False) -> dict | None:
    """The file `name` kept under `identity`, or None (missing, damaged, foreign, forged)."""
    secret = key() if cache_dir else None
    if not secret or not cache_dir:
        return None
    try:
        with open(os.path.join(cache_dir, name), "rb") as fh:
            raw = fh.read()
        # the seal's line, then the body, looked at in place (a large file is not copied)
        body = memoryview(raw)[65:]
        if raw[64:65] != b"\n" or raw[:64].decode("ascii", "replace") != _blake2b(body, secret):
            return None
        identity = identity + _shallow(cache_dir) + (_PYTHON if binary else [])
        data = _decoded(body, binary)
        if isinstance(data, dict) and data.get("identity") == identity:
            return data
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return None


def _decoded(body: memoryview, binary: bool):
    if binary:
        return marshal.loads(body)
    import json  # not on the hook's path: the lifecycle is kept in `marshal`
    return json.loads(bytes(body).decode("utf-8", "surrogatepass"))


def store(cache_dir: str | None, name: str, identity: list, data: dict,
          binary: bool = False) -> None:
    """Keep `data` as the file `name` under `identity` (atomically; a failure only costs speed)."""
    secret = key() if cache_dir else None
    if not secret or not cache_dir:
        return
    identity = identity + _shallow(cache_dir)
    try:
        path = os.path.join(cache_dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        if binary:
            body = marshal.dumps({**data, "identity": identity + _PYTHON})
        else:
            import json
            body = json.dumps({**data, "identity": identity},
                              separators=(",", ":")).encode("utf-8", "surrogatepass")
        with open(tmp, "wb") as fh:
            fh.write(_blake2b(body, secret).encode("ascii") + b"\n" + body)
        os.replace(tmp, path)
    except (OSError, ValueError, TypeError):
        pass


def read_on(git: Git, cache_dir: str | None, name: str, identity: list, head: str, *,
            valid: Callable[[dict], bool], anew: Callable[[str], dict | None] | None,
            onward: Callable[[dict, str], dict | None], parted: bool = False,
            linear: Callable[[Git, str, str], bool] | None = None,
            fresh: bool = False) -> dict | None:
    """The kept file `name` brought to `head`: as saved when it was saved at `head`; else the
    saved one carried on by `onward(saved, "TIP..HEAD")` while the saved tip is an ancestor
    of `head` (and, given `linear`, `linear(git, tip, head)`: `repo.on_first_parent_line`
    where a merge could change what was read), or read by `anew(head)`; kept when
    it changed. `valid` says whether a saved one has the shape its reader needs; without
    `anew`, None where nothing saved can be read on; with `fresh`, the saved one is not
    looked at (a part of it did not read back).

    `parted`: the file is a folder of parts: `anew` and `onward` give the index with "blobs",
    the parts that changed (key -> bytes, None for a key dropped); the answer holds "parts"
    (key -> where) and those "blobs" (see `part`)."""
    saved = None if fresh else _saved(cache_dir, name, identity, valid, parted)
    if saved is not None and saved["tip"] == head:
        return saved
    data, saved = _brought(git, saved, head, linear, onward, anew)
    if data is None:
        return None
    data["tip"] = head
    if parted:
        blobs = data.pop("blobs")
        data["parts"] = _store_parts(cache_dir, name, identity, data, blobs, saved)
        data["blobs"] = blobs
    else:
        store(cache_dir, name, identity, data)
    return data


def _brought(git: Git, saved: dict | None, head: str, linear, onward, anew
             ) -> tuple[dict | None, dict | None]:
    """(the data read on from `saved`, `saved`), else (read anew, None)."""
    if saved is not None and _goes_on(git, saved["tip"], head, linear):
        data = onward(saved, f"{saved['tip']}..{head}")
        if data is not None:
            return data, saved
    return (anew(head) if anew is not None else None), None


def _saved(cache_dir: str | None, name: str, identity: list, valid: Callable[[dict], bool],
           parted: bool) -> dict | None:
    """The file `name` as kept (a folder's index), if it has the shape its reader needs."""
    saved = load(cache_dir, f"{name}/index" if parted else name, identity, binary=parted)
    if saved is None or not isinstance(saved.get("tip"), str) or parted and not _indexed(saved):
        return None
    return saved if valid(saved) else None


def _indexed(saved: dict) -> bool:
    return isinstance(saved.get("parts"), dict) and isinstance(saved.get("packs"), dict) \
        and isinstance(saved.get("gone"), list)


def _goes_on(git: Git, tip: str, head: str,
             linear: Callable[[Git, str, str], bool] | None) -> bool:
    """True if what was read to `tip` can be read on to `head`."""
    return git.ok("merge-base", "--is-ancestor", tip, head) and (
        linear is None or linear(git, tip, head))


def part(cache_dir: str | None, name: str, kept: dict, key) -> bytes | None:
    """The bytes of part `key` of a kept folder (`read_on(..., parted=True)`): from memory if
    this read wrote it, else from its pack; None when it is not there or does not read back."""
    blobs = kept.get("blobs") or {}
    if key in blobs:
        return blobs[key]
    where = kept["parts"].get(key)
    return _read_part(cache_dir, name, where) if where is not None else None


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


def _read_part(cache_dir: str | None, name: str, where: object) -> bytes | None:
    """The bytes an index of the folder `name` places at `where` (pack, offset, length, keyed
    hash), or None when they are missing or their hash is not the index's (torn, edited)."""
    secret = key() if cache_dir else None
    if not secret or not cache_dir or not isinstance(where, tuple) or len(where) != 4:
        return None
    pack, at, size, digest = where
    if not _is_pack(pack) or not isinstance(at, int) or not isinstance(size, int):
        return None
    try:
        with open(os.path.join(cache_dir, name, pack), "rb") as fh:
            fh.seek(at)
            data = fh.read(size)
    except (OSError, ValueError, OverflowError):
        return None
    return data if len(data) == size and _blake2b(data, secret) == digest else None


def _store_parts(cache_dir: str | None, name: str, identity: list, data: dict,
                 changed: dict, saved: dict | None) -> dict:
    """Keep `data` as the index of the folder `name`: the parts of `saved` (the index it
    replaces; None: the folder is written anew) with the `changed` ones (key -> bytes, None
    to drop a key) written again. Returns the parts the index names (without the changed
    keys when nothing could be written)."""
    parts = {k: w for k, w in (saved["parts"] if saved else {}).items() if k not in changed}
    secret = key() if cache_dir else None
    if not secret or not cache_dir:
        return parts
    blobs, packs = _to_write(cache_dir, name, parts, changed, saved)
    placed = _write_pack(os.path.join(cache_dir, name), blobs, secret)
    if placed is None:
        return parts
    parts.update(placed)
    packs.update({w[0]: w[1] + w[2] for w in placed.values()})
    _write_index(cache_dir, name, identity, {**data, "parts": parts}, packs, saved)
    return parts


def _to_write(cache_dir: str, name: str, parts: dict, changed: dict, saved: dict | None
              ) -> tuple[dict, dict]:
    """(the parts to write, the packs they go beside)."""
    blobs = {k: b for k, b in changed.items() if b is not None}
    if not saved:
        return blobs, {}
    return _compacted(cache_dir, name, parts, blobs, dict(saved["packs"]))


def _write_index(cache_dir: str, name: str, identity: list, index: dict, packs: dict,
                 saved: dict | None) -> None:
    """Keep `index` with the `packs` its parts lie in and those `saved` named that it does
    not ("gone": removed by the next write), and remove what may go now (`_sweep`)."""
    live = {w[0] for w in index["parts"].values()}
    before = saved or {"packs": {}, "gone": None}
    store(cache_dir, f"{name}/index", identity,
          {**index, "packs": {p: n for p, n in packs.items() if p in live},
           "gone": sorted(set(before["packs"]) - live)}, binary=True)
    _sweep(cache_dir, name, before["gone"], live)


def _compacted(cache_dir: str, name: str, parts: dict, blobs: dict,
               packs: dict) -> tuple[dict, dict]:
    """The `blobs` to write and the `packs` they go beside: when the packs would hold more
    than twice what is named (parts written again leave their old bytes behind), every part
    into one new pack (if every part reads back)."""
    fresh = sum(len(b) for b in blobs.values())
    if sum(packs.values()) + fresh <= 2 * (sum(w[2] for w in parts.values()) + fresh) + SLACK:
        return blobs, packs
    whole = {k: _read_part(cache_dir, name, w) for k, w in parts.items()}
    if any(b is None for b in whole.values()):
        return blobs, packs
    return {**whole, **blobs}, {}


def _write_pack(folder: str, blobs: dict, secret: bytes) -> dict | None:
    """`blobs` written one after another into a new pack in `folder`: where each lies, or
    None if it could not be written."""
    pack, at, placed = f"{os.urandom(12).hex()}.pack", 0, {}
    try:
        os.makedirs(folder, exist_ok=True)
        if blobs:
            with open(os.path.join(folder, pack), "xb") as fh:
                for k, blob in blobs.items():
                    fh.write(blob)
                    placed[k] = (pack, at, len(blob), _blake2b(blob, secret))
                    at += len(blob)
    except OSError:
        return None
    return placed


def _sweep(cache_dir: str, name: str, gone: list | None, live: set) -> None:
    """Remove the packs `gone` (those the index before stopped naming); for a folder written
    anew (`gone` None), every pack not `live` (of a write that did not finish) and `NAME.bin`
    (where the same was kept in one file before)."""
    folder = os.path.join(cache_dir, name)
    try:
        old = gone if gone is not None else os.listdir(folder)
    except OSError:
        old = []
    paths = [os.path.join(folder, file) for file in old if _is_pack(file) and file not in live]
    for path in paths + ([os.path.join(cache_dir, f"{name}.bin")] if gone is None else []):
        try:
            os.unlink(path)
        except OSError:
            pass


def _is_pack(file: object) -> bool:
    return isinstance(file, str) and len(file) == 29 and file.endswith(".pack") \
        and file[:24].isalnum()


def _shallow(cache_dir: str) -> list:
    """The commits a shallow clone's history stops at (`shallow` in the git dir; [] for a
    whole history): an answer kept at a tip is another once a fetch deepens the history
    beneath that same tip. (`cache_dir` is `<git dir>/gitstate`; a linked worktree's git dir
    names the common one, where `shallow` is.)"""
    gdir = os.path.dirname(os.path.normpath(cache_dir))
    try:
        with open(os.path.join(gdir, "commondir"), encoding="utf-8") as fh:
            gdir = os.path.join(gdir, fh.read().strip())
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(gdir, "shallow"), "rb") as fh:
            bounds = fh.read()
    except OSError:
        return []
    return ["shallow", _blake2b(bounds, b"shallow")] if bounds else []


def load_lifecycle_cached(data: bytes, blob: str, source: str,
                          cache_dir: str | None) -> Lifecycle:
    """`load_lifecycle` of a committed or staged blob, kept by the blob's hash (an edited one is
    a miss): read back from its plain form, it skips both the PyYAML import and the checks."""
    from gitstate import __version__
    from gitstate.law.lifecycle import Lifecycle

    name = f"lifecycle-{blob}.bin"   # `marshal`: no `json` import on the hook's path
    identity = [14, __version__]   # 14: the plain form of the one declaration (agents_from)
    saved = load(cache_dir, name, identity, binary=True)
    if saved is not None:
        try:
            return Lifecycle.from_plain(saved["lifecycle"], source=saved["source"])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            pass  # damaged: rebuilt below
    from gitstate.law.load import read_lifecycle  # the checks too: only on a miss
    lc = read_lifecycle(data, source)
    store(cache_dir, name, identity, {"lifecycle": lc.as_plain(), "source": lc.source},
          binary=True)
    return lc
