"""An agent's page: who it is, its timeline of states, its inbox, and, when frozen, its
freeze-state (ask it without waking it) with the command a human runs to wake it."""

from __future__ import annotations

from gitstate.web.clock import epoch, sha_of
from gitstate.web.html import Safe, join, render, time_tag
from gitstate.web.layout import Links
from gitstate.web.pages import _dur, _phase, _role, agent_link, badge, flags_html


def _details(links: Links, r: dict) -> Safe:
    seconds = r.get("seconds_in_state")
    rows = [("State", render('{b} ({roster})', b=badge(r), roster=r.get("roster") or "unknown")),
            ("Role", _role(r)), ("Model", r.get("model") or "—"), ("Phase", _phase(r)),
            ("In state for", render("{d} (since {t}, commit {sha})",
                                    d=_dur(seconds),
                                    t=time_tag(r.get("in_state_since")),
                                    sha=links.commit(sha_of(r.get("in_state_since_commit")))))]
    rows += _known(links, r)
    rows.append(("State file", render("<code>{p}</code>", p=r.get("path") or "?")))
    return render('<dl class="details">{items}</dl>',
                  items=join(render('<div><dt>{k}</dt><dd>{v}</dd></div>', k=k, v=v)
                             for k, v in rows))


def _known(links: Links, r: dict) -> list[tuple[str, object]]:
    """The details the row holds only for some agents: (label, value) of each it has."""
    rows: list[tuple[str, object]] = [
        (label, r[key]) for key, label in (("thread", "Thread"), ("summary", "Summary"),
                                           ("final_summary", "Final summary"),
                                           ("problem", "Problem")) if r.get(key)]
    if r.get("parent"):
        rows.append(("Parent", agent_link(links, r["parent"])))
    if r.get("depth") is not None:
        rows.append(("Depth", str(r["depth"])))
    return rows + _commits(links, r)


def _commits(links: Links, r: dict) -> list[tuple[str, object]]:
    """Its first and its last state commit, when the row has them."""
    return [(label, render("{t}, commit {sha}", t=time_tag(r.get(f"{key}_at")),
                           sha=links.commit(sha_of(r[key]))))
            for key, label in (("first_commit", "Born"), ("last_commit", "Last state commit"))
            if r.get(key)]


def _timeline(links: Links, agent: str, moves: list[dict], transfers: list[dict],
              context: list[tuple]) -> Safe:
    """The moves in words, oldest first, with hand-overs of a role in their place and the
    context each recorded (the chart's numbers)."""
    if not moves:
        return render('<p class="empty">No tagged commits yet.</p>')
    pct = {c[2]: c[1] for c in context if len(c) > 2}
    handed = {t["commit"]: t for t in transfers}
    rows = [_move_row(links, agent, m, pct, handed.get(m["commit"])) for m in moves]
    for place, row in reversed(_received(links, agent, moves, transfers)):
        rows.insert(place, row)
    return render('<table class="timeline cards"><caption class="sr-only">Moves, '
                  'oldest first</caption><thead><tr><th scope="col">When</th>'
                  '<th scope="col">Move</th>'
                  '<th scope="col">Text</th><th scope="col">Context</th>'
                  '<th scope="col">Commit</th><th scope="col">Author'
                  '</th></tr></thead><tbody>{rows}</tbody></table>', rows=join(rows))


def _move_row(links: Links, agent: str, m: dict, pct: dict, t: dict | None) -> Safe:
    """A move in words, with the hand-over `t` it made and the context it recorded."""
    move = render("{a} → {b}", a=m["from"], b=m["to"]) if m["from"] \
        else render("born in {b}", b=m["to"])
    hand = render('<p class="handover-note">Role <strong>{r}</strong> handed from {f} to '
                  '{to}</p>', r=t["role"], f=agent_link(links, t["from"]),
                  to=agent_link(links, t["to"])) if t else Safe("")
    diff = links.diff(m["commit"], agent)
    return render('<tr><td data-label="When">{t}</td><th scope="row" data-label="Move">'
                  '{move}</th><td data-label="Text" class="text">{text}{hand}</td>'
                  '<td data-label="Context">{pct}</td>'
                  '<td data-label="Commit">{sha}{diff}</td>'
                  '<td data-label="Author">{author}</td></tr>', t=time_tag(m["time"]),
                  move=move, text=m["text"] or "", hand=hand,
                  pct=f"{pct[m['commit']]:g}%" if m["commit"] in pct else "—",
                  sha=links.commit(m["commit"]),
                  diff=render(' <a class="diff-link" href="{h}">diff</a>', h=diff)
                  if diff else Safe(""), author=m["author"])


def _received(links: Links, agent: str, moves: list[dict],
              transfers: list[dict]) -> list[tuple[int, Safe]]:
    """Each role the agent received (the giver's commit, not this agent's move), with the
    place among its moves where it happened."""
    return [(_place(moves, t), _received_row(links, t)) for t in transfers
            if t["to"] == agent and t["from"] != agent]


def _place(moves: list[dict], t: dict) -> int:
    """How many of the moves came no later than the hand-over `t`."""
    when = epoch(t["time"]) or 0
    return sum(1 for m in moves if (epoch(m["time"]) or 0) <= when)


def _received_row(links: Links, t: dict) -> Safe:
    return render('<tr class="handover"><td data-label="When">{w}</td>'
                  '<th scope="row" data-label="Move">received role {r}</th>'
                  '<td data-label="Text" class="text">handed over by {f}</td>'
                  '<td data-label="Context">—</td>'
                  '<td data-label="Commit">{sha}</td><td data-label="Author"></td></tr>',
                  w=time_tag(t["time"]), r=t["role"], f=agent_link(links, t["from"]),
                  sha=links.commit(t["commit"]))


def _inbox(links: Links, box: dict | None, error: str | None) -> Safe:
    if error or box is None:
        return render('<p class="error">{e}</p>', e=error)
    since = render("since commit <code>{s}</code>", s=box["last_read_commit"][:10]) \
        if box["last_read_commit"] \
        else Safe("from the beginning")
    n = len(box["messages"])
    head = render('<p>{n} message{s} {since}.</p>', n=n, s="" if n == 1 else "s", since=since)
    items = [_message(links, m) for m in box["messages"]]
    return join([head, render('<ol class="inbox">{i}</ol>', i=join(items)) if items else Safe("")])


def _message(links: Links, m: dict) -> Safe:
    sender = agent_link(links, m["from"]) if m["from"] else render("{a}", a=m["author"])
    return render('<li><p class="meta">{t} · from {who}{all} · commit {sha}'
                  '</p><p class="subject">{subject}</p>{body}</li>',
                  t=time_tag(m["time"]), who=sender, sha=links.commit(m["commit"]),
                  all=" to @ALL" if m["to_all"] else "", subject=m["subject"],
                  body=render('<pre class="body">{b}</pre>', b=m["body"])
                  if m["body"] else Safe(""))


def _freeze(agent: str, shown: dict | None, error: str | None, humans: list[str]) -> Safe:
    wake = _wake(agent, humans)
    if error or shown is None:
        return join([render('<p class="error">{e}</p>', e=error), wake])
    front = join(render('<div><dt>{k}</dt><dd>{v}</dd></div>', k=k, v="—" if v is None else v)
                 for k, v in shown["front"].items())
    from gitstate.web.markdown import to_html
    sections = join(render('<h3>{title}</h3>{text}', title=shown["titles"].get(t, t),
                           text=to_html(x))
                    for t, x in shown["sections"].items())
    return render('<p>Its self-portrait at the moment it froze, from <code>{path}</code>: read '
                  'this first; it may answer your question without waking it.</p>'
                  '<dl class="details">{front}</dl>{sections}{wake}', path=shown["path"],
                  front=front, sections=sections, wake=wake)


def _wake(agent: str, humans: list[str]) -> Safe:
    """The command a human runs to wake it, and who may."""
    if not humans:
        who, human = "a human named in the lifecycle's policies.humans", "HUMAN"
    else:
        who = f"one of: {', '.join(humans)}" if len(humans) > 1 else humans[0]
        human = humans[0]
    return render('<div class="wake"><h3>Wake it</h3><p>Waking a frozen agent is a human\'s '
                  'decision ({who}). This viewer never writes; in a clone of the repository, '
                  'run:</p><pre><code class="command">gitstate wake {agent} --approved-by '
                  '{human}</code></pre></div>', who=who, agent=agent, human=human)


def agent_body(links: Links, data: dict, lc, end: int, waits: list[str] | None = None) -> Safe:
    """An agent's page; `waits`: what it waits for a person for, in words (first)."""
    from gitstate.web.charts import timeline_svg
    r = data["record"]
    transfers, context = data.get("transfers") or [], data.get("context") or []
    parts = [_heading(r, lc, end, waits), _details(links, r), *_family(links, r, data, lc)]
    chart = timeline_svg(r["agent"], data["timeline"], context, transfers, lc, end)
    parts.append(render('<section aria-labelledby="h-timeline"><h2 id="h-timeline">Timeline'
                        '</h2>{c}{t}</section>', c=chart,
                        t=_timeline(links, r["agent"], data["timeline"], transfers, context)))
    parts.append(render('<section aria-labelledby="h-inbox"><h2 id="h-inbox">Inbox</h2>{i}'
                        '</section>', i=_inbox(links, data["inbox"], data["inbox_error"])))
    return join(parts)


def _heading(r: dict, lc, end: int, waits: list[str] | None) -> Safe:
    """The agent, its state, and its troubles in words."""
    from gitstate.web.trouble import trouble
    flags = [("waiting", w) for w in waits or []] + trouble(r, lc, end)
    return render('<h1><span class="sr-only">Agent </span>{agent} '
                  '{badge}</h1>{flags}', agent=r["agent"], badge=badge(r),
                  flags=render('<p class="attention-line">{f}</p>', f=flags_html(flags))
                  if flags else Safe(""))


def _family(links: Links, r: dict, data: dict, lc) -> list[Safe]:
    """The agents it spawned, and its freeze-state when frozen."""
    parts = []
    if data.get("children"):
        parts.append(render('<p class="children">Spawned: {c}</p>',
                            c=join((agent_link(links, c) for c in data["children"]), ", ")))
    if r.get("roster") == "frozen":
        parts.append(render('<section aria-labelledby="h-freeze" id="freeze-state" '
                            'class="freeze"><h2 id="h-freeze">Freeze-state</h2>{f}</section>',
                            f=_freeze(r["agent"], data["freeze"], data["freeze_error"],
                                      list(lc.policies.humans))))
    return parts
