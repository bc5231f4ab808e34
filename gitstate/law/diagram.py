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
    for name in lc.states:
        out.append(f'    state "{name}" as {_mermaid_id(name)}')
    out.append(f"    [*] --> {_mermaid_id(lc.initial)}")
    for src, targets in lc.transitions.items():
        for dst in targets:
            labels = []
            if lc.needs_approval(src, dst):
                labels.append("approval")
            if (timed := lc.policies.timeout(src, dst)) is not None:
                labels.append(f"after {duration(timed.after, exact=True)}")
            label = f" : {', '.join(labels)}" if labels else ""
            out.append(f"    {_mermaid_id(src)} --> {_mermaid_id(dst)}{label}")
    for name, state in lc.states.items():
        if state.terminal:
            out.append(f"    {_mermaid_id(name)} --> [*]")
    out.append("    classDef living fill:#e6f4ea,stroke:#2e7d32")
    out.append("    classDef frozen fill:#e3f2fd,stroke:#1565c0")
    out.append("    classDef dead fill:#eeeeee,stroke:#616161")
    for roster in ROSTERS:
        members = [_mermaid_id(n) for n, s in lc.states.items() if s.roster == roster]
        if members:
            out.append(f"    class {','.join(members)} {roster}")
    return "\n".join(out) + "\n"


def describe(lc: Lifecycle) -> str:
    """The lifecycle as a person reads it."""
    out = [f"lifecycle: {lc.name}" + (f" — {lc.description}" if lc.description else ""),
           f"initial:   {lc.initial}", "", "states:"]
    width = max(len(n) for n in lc.states) if lc.states else 0
    for name, s in lc.states.items():
        flags = [s.roster] + (["terminal"] if s.terminal else []) + (
            ["failure"] if s.outcome == "failure" else [])
        if s.requires:
            flags.append("requires " + ", ".join(s.requires))
        if s.log:
            flags.append(f"appends to {s.log}")
        if s.token_limit:
            flags.append(f"to {s.token_limit} at max_tokens")
        if s.stamp:
            flags.append(f"stamps {s.stamp}")
        nxt = lc.targets(name)
        arrow = f" -> {', '.join(nxt)}" if nxt else ""
        out.append(f"  {name:<{width}}  [{'; '.join(flags)}]{arrow}")
    if lc.roles:
        out += ["", "roles:"]
        for name, role in lc.roles.items():
            most = lc.max_of(name)
            bits = [f"max {most}" if most else "any number"]
            if role.forbids:
                bits.append(f"never {', '.join(role.forbids)}")
            if role.load:
                bits.append(f"`team load` makes it {role.load}")
            if role.mandate:
                bits.append(f"mandate {role.mandate}")
            out.append(f"  {name}: {'; '.join(bits)}")
    pol = lc.policies
    lines = []
    if pol.humans:
        lines.append(f"  humans: {', '.join(pol.humans)}")
    if pol.approval_pairs:
        lines.append("  approval needed: " + ", ".join(f"{a} -> {b}"
                                                       for a, b in pol.approval_pairs))
    if pol.mortality:
        m = pol.mortality
        forbids = f" (urgent forbids {', '.join(m.urgent_forbids)})" if m.urgent_forbids else ""
        lines.append(f"  mortality: midlife {m.midlife}%, legacy {m.legacy}%, urgent {m.urgent}%"
                     + forbids)
    if pol.max_living:
        lines.append(f"  max living agents: {pol.max_living}")
    if pol.max_depth is not None:
        lines.append(f"  max spawn depth: {pol.max_depth}")
    for a, b, spec in pol.timed_moves():
        lines.append(f"  timeout: {a} -> {b} after {duration(spec.after, exact=True)}")
    if pol.heartbeat is not None:
        exempt = f" (not {', '.join(pol.heartbeat.except_roles)})" \
            if pol.heartbeat.except_roles else ""
        where = f" in {', '.join(pol.heartbeat.states)}" if pol.heartbeat.states else ""
        lines.append(f"  heartbeat: silent {duration(pol.heartbeat.after, exact=True)}{where} "
                     f"is a crash{exempt}")
    if not pol.custom_roles:
        lines.append("  only the roles above may be held")
    else:
        limit = f", at most {pol.role_max} living each" if pol.role_max else ""
        lines.append(f"  other roles: said new at spawn (`--new-role`){limit}")
    if pol.atomic_commits:
        lines.append("  atomic commits: an agent's every commit carries its state file")
    if lines:
        out += ["", "policies:"] + lines
    from gitstate.law.movers import describe_movers
    out += ["", "who may move whom:"] + describe_movers(lc)
    if lc.runtime:
        from gitstate.law.events import describe
        out += ["", "what the runtime's events do (`runtime:`):"] + describe(lc.runtime)
    if lc.state_file != DEFAULT_STATE_FILE:
        out += ["", f"state files: {lc.state_file}"]
    return "\n".join(out) + "\n"


