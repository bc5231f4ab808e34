"""Whole pages: the views read through a Viewer, put into the shared frame. The server and the
static site both build their pages here, so they show the same thing."""

from __future__ import annotations

from gitstate.history.fold import vacancies
from gitstate.law.times import when
from gitstate.web.data import Viewer
from gitstate.web.html import Safe
from gitstate.web.layout import Links, page


def _frame(viewer: Viewer, links: Links, commit: str | None, lc_name: str | None, *,
           title: str, current: str, body: Safe, live: bool) -> Safe:
    moment = None
    if links.at and commit:
        moment = when(int(viewer.repo.git.text("log", "-1", "--format=%ct", commit)))
    return page(title=title, current=current, links=links, body=body, commit=commit,
                lifecycle=lc_name, live=live and not links.at, when=moment)


def vacancies_of(viewer: Viewer, view: dict) -> dict:
    """The vacancies view from a roster already read (what `vacant_roles` returns for the
    same commit), so that a page reads history once."""
    records = [r for key in ("living", "freezer", "cemetery", "unknown")
               for r in view.get(key, [])]
    return {"commit": view["commit"],
            "vacancies": vacancies(records, viewer.lifecycle(view["commit"]))}


def roster_page(viewer: Viewer, links: Links, *, live: bool = True) -> Safe:
    from gitstate.web.pages import roster_body
    view = viewer.roster(links.at)
    return _frame(viewer, links, view["commit"], view["lifecycle"], title="Roster",
                  current="roster", body=roster_body(links, view, vacancies_of(viewer, view)),
                  live=live)


def vacancies_page(viewer: Viewer, links: Links, *, live: bool = True) -> Safe:
    from gitstate.web.pages import vacancies_body
    view = viewer.roster(links.at)
    return _frame(viewer, links, view["commit"], view["lifecycle"], title="Vacant roles",
                  current="vacancies", body=vacancies_body(links, vacancies_of(viewer, view)),
                  live=live)


def lifecycle_page(viewer: Viewer, links: Links, *, live: bool = True) -> Safe:
    from gitstate.web.pages import lifecycle_body
    view = viewer.roster(links.at)
    lc = viewer.lifecycle(view["commit"])
    return _frame(viewer, links, view["commit"], lc.name, title=f"Lifecycle {lc.name}",
                  current="lifecycle", body=lifecycle_body(lc, view), live=live)


def agent_page(viewer: Viewer, links: Links, agent: str, *, live: bool = True,
               data: dict | None = None) -> Safe:
    from gitstate.web.agent import agent_body
    data = data or viewer.agent(agent, links.at)
    lc = viewer.lifecycle(data["commit"])
    return _frame(viewer, links, data["commit"], data["lifecycle"],
                  title=f"Agent {data['record']['agent']}", current="agent",
                  body=agent_body(links, data, list(lc.policies.humans)), live=live)


def error_page(links: Links, status: int, exc) -> Safe:
    """A page that says what was wrong and what would be legal; the form keeps what was asked
    so that it can be corrected."""
    from gitstate.web.pages import error_body
    where = f"{exc.where}: " if exc.where else ""
    message = where + exc.message.replace("--at ", "at=")
    hint = exc.hint.replace("--at ", "at=") if exc.hint else None
    return page(title="Error", current="", links=links, body=error_body(status, message, hint),
                commit=None, lifecycle=None, live=False)
