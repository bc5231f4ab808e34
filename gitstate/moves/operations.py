"""Operations over many agents: sweep due timeouts, reap dead processes, and shut everyone
down in order (await their ends: `awaiting.py`). Every change is an ordinary state commit,
judged by the same rules as any other; the system's own commits are authored as `gitstate`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from gitstate.errors import GitstateError, Rejected
from gitstate.git.repo import Managed
from gitstate.git.runner import Git
from gitstate.history.index import Index
from gitstate.law import statefile
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.retry import count as retry_count
from gitstate.law.rule_ids import Rule
from gitstate.law.times import duration, iso
from gitstate.moves.agent import spawn, transition
from gitstate.moves.awaiting import await_agents as await_agents
from gitstate.moves.freezer import freeze
from gitstate.moves.processes import STARTED, alive, stop_process
from gitstate.moves.ways import nearest_rests, way_to

SYSTEM = ("gitstate", "gitstate@localhost")


@contextlib.contextmanager
def as_system(repo: Managed) -> Iterator[Managed]:
    """`repo` as the system: commits made through it are authored and committed by gitstate,
    not a person. Its git carries the identity in its own environment (this process's is left
    alone: the MCP server runs many calls in one process)."""
    identity = {f"GIT_{r}_{f}": v for r in ("AUTHOR", "COMMITTER")
                for f, v in zip(("NAME", "EMAIL"), SYSTEM)}
    base = os.environ if repo.git.env is None else repo.git.env
    yield Managed(Git(repo.git.cwd, env={**base, **identity}), repo.top, repo.cache_dir)


def spawn_when_free(repo: Managed, agent: str, wait: float, say: Callable[[str], None],
                    poll: float = 0.5, **options):
    """Spawn, waiting up to `wait` seconds for a free slot when only the pool cap
    (`max-living`) refuses it: the seed's queue, bounded."""

    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            return spawn(repo, agent, **options)
        except Rejected as exc:
            _refuse_unless_waiting(exc, deadline, wait)
            if not told:
                say(f"{agent}: the pool is full; waiting up to {wait:g}s for a free slot")
                told = True
        time.sleep(poll)


def _refuse_unless_waiting(exc: Rejected, deadline: float, wait: float) -> None:
    """`exc` again unless only the pool cap refused the spawn; refused once `wait` is over."""
    if any(v.rule != Rule.MAX_LIVING for v in exc.violations):
        raise exc
    if time.monotonic() >= deadline:
        raise GitstateError(f"{exc.message}\nthe pool stayed full for {wait:g}s",
                            hint="wait longer (--wait), or let an agent end, "
                                 "freeze or suspend") from None


def due_timeouts(repo: Managed, now: float | None = None) -> list[dict]:
    """Agents whose timed transition is due: each with since when and where it goes."""
    head = repo.head()
    if head is None:
        return []
    lc = repo.lifecycle(head)
    if not _times_out(lc):
        return []
    now = time.time() if now is None else now
    index = Index(repo.git, lc, repo.cache_dir)
    tracks, fronts = index.tracks_and_fronts(head)
    index.save()
    found = (_timed_out(repo, lc, head, agent, path, front or {}, tracks.get(agent), now)
             for agent, (path, front, _problem) in sorted(fronts.items()))
    return [d for d in found if d]


def _times_out(lc: Lifecycle) -> bool:
    return bool(lc.policies.timeouts or lc.policies.role_timeout
                or any(r.timeout for r in lc.roles.values()))


def _timed_out(repo: Managed, lc: Lifecycle, head: str, agent: str, path: str, front: dict,
               track, now: float) -> dict | None:
    if track is None or track.tag != front.get("state"):
        return None
    state, role = front["state"], statefile.as_text(front.get("role"))
    return _timed_move(lc, agent, state, role, track, now) \
        or _role_timeout(lc, agent, state, role, _lives_since(repo, head, path, front, track),
                         now)


def _timed_move(lc: Lifecycle, agent: str, state, role: str | None, track,
                now: float) -> dict | None:
    """The first timed move out of `state` whose time has come, for this agent's role."""
    for a, b, spec in lc.policies.timed_moves():
        seconds = spec.after
        if a == state and lc.timeout_applies(a, b, role) \
                and now - track.entered[1] >= seconds:
            after = duration(seconds, exact=True)
            return _due(agent, a, b, after, track.entered, f"timeout {after}")
    return None


def _lives_since(repo: Managed, head: str, path: str, front: dict, track) -> tuple:
    """(commit, time) whence a role's timeout counts: the agent's last retry (a retried agent
    works anew, `policies.retry`), else its first state commit (its birth). The law judges
    a sweep's move by the same (`law.proofs`)."""
    if not retry_count(front):   # (never retried: no git asked)
        return tuple(track.first[:2])
    from gitstate.history.signatures import last_retry
    found = last_retry(repo.git, head, path)
    if found is None or found[1] < track.first[1]:
        return tuple(track.first[:2])
    return (*found, "retried")


def _role_timeout(lc: Lifecycle, agent: str, state, role: str | None, since: tuple,
                  now: float) -> dict | None:
    """A living agent failed for outliving its role's time (from its birth, or its last
    retry), when a failure is one move away."""
    limit = lc.role_timeout(role)
    end = _failure_end(lc, state) if lc.roster_of(state) == "living" else None
    if not (limit and end and now - since[1] >= limit):
        return None
    after = duration(limit, exact=True)
    anew = " from its last retry" if len(since) > 2 else ""
    return _due(agent, state, end, after, since[:2], f"role {role} may live {after}{anew}")


def _due(agent: str, frm: str, to: str, after: str, since: tuple, why: str) -> dict:
    """A timed move that is due `after` the (commit, time) `since`, and why."""
    return {"agent": agent, "from": frm, "to": to, "after": after, "since": iso(since[1]),
            "since_commit": since[0], "why": why}


def _failure_end(lc: Lifecycle, state: str) -> str | None:
    """Where a failed agent goes from `state`, one move away: a terminal state with a
    failure outcome, else a resumable one (not living) with a failure outcome (squad's
    `error`)."""
    failures = [t for t in lc.targets(state) if lc.states[t].outcome == "failure"
                and lc.states[t].roster != "living"]
    return next((t for t in failures if lc.states[t].terminal), failures[0] if failures
                else None)


def committed(agent: str, move: Callable[[], Any]) -> Any:
    """How an operation commits one move: here. `--push` passes `moves.chain.landed`."""
    return move()


def move_record(agent: str, result) -> dict:
    """A move an operation made (`result`, for `agent`), as its `--json` lists it."""
    info = result.plan.info
    return {"agent": info.get("agent", agent), "from": info.get("from"), "to": info.get("to"),
            "commit": result.sha, "subject": result.plan.message.split("\n", 1)[0]}


class NotMade(GitstateError):
    """A move an operation's `commit` did not make (`watch --push`: it no longer lands on the
    hub): said, and the operation goes on with the other agents."""


def sweep(repo: Managed, say: Callable[[str], None], commit=committed,
          due: list[dict] | None = None) -> list:
    """Commit every due timed transition (`due`, as `due_timeouts` found them; else looked
    for now), as the system."""
    results = []
    with as_system(repo) as repo:
        for d in due_timeouts(repo) if due is None else due:
            role_cap = d["why"].startswith("role ")
            sets = _summary_sets(lc_of(repo), d["to"], f"timed out: {d['why']}") \
                if role_cap else {}
            r = _made(commit, say, d, partial(
                transition, repo, d["agent"], d["to"], sets=sets, moved_by="sweep",
                text=f"timeout: {d['from']} -> {d['to']} after {d['after']}"))
            if r is not None:
                say(f"{d['agent']}: {d['from']} -> {d['to']} ({_since_word(d, role_cap)} "
                    f"{d['since_commit'][:10]}, {d['why']})  ({r.sha[:10]})")
                results.append(r)
    return results


def _since_word(d: dict, role_cap: bool) -> str:
    if not role_cap:
        return f"in {d['from']} since"
    return "retried" if d["why"].endswith("retry") else "born"


def _summary_sets(lc: Lifecycle, target: str, summary: str) -> dict[str, str]:
    """`summary` as the summary, and as the final summary where `target` requires one."""
    keys = ("summary", "final_summary") if "final_summary" in lc.states[target].requires \
        else ("summary",)
    return dict.fromkeys(keys, summary)


def _made(commit, say: Callable[[str], None], d: dict, move: Callable[[], Any]) -> Any:
    """The due move `d` committed through `commit`; None (said) when it was not made."""
    try:
        return commit(d["agent"], move)
    except NotMade as exc:
        say(f"{d['agent']}: {d['from']} -> {d['to']} was not made: {exc.message}")
        return None


def lc_of(repo: Managed) -> Lifecycle:
    return repo.lifecycle(repo.head())


def due_reaps(repo: Managed, host: str | None = None, now: float | None = None) -> list[dict]:
    """The living agents `reap` fails now, each with where it goes (`to`: None when no failure
    state is one move away) and why: of this host, those whose recorded process is gone (one
    whose process runs is never failed for its silence); with `policies.heartbeat`, every
    working agent without a recorded process this host can see (none, or one on another host:
    a hub's `watch` still judges the agents of every machine) whose last state commit is older
    than the heartbeat, in a state the heartbeat judges (an idle session waits
    by design, and its timeout ends the wait: `sweep`) and of a role it does not exempt
    (squad's core sessions idle by design)."""
    head = repo.head()
    if head is None:
        return []
    lc = repo.lifecycle(head)
    import socket  # (a move that records no process imports none of it)
    host = host or socket.gethostname()
    now = time.time() if now is None else now
    watched = lc.policies.heartbeat is not None
    index = Index(repo.git, lc, repo.cache_dir)
    fronts = index.fronts(head)
    tracks = index.tracks(head) if watched else {}
    index.save()
    found = (_reaped(lc, agent, front or {}, host, tracks.get(agent), now)
             for agent, (_path, front, _p) in sorted(fronts.items()))
    return [d for d in found if d]


def _reaped(lc: Lifecycle, agent: str, front: dict, host: str, track,
            now: float) -> dict | None:
    """The agent as `due_reaps` lists it, when it is living and gone or silent."""
    state = front.get("state")
    if not isinstance(state, str) or lc.roster_of(state) != "living":
        return None
    found = _gone(front, host) if _of_host(front, host) \
        else _silent(lc, front, state, track, now)
    if not found:
        return None
    why, summary, since = found
    return {"agent": agent, "from": state, "to": _failure_end(lc, state),
            "why": why, "summary": summary, "since_commit": since}


def _of_host(front: dict, host: str) -> bool:
    """Whether the agent has a recorded process on `host`."""
    pid = front.get("pid")
    return isinstance(pid, int) and not isinstance(pid, bool) \
        and statefile.as_text(front.get("host")) == host


def _gone(front: dict, host: str) -> tuple[str, str, None] | None:
    """(why, summary, None) when the agent's process on this host is gone; None while it
    runs: however silent, it is not failed."""
    pid = front["pid"]
    if alive(pid, front.get(STARTED)):
        return None
    return (f"process {pid} on {host} is gone", f"process {pid} on {host} died without a word",
            None)


def _silent(lc: Lifecycle, front: dict, state: str, track,
            now: float) -> tuple[str, str, str] | None:
    """(why, summary, the last commit) when the agent was silent past its heartbeat."""
    beat = lc.heartbeat_for(statefile.as_text(front.get("role")), state)
    if not beat or track is None or now - track.last[1] < beat:
        return None
    why = f"no heartbeat for {duration(int(now - track.last[1]))} " \
          f"(heartbeat {duration(beat, exact=True)})"
    return why, f"silent since {track.last[0][:10]}: {why}", track.last[0]


def reap(repo: Managed, say: Callable[[str], None], host: str | None = None,
         now: float | None = None, commit=committed, due: list[dict] | None = None) -> list:
    """Fail every agent `due_reaps` finds (`due`, as it found them; else looked for now), as
    the system."""
    due = due_reaps(repo, host, now) if due is None else due
    if not due:
        return []
    lc = lc_of(repo)
    results = []
    with as_system(repo) as repo:
        for d in due:
            agent, state, target, why = d["agent"], d["from"], d["to"], d["why"]
            if target is None:
                say(f"{agent}: {why}, but from {state} no failure state is one move away; "
                    "left as it is")
                continue
            r = _made(commit, say, d, partial(
                transition, repo, agent, target, text=f"reaped: {why}", moved_by="reap",
                sets=_summary_sets(lc, target, d["summary"])))
            if r is not None:
                say(f"{agent}: {state} -> {target} ({why})  ({r.sha[:10]})")
                results.append(r)
    return results


def _path_to_rest(lc: Lifecycle, start: str, *, interrupted: bool = False) -> list[str] | None:
    """The fewest moves to a frozen or terminal state; among equally near ones a frozen state
    (resumable) first, then a successful ending — or, for work `interrupted` before it was
    done, an ending that reads as a failure (the first the lifecycle declares)."""
    found, back = nearest_rests(lc, start)
    if not found:
        return None
    order = list(lc.states)
    best = min(found, key=lambda s: (lc.states[s].roster != "frozen",
                                     (lc.states[s].outcome == "success") == interrupted,
                                     order.index(s)))
    return way_to(back, start, best)


def shutdown(repo: Managed, say: Callable[[str], None], approved_by: str | None = None,
             commit=committed, grace: float = 10.0) -> int:
    """Move every living agent to a frozen or terminal state: children before parents. An
    agent whose process (`pid`) runs on this host is stopped first (SIGTERM, `grace`
    seconds, SIGKILL), and how it ended is recorded (`stopped:`)."""
    head = repo.head()
    if head is None:
        return 0
    lc = repo.lifecycle(head)
    index = Index(repo.git, lc, repo.cache_dir)
    fronts = {a: f or {} for a, (_p, f, _e) in index.fronts(head).items()}
    order = _living_children_first(lc, fronts)
    import socket
    host = socket.gethostname()
    with as_system(repo) as repo:
        return sum(not _put_to_rest(repo, lc, agent, fronts[agent], approved_by, commit,
                                    partial(stop_process, fronts[agent], host, grace, say,
                                            agent), say)
                   for agent in order)


def _living_children_first(lc: Lifecycle, fronts: dict[str, dict]) -> list[str]:
    """The living agents, the deepest first (children before parents), then by id."""
    living = [a for a, f in fronts.items() if lc.roster_of(f.get("state", "")) == "living"]
    return sorted(living, key=lambda a: (-(fronts[a].get("depth") or 0), a))


def _put_to_rest(repo: Managed, lc: Lifecycle, agent: str, front: dict,
                 approved_by: str | None, commit, stop: Callable[[], Any],
                 say: Callable[[str], None]) -> bool:
    """One agent moved to rest by `shutdown`, its process stopped first (`stop`); False
    (said) when no way there can be taken."""
    state = front["state"]
    path = _path_to_rest(lc, state, interrupted=True)
    why_not = _no_way(lc, state, path, approved_by)
    if why_not:
        say(f"{agent}: {why_not}")
        return False
    assert path is not None
    stopped = stop()
    for step in path:
        last = {"stopped": stopped} if stopped and step == path[-1] else {}
        commit(agent, _shutdown_step(repo, lc, agent, state, step, last, approved_by))
        state = step
    say(f"{agent}: {front['state']} -> {state}")
    return True


def _no_way(lc: Lifecycle, state: str, path: list[str] | None,
            approved_by: str | None) -> str | None:
    """Why `shutdown` cannot take the way `path` from `state` to rest (None: it can)."""
    if path is None:
        return f"no frozen or terminal state can be reached from {state}"
    if any(lc.needs_approval(a, b) for a, b in zip([state] + path, path)) and not approved_by:
        return f"the way from {state} needs a human's approval (--approved-by)"
    return None


def _shutdown_step(repo: Managed, lc: Lifecycle, agent: str, state: str, step: str,
                   last: dict, approved_by: str | None) -> Callable[[], Any]:
    """The move `shutdown` makes from `state` to `step` (a freeze where the state asks for
    one), with `last` set on the last one."""
    spec = lc.states[step]
    if spec.roster == "frozen" and "freeze_state" in spec.requires:
        return partial(freeze, repo, agent, text="shutdown", situation="stopped by shutdown",
                       moved_by="shutdown", sets=last or None,
                       unwritten="Stopped by `gitstate shutdown` before this was written.")
    sets = _shutdown_sets(spec, last)
    gate = approved_by if lc.needs_approval(state, step) else None
    return partial(transition, repo, agent, step, text="shutdown", sets=sets,
                   approved_by=gate, moved_by="shutdown")


def _shutdown_sets(spec, last: dict) -> dict:
    """What a move to rest by `shutdown` sets besides `last`: a final summary where the state
    requires one, a summary saying an ending that reads as a failure was an interruption."""
    sets = {"final_summary": "stopped by `gitstate shutdown`"} \
        if "final_summary" in spec.requires else {}
    sets.update(last)
    if spec.terminal and spec.outcome == "failure":
        sets["summary"] = "interrupted by `gitstate shutdown` before it finished"
    return sets
