"""The briefing's lines on what surrounds the agent (runtime/briefing.py): its inbox, its
state's protocol, the team's decisions, the roster, who else waits for a person, and the
vacant roles.
"""

from __future__ import annotations

from gitstate.errors import GitstateError

NEWEST = 3            # messages shown in full
PROTOCOL_CHARS = 1500  # of the state's protocol doc


def reading(repo, agent: str, state: str | None, source: str) -> list[str]:
    """The inbox and the state's protocol: a resumed session's newest messages first and the
    protocol short, else the whole protocol and then the inbox."""
    if source == "resume":
        return _inbox(repo, agent, newest_first=True) + _protocol(repo, state, short=True)
    return _protocol(repo, state, short=False) + _inbox(repo, agent)


DECISIONS_LINES = 8   # of the team's decisions file, its newest, in the briefing


def decisions(repo, lc, head) -> list[str]:
    """The newest entries of the team's decisions file (`policies.decisions`), read anew at
    every start and resume (squad's seed re-reads decisions.md on resume)."""
    path = lc.policies.decisions
    if not path or not head:
        return []
    lines = _lines(repo.git.cat_files([f"{head}:{path}"])[0])
    if not lines:
        return [f"The team's decisions ({path}): none committed yet."]
    return [f"The team's decisions ({path}, newest {min(len(lines), DECISIONS_LINES)} "
            f"lines of {len(lines)}):"] + [f"  {ln[:300]}" for ln in lines[-DECISIONS_LINES:]]


def _lines(data: bytes | None) -> list[str]:
    return [ln.rstrip() for ln in (data or b"").decode("utf-8", "replace").splitlines()
            if ln.strip()]

def _protocol(repo, state: str | None, short: bool) -> list[str]:
    doc = _protocol_doc(repo, state)
    if doc is None:
        return []
    text = doc.read_text(encoding="utf-8", errors="replace").strip()
    return [f"What {state} asks (protocols/{state}.md):",
            _second_paragraph(text) if short else _cut(text)]


def _protocol_doc(repo, state: str | None):
    if not state or repo.top is None:
        return None
    doc = repo.top / "protocols" / f"{state}.md"
    return doc if doc.is_file() else None


def _second_paragraph(text: str) -> str:
    return text.split("\n\n", 2)[1] if text.count("\n\n") >= 1 else text


def _cut(text: str) -> str:
    if len(text) <= PROTOCOL_CHARS:
        return text
    return text[:PROTOCOL_CHARS].rsplit("\n", 1)[0] + "\n(...)"


def _inbox(repo, agent: str, newest_first: bool = False) -> list[str]:
    from gitstate.history.views import inbox
    try:
        messages = inbox(repo, agent)["messages"]
    except GitstateError as exc:
        return [f"Inbox: unreadable ({exc.message})"]
    n = len(messages)
    return [f"Inbox: {n} message{'s' if n != 1 else ''} waiting"
            + (f" (`gitstate inbox {agent}`; `--mark-read` when done)" if n else ".")] + [
        _message_line(m) for m in list(reversed(messages))[:NEWEST]]


def _message_line(m: dict) -> str:
    body = " ".join(line.strip() for line in m["body"].splitlines() if "@" in line)
    return f"  {m['commit'][:10]} {m['subject']}" + (f" | {body}" if body else "")


ROSTER_NAMES = 12   # living agents named in the briefing's roster line


def society(repo, agent: str | None, vacancies: bool) -> list[str]:
    """The roster (who else lives, who froze, how many ended) and the vacant roles, from one
    reading of history."""
    from gitstate.history.fold import roster_view
    from gitstate.history.views import agent_records
    records, _rev, lc = agent_records(repo)
    out = [_roster_line(roster_view(records), agent)] + _waiting(repo, records, _rev, agent)
    return out + (_vacant(records, lc, agent) if vacancies else [])


def _roster_line(view: dict, agent: str | None) -> str:
    """Who lives (ROSTER_NAMES of them named), who froze, how many ended."""
    living = [_living_name(r, agent) for r in view["living"]]
    line = f"Roster: {len(living)} living" + (
        ": " + ", ".join(living[:ROSTER_NAMES]) + _more(len(living) - ROSTER_NAMES, ", ")
        if living else "")
    if view["freezer"]:
        line += (f"; {len(view['freezer'])} frozen: "
                 + ", ".join(r["agent"] for r in view["freezer"][:ROSTER_NAMES]))
    if view["cemetery"]:
        line += f"; {len(view['cemetery'])} ended"
    return line + " (`gitstate roster`)."


def _living_name(r: dict, agent: str | None) -> str:
    return (f"{r['agent']}{' (you)' if r['agent'] == agent else ''}: {r['state']}"
            + (f" ({r['role']})" if r.get("role") else ""))


def _more(n: int, sep: str) -> str:
    return f"{sep}and {n} more" if n > 0 else ""


def _vacant(records: list[dict], lc, agent: str | None) -> list[str]:
    from gitstate.history.fold import vacancies, vacancy_notice
    found = vacancies(records, lc)
    if not found:
        return []
    return [f"Vacant roles (take one with `gitstate assume {agent or '<id>'} ROLE` if you "
            "hold none, or spawn a holder with `gitstate spawn <id> --role ROLE`):"] + [
        f"  {vacancy_notice(v)}" for v in found]


WAITING_NAMES = 3   # agents waiting for a person, named in the briefing


def _waiting(repo, records: list[dict], rev: str | None, agent: str | None) -> list[str]:
    """Who else waits for a person now (runtime/attention.py), in one short line: a lead
    started here sees it first thing."""
    from gitstate.runtime.attention import waiting, words
    waits = [w for w in waiting(repo, records, rev)["waiting"] if w["agent"] != agent]
    if not waits:
        return []
    said = [words(w)[:120] for w in waits[:WAITING_NAMES]]
    return [f"Waiting for a person ({len(waits)}): " + "; ".join(said)
            + _more(len(waits) - len(said), "; ") + " (`gitstate attention`)."]
