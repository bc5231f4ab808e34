"""Everything derived from `git log`: the tag timeline and the fold from it to the roster.

Reading is one streamed `git log` (tagged subjects only, filtered by git itself) plus one
`git cat-file --batch` for the state files at the revision asked about. The fold from tag
events to per-agent records is pure and can be resumed: folding new commits onto a saved
result equals folding the whole history (see index.py).
"""

from __future__ import annotations

from gitstate.git.runner import Git
from gitstate.law import statefile
from gitstate.law.grammar import subject_tag
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.record import Record, field
from gitstate.law.times import iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

TAG_GREP = r"\[STATE:"     # git --grep (basic regex) for the standard subject


# A tag event is a plain tuple, for speed on long histories:
# (sha, time, author, agent, state, text) of a commit whose subject tags an agent's state.


class AgentTrack(Record):
    """What the tag timeline says of one agent: first and last tagged commits, the state the
    last tag named, when that state was entered, and how many tagged commits it has."""

    # born: the agent's place in the order of first tagged commits (instance numbers)
    first: tuple[str, int, int]     # (sha, time, place in the order of history)
    last: tuple[str, int, int]
    tag: str
    entered: tuple[str, int, int]
    count: int
    previous: str | None = None
    born: int = 0


# ---------------------------------------------------------------------------------------
# Reading


LOG_FIELDS = ["%H", "%ct", "%an", "%s"]


def log_args(lc: Lifecycle, revs: list[str], agent: str | None = None,
             order: str | None = "--topo-order") -> list[str]:
    """`git log` arguments (besides the format) that yield every tagged commit of the
    first-parent line of `revs` (the lifecycle's line: a tag off it is no move),
    newest first (with `agent`, at least those whose subject speaks as it: git filters, the
    parser decides). Either order shows no commit before its parents; `--date-order`
    interleaves merged lines by time, as a person reads a log. (Without `--reverse`: git
    streams the newest first as it walks, and the caller turns the list round, so reading
    overlaps git's walk instead of waiting for its end.) Without `order`, git's own walk: the
    one order there is for a line of commits without merges, which git then need not sort."""
    # the line's moves alone: a merge is never a move, whatever its subject says
    args = ([order] if order else []) + ["--first-parent", "--no-merges"]
    if not lc.accept:  # other subject forms cannot be expressed as a git grep: read them all
        args.append(f"--grep={TAG_GREP}")
        if agent:      # ids compare case-insensitively; a '.' in one matches itself too
            args += ["--all-match", "--regexp-ignore-case", f"--grep=@{agent}:"]
    return args + revs + ["--"]


def tag_events(git: Git, lc: Lifecycle, revs: list[str], agent: str | None = None,
               order: str | None = "--topo-order") -> list[tuple]:
    """Tag events of `revs` (e.g. ["HEAD"], ["old..HEAD"]), oldest first; with `agent`, git
    drops most of the other agents' commits before they are parsed."""
    out = list(newest_events(git, lc, revs, agent, order))
    out.reverse()   # oldest first
    return out


def newest_events(git: Git, lc: Lifecycle, revs: list[str], agent: str | None = None,
                  order: str | None = "--topo-order") -> Iterator[tuple]:
    """`tag_events`, newest first, as git gives them: for a reader that need not hold them.
    git starts at once."""
    records = git.log_records(LOG_FIELDS, *log_args(lc, revs, agent, order))
    return _tagged(records, lc.accept_patterns())


def _tagged(records, accept) -> Iterator[tuple]:
    from gitstate.history import progress
    for n, (sha, ct, author, subject) in enumerate(records, start=1):
        progress.tick("reading history", n)
        tag = subject_tag(subject, accept)
        if tag is not None:
            yield (sha, int(ct) if ct.isdigit() else 0, author) + tag
    progress.done()


# ---------------------------------------------------------------------------------------
# The fold (pure)


def fold(tracks: dict[str, AgentTrack], events) -> dict[str, AgentTrack]:
    """Fold tag events (oldest first) into per-agent tracks; returns the same dict. Each
    commit recorded is (sha, time, its place in the order of history), so that what happened
    later is known even within one second: the place of the next event is one more than the
    number of events folded so far, which a saved fold knows too."""
    seq = sum(t.count for t in tracks.values())
    for sha, when, _author, agent, state, _text in events:
        t = tracks.get(agent)
        seq += 1
        here = (sha, when, seq)
        if t is None:
            tracks[agent] = AgentTrack(here, here, state, here, 1, None, len(tracks))
            continue
        if state != t.tag:
            t.previous = t.tag
            t.entered = here
            t.tag = state
        t.last = here
        t.count += 1
    return tracks


def folded(git: Git, lc: Lifecycle, revs: list[str], meanwhile=None) -> dict[str, AgentTrack]:
    """`fold({}, tag_events(git, lc, revs))` with no event held: each is folded as git gives
    it, newest first (`fold_newest`). A whole history's events held to be turned round took
    most of a first read's memory (700,000 moves at 1,000,000 commits: ~350 MB of tuples).
    `meanwhile` is called once git has started: in topological order git walks the whole
    history before its first line, and the caller may use that time."""
    events = newest_events(git, lc, revs)
    if meanwhile is not None:
        meanwhile()
    return fold_newest(events)


def fold_newest(events) -> dict[str, AgentTrack]:
    """`fold({}, reversed(events))` of `events` given newest first, in one pass that keeps
    only each agent's track. Places are counted from the newest while reading (0, 1, ...)
    and said from the oldest once all are counted; an agent's first move is the oldest read
    of it, the state it entered the oldest of the run of its last state, and `previous` the
    state of the move just before that run."""
    seen: dict[str, list] = {}   # agent -> [first, last, tag, entered, count, previous]
    n = 0
    for sha, when, _author, agent, state, _text in events:
        here = (sha, when, n)
        n += 1
        s = seen.get(agent)
        if s is None:
            seen[agent] = [here, here, state, here, 1, None]
            continue
        s[0] = here
        s[4] += 1
        if s[5] is None:          # still in the run of its last state
            if state == s[2]:
                s[3] = here
            else:
                s[5] = state
    tracks: dict[str, AgentTrack] = {}
    for agent, (first, last, tag, entered, count, previous) in sorted(
            seen.items(), key=lambda item: -item[1][0][2]):     # in order of birth
        tracks[agent] = AgentTrack((first[0], first[1], n - first[2]),
                                   (last[0], last[1], n - last[2]), tag,
                                   (entered[0], entered[1], n - entered[2]), count,
                                   previous, len(tracks))
    return tracks


def fold_plain(tracks: dict[str, list], events, seq: int) -> int:
    """`fold` onto tracks in their plain form (`track_to_plain`), `seq` the events folded
    so far: only the agents of `events` are touched. Returns the new `seq`."""
    for sha, when, _author, agent, state, _text in events:
        p = tracks.get(agent)
        seq += 1
        here = [sha, when, seq]
        if p is None:
            tracks[agent] = [here, here, state, here, 1, None, len(tracks)]
            continue
        if state != p[2]:
            p[5], p[3], p[2] = p[2], here, state
        p[1] = here
        p[4] += 1
    return seq


def track_to_plain(t: AgentTrack) -> list:
    return [list(t.first), list(t.last), t.tag, list(t.entered), t.count, t.previous, t.born]


def track_from_plain(p: list) -> AgentTrack:
    return AgentTrack(tuple(p[0]), tuple(p[1]), p[2], tuple(p[3]), p[4], p[5], p[6])


# ---------------------------------------------------------------------------------------
# Views


ROSTER_GROUPS = {"living": "living", "frozen": "freezer", "dead": "cemetery"}


class RosterRow(Record):
    """One agent in the roster."""
    # declared once: `agent_record` builds the row (a dict, ready for JSON) from it, and
    # gitstate.schema describes `status`'s and `roster`'s models from it
    agent: str = field(about="the agent's id")
    path: str = field(about="its state file")
    state: str | None = field(about="its state (null when the state file could not be read)")
    roster: str | None = field(about="the roster of its state: living, frozen or dead")
    role: str | None = field(None, about="the role it holds")
    model: str | None = field(None, about="the model it runs on, as its state file says")
    context_pct: float | None = field(None, about="how full its context window is, in percent "
                                      "(always a number, or null when unknown)")
    phase: str = field("unknown", about="its mortality phase by context_pct: young, midlife, "
                       "legacy, urgent or unknown")
    thread: str | None = field(None, about="what it is working on")
    summary: str | None = field(None, about="its latest summary")
    person: str | None = field(None, about="the person it works for")
    project: str | None = field(None, about="the project it works in")
    parent: str | None = field(None, about="the agent that spawned it")
    depth: int | None = field(None, about="how many parents it has above it")
    last_read_commit: str | None = field(None, about="the commit up to which it has read its inbox")
    freeze_state: str | None = field(None, about="its freeze-state file (frozen agents)")
    final_summary: str | None = field(None, about="what it said when it ended (dead agents)")
    task: str | None = field(None, about="the task it was given")
    instructions: str | None = field(None, about="instructions it was given")
    started: str | None = field(None, about="when it was born, as its state file says")
    ended: str | None = field(None, about="when it ended, as its state file says")
    born: int | None = field(None, about="order of birth in history (instances are numbered by it)")
    first_commit: str | None = field(None, about="its first state commit")
    first_commit_at: str | None = field(None, about="when that commit was made (ISO 8601, UTC)")
    last_commit: str | None = field(None, about="its latest state commit")
    last_commit_at: str | None = field(None, about="when that commit was made (ISO 8601, UTC)")
    in_state_since: str | None = field(None, about="when it entered its state (ISO 8601, UTC)")
    in_state_since_commit: str | None = field(None, about="the commit of that move")
    entered_order: int | None = field(None, about="place in history of the move into this state")
    seconds_in_state: int | None = field(
        None, about="seconds since it entered its state (to the commit read, or now)")
    instance: int | None = field(
        None, about="its number among the holders of its role, in order of birth")
    problem: str | None = field(None, about="why its state file could not be read")

    # keys a row holds only when they are known: the others it always holds, in this order
    _sometimes = ("person", "project", "parent", "depth", "last_read_commit", "freeze_state",
                  "final_summary", "task", "instructions", "started", "ended", "born",
                  "entered_order", "instance")
    # the keys read as text from the state file
    _text = ("role", "model", "thread", "summary", "person", "project", "parent", "task",
             "instructions", "started", "ended")


_BLANK = {k: RosterRow._defaults.get(k) for k in RosterRow._fields
          if k not in RosterRow._sometimes}


def agent_record(agent: str, path: str, front: dict | None, problem: str | None,
                 track: AgentTrack | None, lc: Lifecycle, now: int) -> dict:
    """One roster entry (`RosterRow`): the state file's front matter at the revision (None if
    it could not be read, for `problem`), with what the tag timeline adds."""
    rec = dict(_BLANK, agent=agent, path=path)
    if track is not None:
        rec["first_commit"], rec["first_commit_at"] = track.first[0], iso(track.first[1])
        rec["born"] = track.born
        rec["last_commit"], rec["last_commit_at"] = track.last[0], iso(track.last[1])
    if front is None:
        return _unread(rec, problem or f"{path} does not exist at this revision", track, lc)
    _read_front(rec, front, lc)
    if track is not None:
        since = track.entered if track.tag == rec["state"] else track.last
        rec["in_state_since"], rec["in_state_since_commit"] = iso(since[1]), since[0]
        rec["entered_order"] = since[2] if len(since) > 2 else None
        rec["seconds_in_state"] = max(0, now - since[1])
    return rec


def _unread(rec: dict, problem: str, track: AgentTrack | None, lc: Lifecycle) -> dict:
    """The row of an agent whose state file is not read: why, and what its last tag said."""
    rec["problem"] = problem
    if track is not None:
        rec["state"] = track.tag
        rec["roster"] = lc.roster_of(track.tag)
    return rec


# the key a row holds only in a roster, read from the state file
_ROSTER_KEY = {"frozen": "freeze_state", "dead": "final_summary"}


def _read_front(rec: dict, front: dict, lc: Lifecycle) -> None:
    """What the state file's front matter says, into the row `rec`."""
    state = front.get("state")
    state = rec["state"] = state if isinstance(state, str) else None
    rec["roster"] = lc.roster_of(state) if state else None
    if state and state not in lc.states:
        rec["problem"] = f"'{state}' is not a state of lifecycle '{lc.name}'"
    for key in RosterRow._text:
        rec[key] = statefile.as_text(front.get(key))
    pct = front.get("context_pct")
    if isinstance(pct, (int, float)) and not isinstance(pct, bool):
        rec["context_pct"] = float(pct)
        rec["phase"] = lc.mortality.phase(pct)
    depth = front.get("depth")
    rec["depth"] = depth if isinstance(depth, int) and not isinstance(depth, bool) else None
    rec["last_read_commit"] = statefile.as_text(front.get("last_read_commit"))
    only = _ROSTER_KEY.get(rec["roster"])
    if only is not None:
        rec[only] = statefile.as_text(front.get(only))


def number_instances(records: list[dict]) -> None:
    """Instances of a role numbered in the order they were born (architect #1, #2, ...): by
    the order of their first commits in history, so that agents born in one second keep
    their numbers whatever their names."""
    for holders in _by_role(records).values():
        holders.sort(key=lambda r: (r.get("born", 0), r["first_commit_at"] or "",
                                    r["agent"]))
        for i, r in enumerate(holders, start=1):
            r["instance"] = i


def roster_view(records: list[dict]) -> dict:
    """Living, freezer and cemetery, each sorted by agent id."""
    number_instances(records)
    out: dict = {"living": [], "freezer": [], "cemetery": [], "unknown": []}
    for r in sorted(records, key=lambda r: r["agent"]):
        out[ROSTER_GROUPS.get(r["roster"], "unknown")].append(r)
    if not out["unknown"]:
        del out["unknown"]
    return out


def _by_role(records: list[dict]) -> dict[str, list[dict]]:
    """role -> the rows of its holders, in the order of `records`."""
    by_role: dict[str, list[dict]] = {}
    for r in records:
        if r.get("role"):
            by_role.setdefault(r["role"], []).append(r)
    return by_role


def vacancies(records: list[dict], lc: Lifecycle) -> list[dict]:
    """Roles with no living holder: vacant after a holder froze or died, or never filled."""
    holders = _by_role(records)
    roles = list(lc.roles) + sorted(r for r in holders if r not in lc.roles)
    return [_vacancy(role, holders.get(role, []), _mandate(lc, role))
            for role in roles if not _held(holders.get(role, []))]


def _held(holders: list[dict]) -> bool:
    return any(h["roster"] == "living" for h in holders)


def _mandate(lc: Lifecycle, role: str) -> str | None:
    return lc.roles[role].mandate if role in lc.roles else None


def _vacancy(role: str, held: list[dict], mandate: str | None) -> dict:
    """A role without a living holder, whose holders (frozen or dead) were `held`."""
    if not held:
        return {"role": role, "status": "unfilled", "mandate": mandate, "last_holder": None,
                "since": None, "since_commit": None, "frozen_holders": []}
    # the holder whose state began last in history (not by clock: one second may hold
    # several moves, and clocks differ between clones)
    last = max(held, key=lambda h: (h.get("entered_order") or 0, h["in_state_since"] or ""))
    return {"role": role, "status": "vacant", "mandate": mandate,
            "last_holder": last["agent"], "last_holder_state": last["state"],
            "since": last["in_state_since"], "since_commit": last["in_state_since_commit"],
            "frozen_holders": sorted(h["agent"] for h in held if h["roster"] == "frozen")}


def vacancy_notice(v: dict) -> str:
    mandate = v["mandate"] or "not yet written"
    if v["status"] == "unfilled":
        return f"Role '{v['role']}' has never been filled. Mandate: {mandate}."
    text = f"Role '{v['role']}' is vacant. Last held by {v['last_holder']}"
    if v["since"]:
        text += f" ({v['last_holder_state']} since {v['since_commit'][:10]})"
    text += f". Mandate: {mandate}."
    if v["frozen_holders"]:
        text += f" Frozen holders: {', '.join(v['frozen_holders'])}."
    return text
