"""Shipped data: presets and protocol docs, the agent kit, templates and hook shims.

In an installed wheel they live in `gitstate/_shipped/`; in a source checkout they are the
top-level folders `protocols/`, `agent/`, `data/` and `.githooks/`.
"""

from __future__ import annotations

from pathlib import Path

from gitstate.errors import UsageError

_PACKAGE = Path(__file__).resolve().parent
_SOURCE_NAMES = {"protocols": "protocols", "agent": "agent", "data": "data",
                 "githooks": ".githooks"}


def shipped(kind: str, *parts: str) -> Path:
    """Path of a shipped file; `kind` is protocols, agent, data or githooks."""
    installed = _PACKAGE / "_shipped" / kind
    if installed.is_dir():
        return installed.joinpath(*parts)
    return _PACKAGE.parent.joinpath(_SOURCE_NAMES[kind], *parts)


def read_shipped(kind: str, *parts: str) -> str:
    return shipped(kind, *parts).read_text(encoding="utf-8")


def presets() -> list[str]:
    root = shipped("protocols")
    return sorted(p.name for p in root.iterdir() if (p / "lifecycle.yaml").is_file())


def preset_dir(name: str) -> Path:
    known = presets()
    if name not in known:
        raise UsageError(f"unknown preset '{name}'; shipped presets: {', '.join(known)}",
                         hint="or pass the path of a lifecycle.yaml file")
    return shipped("protocols", name)


def install_extra(extra: str) -> str:
    """What to give `pip install` to add the optional `extra` to this gitstate, as it was
    installed: from the folder of a clone (`pip install .`, `-e .`: the folder pip recorded),
    else by its name on the package index."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution
    where = "gitstate-agents"
    try:
        found = json.loads(distribution("gitstate-agents").read_text("direct_url.json") or "{}")
    except (PackageNotFoundError, OSError, ValueError):
        found = {}
    url = found.get("url") if isinstance(found, dict) else None
    if isinstance(url, str) and url.startswith("file://"):
        from urllib.parse import unquote, urlparse
        where = unquote(urlparse(url).path)
    return f"'{where}[{extra}]'"
