"""`gitstate await`: the awaited agents' states watched on the line until every one has
ended (or the time is up), each of their moves said as it lands.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed
from gitstate.history.fold import tag_events
from gitstate.law import statefile
from gitstate.law.grammar import canonical_id
from gitstate.law.lifecycle import Lifecycle
from gitstate.moves.workfile import at_commit


def _states(repo: Managed, lc: Lifecycle, head: str | None,
            agents: list[str]) -> dict[str, str | None]:
    paths = [lc.state_path(a) for a in agents]
    out = {}
    for agent, path, data in zip(agents, paths, at_commit(repo, head, paths)):
        try:
            out[agent] = statefile.parse_bytes(data, path).state if data else None
        except GitstateError:
            out[agent] = None
    return out


def await_agents(repo: Managed, agents: list[str], timeout: float | None,
                 say: Callable[[str], None], poll: float = 0.5,
                 report: dict | None = None) -> int:
    """Block until every agent is in a terminal state: 0 all succeeded, 1 any failed,
    124 on timeout. Each state commit of theirs is reported as it lands, progress updates
    (a commit that stays in its state) included. `report`, if given, gets the end as the
    model `AwaitResult` says it (gitstate.schema)."""
    agents = [canonical_id(a) for a in agents]
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: dict[str, str | None] = {}
    last_head: str | None = None
    while True:
        head = repo.head()
        if head != last_head or not seen:
            lc = repo.lifecycle(head)
            seen, last_head = _look(repo, lc, head, agents, seen, last_head, say), head
            code = _all_ended(lc, seen, len(agents), say)
            if code is not None:
                return _awaited(report, code, head, seen, lc)
        if _past(deadline):
            return _timed_out(report, last_head, seen, lc, say)
        time.sleep(poll)


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _timed_out(report: dict | None, head: str | None, seen: dict[str, str | None],
               lc: Lifecycle, say: Callable[[str], None]) -> int:
    waiting = [a for a, s in seen.items() if not _ended(lc, s)]
    say(f"timed out waiting for {', '.join(waiting)}")
    return _awaited(report, 124, head, seen, lc)


def _ended(lc: Lifecycle, state: str | None) -> bool:
    return bool(state in lc.states and lc.states[state].terminal)


def _look(repo: Managed, lc: Lifecycle, head: str | None, agents: list[str],
          seen: dict[str, str | None], last_head: str | None,
          say: Callable[[str], None]) -> dict[str, str | None]:
    """The agents' states at `head`, each said the first time, then each move of theirs
    since `last_head` as it lands."""
    now = _states(repo, lc, head, agents)
    if not seen:
        _first_look(now, say)
    elif head is not None:
        _say_progress(tag_events(repo.git, lc, [f"{last_head}..{head}"]
                                 if last_head else [head]), seen, set(agents), say)
    return now


def _first_look(now: dict[str, str | None], say: Callable[[str], None]) -> None:
    """Each agent's state said; refused when one is unknown."""
    unknown = [a for a, s in now.items() if s is None]
    if unknown:
        raise GitstateError(f"unknown agent{'s' if len(unknown) > 1 else ''}: "
                            f"{', '.join(unknown)}")
    for agent, state in now.items():
        say(f"{agent}: {state}")


def _all_ended(lc: Lifecycle, states: dict[str, str | None], count: int,
               say: Callable[[str], None]) -> int | None:
    """0 when all `count` agents ended and none failed, 1 when one failed (said), None
    while one has not ended."""
    ended = {a: str(s) for a, s in states.items() if _ended(lc, s)}
    if len(ended) != count:
        return None
    return _failed(lc, ended, say)


def _failed(lc: Lifecycle, ended: dict[str, str], say: Callable[[str], None]) -> int:
    """1 when an ended agent failed (said), else 0."""
    failed = [a for a, s in ended.items() if lc.states[s].outcome == "failure"]
    if failed:
        say(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


def _awaited(report: dict | None, code: int, head: str | None, states: dict,
             lc: Lifecycle) -> int:
    """`code`, the end written into `report` (if given) as `AwaitResult` says it."""
    if report is not None:
        report.update(commit=head, outcome={0: "succeeded", 1: "failed"}.get(
            code, "timed-out"), agents=[
            {"agent": a, "state": s, "ended": _ended(lc, s),
             "outcome": lc.states[s].outcome if _ended(lc, s) else None}
            for a, s in states.items()])
    return code


def _say_progress(events, seen: dict, agents: set, say: Callable[[str], None]) -> None:
    """One line per state commit of the awaited agents: moves and progress updates."""
    last = dict(seen)
    for sha, _when, _author, agent, state, text in events:
        if agent not in agents:
            continue
        before = last.get(agent)
        move = f"{before} -> {state}" if before != state else f"[{state}]"
        say(f"{agent}: {move}  {text}  ({sha[:10]})")
        last[agent] = state
