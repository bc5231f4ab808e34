"""The team's pages: the activity feed (every move, newest first), the chart of how many
agents stood in each state over time, the parent/child tree, and one move's diff."""

from __future__ import annotations

from gitstate.web.data import rows
from gitstate.web.html import Safe, join, render, time_tag
from gitstate.web.layout import Links
from gitstate.web.pages import agent_link


def move_words(m: dict) -> Safe:
    return render("{a} → {b}", a=m["from"], b=m["to"]) if m.get("from") \
        else render("born in {b}", b=m["to"])


def feed_body(links: Links, moves: list[dict], page_no: int, more: bool) -> Safe:
    items = [_feed_item(links, m) for m in moves]
    nav = _pager(links, page_no, more)
    listing = render('<ol class="feed" id="feed">{i}</ol>', i=join(items)) if items else \
        render('<p class="empty">No moves yet.</p>')
    return render('<h1>Activity</h1><p class="lead">Every move of every agent, newest first; '
                  'each links to its commit{d}.</p>{l}{nav}', l=listing,
                  d="" if links.static else " and to what it changed in the state file",
                  nav=render('<p class="pager">{n}</p>', n=join(nav, " · ")) if nav
                  else Safe(""))


def _feed_item(links: Links, m: dict) -> Safe:
    diff = links.diff(m["commit"], m["agent"])
    return render(
        '<li><p class="meta">{t} · {commit}{diff} · {author}</p><p><strong>{who}</strong> '
        '<span class="move">{move}</span></p>{text}</li>', t=time_tag(m["time"]),
        commit=links.commit(m["commit"]),
        diff=render(' · <a href="{h}">diff</a>', h=diff) if diff else Safe(""),
        author=m.get("author") or "", who=agent_link(links, m["agent"]), move=move_words(m),
        text=render('<p class="text">{x}</p>', x=m["text"]) if m.get("text") else Safe(""))


def _pager(links: Links, page_no: int, more: bool) -> list[Safe]:
    """Links to the newer and the older page of the feed (none on a static site)."""
    if links.static:
        return []
    nav = [render('<a href="{h}" rel="prev">Newer</a>',
                  h=links.with_query("feed", page=page_no - 1 or None))] if page_no > 0 else []
    if more:
        nav.append(render('<a href="{h}" rel="next">Older</a>',
                          h=links.with_query("feed", page=page_no + 1)))
    return nav


def board_body(links: Links, notices: list[dict]) -> Safe:
    """The board: seed 000's notices (freezes and when to wake, wakes, deaths, roles handed
    over, assumed or left vacant), newest first."""
    items = [render('<li class="notice {kind}"><p class="meta">{t} · {commit} · {kind}</p>'
                    '<p><strong>{who}</strong> {text}</p></li>', t=time_tag(n["time"]),
                    commit=links.commit(n["commit"]), kind=n["kind"],
                    who=agent_link(links, n["agent"]), text=n["text"])
             for n in reversed(notices)]
    listing = render('<ol class="feed board" id="board">{i}</ol>', i=join(items)) if items \
        else render('<p class="empty">No notices yet.</p>')
    return render('<h1>Board</h1><p class="lead">What the team was told, newest first: who '
                  'froze and when to wake them, who woke or died, which roles changed hands '
                  'or fell vacant. Derived from history (<code>gitstate board</code>).</p>'
                  '{l}', l=listing)


def team_body(series: dict, lc) -> Safe:
    from gitstate.web.charts import team_svg, team_table
    if lc is None:
        return render('<h1>Team</h1><p class="empty">No commits yet.</p>')
    return render('<h1>Team</h1><p class="lead">How many agents stood in each state, from the '
                  'first move to this commit.</p>{svg}{table}', svg=team_svg(series, lc),
                  table=team_table(series))


def tree_body(links: Links, view: dict) -> Safe:
    """Who spawned whom: each agent under its parent (registry's depth), with its state."""
    records = {r["agent"]: r for r in rows(view)}
    children: dict[str | None, list[str]] = {}
    for a, r in sorted(records.items()):
        parent = r.get("parent")
        children.setdefault(parent if parent in records else None, []).append(a)

    def branch(agent: str, seen: set) -> Safe:
        r = records[agent]
        kids = [k for k in children.get(agent, []) if k not in seen]
        seen.update(kids)
        sub = render('<ul>{i}</ul>', i=join(branch(k, seen) for k in kids)) if kids \
            else Safe("")
        return render('<li>{link} <span class="badge {c}">{s}</span>{role}{sub}</li>',
                      link=agent_link(links, agent), c=r.get("roster") or "unknown",
                      s=r.get("state") or "?",
                      role=render(' <span class="meta">{r}</span>', r=r["role"])
                      if r.get("role") else Safe(""), sub=sub)
    roots = children.get(None, [])
    seen = set(roots)
    tops = [branch(a, seen) for a in roots]
    if not tops:
        return render('<h1>Tree</h1><p class="empty">No agents yet.</p>')
    return render('<h1>Tree</h1><p class="lead">Each agent under the parent that spawned it.'
                  '</p><ul class="tree">{t}</ul>', t=join(tops))


# A diff line's kind, by how it begins (the first that matches): file names are plain
DIFF_KINDS = (("+++", ""), ("---", ""), ("+", "add"), ("-", "del"), ("@@", "hunk"))


def diff_body(links: Links, data: dict) -> Safe:
    lines = [render('<span class="{k}">{t}</span>', k=_diff_kind(line), t=line)
             for line in data["diff"].splitlines()]
    return render('<h1>{agent} at {commit}</h1><p class="lead">What this commit changed in '
                  '<code>{path}</code>. <a href="{back}">Back to {agent}</a></p>'
                  '<pre class="diff">{d}</pre>', agent=data["agent"],
                  commit=links.commit(data["commit"]), path=data["path"],
                  back=links.agent(data["agent"]),
                  d=join(lines, "\n") if lines else Safe("(no change to the state file)"))


def _diff_kind(line: str) -> str:
    return next((kind for prefix, kind in DIFF_KINDS if line.startswith(prefix)), "")
