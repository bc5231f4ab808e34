"""`gitstate site --out DIR`: the viewer's pages as static files, readable without JavaScript,
for a CI job to publish. History is read once for all agents (roster, every timeline, every
inbox, every agent's context over time), not once per page. The site says when it was built;
every age it shows ("in state for") is as of then."""

from __future__ import annotations

import time
from pathlib import Path

from gitstate.errors import UsageError
from gitstate.git.repo import Managed
from gitstate.web.data import Viewer, children_of, rows
from gitstate.web.layout import Links


def _write(path: Path, text: str, made: set) -> None:
    if path.parent not in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        made.add(path.parent)
    path.write_text(text, encoding="utf-8")


def _check_out(out: Path, force: bool) -> None:
    """`out` must be missing or empty, unless `force` (a typo must not scatter a site over
    someone's files, nor leave old agents' pages beside new ones unnoticed)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise UsageError(f"--out {out} is not empty",
                         hint="name a new or empty folder, or add --force to write into it")


def _tree_and_inboxes(viewer: Viewer, top: Links, view: dict, pages: dict[str, str]) -> dict:
    """The tree's page (where the lifecycle has one) added to `pages`; every agent's inbox at
    the roster's commit, read at once."""
    from gitstate.history.views import inboxes
    from gitstate.web import documents as d
    commit = view["commit"]
    if d.has_tree(viewer.lifecycle(commit), view):
        pages["tree.html"] = d.tree_page(viewer, top, live=False, view=view)
    return inboxes(viewer.repo, commit, mentions=viewer.index(commit)["messages"])


def _agent_pages(viewer: Viewer, deep: Links, view: dict, boxes: dict,
                 pages: dict[str, str]) -> None:
    """Each agent's page, added to `pages`."""
    from gitstate.web import documents as d
    children = children_of(view)
    for r in rows(view):
        data = viewer.page_data(view, r, boxes.get(r["agent"]), children)
        pages[f"agents/{r['agent']}.html"] = d.agent_page(viewer, deep, r["agent"], live=False,
                                                          data=data)


def build(repo: Managed, out: str | Path, at: str | None = None, *,
          force: bool = False) -> dict:
    """Write the site into `out`; returns what was written (pages, agents, commit, built)."""
    from gitstate.law.times import iso
    from gitstate.web import documents as d
    from gitstate.web.asgi import dumps, static_text

    out = Path(out)
    _check_out(out, force)
    built = int(time.time())
    viewer = Viewer(repo)
    at = viewer.clean_at(at)
    view = viewer.roster(at)
    commit = view["commit"]
    viewer.lazy = False          # every agent's page is written: read everything once
    if at is None:
        viewer.pinned = commit
    top = Links(static=True, at=at, commit_url=viewer.commit_url, built=built)
    deep = Links(static=True, at=at, commit_url=viewer.commit_url, built=built, depth=1)
    pages: dict[str, str] = {
        "index.html": d.roster_page(viewer, top, live=False, view=view),
        "lifecycle.html": d.lifecycle_page(viewer, top, live=False, view=view),
        "vacancies.html": d.vacancies_page(viewer, top, live=False, view=view),
        "feed.html": d.feed_page(viewer, top, live=False),
        "board.html": d.board_page(viewer, top, live=False),
        "team.html": d.team_page(viewer, top, live=False),
    }
    records = rows(view)
    boxes = _tree_and_inboxes(viewer, top, view, pages) if commit else {}
    _agent_pages(viewer, deep, view, boxes, pages)
    pages["style.css"] = static_text("style.css")
    pages["api/roster.json"] = dumps(view)
    pages["api/vacancies.json"] = dumps(d.vacancies_of(viewer, view))
    if commit:
        from gitstate.web.asgi import team_json
        pages["api/feed.json"] = dumps(viewer.feed(commit))
        pages["api/board.json"] = dumps(viewer.board(at))
        pages["api/team.json"] = dumps(team_json(viewer, commit))
    made: set = set()
    for rel, text in pages.items():
        _write(out / rel, text, made)
    return {"out": str(out), "commit": commit, "pages": len(pages), "agents": len(records),
            "built": iso(built)}
