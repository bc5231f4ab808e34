"""Checked lifecycles remembered under `.git/gitstate/`, for the hooks and read commands:
reading one back from its plain form skips both the PyYAML import and the checks. Keyed by
the blob's hash, so an edited lifecycle is a miss."""

from __future__ import annotations

from gitstate.law.lifecycle import Lifecycle


def load_lifecycle_cached(data: bytes, blob: str, source: str,
                          cache_dir: str | None) -> Lifecycle:
    """`load_lifecycle` of a committed or staged blob, remembered under `cache_dir`."""
    from gitstate import __version__
    from gitstate.git import cache

    name = f"lifecycle-{blob}.bin"   # `marshal`: no `json` import on the hook's path
    identity = [13, __version__]   # 13: the plain form of the one declaration (heartbeat states)
    saved = cache.load(cache_dir, name, identity, binary=True)
    if saved is not None:
        try:
            return Lifecycle.from_plain(saved["lifecycle"], source=saved["source"])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            pass  # damaged: rebuilt below
    from gitstate.law.load import read_lifecycle  # the checks too: only on a miss
    lc = read_lifecycle(data, source)
    cache.store(cache_dir, name, identity, {"lifecycle": lc.as_plain(), "source": lc.source},
                binary=True)
    return lc
