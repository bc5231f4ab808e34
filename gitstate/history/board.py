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
from gitstate.history.views import newest_of, read_at, since_time
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
    rows = newest_of(_chosen(items, want, after), limit)
    return {"commit": head, "agent": want, "notices": [notice_of(r) for r in rows]}


def _chosen(items: list[list], want: str | None, after: int | None) -> list[list]:
    """The notices of agent `want` at or after `after` (None: any)."""
    return [i for i in items if (want is None or i[3] == want)
            and (after is None or i[1] >= after)]


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
    saved = saved or {}
    agents: dict[str, list] = {a: list(v) for a, v in saved.get("agents", {}).items()}
    events = _events(git, lc, revs, whole=not saved)
    reads = _reads(lc, events, agents)
    files = dict(zip(reads, git.cat_files(reads))) if reads else {}
    items = list(saved.get("items", []))
    for sha, when, author, msg in events:
        for kind, who, role, text in _posts(lc, sha, msg, agents, files):
            items.append([sha, when, author, who, kind, role, text])
    return {"items": items, "agents": agents}


def _events(git: Git, lc, revs: str, whole: bool) -> list[tuple]:
    """(sha, time, author, message) of each move of `revs`, oldest first."""
    accept = lc.accept_patterns()
    events = []
    for sha, ct, author, body in git.log_records(
            ["%H", "%ct", "%an", "%B"],
            *log_args(lc, [revs], order="--topo-order" if whole else None)):
        msg = parse_message(body, accept)
        if msg.prefix and msg.tag:
            events.append((sha, int(ct) if ct.isdigit() else 0, author, msg))
    events.reverse()
    return events


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
        who = msg.prefix
        was, now = _roster(lc, last.get(who)), _roster(lc, msg.tag)
        if who not in last or _tells(msg, was, now):
            out.append(f"{sha}:{lc.state_path(who)}")
            if now == "frozen" and was != "frozen":
                out.append(f"{sha}:{freeze_state_path(who)}")
        last[who] = msg.tag
    return out


def _tells(msg, was: str | None, now: str | None) -> bool:
    """Does a move from roster `was` to `now` post a notice told from its state file?"""
    return (was != now and now in ("frozen", "dead", "living")) \
        or any(msg.trailer(t) for t in ROLE_TRAILERS)


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
    who, path = msg.prefix, lc.state_path(msg.prefix)
    key = f"{sha}:{path}"
    front = _front(files.get(key), path) if key in files else None
    known = who in agents
    before: list = agents[who] if known else [None, None]
    handed = _handed(msg)
    role = _role_of(front, before[1], handed)
    out = _handover(agents, who, handed)
    was = _roster(lc, before[0])
    out += _roles(lc, msg, agents, known, role, before[1], was, handed)
    if known and was != _roster(lc, msg.tag):
        out += _crossed(lc, sha, msg, front or {}, before[0], role, agents, files)
    return out


def _role_of(front: dict | None, old: str | None, handed: tuple | None) -> str | None:
    """The agent's role after the commit: its state file's where read, else the one it had
    (none, if it handed that over)."""
    if front is not None:
        return statefile.as_text(front.get("role"))
    return None if handed and old == handed[0] else old


def _handed(msg) -> tuple | None:
    """(role, to whom) of the commit's one `Role-transfer:`, or None."""
    transfers = msg.trailer("role-transfer")
    return role_transfer(transfers[0]) if len(transfers) == 1 else None


def _handover(agents: dict, who: str, handed: tuple | None) -> list[tuple]:
    """The notice of a role handed over, the taker's role carried on."""
    if not handed:
        return []
    given, to = handed[0], handed[1].lower()
    if to in agents:
        agents[to][1] = given
    return [("handover", who, given, f"Handed role '{given}' to {to}.")]


def _roles(lc, msg, agents: dict, known: bool, role: str | None, old: str | None,
           was: str | None, handed: tuple | None) -> list[tuple]:
    """The notices of a role taken or dropped by the commit, `agents` carried on."""
    who = msg.prefix
    out = _taken(msg, known, role) if role and role != old else []
    agents[who] = [msg.tag, role]
    if old and old != role and was == "living":
        out += _dropped(lc, agents, who, old, handed)
    return out


def _taken(msg, known: bool, role: str) -> list[tuple]:
    """The notice of a role the commit's agent takes: assumed, or now held (not said of an
    agent's first move)."""
    who = msg.prefix
    if msg.trailer("assumes-role"):
        return [("assume", who, role, f"Assumed the vacant role '{role}'.")]
    return [("role", who, role, f"{who} now holds role '{role}'.")] if known else []


def _dropped(lc, agents: dict, who: str, role: str, handed: tuple | None) -> list[tuple]:
    """The notices of `role` dropped by a living agent: said, unless handed over; vacant if
    it was the last holder."""
    out = [] if handed else [("role", who, role, f"{who} no longer holds role '{role}'.")]
    return out if _held(lc, agents, role) else out + [_vacancy(lc, who, role)]


def _crossed(lc, sha: str, msg, front: dict, before: str, role: str | None, agents: dict,
             files: dict) -> list[tuple]:
    """The notices of an agent moved from state `before` to another roster: frozen, woken,
    dead; its role vacant if it left the living as its last holder."""
    was, now = _roster(lc, before), _roster(lc, msg.tag)
    told = _told(lc, sha, msg, front, before, role, files)
    out = [told] if told is not None else []
    if role and was == "living" and now in ("frozen", "dead") and not _held(lc, agents, role):
        out.append(_vacancy(lc, msg.prefix, role))
    return out


def _told(lc, sha: str, msg, front: dict, before: str, role: str | None,
          files: dict) -> tuple | None:
    """The notice of a freeze, a wake or a death (None: the move is none of them)."""
    who, now = msg.prefix, _roster(lc, msg.tag)
    if now == "frozen":
        return ("freeze", who, role, _freeze_text(front, who, sha, files))
    if now == "dead":
        return ("death", who, role, _death_text(front, before, msg.tag))
    if now == "living" and _roster(lc, before) == "frozen":
        return ("wake", who, role, _wake_text(msg, before))
    return None


def _wake_text(msg, before: str) -> str:
    approved = msg.trailer("approved-by")
    return f"Woken ({before} -> {msg.tag})" \
        + (f", approved by {approved[0]}." if approved else ".")


def _freeze_text(front: dict, who: str, sha: str, files: dict) -> str:
    """The seed's freeze notice, told from the state file and the freeze-state."""
    fs = _front(files.get(f"{sha}:{freeze_state_path(who)}"), freeze_state_path(who))
    where = statefile.as_text(front.get("freeze_state")) or freeze_state_path(who)
    return freeze_notice(front.get("context_pct"), where, fs.get("primary_situation"),
                         fs.get("wake_if"))


def _death_text(front: dict, before: str, state: str) -> str:
    summary = statefile.as_text(front.get("final_summary"))
    return f"Died ({before} -> {state})." \
        + (f" Final summary: {' '.join(summary.split())}" if summary else "")


def _held(lc, agents: dict, role: str) -> bool:
    """Does a living agent hold `role`, as the line stands?"""
    return any(v[1] == role and _roster(lc, v[0]) == "living" for v in agents.values())


def _vacancy(lc, who: str, role: str) -> tuple:
    """The notice of `role` left without a living holder by `who`."""
    spec = lc.roles.get(role)
    mandate = (spec.mandate if spec is not None else None) or "not yet written"
    return ("vacancy", who, role, f"Role '{role}' is now vacant. Last held by {who}. "
            f"Mandate: {mandate}.")
