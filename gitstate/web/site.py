"""`gitstate site --out DIR`: the viewer's pages as static files, readable without JavaScript,
for a CI job to publish. History is read once for all agents (roster, every timeline, every
inbox), not once per page."""

from __future__ import annotations

from pathlib import Path

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed
from gitstate.web.data import Viewer
from gitstate.web.layout import Links


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build(repo: Managed, out: str | Path, at: str | None = None) -> dict:
    """Write the site into `out`; returns what was written (pages, agents, commit)."""
    from gitstate.history.views import inboxes
    from gitstate.web import documents as d
    from gitstate.web.app import dumps, static_text

    out = Path(out)
    viewer = Viewer(repo)
    at = viewer.clean_at(at)
    view = viewer.roster(at)
    commit = view["commit"]
    top, deep = Links(static=True, at=at), Links(static=True, at=at, depth=1)
    pages: dict[str, str] = {"index.html": d.roster_page(viewer, top, live=False),
                             "lifecycle.html": d.lifecycle_page(viewer, top, live=False),
                             "vacancies.html": d.vacancies_page(viewer, top, live=False)}
    boxes = inboxes(repo, commit) if commit else {}
    if commit:
        viewer.timelines(commit)
    records = [r for key in ("living", "freezer", "cemetery", "unknown")
               for r in view.get(key, [])]
    for r in records:
        agent = r["agent"]
        box = boxes.get(agent)
        data = {"record": r, "commit": commit, "lifecycle": view["lifecycle"],
                "timeline": viewer.timeline(agent, commit) if commit else [],
                "inbox": box if box and "error" not in box else None,
                "inbox_error": box.get("error") if box else f"{agent} has no state file here",
                "freeze": None, "freeze_error": None}
        if box and "error" not in box:
            data["inbox_error"] = None
        if r["roster"] == "frozen":
            try:
                data["freeze"] = viewer.show(agent, commit)
            except GitstateError as exc:
                data["freeze_error"] = str(exc)
        pages[f"agents/{agent}.html"] = d.agent_page(viewer, deep, agent, live=False, data=data)
    for name in ("style.css",):
        pages[name] = static_text(name)
    pages["api/roster.json"] = dumps(view)
    pages["api/vacancies.json"] = dumps(d.vacancies_of(viewer, view))
    for rel, text in pages.items():
        _write(out / rel, text)
    return {"out": str(out), "commit": commit, "pages": len(pages), "agents": len(records)}
