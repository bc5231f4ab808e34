"""Operations over many agents: await their ends, sweep due timeouts, reap dead processes,
and shut everyone down in order. Every change is an ordinary state commit, judged by the
same rules as any other; the system's own commits are authored as `gitstate`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections import deque
from typing import Any, Callable

from gitstate.law import statefile
from gitstate.errors import GitstateError
from gitstate.law.grammar import canonical_id
from gitstate.history.index import Index
from gitstate.law.lifecycle import Lifecycle, fmt_duration
from gitstate.moves.agent import freeze, transition
from gitstate.git.repo import Managed

SYSTEM = ("gitstate", "gitstate@localhost")


@contextlib.contextmanager
def as_system():
    """Commits made inside are authored and committed by the system, not a person."""
    keys = [f"GIT_{r}_{f}" for r in ("AUTHOR", "COMMITTER") for f in ("NAME", "EMAIL")]
    saved = {k: os.environ.get(k) for k in keys}
    for r in ("AUTHOR", "COMMITTER"):
        os.environ[f"GIT_{r}_NAME"], os.environ[f"GIT_{r}_EMAIL"] = SYSTEM
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _states(repo: Managed, lc: Lifecycle, head: str | None,
            agents: list[str]) -> dict[str, str | None]:
    paths = [lc.state_path(a) for a in agents]
    datas = repo.git.cat_files(f"{head}:{p}" for p in paths) if head else [None] * len(agents)
    out = {}
    for agent, path, data in zip(agents, paths, datas):
        try:
            out[agent] = statefile.parse_bytes(data, path).state if data else None
        except GitstateError:
            out[agent] = None
    return out


def await_agents(repo: Managed, agents: list[str], timeout: float | None,
                 say: Callable[[str], None], poll: float = 0.5) -> int:
    """Block until every agent is in a terminal state: 0 all succeeded, 1 any failed,
    124 on timeout. Each change is reported as it lands."""
    agents = [canonical_id(a) for a in agents]
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: dict[str, str | None] = {}
    last_head = object()
    while True:
        head = repo.git.head()
        if head != last_head:
            last_head = head
            lc = repo.lifecycle(head)
            now = _states(repo, lc, head, agents)
            unknown = [a for a, s in now.items() if s is None]
            if unknown and not seen:
                raise GitstateError(f"unknown agent{'s' if len(unknown) > 1 else ''}: "
                                    f"{', '.join(unknown)}")
            for agent, state in now.items():
                if seen.get(agent) != state:
                    before = seen.get(agent)
                    say(f"{agent}: {before} -> {state}" if before else f"{agent}: {state}")
            seen = now
            ended = {a: s for a, s in now.items() if s in lc.states and lc.states[s].terminal}
            if len(ended) == len(agents):
                failed = [a for a, s in ended.items() if lc.states[s].outcome == "failure"]
                if failed:
                    say(f"failed: {', '.join(failed)}")
                return 1 if failed else 0
        if deadline is not None and time.monotonic() >= deadline:
            waiting = [a for a, s in seen.items()
                       if not (s in lc.states and lc.states[s].terminal)]
            say(f"timed out waiting for {', '.join(waiting)}")
            return 124
        time.sleep(poll)


def due_timeouts(repo: Managed, now: float | None = None) -> list[dict]:
    """Agents whose timed transition is due: each with since when and where it goes."""
    head = repo.git.head()
    if head is None:
        return []
    lc = repo.lifecycle(head)
    if not lc.policies.timeouts:
        return []
    now = time.time() if now is None else now
    index = Index(repo.git, lc, repo.cache_dir)
    tracks = index.tracks(head)
    fronts = index.fronts(head)
    index.save()
    due = []
    for agent, (_path, front, _problem) in sorted(fronts.items()):
        state = (front or {}).get("state")
        track = tracks.get(agent)
        if track is None or track.tag != state:
            continue
        for (a, b), seconds in lc.policies.timeouts.items():
            if a == state and now - track.entered[1] >= seconds:
                due.append({"agent": agent, "from": a, "to": b, "after": fmt_duration(seconds),
                            "since": track.entered[0]})
                break
    return due


def committed(agent: str, move: Callable[[], Any]) -> Any:
    """How an operation commits one move: here. `--push` passes `moves.landing.landed`."""
    return move()


def sweep(repo: Managed, say: Callable[[str], None], commit=committed) -> list:
    """Commit every due timed transition, as the system."""
    results = []
    with as_system():
        for d in due_timeouts(repo):
            r = commit(d["agent"], lambda: transition(
                repo, d["agent"], d["to"],
                text=f"timeout: {d['from']} -> {d['to']} after {d['after']}"))
            say(f"{d['agent']}: {d['from']} -> {d['to']} (in {d['from']} since "
                f"{d['since'][:10]}, timeout {d['after']})  ({r.sha[:10]})")
            results.append(r)
    return results


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap(repo: Managed, say: Callable[[str], None], host: str | None = None,
         commit=committed) -> list:
    """Mark every living agent of this host whose recorded process is gone as failed."""
    head = repo.git.head()
    if head is None:
        return []
    lc = repo.lifecycle(head)
    host = host or socket.gethostname()
    index = Index(repo.git, lc, repo.cache_dir)
    fronts = index.fronts(head)
    results = []
    with as_system():
        for agent, (_path, front, _p) in sorted(fronts.items()):
            front = front or {}
            state, pid = front.get("state"), front.get("pid")
            if lc.roster_of(state) != "living" or statefile.as_text(front.get("host")) != host \
                    or not isinstance(pid, int) or isinstance(pid, bool) or _alive(pid):
                continue
            target = next((t for t in lc.targets(state) if lc.states[t].terminal
                           and lc.states[t].outcome == "failure"), None)
            if target is None:
                say(f"{agent}: process {pid} is gone, but from {state} no failure state is "
                    "one move away; left as it is")
                continue
            r = commit(agent, lambda: transition(
                repo, agent, target, text=f"reaped: process {pid} on {host} is gone",
                sets={"summary": f"process {pid} on {host} died without a word"}))
            say(f"{agent}: {state} -> {target} (process {pid} is gone)  ({r.sha[:10]})")
            results.append(r)
    return results


def _path_to_rest(lc: Lifecycle, start: str) -> list[str] | None:
    """The fewest moves to a frozen or terminal state; among equally near ones a frozen state
    (resumable) first, then a successful ending."""
    todo, back, depth = deque([start]), {start: None}, {start: 0}
    found = []
    while todo:
        s = todo.popleft()
        if found and depth[s] > depth[found[0]]:
            break
        spec = lc.states[s]
        if s != start and (spec.roster == "frozen" or spec.terminal):
            found.append(s)
            continue
        for t in lc.targets(s):
            if t not in back and (s, t) not in lc.policies.timeouts:  # timed moves are sweep's
                back[t], depth[t] = s, depth[s] + 1
                todo.append(t)
    if not found:
        return None
    best = min(found, key=lambda s: (lc.states[s].roster != "frozen",
                                     lc.states[s].outcome != "success"))
    path = [best]
    while back[path[-1]] != start:
        path.append(back[path[-1]])
    return path[::-1]


def shutdown(repo: Managed, say: Callable[[str], None], approved_by: str | None = None,
             commit=committed) -> int:
    """Move every living agent to a frozen or terminal state: children before parents."""
    head = repo.git.head()
    if head is None:
        return 0
    lc = repo.lifecycle(head)
    index = Index(repo.git, lc, repo.cache_dir)
    fronts = {a: f or {} for a, (_p, f, _e) in index.fronts(head).items()}
    living = [a for a, f in fronts.items() if lc.roster_of(f.get("state")) == "living"]
    order = sorted(living, key=lambda a: (-(fronts[a].get("depth") or 0), a))
    skipped = 0
    with as_system():
        for agent in order:
            state = fronts[agent]["state"]
            path = _path_to_rest(lc, state)
            if path is None:
                say(f"{agent}: no frozen or terminal state can be reached from {state}")
                skipped += 1
                continue
            if any(lc.needs_approval(a, b) for a, b in zip([state] + path, path)) \
                    and not approved_by:
                say(f"{agent}: the way from {state} needs a human's approval (--approved-by)")
                skipped += 1
                continue
            for step in path:
                spec = lc.states[step]
                if spec.roster == "frozen" and "freeze_state" in spec.requires:
                    commit(agent, lambda: freeze(repo, agent, text="shutdown",
                                                 situation="stopped by shutdown"))
                else:
                    sets = {"final_summary": "stopped by `gitstate shutdown`"} \
                        if "final_summary" in spec.requires else {}
                    gate = approved_by if lc.needs_approval(state, step) else None
                    commit(agent, lambda: transition(repo, agent, step, text="shutdown",
                                                     sets=sets, approved_by=gate))
                state = step
            say(f"{agent}: -> {state}")
    return skipped
