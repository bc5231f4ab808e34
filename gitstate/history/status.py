"""`gitstate status`: each agent's state, roster, mortality phase and the next states the hooks
would accept now, as a plain record (its model is `AgentStatus` in gitstate/schema/records.py;
pydantic stays off this path, which agents poll)."""

from __future__ import annotations

import time

from gitstate.law import statefile
from gitstate.law.lifecycle import Lifecycle

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from gitstate.law.retry import Retry


def status(repo, agent: str | None = None, at: str | None = None) -> dict:
    """The agent's record with the commit it was read at, or {"commit", "agents"}: every
    agent's (from the index, which parses each state file's blob once). `at`: as it was at a
    revision or a date, by the law of then. How long each has been in its state (for the
    timed moves not yet due) comes from the index's tracks."""
    from gitstate.history.index import Index
    from gitstate.law.grammar import canonical_id
    head, lc, now = _read_point(repo, at)
    timed = _timed(lc)
    if agent and not timed:    # one state file, and no time in state to tell: no index read
        return _one(repo, canonical_id(agent), head, lc, None, _untold)
    index = Index(repo.git, lc, repo.cache_dir)
    waited = _waiting(index.tracks(head) if timed and head else {}, now)
    if agent:
        return _one(repo, canonical_id(agent), head, lc, index if timed else None, waited)
    return _every(repo, lc, head, index, waited, keep=at is None and not timed)


def _every(repo, lc: Lifecycle, head: str | None, index, waited: Callable, keep: bool) -> dict:
    """{"commit", "agents", "warnings"}: every agent's status at `head` (`keep`: from the
    rows kept, where they can be)."""
    if head is None:
        return {"commit": None, "agents": []}
    kept = _kept(repo, lc, head) if keep else None
    if kept is not None:
        return {"commit": head, "agents": kept, "warnings": []}
    fronts = index.fronts(head)
    rows = [_row(a, path, front, problem, lc, waited)
            for a, (path, front, problem) in sorted(fronts.items())]
    index.save()
    return {"commit": head, "agents": rows, "warnings": _warnings(lc, fronts)}


def _timed(lc: Lifecycle) -> bool:
    """Do the lifecycle's moves depend on the time in a state (timeouts; retry: backoff)?"""
    return bool(lc.policies.timeouts) or lc.policies.retry is not None


def _read_point(repo, at: str | None) -> tuple:
    """(the commit read, its law, the time it is read as: now, or the commit's at `at`)."""
    if at is None:
        head = repo.head()
        return head, repo.lifecycle(head), time.time()
    from gitstate.history.views import read_at
    head, lc = read_at(repo, at)
    return head, lc, float(repo.git.text("log", "-1", "--format=%ct", head)) if head \
        else time.time()


def _waiting(tracks: dict, now: float) -> Callable:
    """waited(agent, front): the seconds it has been in the state its file names, by its
    track (None where its track is not in that state)."""
    def waited(a: str, front: dict) -> float | None:
        track = tracks.get(a)
        if track is None or track.tag != front.get("state"):
            return None
        return now - track.entered[1]
    return waited


def _untold(agent: str, front: dict) -> None:
    return None


def _kept(repo, lc: Lifecycle, head: str) -> list[dict] | None:
    """Every agent's status from the rows kept and carried on (None: a lifecycle whose
    warnings read every front, or rows that cannot be kept)."""
    if any(lc.max_advisory(r) for r in lc.roles):
        return None
    from gitstate.history.kept_rows import statuses
    return statuses(repo, lc, head, lambda a, path, front, problem: _row(
        a, path, front, problem, lc, _untold))


def _row(agent: str, path: str, front: dict | None, problem: str | None, lc: Lifecycle,
         waited: Callable) -> dict:
    """An agent's status, or why its state file could not be read."""
    if front is None:
        return unreadable(agent, path, problem, lc)
    return status_of(agent, path, front, lc, waited(agent, front))


def _warnings(lc: Lifecycle, fronts: dict) -> list[str]:
    """What the law lets be and the team should know: a convention role (`max_advisory`) held
    by more living agents than its max."""
    if not any(lc.max_advisory(r) for r in lc.roles):
        return []
    from gitstate.law.roles import over_advisory_max
    return over_advisory_max(lc, ({**f, "agent": a} for a, (_p, f, _x) in fronts.items()
                                  if f is not None))


def _one(repo, agent: str, head: str | None, lc: Lifecycle, index, waited) -> dict:
    """One agent's record with the commit it was read at (`index`: saved, when its tracks
    were read)."""
    path = lc.state_path(agent)
    data = repo.git.cat_files([f"{head}:{path}"])[0] if head else None
    if data is None:
        raise repo.unknown_agent(agent, head, lc)
    if index is not None:
        index.save()
    try:
        front = statefile.parse_bytes(data, path).front
    except Exception as exc:  # InvalidFile, shown rather than raised: one bad file
        return {"commit": head, **unreadable(agent, path, str(exc), lc)}
    return {"commit": head, **status_of(agent, path, front, lc, waited(agent, front))}


def status_of(agent: str, path: str, front: dict, lc: Lifecycle,
              waited: float | None = None) -> dict:
    """The status of an agent whose front matter is read (e.g. from the index); `waited`:
    seconds it has been in its state, where known."""
    state = front.get("state") if isinstance(front.get("state"), str) else None
    pct = front.get("context_pct")
    pct = float(pct) if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None
    phase = lc.mortality.phase(pct)
    role = statefile.as_text(front.get("role"))
    nxt = _next(lc, state, role, pct, waited, front)
    return {"agent": agent, "path": path, "state": state,
            "roster": lc.roster_of(state) if state else None,
            "role": role,
            "model": statefile.as_text(front.get("model")), "context_pct": pct,
            "phase": phase,
            "next": nxt,
            "thread": statefile.as_text(front.get("thread")),
            "summary": statefile.as_text(front.get("summary")),
            "problem": None if state in lc.states
            else f"'{state}' is not a state of lifecycle {lc.name}",
            "advice": lc.phase_advice(phase, agent),
            **_retry(lc, state, role, waited, front, nxt)}


def _retry(lc: Lifecycle, state: str | None, role: str | None, waited: float | None,
           front: dict, nxt: list[str]) -> dict:
    """`retry` of a failed agent `policies.retry` lets go back to work: where to, the count,
    and in how many seconds it is legal (0: now; its targets then join `nxt`). None where it
    may not be retried (no policy, a state it does not leave, a role it excepts, its
    retries used)."""
    from gitstate.law import retry
    spec = lc.policies.retry
    made = retry.count(front)
    if spec is None or not _retriable(spec, lc, state, role, made):
        return {"retry": None}
    due = _due(lc, made, waited)
    to = list(retry.to_states(lc))
    if due == 0:
        nxt.extend(t for t in to if t not in nxt)
    return {"retry": {"to": to, "retries": made, "max": spec.max, "due_in": due}}


def _due(lc: Lifecycle, made: int, waited: float | None) -> int | None:
    """Seconds until the next retry is legal (0: now; None: not known)."""
    from gitstate.law import retry
    return max(0, int(retry.wait(lc, made) - waited)) if waited is not None else None


def _retriable(spec: Retry, lc: Lifecycle, state: str | None, role: str | None,
               made: int) -> bool:
    from gitstate.law import retry
    return state in retry.from_states(lc) and made < spec.max \
        and not (role and role in spec.except_roles)


def _next(lc: Lifecycle, state: str | None, role: str | None, pct: float | None,
          waited: float | None, front: dict) -> list[str]:
    """The states the hooks would accept next (the state itself not, past its token limit)."""
    if state not in lc.states:
        return []
    nxt = lc.open_moves(state, role=role, context_pct=pct, waited=waited)
    if state in nxt and _spent(lc, state, front):
        nxt.remove(state)
    return nxt


def _spent(lc: Lifecycle, state: str, front: dict) -> bool:
    """Has the agent used the tokens its state allows (a state with `token_limit`)?"""
    used, most = front.get("tokens"), front.get("max_tokens")
    return bool(lc.states[state].token_limit) and isinstance(used, int) \
        and isinstance(most, int) and used >= most


def unreadable(agent: str, path: str, problem: str | None, lc: Lifecycle) -> dict:
    """The status of an agent whose state file could not be read: why, and nothing else."""
    return {**status_of(agent, path, {}, lc), "problem": problem}
