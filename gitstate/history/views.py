"""The read commands' data: roster, vacancies, history, inbox. Plain dicts, ready for JSON."""

from __future__ import annotations

import re
import time

from gitstate.errors import GitstateError, UsageError
from gitstate.law.grammar import canonical_id, parse_message
from gitstate.history.fold import agent_record, roster_view, tag_events, vacancies
from gitstate.history.index import Index
from gitstate.git.repo import Managed


def resolve_at(repo: Managed, at: str | None) -> tuple[str | None, int]:
    """(commit, "now") for `--at REV|DATE`; without --at, HEAD and the wall clock."""
    if at is None:
        return repo.git.head(), int(time.time())
    sha = repo.git.rev(at)
    if sha is None:
        # git reads any text as some date, so only a date that looks like one is asked about
        out = repo.git.run("rev-list", "-1", f"--before={at}", "HEAD", check=False) \
            if _looks_like_date(at) else b""
        sha = out.decode().strip() or None
        if sha is None:
            raise UsageError(f"--at {at!r} is neither a revision nor a date with commits "
                             "before it", hint="e.g. --at HEAD~10, --at v1.0, --at 2026-11-01")
    when = int(repo.git.text("log", "-1", "--format=%ct", sha))
    return sha, when


_RELATIVE = re.compile(r"^\d+\s+(second|minute|hour|day|week|month|year)s?\s+ago$")


def _looks_like_date(text: str) -> bool:
    import datetime
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return True
    except ValueError:
        return bool(_RELATIVE.match(text.strip()))


def agent_records(repo: Managed, at: str | None = None) -> tuple[list[dict], str | None, object]:
    """Every agent with a state file at the revision, plus those only history knows of."""
    rev, now = resolve_at(repo, at)
    # time travel reads the law as it was then, never today's work tree
    lc = repo.lifecycle(rev) if at is None else repo.lifecycle(rev, index=False, worktree=False)
    index = Index(repo.git, lc, repo.cache_dir)
    tracks = index.tracks(rev, remember=at is None)
    records = [agent_record(a, path, front, problem, tracks.get(a), lc, now)
               for a, (path, front, problem) in index.fronts(rev).items()]
    index.save()
    return records, rev, lc


def roster(repo: Managed, at: str | None = None) -> dict:
    records, rev, lc = agent_records(repo, at)
    view = roster_view(records)
    return {"commit": rev, "lifecycle": lc.name, **view}


def vacant_roles(repo: Managed, at: str | None = None) -> dict:
    records, rev, lc = agent_records(repo, at)
    return {"commit": rev, "vacancies": vacancies(records, lc)}


def transitions(repo: Managed, agent: str | None = None) -> list[dict]:
    """Each tagged commit as a move: agent, from, to, commit, author, time, text."""
    head = repo.git.head()
    if head is None:
        return []
    lc = repo.lifecycle(head)
    want = canonical_id(agent) if agent else None
    last: dict[str, str] = {}
    out = []
    for sha, when, author, who, state, text in tag_events(repo.git, lc, [head]):
        before = last.get(who)
        last[who] = state
        if want and who != want:
            continue
        out.append({"agent": who, "from": before, "to": state, "commit": sha,
                    "author": author, "time": when, "text": text})
    if want and not out:
        raise GitstateError(f"no history for agent '{want}'",
                            hint="`gitstate roster` lists the agents this repository knows")
    return out


def inbox(repo: Managed, agent: str) -> dict:
    """Commits since the agent's `last_read_commit` that mention @agent or @ALL."""
    agent = canonical_id(agent)
    head = repo.git.head()
    lc = repo.lifecycle(head)
    data = repo.git.cat_files([f"{head}:{lc.state_path(agent)}"])[0] if head else None
    if data is None:
        raise GitstateError(f"unknown agent '{agent}'", hint=f"spawn it: `gitstate spawn {agent}`")
    from gitstate.law import statefile
    doc = statefile.parse_bytes(data, lc.state_path(agent))
    since = statefile.as_text(doc.get("last_read_commit"))
    if since and repo.git.rev(since) is None:
        raise GitstateError(f"{agent}'s last_read_commit {since} is not a commit here",
                            where=lc.state_path(agent))
    revs = [f"{since}..{head}"] if since else [head]
    messages = []
    for sha, ct, author, body in repo.git.log_records(["%H", "%ct", "%an", "%B"], "-F",
                                                      "--grep=@", *revs, "--"):
        msg = parse_message(body, lc.accept_patterns())
        if msg.prefix == agent:
            continue  # the agent's own words are not messages to it
        if agent in msg.mentions or "all" in msg.mentions:
            messages.append({"commit": sha, "time": int(ct) if ct.isdigit() else 0,
                             "author": author,
                             "from": msg.prefix, "subject": msg.subject, "body": msg.body,
                             "to_all": agent not in msg.mentions})
    messages.reverse()  # oldest first, the order to read them in
    return {"agent": agent, "since": since, "head": head, "messages": messages}
