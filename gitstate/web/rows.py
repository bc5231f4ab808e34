"""A roster view's rows, as the pages read them: every row group after group, the agents each
spawned, and the text of an agent's last move, shown where it set no summary."""

from __future__ import annotations

GROUPS = ("living", "freezer", "cemetery", "unknown")   # a roster view's groups, in order


def rows(view: dict) -> list[dict]:
    """Every row of a roster view, group after group."""
    return [r for key in GROUPS for r in view.get(key, [])]


def unsummed(r: dict) -> bool:
    """Has the row a last state commit, and no summary (nor final summary) to show?"""
    return bool(r.get("last_commit")) and not (r.get("summary") or r.get("final_summary"))


def move_texts(out: str, wanted: dict[str, str], accept) -> dict[str, str]:
    """agent -> the text after the tag of its last move's subject, from `git log`'s lines
    (sha NUL subject) of the commits `wanted` (sha -> agent)."""
    from gitstate.law.grammar import subject_tag
    words = {}
    for line in out.splitlines():
        sha, _, subject = line.partition("\0")
        tag = subject_tag(subject, accept)
        if tag is not None and wanted.get(sha) == tag[0] and tag[2].strip():
            words[tag[0]] = tag[2].strip()
    return words


def children_of(view: dict) -> dict[str, list[str]]:
    """agent -> the agents of the roster `view` it spawned."""
    children: dict[str, list[str]] = {}
    for r in rows(view):
        if r.get("parent"):
            children.setdefault(r["parent"], []).append(r["agent"])
    return children
