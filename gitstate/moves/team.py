"""`gitstate team load`: the team's persistent sessions created at once (squad's core agents,
idle from the start)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed
from gitstate.law.grammar import canonical_id
from gitstate.law.lifecycle import Lifecycle
from gitstate.moves.agent import spawn, transition
from gitstate.moves.awaiting import _states
from gitstate.moves.operations import committed
from gitstate.moves.ways import way


def team_load(repo: Managed, agents: list[str], say: Callable[[str], None],
              role: str | None = None, commit=committed) -> int:
    """Create the team's persistent sessions at once (squad's team load): each agent absent
    is spawned with `role` and brought to the state the role is loaded into (`roles.R.load`,
    squad: core sessions idle). An agent that exists is left as it is, and said. The number
    of agents that could not be loaded."""
    head = repo.head()
    lc = repo.lifecycle(head)
    role = _loaded_role(lc, role)
    steps = _load_way(lc, role)
    ids = [canonical_id(a) for a in agents]
    states = _states(repo, lc, head, ids)
    failed = 0
    for agent in ids:
        state = states.get(agent)
        if state is not None:
            failed += not _there_already(lc, agent, state, say)
            continue
        r = commit(agent, partial(spawn, repo, agent, role=role, text=f"team load: {role}"))
        for step in steps[1:]:
            r = commit(agent, partial(transition, repo, agent, step, text="team load"))
        say(f"{agent}: {' -> '.join(steps)} ({role})  ({r.sha[:10]})")
    return failed


def _load_way(lc: Lifecycle, role: str) -> list[str]:
    """The states from the initial one to the one `role` is loaded into; refused when a
    timed move is the only way."""
    target, initial = lc.roles[role].load, lc.initial
    assert initial is not None and target is not None
    path = way(lc, initial, target)
    if path is None:
        raise GitstateError(f"'{target}' cannot be reached from '{initial}' without a timed move")
    return [initial, *path]


def _loaded_role(lc: Lifecycle, role: str | None) -> str:
    """The role `team load` loads: `role`, else the one role with a `load:` state."""
    loaded = [name for name, spec in lc.roles.items() if spec.load]
    which = (f"roles with a `load:` state: {', '.join(loaded)}" if loaded
             else f"no role of lifecycle '{lc.name}' says `load:`")
    if role is None:
        role = _the_one(loaded, which)
    spec = lc.roles.get(role)
    if spec is None or not spec.load:
        raise GitstateError(f"role '{role}' is not loaded by `team load`: " + which,
                            hint="spawn it with `gitstate spawn ID --role ROLE`")
    return role


def _the_one(loaded: list[str], which: str) -> str:
    if len(loaded) != 1:
        raise GitstateError("say which role to load (--role): " + which)
    return loaded[0]


def _there_already(lc: Lifecycle, agent: str, state: str, say: Callable[[str], None]) -> bool:
    """An agent that exists is left as it is, and said: True when it is living."""
    roster = lc.roster_of(state)
    if roster == "living":
        say(f"{agent}: already {state}")
        return True
    say(f"{agent}: {state} ({roster}); not loaded again" + (
        ": a dead id is never reused, load another id" if roster == "dead"
        else f": resume it with `gitstate transition {agent} STATE`"))
    return False
