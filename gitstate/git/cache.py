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

A large kept file is a folder of parts (`load_parts`, `store_parts`): its sealed index names
each part by the keyed hash of its bytes, so a reader opens the index and the one part it
wants (an agent's moves, not the history's), checks that part's hash against the name, and
a writer writes only the parts that changed. A part is never written in place: a changed one
is a new file, and the index that names it replaces the old index atomically, so a reader
holding the old index still finds the old parts (they go one write later).
"""

from __future__ import annotations

import json
import os

_KEY: bytes | None = None


def _blake2b(data: bytes, key: bytes) -> str:
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
        seal, _, body = raw.partition(b"\n")
        if len(seal) != 64 or seal.decode("ascii", "replace") != _blake2b(body, secret):
            return None
        if binary:
            import marshal
            data = marshal.loads(body)
            identity = identity + _python()
        else:
            data = json.loads(body.decode("utf-8", "surrogatepass"))
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
    try:
        path = os.path.join(cache_dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        if binary:
            import marshal
            body = marshal.dumps({**data, "identity": identity + _python()})
        else:
            body = json.dumps({**data, "identity": identity},
                              separators=(",", ":")).encode("utf-8", "surrogatepass")
        with open(tmp, "wb") as fh:
            fh.write(_blake2b(body, secret).encode("ascii") + b"\n" + body)
        os.replace(tmp, path)
    except (OSError, ValueError, TypeError):
        pass


def load_parts(cache_dir: str | None, name: str, identity: list) -> dict | None:
    """The index of the kept folder `name` (its "parts": key -> file), or None (as `load`)."""
    data = load(cache_dir, f"{name}/index", identity, binary=True)
    return data if data is not None and isinstance(data.get("parts"), dict) \
        and isinstance(data.get("gone", []), list) else None


def part(cache_dir: str | None, name: str, file: object) -> bytes | None:
    """The bytes of the part that an index of the kept folder `name` calls `file`, or None
    when it is missing or its keyed hash is not its name (torn, edited, forged)."""
    secret = key() if cache_dir else None
    if not secret or not cache_dir or not _is_part(file):
        return None
    try:
        with open(os.path.join(cache_dir, name, str(file)), "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return data if _blake2b(data, secret) == file else None


def store_parts(cache_dir: str | None, name: str, identity: list, data: dict,
                changed: dict, saved: dict | None) -> dict:
    """Keep `data` as the index of the folder `name`: the parts of `saved` (the index it
    replaces; None: the folder is written anew) with the `changed` ones (key -> bytes, None
    to drop a key) written again. Returns the parts the index names (key -> file; those of
    `saved` and the changed keys left out when nothing could be written). The parts that
    `saved` stopped naming are removed by the write after this one, so that a reader still
    holding `saved` finds them; a folder written anew loses every file its index does not
    name (those of an older format, of a write that did not finish)."""
    parts = dict(saved["parts"]) if saved else {}
    secret = key() if cache_dir else None
    if not secret or not cache_dir:
        return {k: v for k, v in parts.items() if k not in changed}
    folder = os.path.join(cache_dir, name)
    try:
        os.makedirs(folder, exist_ok=True)
        for k, blob in changed.items():
            if blob is None:
                parts.pop(k, None)
                continue
            file = _blake2b(blob, secret)
            tmp = os.path.join(folder, f"{file}.{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, os.path.join(folder, file))
            parts[k] = file
    except OSError:
        return {k: v for k, v in parts.items() if k not in changed}
    live = set(parts.values())
    gone = set(saved["parts"].values()) - live if saved else set()
    store(cache_dir, f"{name}/index", identity, {**data, "parts": parts, "gone": sorted(gone)},
          binary=True)
    try:
        old = saved.get("gone", []) if saved else os.listdir(folder)
    except OSError:
        old = []
    for file in old:
        if file != "index" and file not in live and isinstance(file, str) and "/" not in file:
            try:
                os.unlink(os.path.join(folder, file))
            except OSError:
                pass
    return parts


def _is_part(file: object) -> bool:
    return isinstance(file, str) and len(file) == 64 and file.isalnum()


def _python() -> list:
    """What a `marshal`ed file depends on besides its own identity."""
    import marshal
    import sys
    return [marshal.version, list(sys.version_info[:2])]
