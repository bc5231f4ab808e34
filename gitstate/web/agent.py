"""An agent's page: who it is, its timeline of states, its inbox, and, when frozen, its
freeze-state (ask it without waking it) with the command a human runs to wake it."""

from __future__ import annotations

from gitstate.law.times import duration
from gitstate.web.html import Safe, join, render, time_tag
from gitstate.web.layout import Links
from gitstate.web.pages import _phase, _role, agent_link


def _details(links: Links, r: dict) -> Safe:
    seconds = r.get("seconds_in_state")
    rows = [("State", render('<span class="badge {c}">{s}</span> ({roster})',
                             c=r.get("roster") or "unknown", s=r.get("state") or "?",
                             roster=r.get("roster") or "unknown")),
            ("Role", _role(r)), ("Model", r.get("model") or "—"), ("Phase", _phase(r)),
            ("In state for", render("{d} (since {t}, commit <code>{sha}</code>)",
                                    d=duration(seconds) if seconds is not None else "—",
                                    t=time_tag(r.get("in_state_since")),
                                    sha=(r.get("in_state_since_commit") or "?")[:10]))]
    for key, label in (("thread", "Thread"), ("summary", "Summary"),
                       ("final_summary", "Final summary"), ("problem", "Problem")):
        if r.get(key):
            rows.append((label, r[key]))
    if r.get("parent"):
        rows.append(("Parent", agent_link(links, r["parent"])))
    if r.get("depth") is not None:
        rows.append(("Depth", str(r["depth"])))
    if r.get("first_commit"):
        rows.append(("Born", render("{t}, commit <code>{sha}</code>",
                                    t=time_tag(r["first_commit_at"]),
                                    sha=r["first_commit"][:10])))
    if r.get("last_commit"):
        rows.append(("Last state commit", render("{t}, commit <code>{sha}</code>",
                                                 t=time_tag(r["last_commit_at"]),
                                                 sha=r["last_commit"][:10])))
    rows.append(("State file", render("<code>{p}</code>", p=r.get("path") or "?")))
    return render('<dl class="details">{items}</dl>',
                  items=join(render('<div><dt>{k}</dt><dd>{v}</dd></div>', k=k, v=v)
                             for k, v in rows))


def _timeline(moves: list[dict]) -> Safe:
    if not moves:
        return render('<p class="empty">No tagged commits yet.</p>')
    rows = []
    for m in moves:
        move = render("{a} → {b}", a=m["from"], b=m["to"]) if m["from"] \
            else render("born in {b}", b=m["to"])
        rows.append(render('<tr><td data-label="When">{t}</td><th scope="row" data-label="Move">'
                           '{move}</th><td data-label="Text" class="text">{text}</td>'
                           '<td data-label="Commit"><code>{sha}</code></td>'
                           '<td data-label="Author">{author}</td></tr>', t=time_tag(m["time"]),
                           move=move, text=m["text"] or "", sha=m["commit"][:10],
                           author=m["author"]))
    return render('<table class="timeline cards"><caption class="sr-only">Timeline of states, '
                  'oldest first</caption><thead><tr><th scope="col">When</th>'
                  '<th scope="col">Move</th>'
                  '<th scope="col">Text</th><th scope="col">Commit</th><th scope="col">Author'
                  '</th></tr></thead><tbody>{rows}</tbody></table>', rows=join(rows))


def _inbox(links: Links, box: dict | None, error: str | None) -> Safe:
    if error or box is None:
        return render('<p class="error">{e}</p>', e=error)
    since = render("since commit <code>{s}</code>", s=box["last_read_commit"][:10]) \
        if box["last_read_commit"] \
        else Safe("from the beginning")
    n = len(box["messages"])
    head = render('<p>{n} message{s} {since}.</p>', n=n, s="" if n == 1 else "s", since=since)
    items = []
    for m in box["messages"]:
        sender = agent_link(links, m["from"]) if m["from"] else render("{a}", a=m["author"])
        items.append(render('<li><p class="meta">{t} · from {who}{all} · commit <code>{sha}</code>'
                            '</p><p class="subject">{subject}</p>{body}</li>',
                            t=time_tag(m["time"]), who=sender, sha=m["commit"][:10],
                            all=" to @ALL" if m["to_all"] else "", subject=m["subject"],
                            body=render('<pre class="body">{b}</pre>', b=m["body"])
                            if m["body"] else Safe("")))
    return join([head, render('<ol class="inbox">{i}</ol>', i=join(items)) if items else Safe("")])


def _freeze(agent: str, shown: dict | None, error: str | None, humans: list[str]) -> Safe:
    human = humans[0] if humans else "HUMAN"
    who = (f"one of: {', '.join(humans)}" if len(humans) > 1 else human) if humans \
        else "a human named in the lifecycle's policies.humans"
    wake = render('<div class="wake"><h3>Wake it</h3><p>Waking a frozen agent is a human\'s '
                  'decision ({who}). This viewer never writes; in a clone of the repository, '
                  'run:</p><pre><code class="command">gitstate wake {agent} --approved-by '
                  '{human}</code></pre></div>', who=who, agent=agent, human=human)
    if error or shown is None:
        return join([render('<p class="error">{e}</p>', e=error), wake])
    front = join(render('<div><dt>{k}</dt><dd>{v}</dd></div>', k=k, v="—" if v is None else v)
                 for k, v in shown["front"].items())
    sections = join(render('<h3>{title}</h3><pre class="section">{text}</pre>',
                           title=shown["titles"].get(t, t), text=x)
                    for t, x in shown["sections"].items())
    return render('<p>Its self-portrait at the moment it froze, from <code>{path}</code>: read '
                  'this first; it may answer your question without waking it.</p>'
                  '<dl class="details">{front}</dl>{sections}{wake}', path=shown["path"],
                  front=front, sections=sections, wake=wake)


def agent_body(links: Links, data: dict, humans: list[str]) -> Safe:
    r = data["record"]
    parts = [render('<h1><span class="sr-only">Agent </span>{agent} '
                    '<span class="badge {c}">{state}</span></h1>', agent=r["agent"],
                    c=r.get("roster") or "unknown", state=r.get("state") or "?"),
             _details(links, r)]
    if r.get("roster") == "frozen":
        parts.append(render('<section aria-labelledby="h-freeze" id="freeze-state" '
                            'class="freeze"><h2 id="h-freeze">Freeze-state</h2>{f}</section>',
                            f=_freeze(r["agent"], data["freeze"], data["freeze_error"], humans)))
    parts.append(render('<section aria-labelledby="h-timeline"><h2 id="h-timeline">Timeline'
                        '</h2>{t}</section>', t=_timeline(data["timeline"])))
    parts.append(render('<section aria-labelledby="h-inbox"><h2 id="h-inbox">Inbox</h2>{i}'
                        '</section>', i=_inbox(links, data["inbox"], data["inbox_error"])))
    return join(parts)
