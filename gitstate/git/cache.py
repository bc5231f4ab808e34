"""Files under `.git/gitstate/` that only ever make gitstate faster.

Each is JSON stamped with an identity (format, gitstate version, and whatever else its answers
depend on); a missing, damaged or foreign file reads as None and is rebuilt. Writes are atomic
(a reader sees the old file or the new one), and a failed write only costs speed.
"""

from __future__ import annotations

import json
import os


def load(cache_dir: str | None, name: str, identity: list) -> dict | None:
    if not cache_dir:
        return None
    try:
        with open(os.path.join(cache_dir, name), encoding="utf-8") as fh:
            data = json.load(fh)
        if isinstance(data, dict) and data.get("identity") == identity:
            return data
    except (OSError, ValueError):
        pass
    return None


def store(cache_dir: str | None, name: str, identity: list, data: dict) -> None:
    if not cache_dir:
        return
    try:
        os.makedirs(cache_dir, exist_ok=True)
        path = os.path.join(cache_dir, name)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({**data, "identity": identity}, fh, separators=(",", ":"))
        os.replace(tmp, path)
    except (OSError, ValueError, TypeError):
        pass
