"""The fewest moves between an agent's states by moves that are not timed (those are sweep's):
`team load`'s way to the state a role is loaded into, `shutdown`'s to the nearest rest."""

from __future__ import annotations

from collections import deque

from gitstate.law.lifecycle import Lifecycle
from gitstate.law.movers import at_rest


def way(lc: Lifecycle, start: str, goal: str) -> list[str] | None:
    """The fewest moves from `start` to `goal`, none of them timed (those are sweep's)."""
    if start == goal:
        return []
    todo, back = deque([start]), {start: start}
    while todo:
        s = todo.popleft()
        for t in untimed_next(lc, s, back):
            back[t] = s
            if t == goal:
                return way_to(back, start, t)
            todo.append(t)
    return None


def way_to(back: dict[str, str], start: str, end: str) -> list[str]:
    """The states from `start` (not included) to `end`, by `back` (each state's previous)."""
    path = [end]
    while back[path[-1]] != start:
        path.append(back[path[-1]])
    return path[::-1]


def nearest_rests(lc: Lifecycle, start: str) -> tuple[list[str], dict[str, str]]:
    """(the states at rest nearest to `start`, the state each state was first reached from),
    by moves that are not timed (those are sweep's) and not through a crash state."""
    todo, depth = deque([start]), {start: 0}
    back = {start: start}   # the state each was first reached from
    found: list[str] = []
    while todo:
        s = todo.popleft()
        if found and depth[s] > depth[found[0]]:
            break
        if s != start and _crash(lc, s):
            continue     # a crash state (squad's error) is no place to rest, nor a way there
        if s != start and at_rest(lc, s):
            found.append(s)
            continue
        for t in untimed_next(lc, s, back):
            back[t], depth[t] = s, depth[s] + 1
            todo.append(t)
    return found, back


def _crash(lc: Lifecycle, s: str) -> bool:
    spec = lc.states[s]
    return spec.roster == "frozen" and not spec.terminal and spec.outcome == "failure"


def untimed_next(lc: Lifecycle, s: str, back: dict[str, str]) -> list[str]:
    """The states one untimed move (timed ones are sweep's) from `s`, not reached yet."""
    return list(dict.fromkeys(t for t in lc.targets(s)
                              if t not in back and lc.policies.timeout(s, t) is None))
