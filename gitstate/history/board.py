"""The board (seed 000's notices), derived from history: each freeze ("Frozen at X% context.
Freeze-state at <path>. Working on <situation>. Wake me if <condition>."), each wake, each
death, each role handed over, assumed, or otherwise taken or dropped by a state commit ("bob now
holds role 'qa'."), and each role left without a living holder ("Role
'architect' is now vacant. Last held by X. Mandate: ..."), in the order of history.

Read as `gitstate log` reads moves: one streamed `git log -z` of the line's tagged commits
(their messages, for the trailers), then one `git cat-file --batch` for the state files and
freeze-states of the commits that post something. Kept under `.git/gitstate` keyed by the tip
it was read to (`git/cache.py`): a later board reads only the commits since, carrying on from
each agent's last state and role; a line that no longer goes on from the saved tip is read
again. Deleting it changes no answer.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.git.cache import read_on
from gitstate.git.repo import Managed, on_first_parent_line
from gitstate.git.runner import Git
from gitstate.history.fold import log_args
from gitstate.history.views import read_at, since_time
from gitstate.law import statefile
from gitstate.law.freezestate import freeze_notice, freeze_state_path
from gitstate.law.grammar import canonical_id, parse_message
from gitstate.law.roles import role_transfer
from gitstate.law.times import iso

NAME = "board.json"
FORMAT = 2   # 2: a role taken or dropped by any commit that says so
KINDS = ("freeze", "wake", "death", "vacancy", "handover", "assume", "role")
# the trailers of a commit that changes a role (the law refuses a role changed without one:
# `fixed-field`), whose state file the board reads to tell what changed
ROLE_TRAILERS = ("assumes-role", "role-transfer", "new-role")


def board(repo: Managed, agent: str | None = None, *, limit: int | None = None,
          since: str | None = None, at: str | None = None) -> dict:
    """`gitstate board`: the notices (of `agent`, where given) up to HEAD or `at`, oldest
    first; `since` a date as git reads one; `limit` keeps the newest, as `git log -n`."""
    head, lc = read_at(repo, at)
    want = canonical_id(agent) if agent else None
    after = since_time(repo, since) if since is not None else None
    items = notices(repo.git, lc, head, repo.cache_dir if at is None else None) \
        if head is not None else []
    rows = [i for i in items if (want is None or i[3] == want)
            and (after is None or i[1] >= after)]
    if limit is not None:
        rows = rows[-limit:] if limit else []
    return {"commit": head, "agent": want, "notices": [notice_of(r) for r in rows]}


def notice_of(row: list) -> dict:
    """A notice as `board --json` gives it, from a kept row."""
    sha, when, author, who, kind, role, text = row
    return {"commit": sha, "time": iso(when), "author": author, "agent": who, "kind": kind,
            "role": role, "text": text}


def notices(git: Git, lc, head: str, cache_dir: str | None) -> list[list]:
    """[sha, time, author, agent, kind, role, text] of every notice up to `head`, oldest
    first."""
    kept = read_on(git, cache_dir, NAME, [FORMAT, __version__, list(lc.accept), lc.state_file],
                   head, valid=lambda saved: isinstance(saved.get("items"), list)
                   and isinstance(saved.get("agents"), dict),
                   anew=lambda tip: _read(git, lc, tip, None),
                   onward=lambda saved, revs: _read(git, lc, revs, saved),
                   linear=on_first_parent_line)
    return kept["items"] if kept is not None else []


def _read(git: Git, lc, revs: str, saved: dict | None) -> dict:
    """The notices of `revs` after those of `saved` (None: `revs` is the whole line), with
    each agent's [state, role] as the line leaves it."""
    agents: dict[str, list] = {a: list(v) for a, v in (saved or {}).get("agents", {}).items()}
    accept = lc.accept_patterns()
    events = []
    for sha, ct, author, body in git.log_records(
            ["%H", "%ct", "%an", "%B"],
            *log_args(lc, [revs], order=None if saved else "--topo-order")):
        msg = parse_message(body, accept)
        if msg.prefix and msg.tag:
            events.append((sha, int(ct) if ct.isdigit() else 0, author, msg))
    events.reverse()   # oldest first
    reads = _reads(lc, events, agents)
    found = git.cat_files(spec for spec in reads) if reads else []
    files = dict(zip(reads, found))
    items = list((saved or {}).get("items", []))
    for sha, when, author, msg in events:
        for kind, who, role, text in _posts(lc, sha, msg, agents, files):
            items.append([sha, when, author, who, kind, role, text])
    return {"items": items, "agents": agents}


def _roster(lc, state: str | None) -> str | None:
    spec = lc.states.get(state) if state else None
    return spec.roster if spec is not None else None


def _reads(lc, events: list, agents: dict) -> list[str]:
    """The `rev:path` of each state file (and freeze-state) a notice of `events` is told
    from: at an agent's first move (its role), a freeze, a wake, a death and a commit that
    changes a role (it says so in a trailer)."""
    last = {a: v[0] for a, v in agents.items()}
    out: list[str] = []
    for sha, _when, _author, msg in events:
        who, state = msg.prefix, msg.tag
        was, now = _roster(lc, last.get(who)), _roster(lc, state)
        if who not in last or (was != now and now in ("frozen", "dead", "living")) \
                or any(msg.trailer(t) for t in ROLE_TRAILERS):
            out.append(f"{sha}:{lc.state_path(who)}")
            if now == "frozen" and was != "frozen":
                out.append(f"{sha}:{freeze_state_path(who)}")
        last[who] = state
    return out


def _front(data: bytes | None, path: str) -> dict:
    """A file's front matter, or {} where it is absent or unreadable."""
    if data is None:
        return {}
    try:
        return statefile.parse_bytes(data, path).front or {}
    except Exception:   # InvalidFile: history holds what it holds; the board says less
        return {}


def _posts(lc, sha: str, msg, agents: dict, files: dict) -> list[tuple]:
    """(kind, agent, role, text) of what one commit posts, `agents` carried on."""
    who, state = msg.prefix, msg.tag
    path = lc.state_path(who)
    key = f"{sha}:{path}"
    front = _front(files.get(key), path) if key in files else None
    before = agents.get(who)
    was = _roster(lc, before[0]) if before else None
    now = _roster(lc, state)
    role = statefile.as_text(front.get("role")) if front is not None else \
        (before[1] if before else None)
    out: list[tuple] = []
    transfers = msg.trailer("role-transfer")
    handed = role_transfer(transfers[0]) if len(transfers) == 1 else None
    if handed:
        given, to = handed[0], handed[1].lower()
        out.append(("handover", who, given, f"Handed role '{given}' to {to}."))
        if to in agents:
            agents[to][1] = given
        if front is None and role == given:
            role = None
    old_role = before[1] if before else None
    if msg.trailer("assumes-role") and role and role != old_role:
        out.append(("assume", who, role, f"Assumed the vacant role '{role}'."))
    elif before is not None and role and role != old_role:
        out.append(("role", who, role, f"{who} now holds role '{role}'."))
    agents[who] = [state, role]
    if old_role and old_role != role and was == "living":   # dropped: said, vacant if last
        if not handed:
            out.append(("role", who, old_role, f"{who} no longer holds role '{old_role}'."))
        if not _held(lc, agents, old_role):
            out.append(_vacancy(lc, who, old_role))
    if before is None or was == now:
        return out
    if now == "frozen":
        fs = _front(files.get(f"{sha}:{freeze_state_path(who)}"), freeze_state_path(who))
        where = statefile.as_text((front or {}).get("freeze_state")) or freeze_state_path(who)
        out.append(("freeze", who, role, freeze_notice(
            (front or {}).get("context_pct"), where, fs.get("primary_situation"),
            fs.get("wake_if"))))
    elif now == "living" and was == "frozen":
        approved = msg.trailer("approved-by")
        out.append(("wake", who, role, f"Woken ({before[0]} -> {state})"
                    + (f", approved by {approved[0]}." if approved else ".")))
    elif now == "dead":
        summary = statefile.as_text((front or {}).get("final_summary"))
        out.append(("death", who, role, f"Died ({before[0]} -> {state})."
                    + (f" Final summary: {' '.join(summary.split())}" if summary else "")))
    if role and was == "living" and now in ("frozen", "dead") and not _held(lc, agents, role):
        out.append(_vacancy(lc, who, role))
    return out


def _held(lc, agents: dict, role: str) -> bool:
    """Does a living agent hold `role`, as the line stands?"""
    return any(v[1] == role and _roster(lc, v[0]) == "living" for v in agents.values())


def _vacancy(lc, who: str, role: str) -> tuple:
    """The notice of `role` left without a living holder by `who`."""
    spec = lc.roles.get(role)
    mandate = (spec.mandate if spec is not None else None) or "not yet written"
    return ("vacancy", who, role, f"Role '{role}' is now vacant. Last held by {who}. "
            f"Mandate: {mandate}.")
