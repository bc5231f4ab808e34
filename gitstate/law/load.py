"""Loading a lifecycle: read `protocols/lifecycle.yaml` into the model and check it.

A lifecycle is checked the way a state-machine library checks a machine when it is defined:
one `_check_*` function per rule, each naming the offending states and the line they are on.
All problems are reported together, not just the first.
"""

from __future__ import annotations

import re
TYPE_CHECKING = False  # importing typing costs the hooks milliseconds

from gitstate.errors import InvalidFile
from gitstate.law.policies import duration, read_defaults, read_policies
from gitstate.law.lifecycle import (DEFAULT_STATE_FILE, OUTCOMES, ROLE_KEYS, ROLE_NAME_RE,
                                    ROSTERS, STATE_KEYS, STATE_NAME_RE, TOP_KEYS, Lifecycle,
                                    Role, State)

if TYPE_CHECKING:
    from typing import Any


class LifecycleInvalid(InvalidFile):
    """Every problem found in a lifecycle file, each with its line."""

    def __init__(self, source: str, problems: list[tuple[int | None, str]]):
        self.problems = problems
        self.source = source
        lines = [f"{source}:{ln}: {msg}" if ln else f"{source}: {msg}" for ln, msg in problems]
        n = len(problems)
        super().__init__(f"invalid lifecycle ({n} problem{'s' if n != 1 else ''}):\n  "
                         + "\n  ".join(lines))

    def to_dict(self) -> dict:
        return {"error": "LifecycleInvalid", "message": self.message,
                "problems": [{"file": self.source, "line": ln, "message": msg}
                             for ln, msg in self.problems]}


class _Reader:
    """Collects problems while building the model from located YAML."""

    def __init__(self, lines: dict):
        self.lines = lines
        self.problems: list[tuple[int | None, str]] = []

    def line(self, *path) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(())

    def bad(self, path: tuple, message: str) -> None:
        self.problems.append((self.line(*path), message))

    def mapping(self, value: Any, path: tuple, what: str) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.bad(path, f"{what} must be a mapping, not {_kind(value)}")
            return {}
        return value

    def names(self, value: Any, path: tuple, what: str) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.bad(path, f"{what} must be a list of names")
            return []
        return value

    def unknown_keys(self, data: dict, known: set[str], path: tuple, what: str) -> None:
        for key in data:
            if key not in known:
                self.bad(path + (key,), f"unknown {what} key '{key}'; known keys: "
                         + ", ".join(sorted(known)))

    def integer(self, value: Any, path: tuple, what: str, lo: int = 0, hi: int | None = None):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < lo \
                or (hi is not None and value > hi):
            rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            self.bad(path, f"{what} must be a whole number {rng}, not {value!r}")
            return None
        return value


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def load_lifecycle(text: str, source: str = "protocols/lifecycle.yaml") -> Lifecycle:
    """Parse and check a lifecycle; raises LifecycleInvalid listing every problem."""
    from gitstate.law import yamlio
    data, lines = yamlio.load(text, where=source)
    r = _Reader(lines)
    if not isinstance(data, dict):
        raise LifecycleInvalid(source, [(1, "a lifecycle must be a mapping with at least "
                                            "'initial', 'states' and 'transitions'")])
    r.unknown_keys(data, TOP_KEYS, (), "lifecycle")
    states = _read_states(r, data.get("states"))
    transitions = _read_transitions(r, data.get("transitions"))
    roles = _read_roles(r, data.get("roles"))
    policies = read_policies(r, data.get("policies"))
    layout = r.mapping(data.get("layout"), ("layout",), "layout")
    r.unknown_keys(layout, {"state_file"}, ("layout",), "layout")
    state_file = layout.get("state_file", DEFAULT_STATE_FILE)
    grammar = r.mapping(data.get("grammar"), ("grammar",), "grammar")
    r.unknown_keys(grammar, {"accept"}, ("grammar",), "grammar")
    accept = tuple(r.names(grammar.get("accept"), ("grammar", "accept"), "grammar.accept"))
    initial = data.get("initial")
    name = data.get("name", "unnamed")
    defaults = read_defaults(r, data.get("defaults"))

    lc = Lifecycle(name=str(name), initial=initial, states=states, transitions=transitions,
                   roles=roles, policies=policies, state_file=state_file, accept=accept,
                   description=str(data.get("description") or ""), source=source,
                   defaults=defaults)
    for check in _CHECKS:
        check(lc, r)
    if r.problems:
        raise LifecycleInvalid(source, sorted(r.problems, key=lambda p: (p[0] or 0)))
    return lc


def _read_states(r: _Reader, raw: Any) -> dict[str, State]:
    states: dict[str, State] = {}
    for name, spec in r.mapping(raw, ("states",), "states").items():
        path = ("states", name)
        if not isinstance(name, str) or not STATE_NAME_RE.match(name):
            r.bad(path, f"state name {name!r} must start with a letter and use only letters, "
                        "digits, '_' or '-'")
            continue
        spec = r.mapping(spec, path, f"state '{name}'")
        r.unknown_keys(spec, STATE_KEYS, path, f"state '{name}'")
        roster = spec.get("roster", "living")
        if roster not in ROSTERS:
            r.bad(path + ("roster",), f"state '{name}': roster must be one of "
                                      f"{', '.join(ROSTERS)}, not {roster!r}")
            roster = "living"
        terminal = spec.get("terminal", False)
        if not isinstance(terminal, bool):
            r.bad(path + ("terminal",), f"state '{name}': terminal must be true or false")
            terminal = False
        outcome = spec.get("outcome", "success")
        if outcome not in OUTCOMES:
            r.bad(path + ("outcome",), f"state '{name}': outcome must be one of "
                                       f"{', '.join(OUTCOMES)}, not {outcome!r}")
            outcome = "success"
        states[name] = State(
            name=name, roster=roster, terminal=terminal, outcome=outcome,
            requires=tuple(r.names(spec.get("requires"), path + ("requires",),
                                   f"state '{name}': requires")),
            description=str(spec.get("description") or ""),
            protocol=spec.get("protocol"), log=_log_path(r, spec.get("log"), path))
    return states


def _log_path(r, value, path: tuple) -> str | None:
    """A relative path inside the work tree, outside .git."""
    if value is None:
        return None
    text = str(value)
    parts = text.replace("\\", "/").split("/")
    if not text or text.startswith("/") or ".." in parts or parts[0] == ".git":
        r.bad(path + ("log",), f"log {text!r} must be a relative path inside the repository")
        return None
    return text


def _read_transitions(r: _Reader, raw: Any) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for src, targets in r.mapping(raw, ("transitions",), "transitions").items():
        out[str(src)] = tuple(r.names(targets, ("transitions", src),
                                      f"transitions from '{src}'"))
    return out


def _read_roles(r: _Reader, raw: Any) -> dict[str, Role]:
    roles: dict[str, Role] = {}
    for name, spec in r.mapping(raw, ("roles",), "roles").items():
        path = ("roles", name)
        if not isinstance(name, str) or not ROLE_NAME_RE.match(name):
            r.bad(path, f"role name {name!r} must start with a letter and use only letters, "
                        "digits, '.', '_' or '-'")
            continue
        spec = r.mapping(spec, path, f"role '{name}'")
        r.unknown_keys(spec, ROLE_KEYS, path, f"role '{name}'")
        spawns = spec.get("spawns")
        self_spawn = spec.get("self_spawn", False)   # a role spawns its own kind only if allowed
        if not isinstance(self_spawn, bool):
            r.bad(path + ("self_spawn",), f"role '{name}': self_spawn must be true or false")
            self_spawn = False
        roles[name] = Role(
            name=name,
            mandate=None if spec.get("mandate") is None else str(spec.get("mandate")),
            max=r.integer(spec.get("max"), path + ("max",), f"role '{name}': max", lo=1),
            description=str(spec.get("description") or ""),
            spawns=None if spawns is None else tuple(
                r.names(spawns, path + ("spawns",), f"role '{name}': spawns")),
            never_spawns=tuple(r.names(spec.get("never_spawns"), path + ("never_spawns",),
                                       f"role '{name}': never_spawns")),
            self_spawn=self_spawn,
            timeout=duration(r, spec, "timeout", path, f"role '{name}': timeout"))
    return roles



# ---------------------------------------------------------------------------------------
# Checks: one per rule, each adding located problems.


def _check_has_states(lc: Lifecycle, r: _Reader) -> None:
    if not lc.states:
        r.bad(("states",), "the lifecycle declares no states")


def _check_one_initial(lc: Lifecycle, r: _Reader) -> None:
    if lc.initial is None:
        r.bad((), "no initial state: add 'initial: <state>'")
    elif not isinstance(lc.initial, str):
        r.bad(("initial",), f"exactly one initial state is needed, not {_kind(lc.initial)} "
                            f"({lc.initial!r})")
    elif lc.initial not in lc.states:
        r.bad(("initial",), f"initial state '{lc.initial}' is not declared under states "
                            f"(declared: {', '.join(lc.states) or 'none'})")


def _check_transitions_name_states(lc: Lifecycle, r: _Reader) -> None:
    for src, targets in lc.transitions.items():
        if src not in lc.states:
            r.bad(("transitions", src), f"transitions from undeclared state '{src}'")
        for i, dst in enumerate(targets):
            if dst not in lc.states:
                r.bad(("transitions", src, i), f"transition '{src} -> {dst}' names undeclared "
                                               f"state '{dst}'")


def _check_no_exit_from_terminal(lc: Lifecycle, r: _Reader) -> None:
    for name, state in lc.states.items():
        if state.terminal and lc.transitions.get(name):
            r.bad(("transitions", name), f"terminal state '{name}' has exits "
                  f"({', '.join(lc.transitions[name])}); a terminal state is final")


def _reachable(lc: Lifecycle, start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in lc.transitions.get(todo.pop(), ()):
            if nxt in lc.states and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _check_reachable(lc: Lifecycle, r: _Reader) -> None:
    if not isinstance(lc.initial, str) or lc.initial not in lc.states:
        return
    unreachable = [s for s in lc.states if s not in _reachable(lc, lc.initial)]
    if unreachable:
        r.bad(("states", unreachable[0]), f"unreachable from '{lc.initial}': "
              + ", ".join(unreachable))


def _check_no_trap(lc: Lifecycle, r: _Reader) -> None:
    for name, state in lc.states.items():
        if not state.terminal and not lc.transitions.get(name):
            r.bad(("states", name), f"trap state '{name}': it is not terminal and has no "
                  "transitions out (mark it 'terminal: true' or give it exits)")


def _check_can_end(lc: Lifecycle, r: _Reader) -> None:
    """Every state must be able to reach a terminal or frozen state: no endless loops only."""
    ends = {n for n, s in lc.states.items() if s.terminal or s.roster in ("frozen", "dead")}
    if not ends:
        r.bad(("states",), "no terminal or frozen state: agents would have no way to stop "
                           "(add a state with 'terminal: true' or 'roster: frozen')")
        return
    stuck = [n for n in lc.states if n not in ends and not (_reachable(lc, n) & ends)]
    if stuck:
        r.bad(("states", stuck[0]), "no terminal or frozen state can be reached from: "
              + ", ".join(stuck))


def _check_requires(lc: Lifecycle, r: _Reader) -> None:
    for name, state in lc.states.items():
        for f in state.requires:
            if f in ("agent", "state"):
                r.bad(("states", name, "requires"), f"state '{name}': '{f}' is always required")


def _check_policy_names(lc: Lifecycle, r: _Reader) -> None:
    def known(state: str) -> bool:
        return state == "*" or state in lc.states or "*" in state

    for i, (a, b) in enumerate(lc.policies.approval):
        for s in (a, b):
            if not known(s):
                r.bad(("policies", "approval", i), f"approval rule '{a} -> {b}' names "
                                                   f"undeclared state '{s}'")
    if (lc.policies.approval or lc.policies.law_approval) and not lc.policies.humans:
        r.bad(("policies", "approval"), "approval rules need 'humans' who may approve")
    for (a, b) in lc.policies.timeouts:
        key = f"{a} -> {b}"
        for s in (a, b):
            if s not in lc.states:
                r.bad(("policies", "timeouts", key), f"timeout '{key}' names undeclared state '{s}'")
        if a in lc.states and b in lc.states and b not in lc.transitions.get(a, ()):
            r.bad(("policies", "timeouts", key), f"timeout '{key}' is not a declared transition "
                  f"(from '{a}' the lifecycle allows: {', '.join(lc.transitions.get(a, ())) or 'nothing'})")
    for (a, b), roles in lc.policies.timeout_exempt.items():
        for role in roles:
            if role not in lc.roles:
                r.bad(("policies", "timeouts", f"{a} -> {b}", "except_roles"),
                      f"timeout '{a} -> {b}' exempts undeclared role '{role}' (roles: "
                      f"{', '.join(lc.roles) or 'none'})")
    for s in lc.mortality.urgent_forbids:
        if s not in lc.states:
            r.bad(("policies", "mortality", "urgent_forbids"), f"urgent_forbids names "
                                                               f"undeclared state '{s}'")


def _check_layout(lc: Lifecycle, r: _Reader) -> None:
    p = lc.state_file
    if not isinstance(p, str) or p.count("{id}") != 1 or p.startswith("/") or "\\" in p \
            or any(part in ("", ".", "..") for part in p.split("/")):
        r.bad(("layout", "state_file"), f"layout.state_file {p!r} must be a relative path with "
              "exactly one '{id}' and a file name, e.g. 'agent/{id}/_state.md'")


def _check_accept(lc: Lifecycle, r: _Reader) -> None:
    for i, pattern in enumerate(lc.accept):
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            r.bad(("grammar", "accept", i), f"grammar.accept pattern is not a regular "
                                            f"expression: {exc}")
            continue
        if not {"id", "state"} <= set(rx.groupindex):
            r.bad(("grammar", "accept", i), "grammar.accept pattern needs the named groups "
                                            "(?P<id>...) and (?P<state>...)")


_CHECKS = (_check_has_states, _check_one_initial, _check_transitions_name_states,
           _check_no_exit_from_terminal, _check_reachable, _check_no_trap, _check_can_end,
           _check_requires, _check_policy_names, _check_layout, _check_accept)
