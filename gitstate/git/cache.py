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
"""

from __future__ import annotations

import os

_KEY: bytes | None = None


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
    try:
        os.makedirs(cache_dir, exist_ok=True)
        path = os.path.join(cache_dir, name)
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


def _python() -> list:
    """What a `marshal`ed file depends on besides its own identity."""
    import marshal
    import sys
    return [marshal.version, list(sys.version_info[:2])]
