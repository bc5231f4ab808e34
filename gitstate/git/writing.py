"""Where gitstate writes in a work tree: a plain path inside it, never through a link nor into
`.git`, written whole (a reader sees the old file or the new one)."""

from __future__ import annotations

import os

from gitstate.errors import GitstateError
from gitstate.law.checks import is_git_dir_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def safe_path(top: Path, relpath: str) -> Path:
    """`top/relpath`, refusing anything that would land outside the work tree or inside
    `.git` (the last line of defence: lifecycles with such layouts are refused at load)."""
    parts = _plain_parts(relpath)
    target = top.joinpath(*parts)
    real_top = top.resolve()
    real_parent = target.parent.resolve()
    if real_parent != real_top and real_top not in real_parent.parents:
        raise GitstateError(f"refusing to write {relpath!r}: it leads outside the repository "
                            f"(through a link to {real_parent})")
    dot_git = real_top / ".git"
    if real_parent == dot_git or dot_git in real_parent.parents:
        raise GitstateError(f"refusing to write {relpath!r}: it leads into .git (through a "
                            f"link to {real_parent})")
    if target.is_symlink():
        raise GitstateError(f"refusing to write {relpath!r}: it is a symbolic link")
    return target


def _plain_parts(relpath: str) -> list[str]:
    """The parts of a plain relative path, outside any '.git' folder; refused otherwise."""
    parts = relpath.split("/")
    if relpath.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in relpath:
        raise GitstateError(f"refusing to write {relpath!r}: not a plain path inside the "
                            "repository")
    if any(is_git_dir_name(p) for p in parts):
        raise GitstateError(f"refusing to write {relpath!r}: it is inside a '.git' folder, "
                            "which belongs to git")
    return parts


def write_file(target: Path, data: bytes, *, executable: bool = False) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    if executable:
        tmp.chmod(0o755)
    os.replace(tmp, target)
