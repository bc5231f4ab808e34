"""The read commands' data: roster, vacancies, history, inbox, freeze-states, verify. Plain
dicts, ready for JSON."""

from __future__ import annotations

import re
import time

from gitstate.errors import GitstateError, UsageError
from gitstate.git.repo import Managed
from gitstate.history.fold import agent_record, roster_view, tag_events, vacancies
from gitstate.history.index import Index
from gitstate.law import statefile
from gitstate.law.freezestate import freeze_state_path
from gitstate.law.grammar import canonical_id, parse_message
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.times import iso


def resolve_at(repo: Managed, at: str | None) -> tuple[str | None, int]:
    """(commit, "now") for `--at REV|DATE`; without --at, HEAD and the wall clock."""
    if at is None:
        return repo.head(), int(time.time())
    sha = repo.git.rev(at) or _dated(repo, at)
    when = int(repo.git.text("log", "-1", "--format=%ct", sha))
    return sha, when


def _dated(repo: Managed, at: str) -> str:
    """The commit of the line as it stood at the date `at` (a usage error for text that is
    no date, or a date before every commit). git reads any text as some date, so only a date
    that looks like one is asked about; a commit off the first-parent line was never judged
    as one of it, and its committer date is anyone's."""
    out = repo.git.run("rev-list", "-1", "--first-parent", f"--before={at}",
                       repo.head() or "HEAD", check=False) if _looks_like_date(at) else b""
    sha = out.decode().strip()
    if not sha:
        raise UsageError(f"--at {at!r} is neither a revision nor a date with commits "
                         "before it", hint="e.g. --at HEAD~10, --at v1.0, --at 2026-11-01")
    return sha


_RELATIVE = re.compile(r"^(\d+\s+(second|minute|hour|day|week|month|year)s?\s+ago|yesterday"
                       r"|today|now)$", re.I)


def since_time(repo: Managed, text: str) -> int:
    """The time (seconds) of a `--since` date, read as git reads one; a usage error for text
    that is no date (git would read any text as some date)."""
    out = repo.git.run("rev-parse", f"--since={text}", check=False).decode().strip() \
        if _looks_like_date(text) else ""
    if not out.startswith("--max-age="):
        raise UsageError(f"--since {text!r} is not a date", hint="e.g. --since 2026-11-01, "
                         "--since '2 days ago', --since yesterday")
    return int(out.split("=", 1)[1])


def _looks_like_date(text: str) -> bool:
    import datetime
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return True
    except ValueError:
        return bool(_RELATIVE.match(text.strip()))


def agent_records(repo: Managed, at: str | None = None) -> tuple[list[dict], str | None,
                                                                Lifecycle]:
    """Every agent with a state file at the revision, plus those only history knows of."""
    rev, now = resolve_at(repo, at)
    # time travel reads the law as it was then, never today's work tree
    lc = repo.lifecycle(rev) if at is None else repo.lifecycle(rev, index=False, worktree=False)
    if at is None and rev is not None:   # each agent's row kept, carried on agent by agent
        from gitstate.history.kept_rows import records as kept_records
        kept = kept_records(repo, lc, rev, now)
        if kept is not None:
            return kept, rev, lc
    index = Index(repo.git, lc, repo.cache_dir)
    tracks, fronts = index.tracks_and_fronts(rev, remember=at is None)
    records = [agent_record(a, path, front, problem, tracks.get(a), lc, now)
               for a, (path, front, problem) in fronts.items()]
    index.save()
    return records, rev, lc


def roster(repo: Managed, at: str | None = None) -> dict:
    records, rev, lc = agent_records(repo, at)
    view = roster_view(records)
    return {"commit": rev, "lifecycle": lc.name, **view}


def vacant_roles(repo: Managed, at: str | None = None) -> dict:
    records, rev, lc = agent_records(repo, at)
    return {"commit": rev, "vacancies": vacancies(records, lc)}


def read_at(repo: Managed, at: str | None):
    """(commit, lifecycle) at `--at` (the law as it was then), or at HEAD."""
    if at is None:
        head = repo.head()
        return head, repo.lifecycle(head) if head else None
    rev, _now = resolve_at(repo, at)
    return rev, repo.lifecycle(rev, index=False, worktree=False)


def log_rows(repo: Managed, agent: str | None = None, *, limit: int | None = None,
             since: str | None = None, newest_first: bool = False,
             at: str | None = None) -> dict:
    """`gitstate log`: the moves (of `agent`) up to HEAD or `at`, oldest first unless
    `newest_first`; `since` a date as git reads one; `limit` keeps the newest, as `git log
    -n`."""
    law = read_at(repo, at)
    after = since_time(repo, since) or 0 if since is not None else None
    rows = _timed_iso(_moves(repo, agent, at, after=after, newest=limit, law=law))
    if newest_first:
        rows.reverse()
    return {"commit": law[0], "agent": canonical_id(agent) if agent else None, "moves": rows}


def move_of(row: list) -> dict:
    """A move as `log --json` gives it (its time in seconds, said as ISO by the views), from a
    row kept by history/movelog.py."""
    sha, when, author, who, before, state, text = row
    return {"agent": who, "from": before, "to": state, "commit": sha, "author": author,
            "time": when, "text": text}


def transitions(repo: Managed, agent: str | None = None, at: str | None = None) -> list[dict]:
    """Each tagged commit as a move: agent, from, to, commit, author, time, text."""
    return _timed_iso(_moves(repo, agent, at))


def _timed_iso(rows: list[dict]) -> list[dict]:
    """`rows` with each moment said as every --json says them (for the rows shown only)."""
    for r in rows:
        r["time"] = iso(r["time"])
    return rows


def _moves(repo: Managed, agent: str | None = None, at: str | None = None, *,
           after: int | None = None, newest: int | None = None,
           law: tuple | None = None) -> list[dict]:
    """`transitions` with each time in seconds; only those at or after `after`, and only the
    `newest` N, where given (chosen before any record is built: a history has 100,000s).
    `law`: `read_at(repo, at)`, when the caller has it."""
    head, lc = law if law is not None else read_at(repo, at)
    if head is None:
        return []
    want = canonical_id(agent) if agent else None
    if at is None and repo.cache_dir:   # the moves kept under .git/gitstate, read on
        return _moves_kept(repo, lc, head, want, after, newest)
    return _moves_walked(repo, lc, head, want, after, newest)


def _moves_kept(repo: Managed, lc, head: str, want: str | None, after: int | None,
                newest: int | None) -> list[dict]:
    kept = _kept_moves(repo, lc, head, want, newest if after is None else None)
    if want and not kept:
        _no_history(repo, lc, head, want)
    return [move_of(row) for row in newest_of(_since(kept, after), newest)]


def _moves_walked(repo: Managed, lc, head: str, want: str | None, after: int | None,
                  newest: int | None) -> list[dict]:
    out = _transitions(tag_events(repo.git, lc, [head], want, order="--date-order"), want,
                       after)
    if out is None:
        _no_history(repo, lc, head, str(want))
    return newest_of(out or [], newest)


def _since(kept: list, after: int | None) -> list:
    """The kept moves at or after `after`, where given."""
    return kept if after is None else [m for m in kept if m[1] >= after]


def _transitions(events, want: str | None, after: int | None) -> list[dict] | None:
    """The moves of `events` (of `want` only, at or after `after`, where given); None when
    `want` has none."""
    last: dict[str, str] = {}
    out = []
    found = False
    for sha, when, author, who, state, text in events:   # one line: "from" is the last move
        before = last.get(who)
        last[who] = state
        if want and who != want:
            continue
        found = True
        if after is None or when >= after:
            out.append({"agent": who, "from": before, "to": state, "commit": sha,
                        "author": author, "time": when, "text": text})
    return None if want and not found else out


def _kept_moves(repo: Managed, lc, head: str, want: str | None, newest: int | None) -> list:
    """The moves kept under .git/gitstate: the agent's, else the `newest` N, else all."""
    from gitstate.history.movelog import agent_moves, all_moves, newest_moves
    if want:
        return agent_moves(repo.git, lc, head, repo.cache_dir, want)
    if newest is not None:
        return newest_moves(repo.git, lc, head, repo.cache_dir, newest)
    return all_moves(repo.git, lc, head, repo.cache_dir)


def _no_history(repo: Managed, lc, head: str, want: str) -> None:
    """Raised: the agent has no history here (with a "did you mean")."""
    from gitstate.law.suggest import did_you_mean
    raise GitstateError(f"no history for agent '{want}'"
                        f"{did_you_mean(want, repo.agent_ids(lc, head))}",
                        hint="`gitstate roster` lists the agents this repository knows")


def newest_of(rows: list, n: int | None) -> list:
    """The last `n` of `rows` (all where n is None), as `git log -n` keeps the newest."""
    return rows if n is None else rows[-n:] if n else []


def _mentions(repo: Managed, lc, revs: list[str], agent: str | None = None) -> list[tuple]:
    """(sha, time, author, message) of every commit of `revs` with an @ (with `agent`: at
    least those that mention it or @ALL, ids compared case-insensitively; git filters, the
    parser decides), newest first."""
    grep = ["-i", f"--grep=@{agent}", "--grep=@all"] if agent else ["--grep=@"]
    return [(sha, int(ct) if ct.isdigit() else 0, author,
             parse_message(body, lc.accept_patterns()))
            for sha, ct, author, body in repo.git.log_records(["%H", "%ct", "%an", "%B"], "-F",
                                                              *grep, *revs, "--")]


def _inbox_of(agent: str, since: str | None, head: str, mentions, unread=None) -> dict:
    """The inbox view from parsed mentions (`unread`: the shas after `since`, when known)."""
    messages = []
    for sha, ct, author, msg in mentions:
        if unread is not None and sha not in unread:
            continue
        if msg.prefix == agent:
            continue  # the agent's own words are not messages to it
        if agent in msg.mentions or "all" in msg.mentions:
            messages.append({"commit": sha, "time": iso(ct), "author": author,
                             "from": msg.prefix, "subject": msg.subject, "body": msg.body,
                             "to_all": agent not in msg.mentions})
    messages.reverse()  # oldest first, the order to read them in
    return {"commit": head, "agent": agent, "last_read_commit": since, "messages": messages}


def _last_read(repo: Managed, lc, agent: str, data: bytes) -> str | None:
    doc = statefile.parse_bytes(data, lc.state_path(agent))
    since = statefile.as_text(doc.get("last_read_commit"))
    if since and repo.git.rev(since) is None:
        raise GitstateError(f"{agent}'s last_read_commit {since} is not a commit here",
                            where=lc.state_path(agent))
    return since


def inbox(repo: Managed, agent: str, at: str | None = None, *,
          mentions: list | None = None) -> dict:
    """Commits since the agent's `last_read_commit` that mention @agent or @ALL (up to HEAD,
    or as it was at `--at`). `mentions`: those messages of `at`'s history (newest first, as
    `mentions.messages` gives them), when the caller already holds them (the viewer)."""
    agent = canonical_id(agent)
    head, lc = read_at(repo, at)
    since = _last_read(repo, lc, agent, _state_data(repo, lc, head, agent))
    if mentions is None and at is None and repo.cache_dir:
        mentions = _kept_messages(repo, lc, head, agent)
    if mentions is not None:
        return _inbox_in(repo, agent, since, head, mentions)
    revs = [f"{since}..{head}" if since else head]
    return _inbox_of(agent, since, head, _mentions(repo, lc, revs, agent))


def _kept_messages(repo: Managed, lc, head: str, agent: str) -> list:
    """The messages to `agent` kept under .git/gitstate, read on."""
    from gitstate.history.mentions import messages
    return messages(repo.git, lc, head, repo.cache_dir, agent)


def _state_data(repo: Managed, lc, head: str | None, agent: str) -> bytes:
    """The agent's state file at `head` (an unknown agent: an error)."""
    data = repo.git.cat_files([f"{head}:{lc.state_path(agent)}"])[0] if head else None
    if data is None:
        raise repo.unknown_agent(agent, head, lc)
    return data


def _inbox_in(repo: Managed, agent: str, since: str | None, head: str,
              mentions: list) -> dict:
    """The agent's inbox from messages already read: those to it, unread since `since`."""
    mine = [m for m in mentions if agent in m[3].mentions or "all" in m[3].mentions]
    unread = None
    if since and mine:
        unread = set(repo.git.run("rev-list", f"{since}..{head}", "--").decode().split())
    return _inbox_of(agent, since, head, mine, unread)


def inboxes(repo: Managed, at: str | None = None, *,
            mentions: list | None = None) -> dict[str, dict]:
    """Every agent's inbox at once, as `inbox` says each: one read of the history's mentions
    (or `mentions`, when the caller holds them, newest first), and one walk of `since..HEAD`
    for each distinct checkpoint (a static site of 1,000 agents would otherwise read the
    history 1,000 times). An agent whose checkpoint is broken gets {"agent", "error"}."""
    head, lc = read_at(repo, at)
    if head is None:
        return {}
    if mentions is None:
        mentions = _mentions(repo, lc, [head])
    to_all, to_one = _addressed(mentions)
    walks: dict[str, set] = {}
    out = {}
    for agent, data in repo.agents_at(lc, head).items():
        try:
            since = _last_read(repo, lc, agent, data)
        except GitstateError as exc:
            out[agent] = {"agent": agent, "error": str(exc)}
            continue
        mine = [mentions[i] for i in sorted(set(to_all).union(to_one.get(agent, ())))]
        out[agent] = _inbox_of(agent, since, head, mine, _walked(repo, walks, since, head))
    return out


def _walked(repo: Managed, walks: dict[str, set], since: str | None, head: str) -> set | None:
    """The commits of `since..head` (None: no checkpoint), each walk made once."""
    if since and since not in walks:
        walks[since] = set(repo.git.run("rev-list", f"{since}..{head}", "--").decode().split())
    return walks[since] if since else None


def _addressed(mentions: list) -> tuple[list[int], dict[str, list[int]]]:
    """Who each message speaks to, so that each agent looks only at its own (not 1,000 agents
    x every message): (the messages to all, agent -> the messages to it)."""
    to_all: list[int] = []
    to_one: dict[str, list[int]] = {}
    for i, m in enumerate(mentions):
        for who in set(m[3].mentions):
            (to_all if who == "all" else to_one.setdefault(who, [])).append(i)
    return to_all, to_one


def freeze_state(repo: Managed, agent: str, at: str | None = None, *,
                 law: tuple | None = None) -> dict:
    """An agent's committed freeze-state, split into its front matter and `## ` sections: what
    anyone may ask of a frozen agent without waking it. `law`: (commit, lifecycle) of `at`,
    when the caller has them (a static site asks for every frozen agent)."""
    agent = canonical_id(agent)
    rev, lc = law if law is not None else read_at(repo, at)
    lc, path, doc = repo.agent_doc(agent, rev, lc)
    rel = statefile.as_text(doc.get("freeze_state")) or freeze_state_path(agent)
    found = repo.git.cat_files([f"{rev}:{rel}"])[0]
    if found is None:
        raise GitstateError(f"{agent} has no freeze-state committed at {rel} "
                            f"(it is in {doc.state})")
    front, titles, sections = _freeze_file(found, rel)
    return {"commit": rev, "agent": agent, "state": doc.state, "path": rel, "front": front,
            "sections": sections, "titles": titles,
            "written_by": statefile.as_text(front.get("written_by"))}


def _freeze_file(data: bytes, path: str) -> tuple[dict, dict[str, str], dict[str, str]]:
    """(front matter, section titles, section texts) of a freeze-state's file."""
    text = statefile.decode(data, path)
    fdoc = statefile.parse(text, path) if text.startswith("---") else None
    titles, sections = _sections(fdoc.body if fdoc else text)
    return (fdoc.front if fdoc else {}), titles, sections


def _sections(body: str) -> tuple[dict[str, str], dict[str, str]]:
    """(key -> title, key -> text) of each `## ` section of a freeze-state's body."""
    parts = re.split(r"^##[ \t]+(.+?)[ \t]*$", body, flags=re.M)
    titles, sections = {}, {}
    for i in range(1, len(parts) - 1, 2):
        titles[section_key(parts[i])] = parts[i].strip()
        sections[section_key(parts[i])] = parts[i + 1].strip()
    return titles, sections


def section_key(title: str) -> str:
    """A freeze-state section's key in JSON: its `## ` title in snake_case (`Key Decisions`:
    `key_decisions`)."""
    return "_".join(re.findall(r"[0-9a-z]+", title.lower())) or "section"


def verified(repo: Managed, revs=(), *, no_cache: bool = False, progress=None) -> dict:
    """`gitstate verify`: HEAD's history (or the ranges `revs`) replayed through the hooks'
    rules; every problem, how many commits were judged, which by their tags alone, and which
    could not be judged (a shallow clone's boundary: `unjudged`)."""
    from gitstate.history.shallow import apart  # the views need neither verify nor its imports
    from gitstate.history.verify import (
        declared_line,
        known_revs,
        law_committed,
        must_be_managed,
        verify,
    )
    head = repo.git.head()
    must_be_managed(repo)
    known_revs(repo, revs)
    cache_dir = None if no_cache else repo.cache_dir
    report: dict = {"by_tag": [], "line_from": None, "unjudged_merges": 0}
    problems: list[dict] = []
    judged = 0
    if head is not None:
        problems, judged = verify(repo.git, list(revs) or [head], cache_dir,
                                  remember=not revs and not no_cache, report=report,
                                  progress=progress)
    problems, unjudged = apart(problems)
    return {"commit": head, "ok": not problems and not unjudged, "problems": problems,
            "judged": judged, "judged_by_tag": report["by_tag"],
            "lifecycle_committed": law_committed(repo, head), "line": declared_line(repo, head),
            "line_from": report["line_from"],
            "merges_not_judged": report["unjudged_merges"], "unjudged": unjudged}
