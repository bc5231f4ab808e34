"""Whole pages: the views read through a Viewer, put into the shared frame. The server and the
static site both build their pages here, so they show the same thing."""

from __future__ import annotations

import time

from gitstate.history.fold import vacancies
from gitstate.web.data import Viewer, rows
from gitstate.web.html import Safe, when
from gitstate.web.layout import Links, page


def has_tree(lc, view: dict | None = None) -> bool:
    """Does this lifecycle have parents and children (registry's depth limits, a parent that
    may move its children), or does history hold any all the same?"""
    if lc.policies.max_depth is not None or lc.policies.movers.parent:
        return True
    return view is not None and any(r.get("parent") for r in rows(view))


def _frame(viewer: Viewer, links: Links, commit: str | None, lc_name: str | None, *,
           title: str, current: str, body: Safe, live: bool, view: dict | None = None) -> Safe:
    moment = None
    if links.at and commit:
        moment = when(viewer.commit_time(commit))
    if commit:
        links.tree = has_tree(viewer.lifecycle(commit), view)
    built = when(links.built) if links.built else None
    return page(title=title, current=current, links=links, body=body, commit=commit,
                lifecycle=lc_name, live=live and not links.at, when=moment, built=built)


def now_of(viewer: Viewer, links: Links, commit: str | None) -> int:
    """The moment ages are counted to: the site's build time, the commit's time when looking
    back, else the clock."""
    if links.built:
        return links.built
    if links.at and commit:
        return viewer.commit_time(commit)
    return int(time.time())


def vacancies_of(viewer: Viewer, view: dict) -> dict:
    """The vacancies view from a roster already read (what `vacant_roles` returns for the
    same commit), so that a page reads history once."""
    return {"commit": view["commit"],
            "vacancies": vacancies(rows(view), viewer.lifecycle(view["commit"]))}


def waiting_of(viewer: Viewer, links: Links, view: dict, now: int) -> dict[str, list[str]]:
    """Agent -> what it waits for a person for, in words, as of now (none when looking back:
    the notices are the runtime's, not history's)."""
    if links.at or not view["commit"]:
        return {}
    from gitstate.runtime.attention import waits_of
    return waits_of(viewer.repo, rows(view), view["commit"], now)


def roster_page(viewer: Viewer, links: Links, *, live: bool = True, params=None,
                view: dict | None = None) -> Safe:
    from gitstate.web.pages import Filters, roster_body
    view = view or viewer.roster(links.at)
    lc = viewer.lifecycle(view["commit"]) if view["commit"] else None
    now = now_of(viewer, links, view["commit"])
    body = roster_body(links, view, vacancies_of(viewer, view), lc, now, Filters(params),
                       viewer.last_words(view), waiting_of(viewer, links, view, now))
    return _frame(viewer, links, view["commit"], view["lifecycle"], title="Roster",
                  current="roster", body=body, live=live, view=view)


def vacancies_page(viewer: Viewer, links: Links, *, live: bool = True,
                   view: dict | None = None) -> Safe:
    from gitstate.web.pages import vacancies_body
    view = view or viewer.roster(links.at)
    return _frame(viewer, links, view["commit"], view["lifecycle"], title="Vacant roles",
                  current="vacancies", body=vacancies_body(links, vacancies_of(viewer, view)),
                  live=live, view=view)


def lifecycle_page(viewer: Viewer, links: Links, *, live: bool = True,
                   view: dict | None = None) -> Safe:
    from gitstate.web.pages import lifecycle_body
    view = view or viewer.roster(links.at)
    lc = viewer.lifecycle(view["commit"])
    return _frame(viewer, links, view["commit"], lc.name, title=f"Lifecycle {lc.name}",
                  current="lifecycle", body=lifecycle_body(lc, view), live=live, view=view)


def feed_page(viewer: Viewer, links: Links, *, live: bool = True, page_no: int = 0) -> Safe:
    from gitstate.web.activity import feed_body
    commit = viewer.commit_at(links.at)
    moves = viewer.feed(commit, page=page_no) if commit else []
    more = commit is not None and len(viewer.index(commit)["moves"]) > (page_no + 1) * 100
    lc = viewer.lifecycle(commit) if commit else None
    return _frame(viewer, links, commit, lc.name if lc else None, title="Activity",
                  current="feed", body=feed_body(links, moves, page_no, more), live=live)


def board_page(viewer: Viewer, links: Links, *, live: bool = True) -> Safe:
    from gitstate.web.activity import board_body
    view = viewer.board(links.at)
    lc = viewer.lifecycle(view["commit"]) if view["commit"] else None
    return _frame(viewer, links, view["commit"], lc.name if lc else None, title="Board",
                  current="board", body=board_body(links, view["notices"]), live=live)


def team_page(viewer: Viewer, links: Links, *, live: bool = True) -> Safe:
    from gitstate.web.activity import team_body
    commit = viewer.commit_at(links.at)
    lc = viewer.lifecycle(commit) if commit else None
    series = viewer.team(commit) if commit else {"times": [], "counts": {}, "states": []}
    return _frame(viewer, links, commit, lc.name if lc else None, title="Team",
                  current="team", body=team_body(series, lc), live=live)


def tree_page(viewer: Viewer, links: Links, *, live: bool = True,
              view: dict | None = None) -> Safe:
    from gitstate.web.activity import tree_body
    view = view or viewer.roster(links.at)
    return _frame(viewer, links, view["commit"], view["lifecycle"], title="Tree",
                  current="tree", body=tree_body(links, view), live=live, view=view)


def diff_page(viewer: Viewer, links: Links, sha: str, agent: str) -> Safe:
    from gitstate.web.activity import diff_body
    data = viewer.diff(sha, agent)
    return _frame(viewer, links, data["commit"], viewer.lifecycle(data["commit"]).name,
                  title=f"{agent} at {sha[:10]}",
                  current="", body=diff_body(links, data), live=False)


def agent_page(viewer: Viewer, links: Links, agent: str, *, live: bool = True,
               data: dict | None = None) -> Safe:
    from gitstate.web.agent_page import agent_body
    data = data or viewer.agent(agent, links.at)
    lc = viewer.lifecycle(data["commit"])
    end = now_of(viewer, links, data["commit"])
    r = data["record"]
    waits = waiting_of(viewer, links, {"commit": data["commit"], "living": [r]}, end)
    return _frame(viewer, links, data["commit"], data["lifecycle"],
                  title=f"Agent {r['agent']}", current="agent",
                  body=agent_body(links, data, lc, end, waits.get(r["agent"])), live=live)


def error_page(links: Links, status: int, exc) -> Safe:
    """A page that says what was wrong and what would be legal; the form keeps what was asked
    so that it can be corrected."""
    from gitstate.web.pages import error_body
    where = f"{exc.where}: " if exc.where else ""
    message = where + exc.message.replace("--at ", "at=")
    hint = exc.hint.replace("--at ", "at=") if exc.hint else None
    return page(title="Error", current="", links=links, body=error_body(status, message, hint),
                commit=None, lifecycle=None, live=False)
