"""The pages' bodies: the roster (living / freezer / cemetery), vacant roles, the lifecycle
drawn with its counts. Each takes the views' plain dicts; every value is escaped."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from gitstate.law.times import duration
from gitstate.web.clock import sha_of
from gitstate.web.html import Safe, join, render, time_tag
from gitstate.web.layout import Links

GROUPS = (("living", "Living", "living"), ("freezer", "Freezer", "frozen"),
          ("cemetery", "Cemetery", "dead"), ("unknown", "Unreadable", "unknown"))


def _role(r: dict) -> str:
    if not r.get("role"):
        return "—"
    return f"{r['role']} #{r['instance']}" if r.get("instance") else r["role"]


def _phase(r: dict) -> str:
    pct = r.get("context_pct")
    if pct is None:
        return r.get("phase") or "—"
    return f"{r.get('phase') or '?'} ({pct:g}%)"


def _dur(seconds: int | None) -> str:
    return "—" if seconds is None else duration(seconds)


def badge(r: dict) -> Safe:
    """The agent's state, in its roster's colours."""
    return render('<span class="badge {c}">{s}</span>', c=r.get("roster") or "unknown",
                  s=r.get("state") or "?")


def agent_link(links: Links, agent: str) -> Safe:
    return render('<a href="{href}">{agent}</a>', href=links.agent(agent), agent=agent)


SORTS = {"trouble": "trouble first", "agent": "agent", "state": "state", "role": "role",
         "phase": "context", "age": "longest in state"}
PHASES = ("urgent", "legacy", "midlife", "fresh", "unknown")


class Filters:
    """The roster's filter and order, read from the URL (?state=&role=&phase=&q=&sort=), so
    that a filtered roster can be linked to and survives live updates."""

    def __init__(self, params=None):
        params = params or {}
        self.state, self.role, self.phase = (_param(params, k) for k in ("state", "role", "phase"))
        self.q = _param(params, "q")[:200]
        sort = _param(params, "sort")
        self.sort = sort if sort in SORTS else "trouble"

    def query(self, **changes) -> dict:
        """This filter as URL query values, with `changes` (empty values left out)."""
        values = {"state": self.state, "role": self.role, "phase": self.phase, "q": self.q,
                  "sort": None if self.sort == "trouble" else self.sort, **changes}
        return {k: v for k, v in values.items() if v}

    @property
    def active(self) -> bool:
        return bool(self.state or self.role or self.phase or self.q)

    def matches(self, r: dict, flags: list, words: str = "") -> bool:
        """Does record `r` (with its troubles `flags`, and the text of its last move shown
        in place of a summary, `words`) pass this filter?"""
        if any(getattr(self, k) not in ("", r.get(k)) for k in ("state", "role", "phase")):
            return False
        hay = _haystack(r, flags, words)
        return all(word in hay for word in self.q.lower().split())

    def order(self, rows: list[tuple[dict, list]]) -> list[tuple[dict, list]]:
        return sorted(rows, key=ORDERS[self.sort])


def _param(params, key: str) -> str:
    return (params.get(key) or "").strip()


def _haystack(r: dict, flags: list, words: str) -> str:
    """What a search looks in: the record's words, its troubles and its last move's text."""
    return " ".join([*(str(r.get(k) or "") for k in ("agent", "state", "role", "summary",
                                                    "thread", "final_summary", "problem")),
                     *(w for _, w in flags), words]).lower()


def _by_trouble(x: tuple[dict, list]) -> tuple:
    from gitstate.web.trouble import worst
    return -worst(x[1]), x[0]["agent"]


def _by_agent(x: tuple[dict, list]) -> str:
    return x[0]["agent"]


def _by_state(x: tuple[dict, list]) -> tuple:
    return x[0].get("state") or "", x[0]["agent"]


def _by_role(x: tuple[dict, list]) -> tuple:
    return x[0].get("role") or "~", x[0].get("instance") or 0, x[0]["agent"]


def _by_phase(x: tuple[dict, list]) -> tuple:
    return -(x[0].get("context_pct") or -1), x[0]["agent"]


def _by_age(x: tuple[dict, list]) -> tuple:
    return -(x[0].get("seconds_in_state") or -1), x[0]["agent"]


ORDERS: dict[str, Callable[[tuple[dict, list]], Any]] = {
    "trouble": _by_trouble, "agent": _by_agent, "state": _by_state, "role": _by_role,
    "phase": _by_phase, "age": _by_age}


def filter_form(links: Links, f: Filters, states: list[str], roles: list[str]) -> Safe:
    """A plain GET form: works without script, and its result is a URL."""
    at = render('<input type="hidden" name="at" value="{a}">', a=links.at) if links.at \
        else Safe("")
    clear = render(' <a href="{h}">Clear</a>', h=links.page("roster")) if f.active \
        else Safe("")
    return render(
        '<form class="filters" method="get" role="search" aria-label="Filter the roster">'
        '{at}<label>Search <input type="search" name="q" id="f-q" value="{q}" size="14" '
        'autocomplete="off"></label>{state}{role}{phase}{sort}<button type="submit">Show'
        '</button>{clear}</form>', at=at, q=f.q,
        state=_options("state", states, f.state), role=_options("role", roles, f.role),
        phase=_options("phase", PHASES, f.phase),
        sort=render('<label>Order <select name="sort" id="f-sort">{o}</select></label>',
                    o=join(render('<option value="{k}"{sel}>{v}</option>', k=k, v=v,
                                  sel=_selected(k == f.sort)) for k, v in SORTS.items())),
        clear=clear)


def _options(name: str, values: Sequence[str], chosen: str) -> Safe:
    """A filter's menu: any, or one of `values`."""
    opts = [render('<option value="">{e}</option>', e="any")]
    opts += [render('<option value="{v}"{sel}>{label}</option>', v=v, label=v,
                    sel=_selected(v == chosen)) for v in values]
    return render('<label>{n} <select name="{k}" id="f-{k}">{o}</select></label>',
                  n=name.capitalize(), k=name, o=join(opts))


def _selected(chosen: bool) -> Safe:
    return Safe(" selected") if chosen else Safe("")


def flags_html(flags: list[tuple[str, str]]) -> Safe:
    """Each trouble in words, with a sign that is not colour alone."""
    return join(render(' <span class="flag {k}"><span aria-hidden="true">⚠ </span>{w}</span>',
                       k=k, w=w) for k, w in flags)


COL_SORTS = ("agent", "state", "role", "phase", "age", None)


def summary_cell(text: str, words: str | None) -> Safe:
    """The Summary column: the agent's own summary; else the text of its last move, marked
    as such (muted, and said in words); else a dash."""
    if text:
        return render("{t}", t=text)
    if words:
        return render('<span class="last-move" title="The text of its last move: it set no '
                      'summary"><span class="label">last move:</span> {w}</span>', w=words)
    return Safe("—")


# A table's columns, and the keys its last column shows (the first one set).
TABLES = {"cemetery": (("Agent", "Last state", "Role", "Phase", "Dead for", "Final summary"),
                       ("final_summary", "summary"))}
LIVING_TABLE = (("Agent", "State", "Role", "Phase", "In state for", "Summary"), ("summary",))


def roster_table(links: Links, key: str, label: str, rows: list[tuple[dict, list]],
                 f: Filters, words: dict[str, str]) -> Safe:
    cols, last = TABLES.get(key, LIVING_TABLE)
    head = join(_header(links, f, c, s) for c, s in zip(cols, COL_SORTS))
    body = [_row(links, cols, last, r, flags, words) for r, flags in rows]
    return render('<table class="roster cards" id="table-{key}"><caption class="sr-only">{label}'
                  '</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
                  key=key, label=label, head=head, body=join(body))


def _header(links: Links, f: Filters, c: str, sort: str | None) -> Safe:
    """A column's header: a link that orders the roster by it, where it can."""
    if sort is None or links.static:
        return render('<th scope="col">{c}</th>', c=c)
    return render('<th scope="col"{cur}><a href="{h}" title="order by {c}">{c}</a></th>',
                  c=c, h=links.with_query("roster", **f.query(sort=sort)),
                  cur=_aria_sort(sort) if f.sort == sort else Safe(""))


def _aria_sort(sort: str) -> Safe:
    return Safe(' aria-sort="ascending"' if sort in ("agent", "state", "role")
                else ' aria-sort="descending"')


def _row(links: Links, cols: tuple, last: tuple, r: dict, flags: list,
         words: dict[str, str]) -> Safe:
    """One agent's row: `last` names the keys its last column shows, the first one set."""
    seconds = r.get("seconds_in_state")
    return render(
        '<tr{cls}><th scope="row" data-label="{c0}">{link}</th>'
        '<td data-label="{c1}">{badge}{flags}</td>'
        '<td data-label="{c2}">{role}</td><td data-label="{c3}">{phase}</td>'
        '<td data-label="{c4}"><span title="since {since}">{dur}</span></td>'
        '<td data-label="{c5}" class="text">{text}</td></tr>',
        cls=Safe(' class="trouble"') if flags else Safe(""),
        **{f"c{i}": c for i, c in enumerate(cols)},
        link=agent_link(links, r["agent"]), badge=badge(r), flags=flags_html(flags), role=_role(r),
        phase=_phase(r), since=(sha_of(r.get("in_state_since_commit")) or "?")[:10],
        dur=_dur(seconds),
        text=summary_cell(next((r[k] for k in last if r.get(k)), ""), words.get(r["agent"])))


def shown_groups(lc, view: dict) -> list[tuple[str, str, str]]:
    """The roster's sections this lifecycle can have: no freezer without a frozen state, no
    cemetery without a dead one (unless history put someone there all the same)."""
    kinds = {spec.roster for spec in lc.states.values()}
    return [(key, label, roster) for key, label, roster in GROUPS
            if key in view and (roster in kinds or roster == "unknown" or view.get(key))]


def roster_body(links: Links, view: dict, vacancies: dict, lc, now: int | None, f: Filters,
                words: dict[str, str], waiting: dict[str, list[str]]) -> Safe:
    """The roster page's body. `words`: agent -> the text of its last move, shown (and
    searched) where it set no summary (`Viewer.last_words`). `waiting`: agent -> what it
    waits for a person for, in words (runtime/attention.py), first in "Needs attention"."""
    groups = shown_groups(lc, view) if lc is not None else \
        [g for g in GROUPS if g[0] in view]
    total = sum(len(view.get(key, [])) for key, _, _ in GROUPS)
    flagged = flagged_agents(view, groups, lc, now, waiting)
    shown = [_group(links, view, g, f, flagged, words) for g in groups]
    head = [_lead(view, groups, total), *_roster_controls(links, f, lc, view, groups, shown, total)]
    attention = [_attention(links, flagged)] if flagged else []
    return join(head + attention + [section for section, _ in shown]
                + [vacancy_section(links, vacancies, level=2)])


def _roster_controls(links: Links, f: Filters, lc, view: dict, groups: list[tuple[str, str, str]],
                     shown: list[tuple[Safe, int]], total: int) -> list[Safe]:
    """The filter form (on live pages), and how many agents pass it (when one is set)."""
    controls = [] if links.static else [_filter_form(links, f, lc, view, groups)]
    if f.active:
        controls.append(render('<p class="filtered" role="status">Showing {n} of {t} agents.'
                               '</p>', n=sum(n for _, n in shown), t=total))
    return controls


def _filter_form(links: Links, f: Filters, lc, view: dict,
                 groups: list[tuple[str, str, str]]) -> Safe:
    roles = sorted({r["role"] for key, _, _ in groups for r in view.get(key, [])
                    if r.get("role")})
    return filter_form(links, f, list(lc.states) if lc is not None else [], roles)


def _lead(view: dict, groups: list[tuple[str, str, str]], total: int) -> Safe:
    """How many agents there are, in the groups shown."""
    counts = {key: len(view.get(key, [])) for key, _, _ in GROUPS}
    bits = [f"{counts['living']} living"] + \
        [f"{counts[k]} {w}" for k, w in (("freezer", "frozen"), ("cemetery", "dead"))
         if any(g[0] == k for g in groups)]
    return render('<h1>Roster</h1><p class="lead">{n} agents: {bits}. Derived from git '
                  'history ({lc}).</p>', n=total, bits=", ".join(bits),
                  lc=view.get("lifecycle") or "?")


def flagged_agents(view: dict, groups: Sequence[tuple[str, str, str]], lc, now: int | None,
                   waiting: dict[str, list[str]]) -> dict[str, list]:
    """agent -> its troubles, in words: what it waits for a person for first."""
    flagged: dict[str, list] = {} if lc is None or now is None else _troubled(view, groups, lc, now)
    for agent, said in waiting.items():
        flagged[agent] = [("waiting", w) for w in said] + flagged.get(agent, [])
    return flagged


def _troubled(view: dict, groups: Sequence[tuple[str, str, str]], lc,
              now: int) -> dict[str, list]:
    from gitstate.web.trouble import trouble
    return {r["agent"]: found for key, _, _ in groups for r in view.get(key, [])
            if (found := trouble(r, lc, now))}


def _attention(links: Links, flagged: dict[str, list]) -> Safe:
    """The "Needs attention" section: each agent in trouble, with its troubles."""
    items = [render('<li>{link}: {flags}</li>', link=agent_link(links, a),
                    flags=flags_html(k)) for a, k in sorted(flagged.items())]
    return render('<section aria-labelledby="h-attention" class="attention">'
                  '<h2 id="h-attention">Needs attention <span class="count">({n})'
                  '</span></h2><ul>{items}</ul></section>', n=len(items), items=join(items))


def _group(links: Links, view: dict, group: tuple[str, str, str], f: Filters,
           flagged: dict[str, list], words: dict[str, str]) -> tuple[Safe, int]:
    """A group's section (living, freezer, ...) of the agents that pass the filter, in its
    order; and how many they are."""
    key, label, roster = group
    rows = [(r, flagged.get(r["agent"], [])) for r in view.get(key, [])]
    rows = f.order([x for x in rows if f.matches(*x, words.get(x[0]["agent"], ""))])
    table = roster_table(links, key, label, rows, f, words) if rows else \
        render('<p class="empty">{t}</p>', t="Nobody here matches." if f.active
               else "Nobody here.")
    return render('<section aria-labelledby="h-{key}" class="group {roster}">'
                  '<h2 id="h-{key}">{label} <span class="count">({n})</span></h2>'
                  '{table}</section>', key=key, roster=roster, label=label,
                  n=len(rows), table=table), len(rows)


def vacancy_section(links: Links, view: dict, *, level: int) -> Safe:
    items = [_vacancy(links, v) for v in view["vacancies"]]
    listing = render('<ul class="vacancies">{i}</ul>', i=join(items)) if items else \
        render('<p class="empty">Every role has a living holder.</p>')
    tag = f"h{level}"
    return render('<section aria-labelledby="h-vacant"><{tag} id="h-vacant">Vacant roles '
                  '<span class="count">({n})</span></{tag}>{listing}</section>',
                  tag=Safe(tag), n=len(items), listing=listing)


def _vacancy(links: Links, v: dict) -> Safe:
    """A vacant role: its status, since when, what it means, and its holders to see."""
    from gitstate.history.fold import vacancy_notice
    names = ([v["last_holder"]] if v.get("last_holder") else []) + v["frozen_holders"]
    holders = [agent_link(links, a) for a in dict.fromkeys(names)]
    who = render(" <span class=\"holders\">See {h}.</span>", h=join(holders, ", ")) \
        if holders else Safe("")
    since = render(" since {t}", t=time_tag(v["since"])) if v.get("since") else ""
    return render('<li class="vacancy {status}"><p><strong>{role}</strong> — {status}'
                  '{since}</p><p class="notice">{notice}</p>{who}</li>',
                  status=v["status"], role=v["role"], since=since,
                  notice=vacancy_notice(v), who=who)


def vacancies_body(links: Links, view: dict) -> Safe:
    intro = render('<h1>Vacant roles</h1><p class="lead">Roles with no living holder: their '
                   'holder froze or died, or nobody ever held them. Any agent may take one up '
                   'by spawning with <code>--role</code>.</p>')
    section = vacancy_section(links, view, level=2)
    return join([intro, section])


def _gated(lc, src: str, dst: str) -> str:
    """A move's target, with what it waits for: `frozen (approval)`, `inbox (after 10m)`."""
    from gitstate.law.diagram import gates
    bits = gates(lc, src, dst)
    return f"{dst} ({', '.join(bits)})" if bits else dst


def lifecycle_body(lc, view: dict) -> Safe:
    from gitstate.law.diagram import describe, to_mermaid
    from gitstate.web.svg import lifecycle_svg
    counts = Counter(r["state"] for key, _, _ in GROUPS for r in view.get(key, [])
                     if r.get("state"))
    rows = [_state_row(lc, name, spec, counts.get(name, 0)) for name, spec in lc.states.items()]
    return render(
        '<h1>Lifecycle <code>{name}</code></h1><p class="lead">{desc}</p>'
        '<figure class="diagram" tabindex="0" aria-label="The lifecycle drawn">{svg}'
        '<figcaption>Each box is a state, with how many agents '
        'stand in it now; arrows are the moves the law allows, dashed where a human must '
        'approve or a time must pass (the table below says which). Green: living, blue: '
        'frozen, grey: dead; a double border: terminal.</figcaption>'
        '</figure><h2>States</h2><table class="states cards"><thead><tr><th scope="col">State</th>'
        '<th scope="col">Agents</th><th scope="col">Kind</th><th scope="col">Next</th>'
        '<th scope="col">What an agent does there</th></tr></thead><tbody>{rows}</tbody>'
        '</table><details><summary>The lifecycle as text</summary><pre>{text}</pre></details>'
        '<details><summary>As a Mermaid diagram</summary><pre>{mermaid}</pre></details>',
        name=lc.name, desc=lc.description or "", svg=lifecycle_svg(lc, counts),
        rows=join(rows), text=describe(lc), mermaid=to_mermaid(lc))


def _state_row(lc, name: str, spec, n: int) -> Safe:
    """A state's row: how many agents stand in it, its kind, its moves, what is done there."""
    flags = [spec.roster] + (["terminal"] if spec.terminal else []) + \
        ([f"requires {', '.join(spec.requires)}"] if spec.requires else [])
    return render('<tr><th scope="row" data-label="State">{name}</th>'
                  '<td data-label="Agents">{n}</td><td data-label="Kind">{flags}</td>'
                  '<td data-label="Next">{next}</td>'
                  '<td data-label="What an agent does there" class="text">{desc}</td>'
                  '</tr>', name=name, n=n, flags="; ".join(flags),
                  next=", ".join(_gated(lc, name, t) for t in lc.targets(name)) or "—",
                  desc=getattr(spec, "description", None) or "")


def error_body(status: int, message: str, hint: str | None = None) -> Safe:
    title = "Not found" if status == 404 else "Cannot show that"
    return render('<h1>{title}</h1><p class="error" role="alert">{message}</p>{hint}'
                  '<p><a href="/">Back to the roster as it is now</a></p>', title=title,
                  message=message, hint=render("<p>{h}</p>", h=hint) if hint else Safe(""))
