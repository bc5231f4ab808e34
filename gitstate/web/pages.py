"""The pages' bodies: the roster (living / freezer / cemetery), vacant roles, the lifecycle
drawn with its counts. Each takes the views' plain dicts; every value is escaped."""

from __future__ import annotations

from gitstate.law.times import duration
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


def agent_link(links: Links, agent: str) -> Safe:
    return render('<a href="{href}">{agent}</a>', href=links.agent(agent), agent=agent)


def roster_table(links: Links, key: str, label: str, rows: list[dict]) -> Safe:
    if key == "cemetery":
        cols, last = ("Agent", "Last state", "Role", "Phase", "Dead for", "Final summary"), \
            lambda r: r.get("final_summary") or r.get("summary") or ""
    else:
        cols, last = ("Agent", "State", "Role", "Phase", "In state for", "Summary"), \
            lambda r: r.get("summary") or ""
    head = join(render('<th scope="col">{c}</th>', c=c) for c in cols)
    body = []
    for r in rows:
        note = render(' <span class="problem">({p})</span>', p=r["problem"]) \
            if r.get("problem") else Safe("")
        seconds = r.get("seconds_in_state")
        body.append(render(
            '<tr><th scope="row" data-label="{c0}">{link}</th>'
            '<td data-label="{c1}"><span class="badge {roster}">{state}</span>{note}</td>'
            '<td data-label="{c2}">{role}</td><td data-label="{c3}">{phase}</td>'
            '<td data-label="{c4}"><span title="since {since}">{dur}</span></td>'
            '<td data-label="{c5}" class="text">{text}</td></tr>',
            c0=cols[0], c1=cols[1], c2=cols[2], c3=cols[3], c4=cols[4], c5=cols[5],
            link=agent_link(links, r["agent"]), roster=r.get("roster") or "unknown",
            state=r.get("state") or "?", note=note, role=_role(r), phase=_phase(r),
            since=(r.get("in_state_since_commit") or "?")[:10],
            dur=duration(seconds) if seconds is not None else "—",
            text=last(r) or "—"))
    return render('<table class="roster cards" id="table-{key}"><caption class="sr-only">{label}'
                  '</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
                  key=key, label=label, head=head, body=join(body))


def roster_body(links: Links, view: dict, vacancies: dict) -> Safe:
    counts = {key: len(view.get(key, [])) for key, _, _ in GROUPS}
    total = sum(counts.values())
    parts = [render('<h1>Roster</h1><p class="lead">{n} agents: {l} living, {f} frozen, '
                    '{d} dead. Derived from git history ({lc}).</p>', n=total,
                    l=counts["living"], f=counts["freezer"], d=counts["cemetery"],
                    lc=view.get("lifecycle") or "?")]
    for key, label, roster in GROUPS:
        rows = view.get(key)
        if rows is None:
            continue
        table = roster_table(links, key, label, rows) if rows else \
            render('<p class="empty">Nobody here.</p>')
        parts.append(render('<section aria-labelledby="h-{key}" class="group {roster}">'
                            '<h2 id="h-{key}">{label} <span class="count">({n})</span></h2>'
                            '{table}</section>', key=key, roster=roster, label=label,
                            n=len(rows), table=table))
    parts.append(vacancy_section(links, vacancies, level=2))
    return join(parts)


def vacancy_section(links: Links, view: dict, *, level: int) -> Safe:
    from gitstate.history.fold import vacancy_notice
    items = []
    for v in view["vacancies"]:
        names = ([v["last_holder"]] if v.get("last_holder") else []) + v["frozen_holders"]
        holders = [agent_link(links, a) for a in dict.fromkeys(names)]
        who = render(" <span class=\"holders\">See {h}.</span>", h=join(holders, ", ")) \
            if holders else Safe("")
        since = render(" since {t}", t=time_tag(v["since"])) if v.get("since") else ""
        items.append(render('<li class="vacancy {status}"><p><strong>{role}</strong> — {status}'
                            '{since}</p><p class="notice">{notice}</p>{who}</li>',
                            status=v["status"], role=v["role"], since=since,
                            notice=vacancy_notice(v), who=who))
    listing = render('<ul class="vacancies">{i}</ul>', i=join(items)) if items else \
        render('<p class="empty">Every role has a living holder.</p>')
    tag = f"h{level}"
    return render('<section aria-labelledby="h-vacant"><{tag} id="h-vacant">Vacant roles '
                  '<span class="count">({n})</span></{tag}>{listing}</section>',
                  tag=Safe(tag), n=len(items), listing=listing)


def vacancies_body(links: Links, view: dict) -> Safe:
    intro = render('<h1>Vacant roles</h1><p class="lead">Roles with no living holder: their '
                   'holder froze or died, or nobody ever held them. Any agent may take one up '
                   'by spawning with <code>--role</code>.</p>')
    section = vacancy_section(links, view, level=2)
    return join([intro, section])


def lifecycle_body(lc, view: dict) -> Safe:
    from gitstate.law.diagram import describe, to_mermaid
    from gitstate.web.svg import lifecycle_svg
    counts: dict[str, int] = {}
    for key, _, _ in GROUPS:
        for r in view.get(key, []):
            if r.get("state"):
                counts[r["state"]] = counts.get(r["state"], 0) + 1
    rows = []
    for name, spec in lc.states.items():
        flags = [spec.roster] + (["terminal"] if spec.terminal else []) + \
            ([f"requires {', '.join(spec.requires)}"] if spec.requires else [])
        rows.append(render('<tr><th scope="row" data-label="State">{name}</th>'
                           '<td data-label="Agents">{n}</td><td data-label="Kind">{flags}</td>'
                           '<td data-label="Next">{next}</td>'
                           '<td data-label="What an agent does there" class="text">{desc}</td>'
                           '</tr>', name=name,
                           n=counts.get(name, 0), flags="; ".join(flags),
                           next=", ".join(lc.targets(name)) or "—",
                           desc=getattr(spec, "description", None) or ""))
    return render(
        '<h1>Lifecycle <code>{name}</code></h1><p class="lead">{desc}</p>'
        '<figure class="diagram" tabindex="0" aria-label="The lifecycle drawn">{svg}'
        '<figcaption>Each box is a state, with how many agents '
        'stand in it now; arrows are the moves the law allows (labelled when a human must '
        'approve or a time must pass). Green: living, blue: frozen, grey: dead.</figcaption>'
        '</figure><h2>States</h2><table class="states cards"><thead><tr><th scope="col">State</th>'
        '<th scope="col">Agents</th><th scope="col">Kind</th><th scope="col">Next</th>'
        '<th scope="col">What an agent does there</th></tr></thead><tbody>{rows}</tbody>'
        '</table><details><summary>The lifecycle as text</summary><pre>{text}</pre></details>'
        '<details><summary>As a Mermaid diagram</summary><pre>{mermaid}</pre></details>',
        name=lc.name, desc=lc.description or "", svg=lifecycle_svg(lc, counts),
        rows=join(rows), text=describe(lc), mermaid=to_mermaid(lc))


def error_body(status: int, message: str, hint: str | None = None) -> Safe:
    title = "Not found" if status == 404 else "Cannot show that"
    return render('<h1>{title}</h1><p class="error" role="alert">{message}</p>{hint}'
                  '<p><a href="/">Back to the roster as it is now</a></p>', title=title,
                  message=message, hint=render("<p>{h}</p>", h=hint) if hint else Safe(""))
