"""Files under `.git/gitstate/` that only ever make gitstate faster.

Each is JSON (or, for the large ones, `marshal`: ~5x faster to read, and only ever read after
its seal is checked, under an identity that names the Python that wrote it) stamped with an
identity (format, gitstate version, and whatever else its answers
depend on) and sealed with a keyed hash (BLAKE2b) whose key lives outside the repository, in
the user's cache folder. A missing, damaged, foreign or edited file reads as None and is
rebuilt: a well-formed file forged inside `.git/` (by a tool, a script, an agent that can write
there but does not hold the key) is not believed. Writes are atomic (a reader sees the old file
or the new one), and a failed write only costs speed. `verify --no-cache` and the hub read none
of these files.

A large kept file is a folder of parts (`load_parts`, `store_parts`): its sealed index says
where each part lies (a pack file, an offset, a length) and the keyed hash of its bytes, so a
reader opens the index and reads the one part it wants (an agent's moves, not the history's)
and checks its hash, and a writer writes only the parts that changed, into a new pack. A pack
is never written into once named: the index that names a new one replaces the old index
atomically, so a reader holding the old index still finds the old parts (they go one write
later).
"""

from __future__ import annotations

import os

_KEY: bytes | None = None
SLACK = 1 << 20   # bytes a kept folder's packs may hold beyond twice what its index names


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
    if _KEY is not None:
        return _KEY
    path = _key_path()
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(64)
        if len(data) == 32:
            _KEY = data
            return _KEY
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(32))
        try:
            os.link(tmp, path)   # the first writer wins; everyone then reads the same key
        except FileExistsError:
            pass
        os.unlink(tmp)
        with open(path, "rb") as fh:
            data = fh.read(64)
        _KEY = data if len(data) == 32 else None
    except OSError:
        _KEY = None
    return _KEY


def load(cache_dir: str | None, name: str, identity: list,
         binary: bool = False) -> dict | None:
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
        identity = identity + _shallow(cache_dir)
        if binary:
            import marshal
            data = marshal.loads(body)
            identity = identity + _python()
        else:
            import json  # not on the hook's path: the lifecycle is kept in `marshal`
            data = json.loads(bytes(body).decode("utf-8", "surrogatepass"))
        if isinstance(data, dict) and data.get("identity") == identity:
            return data
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return None


def store(cache_dir: str | None, name: str, identity: list, data: dict,
          binary: bool = False) -> None:
    secret = key() if cache_dir else None
    if not secret or not cache_dir:
        return
    identity = identity + _shallow(cache_dir)
    try:
        path = os.path.join(cache_dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        if binary:
            import marshal
            body = marshal.dumps({**data, "identity": identity + _python()})
        else:
            import json
            body = json.dumps({**data, "identity": identity},
                              separators=(",", ":")).encode("utf-8", "surrogatepass")
        with open(tmp, "wb") as fh:
            fh.write(_blake2b(body, secret).encode("ascii") + b"\n" + body)
        os.replace(tmp, path)
    except (OSError, ValueError, TypeError):
        pass


def load_parts(cache_dir: str | None, name: str, identity: list) -> dict | None:
    """The index of the kept folder `name` (its "parts": key -> where), or None (as `load`)."""
    data = load(cache_dir, f"{name}/index", identity, binary=True)
    return data if data is not None and isinstance(data.get("parts"), dict) \
        and isinstance(data.get("packs"), dict) and isinstance(data.get("gone"), list) \
        else None


def part(cache_dir: str | None, name: str, where: object) -> bytes | None:
    """The bytes of the part that an index of the kept folder `name` places at `where`
    (pack, offset, length, keyed hash), or None when they are missing or their keyed hash is
    not the one the index holds (torn, edited, forged)."""
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


def store_parts(cache_dir: str | None, name: str, identity: list, data: dict,
                changed: dict, saved: dict | None) -> dict:
    """Keep `data` as the index of the folder `name`: the parts of `saved` (the index it
    replaces; None: the folder is written anew) with the `changed` ones (key -> bytes, None
    to drop a key) written again, in one new pack file (creating a file costs more than
    writing one: 300 µs here). Returns the parts the index names (key -> where; without the
    changed keys when nothing could be written).

    The packs that `saved` stopped naming are removed by the write after this one, so that a
    reader still holding `saved` finds them; a folder written anew loses every pack its index
    does not name (those of a write that did not finish), and `NAME.bin` beside it (where the
    same was kept in one file before). When the packs hold more than twice what is named
    (parts written again leave their old bytes behind), every part is written into one."""
    parts = dict(saved["parts"]) if saved else {}
    secret = key() if cache_dir else None
    if not secret or not cache_dir:
        return {k: v for k, v in parts.items() if k not in changed}
    folder = os.path.join(cache_dir, name)
    packs = dict(saved["packs"]) if saved else {}
    for k, blob in changed.items():
        if blob is None:
            parts.pop(k, None)
    blobs = {k: b for k, b in changed.items() if b is not None}
    held = sum(packs.values()) + sum(len(b) for b in blobs.values())
    named = sum(w[2] for k, w in parts.items() if k not in blobs) + \
        sum(len(b) for b in blobs.values())
    if saved and held > 2 * named + SLACK:
        whole = {k: part(cache_dir, name, w) for k, w in parts.items() if k not in blobs}
        if all(b is not None for b in whole.values()):
            blobs, packs = {**whole, **blobs}, {}
    pack, at, placed = f"{os.urandom(12).hex()}.pack", 0, {}
    try:
        os.makedirs(folder, exist_ok=True)
        if blobs:
            with open(os.path.join(folder, pack), "xb") as fh:
                for k, blob in blobs.items():
                    fh.write(blob)
                    placed[k] = (pack, at, len(blob), _blake2b(blob, secret))
                    at += len(blob)
            packs[pack] = at
    except OSError:
        return {k: v for k, v in parts.items() if k not in changed}
    parts.update(placed)
    live = {w[0] for w in parts.values()}
    packs = {p: n for p, n in packs.items() if p in live}
    gone = sorted(set(saved["packs"]) - live) if saved else []
    store(cache_dir, f"{name}/index", identity,
          {**data, "parts": parts, "packs": packs, "gone": gone}, binary=True)
    try:
        old = saved["gone"] if saved else os.listdir(folder)
    except OSError:
        old = []
    paths = [os.path.join(folder, file) for file in old if _is_pack(file) and file not in live]
    for path in paths + ([] if saved else [os.path.join(cache_dir, f"{name}.bin")]):
        try:
            os.unlink(path)
        except OSError:
            pass
    return parts


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
    if not bounds:
        return []
    return ["shallow", _blake2b(bounds, b"shallow")]


def _python() -> list:
    """What a `marshal`ed file depends on besides its own identity."""
    import marshal
    import sys
    return [marshal.version, list(sys.version_info[:2])]
