"""Lifecycles drawn for people: a Mermaid state diagram, and a plain-text summary."""

from __future__ import annotations

import re

from gitstate.law.lifecycle import DEFAULT_STATE_FILE, ROSTERS, Lifecycle
from gitstate.law.times import duration


def _mermaid_id(state: str) -> str:
    return "s_" + re.sub(r"[^A-Za-z0-9_]", "_", state)


def to_mermaid(lc: Lifecycle) -> str:
    """A Mermaid stateDiagram of the lifecycle: rosters as classes, gated moves labelled."""
    assert lc.initial is not None   # a loaded lifecycle has one (law/checks.py)
    out = ["stateDiagram-v2"]
    out += [f'    state "{name}" as {_mermaid_id(name)}' for name in lc.states]
    out.append(f"    [*] --> {_mermaid_id(lc.initial)}")
    out += [f"    {_mermaid_id(src)} --> {_mermaid_id(dst)}{_edge_label(lc, src, dst)}"
            for src, targets in lc.transitions.items() for dst in targets]
    out += [f"    {_mermaid_id(name)} --> [*]" for name, state in lc.states.items()
            if state.terminal]
    out.append("    classDef living fill:#e6f4ea,stroke:#2e7d32")
    out.append("    classDef frozen fill:#e3f2fd,stroke:#1565c0")
    out.append("    classDef dead fill:#eeeeee,stroke:#616161")
    return "\n".join(out + _class_lines(lc)) + "\n"


def _class_lines(lc: Lifecycle) -> list[str]:
    """Each roster's states as a Mermaid class."""
    out = []
    for roster in ROSTERS:
        members = [_mermaid_id(n) for n, s in lc.states.items() if s.roster == roster]
        if members:
            out.append(f"    class {','.join(members)} {roster}")
    return out


def gates(lc: Lifecycle, src: str, dst: str) -> list[str]:
    """What the move `src -> dst` waits for, in words: `approval`, `after 10m`, or both."""
    timed = lc.policies.timeout(src, dst)
    return (["approval"] if lc.needs_approval(src, dst) else []) \
        + ([f"after {duration(timed.after, exact=True)}"] if timed is not None else [])


def _edge_label(lc: Lifecycle, src: str, dst: str) -> str:
    """` : approval, after 1h` for a gated or timed move, else nothing."""
    said = gates(lc, src, dst)
    return f" : {', '.join(said)}" if said else ""


def describe(lc: Lifecycle) -> str:
    """The lifecycle as a person reads it."""
    out = [f"lifecycle: {lc.name}" + (f" — {lc.description}" if lc.description else ""),
           f"initial:   {lc.initial}", "", "states:"] + _state_lines(lc)
    if lc.roles:
        out += ["", "roles:"] + _role_lines(lc)
    out += ["", "policies:"] + _policy_lines(lc.policies)
    from gitstate.law.movers import describe_movers
    out += ["", "who may move whom:"] + describe_movers(lc)
    if lc.runtime:
        from gitstate.law.runtime_table import describe
        out += ["", "what the runtime's events do (`runtime:`):"] + describe(lc.runtime)
    if lc.state_file != DEFAULT_STATE_FILE:
        out += ["", f"state files: {lc.state_file}"]
    return "\n".join(out) + "\n"


def _state_lines(lc: Lifecycle) -> list[str]:
    """One line per state: its flags and where it may go."""
    width = max((len(n) for n in lc.states), default=0)
    out = []
    for name, s in lc.states.items():
        nxt = lc.targets(name)
        arrow = f" -> {', '.join(nxt)}" if nxt else ""
        out.append(f"  {name:<{width}}  [{'; '.join(_state_flags(s))}]{arrow}")
    return out


def _state_flags(s) -> list[str]:
    """What a state is, besides its name: its roster, whether it ends, what it asks."""
    return [s.roster] + [text for on, text in (
        (s.terminal, "terminal"), (s.outcome == "failure", "failure"),
        (s.requires, "requires " + ", ".join(s.requires)), (s.log, f"appends to {s.log}"),
        (s.token_limit, f"to {s.token_limit} at max_tokens"), (s.stamp, f"stamps {s.stamp}"),
    ) if on]


def _role_lines(lc: Lifecycle) -> list[str]:
    """One line per role: how many may hold it, what it never enters, what it is given."""
    out = []
    for name, role in lc.roles.items():
        most = lc.max_of(name)
        bits = [f"max {most}" if most else "any number"] + [text for on, text in (
            (role.forbids, f"never {', '.join(role.forbids)}"),
            (role.never_spawns, f"never spawns {', '.join(role.never_spawns)}"),
            (role.load, f"`team load` makes it {role.load}"),
            (role.mandate, f"mandate {role.mandate}")) if on]
        out.append(f"  {name}: {'; '.join(bits)}")
    return out


def _policy_lines(pol) -> list[str]:
    """The policies that are set, one line each (and always which roles may be held)."""
    lines = _who_and_how_many(pol) + _timed_lines(pol)
    lines.append(_custom_roles_line(pol))
    if pol.agents_from:
        lines.append(f"  agent files: {pol.agents_from}/*.md (their forbiddenAgents are law)")
    if pol.atomic_commits:
        lines.append("  atomic commits: an agent's every commit carries its state file")
    return lines


def _who_and_how_many(pol) -> list[str]:
    """Who approves what, the mortality clock, how many may live and how deep."""
    lines = []
    if pol.humans:
        lines.append(f"  humans: {', '.join(pol.humans)}")
    if pol.approval_pairs:
        lines.append("  approval needed: " + ", ".join(f"{a} -> {b}"
                                                       for a, b in pol.approval_pairs))
    if pol.mortality:
        lines.append(_mortality_line(pol.mortality))
    if pol.max_living:
        lines.append(f"  max living agents: {pol.max_living}")
    if pol.max_depth is not None:
        lines.append(f"  max spawn depth: {pol.max_depth}")
    return lines


def _timed_lines(pol) -> list[str]:
    """Timed moves, the heartbeat, retries."""
    lines = [f"  timeout: {a} -> {b} after {duration(spec.after, exact=True)}"
             for a, b, spec in pol.timed_moves()]
    if pol.heartbeat is not None:
        lines.append(_heartbeat_line(pol.heartbeat))
    if pol.retry is not None:
        lines.append(_retry_line(pol.retry))
    return lines


def _retry_line(r) -> str:
    return (f"  retry: a failed agent up to {r.max} times, backoff "
            f"{duration(r.backoff, exact=True)} doubled each time"
            + (f" (from {', '.join(r.states)})" if r.states else "")
            + (f" (not {', '.join(r.except_roles)})" if r.except_roles else ""))


def _mortality_line(m) -> str:
    forbids = f" (urgent forbids {', '.join(m.urgent_forbids)})" if m.urgent_forbids else ""
    return f"  mortality: midlife {m.midlife}%, legacy {m.legacy}%, urgent {m.urgent}%" + forbids


def _heartbeat_line(beat) -> str:
    exempt = f" (not {', '.join(beat.except_roles)})" if beat.except_roles else ""
    where = f" in {', '.join(beat.states)}" if beat.states else ""
    return f"  heartbeat: silent {duration(beat.after, exact=True)}{where} is a crash{exempt}"


def _custom_roles_line(pol) -> str:
    if not pol.custom_roles:
        return "  only the roles above may be held"
    limit = f", at most {pol.role_max} living each" if pol.role_max else ""
    return f"  other roles: said new at spawn (`--new-role`){limit}"
