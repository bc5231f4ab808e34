"""The checks a lifecycle passes when it is loaded: one `_check_*` per rule, each adding
located problems through the reader (`Reader`, `r.bad(path, message)`, which the loader reads
the file's parts with too), each linear in the size of the lifecycle (a 10,000-state lifecycle
is checked in milliseconds).
"""

from __future__ import annotations

import re

from gitstate.law import limits
from gitstate.law.lifecycle import Lifecycle, parse_arrow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


class Reader:
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
            self.bad(path, f"{what} must be a mapping, not {kind(value)}")
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

    def flag(self, value: Any, path: tuple, what: str, default: bool = False) -> bool:
        """A true-or-false key (`default` where it is neither)."""
        if isinstance(value, bool):
            return value
        self.bad(path, f"{what} must be true or false")
        return default

    def arrow(self, item: str, path: tuple, what: str) -> str | None:
        """A move written 'from -> to', as the lifecycle keeps it."""
        arrow = parse_arrow(item)
        if arrow is None:
            self.bad(path, f"{what} {item!r} must read 'from -> to' ('*' matches any state)")
            return None
        return f"{arrow[0]} -> {arrow[1]}"

    def integer(self, value: Any, path: tuple, what: str, lo: int = 0, hi: int | None = None):
        if value is None or _whole_in(value, lo, hi):
            return value
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        self.bad(path, f"{what} must be a whole number {rng}, not {value!r}")
        return None


def _whole_in(value: Any, lo: int, hi: int | None) -> bool:
    """A whole number (not a boolean) from `lo` to `hi` (None: no upper bound)."""
    return not isinstance(value, bool) and isinstance(value, int) and value >= lo \
        and (hi is None or value <= hi)


def _check_has_states(lc: Lifecycle, r) -> None:
    if not lc.states:
        r.bad(("states",), "the lifecycle declares no states")


def _check_one_initial(lc: Lifecycle, r) -> None:
    if lc.initial is None:
        r.bad((), "no initial state: add 'initial: <state>'")
    elif not isinstance(lc.initial, str):
        r.bad(("initial",), f"exactly one initial state is needed, not {kind(lc.initial)} "
                            f"({lc.initial!r})")
    elif lc.initial not in lc.states:
        r.bad(("initial",), f"initial state '{lc.initial}' is not declared under states "
                            f"(declared: {limits.shorten(lc.states) or 'none'})")


def _check_transitions_name_states(lc: Lifecycle, r) -> None:
    for src, targets in lc.transitions.items():
        if src not in lc.states:
            r.bad(("transitions", src), f"transitions from undeclared state '{src}'")
        for i, dst in enumerate(targets):
            if dst not in lc.states:
                r.bad(("transitions", src, i), f"transition '{src} -> {dst}' names undeclared "
                                               f"state '{dst}'")


def _check_no_exit_from_terminal(lc: Lifecycle, r) -> None:
    for name, state in lc.states.items():
        if state.terminal and lc.transitions.get(name):
            r.bad(("transitions", name), f"terminal state '{name}' has exits "
                  f"({limits.shorten(lc.transitions[name])}); a terminal state is final")


def _reachable(lc: Lifecycle, start: str) -> set[str]:
    return _closure([start], lambda s: lc.transitions.get(s, ()), lc.states)


def _closure(starts, nexts, within) -> set[str]:
    """`starts` and every state of `within` that `nexts` leads to from them, step by step."""
    seen, todo = set(starts), list(starts)
    while todo:
        for nxt in nexts(todo.pop()):
            if nxt in within and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _check_reachable(lc: Lifecycle, r) -> None:
    if not isinstance(lc.initial, str) or lc.initial not in lc.states:
        return
    reachable = _reachable(lc, lc.initial)
    unreachable = [s for s in lc.states if s not in reachable]
    if unreachable:
        r.bad(("states", unreachable[0]), f"unreachable from '{lc.initial}': "
              + limits.shorten(unreachable))


def _check_no_trap(lc: Lifecycle, r) -> None:
    for name, state in lc.states.items():
        if not state.terminal and not lc.transitions.get(name):
            r.bad(("states", name), f"trap state '{name}': it is not terminal and has no "
                  "transitions out (mark it 'terminal: true' or give it exits)")


def _check_can_end(lc: Lifecycle, r) -> None:
    """Every state must be able to reach a terminal or frozen state: no endless loops only."""
    ends = {n for n, s in lc.states.items() if s.terminal or s.roster in ("frozen", "dead")}
    if not ends:
        r.bad(("states",), "no terminal or frozen state: agents would have no way to stop "
                           "(add a state with 'terminal: true' or 'roster: frozen')")
        return
    # One search backwards from the ends finds every state that can reach one: linear in the
    # size of the lifecycle (a search forwards from each state would be quadratic).
    sources = _sources(lc)
    can_end = _closure(ends, lambda s: sources.get(s, ()), lc.states)
    stuck = [n for n in lc.states if n not in can_end]
    if stuck:
        r.bad(("states", stuck[0]), "no terminal or frozen state can be reached from: "
              + limits.shorten(stuck))


def _sources(lc: Lifecycle) -> dict[str, list[str]]:
    """Each state -> the declared states with a transition into it."""
    sources: dict[str, list[str]] = {}
    for src, targets in lc.transitions.items():
        if src in lc.states:
            for dst in targets:
                sources.setdefault(dst, []).append(src)
    return sources


def _names_state(lc: Lifecycle, side: str) -> bool:
    """A side of a 'from -> to' rule: a declared state, or a pattern ('*')."""
    return "*" in side or side in lc.states


def _undeclared_states(lc: Lifecycle, r, names, where: tuple, said: str) -> None:
    for s in names:
        if s not in lc.states:
            r.bad(where, f"{said} undeclared state '{s}'")


def _undeclared_roles(lc: Lifecycle, r, roles, where: tuple, said: str) -> None:
    for role in roles:
        if role not in lc.roles:
            r.bad(where, f"{said} undeclared role '{role}' (roles: "
                  f"{limits.shorten(lc.roles) or 'none'})")


def _check_requires(lc: Lifecycle, r) -> None:
    for name, state in lc.states.items():
        if state.token_limit and state.token_limit not in lc.transitions.get(name, ()):
            r.bad(("states", name, "token_limit"), f"state '{name}': token_limit "
                  f"'{state.token_limit}' is not a move from '{name}'")
        if state.stamp in ("agent", "state", "updated"):
            r.bad(("states", name, "stamp"), f"state '{name}': '{state.stamp}' is set by "
                  "gitstate; stamp another field")
        for f in state.requires:
            if f in ("agent", "state"):
                r.bad(("states", name, "requires"), f"state '{name}': '{f}' is always required")


def _check_approval(lc: Lifecycle, r) -> None:
    """Approval rules name declared states (or patterns), and humans who may approve."""
    for i, rule in enumerate(lc.policies.approval):
        a, _, b = rule.partition(" -> ")
        for s in (a, b) if b else ():
            if not _names_state(lc, s):
                r.bad(("policies", "approval", i), f"approval rule '{a} -> {b}' names "
                                                   f"undeclared state '{s}'")
    if lc.policies.approval and not lc.policies.humans:
        r.bad(("policies", "approval"), "approval rules need 'humans' who may approve")


def _check_timeouts(lc: Lifecycle, r) -> None:
    """A timeout is a declared transition between declared states."""
    for a, b, _spec in lc.policies.timed_moves():
        key = f"{a} -> {b}"
        _undeclared_states(lc, r, (a, b), ("policies", "timeouts", key),
                           f"timeout '{key}' names")
        if a in lc.states and b in lc.states and b not in lc.transitions.get(a, ()):
            allowed = limits.shorten(lc.transitions.get(a, ())) or "nothing"
            r.bad(("policies", "timeouts", key), f"timeout '{key}' is not a declared transition "
                  f"(from '{a}' the lifecycle allows: {allowed})")


def _check_timeout_roles(lc: Lifecycle, r) -> None:
    """A timeout exempts declared roles only."""
    for a, b, spec in lc.policies.timed_moves():
        _undeclared_roles(lc, r, spec.except_roles,
                          ("policies", "timeouts", f"{a} -> {b}", "except_roles"),
                          f"timeout '{a} -> {b}' exempts")


def _check_heartbeat(lc: Lifecycle, r) -> None:
    """The heartbeat exempts declared roles, and judges living states only."""
    beat = lc.policies.heartbeat
    if beat is None:
        return
    _undeclared_roles(lc, r, beat.except_roles, ("policies", "heartbeat", "except_roles"),
                      "the heartbeat exempts")
    living = [n for n, spec in lc.states.items() if spec.roster == "living"]
    for s in beat.states:
        if s not in living:
            r.bad(("policies", "heartbeat", "states"), f"the heartbeat judges '{s}', which is "
                  f"not a {'living' if s in lc.states else 'declared'} state (living states: "
                  f"{limits.shorten(living) or 'none'})")


def _check_retry(lc: Lifecycle, r) -> None:
    """A retry leaves terminal states and enters living ones, all declared; it exempts
    declared roles only."""
    spec = lc.policies.retry
    if spec is None:
        return
    where = ("policies", "retry")
    for key, names, ok, what in (
            ("states", spec.states, lambda s: lc.states[s].terminal, "a terminal"),
            ("to", spec.to, lambda s: lc.states[s].roster == "living", "a living")):
        for s in names:
            if s not in lc.states or not ok(s):
                r.bad(where + (key,), f"retry.{key} names '{s}', which is not {what} state")
    _undeclared_roles(lc, r, spec.except_roles, where + ("except_roles",), "retry exempts")


def _check_role_states(lc: Lifecycle, r) -> None:
    """A role forbids and is loaded into declared states, and is never loaded into one it
    forbids."""
    for name, spec in lc.roles.items():
        _undeclared_states(lc, r, spec.forbids, ("roles", name, "forbids"),
                           f"role '{name}': forbids names")
        key = "forbids" if spec.load in spec.forbids else "load"
        _undeclared_states(lc, r, (spec.load,) if spec.load else (), ("roles", name, key),
                           f"role '{name}': {key} names")
        if spec.load in spec.forbids:
            r.bad(("roles", name, "load"), f"role '{name}' is loaded into '{spec.load}', a "
                  "state it forbids")


def _check_urgent_forbids(lc: Lifecycle, r) -> None:
    _undeclared_states(lc, r, lc.mortality.urgent_forbids,
                       ("policies", "mortality", "urgent_forbids"), "urgent_forbids names")


_LAYOUT_PART = re.compile(r"^[A-Za-z0-9._-]*(?:\{id\}[A-Za-z0-9._-]*)?$")


def _check_layout(lc: Lifecycle, r) -> None:
    """State files stay inside the work tree, outside `.git` and beside the law, never in it:
    `spawn shallow` with a layout `.git/{id}` would write `.git/shallow`."""
    p = lc.state_file
    if not _layout_shaped(p):
        r.bad(("layout", "state_file"), f"layout.state_file {p!r} must be a relative path with "
              "exactly one '{id}' and a file name, e.g. 'agent/{id}/_state.md'")
        return
    problem = _layout_problem(p.split("/"))
    if problem:
        r.bad(("layout", "state_file"), f"layout.state_file {p!r}{problem}")


def _layout_shaped(p) -> bool:
    """A relative path with exactly one `{id}` and no empty, `.` or `..` part."""
    return isinstance(p, str) and p.count("{id}") == 1 and not p.startswith("/") \
        and "\\" not in p and not any(part in ("", ".", "..") for part in p.split("/"))


def _layout_problem(parts: list[str]) -> str | None:
    """What is wrong with a well-shaped layout's parts, if anything."""
    if not all(_LAYOUT_PART.match(part) for part in parts):
        return " may use only letters, digits, '.', '_', '-', '/' and '{id}'"
    if any(is_git_dir_name(part) for part in parts):
        return " leads into a '.git' folder; state files live in the work tree"
    if any(part.startswith(".") and "{id}" in part for part in parts):
        return ": the part holding '{id}' may not start with '.' (the agent 'git' would be '.git')"
    if parts[0].lower() in ("protocols", ".githooks"):
        return f": state files may not live in '{parts[0]}/', beside the law and the hooks"
    return None


def is_git_dir_name(part: str) -> bool:
    """A path segment that is, or that some file system takes for, `.git` (any case; Windows
    drops trailing dots and spaces and knows it as `git~1`)."""
    name = part.lower().rstrip(". ")
    return name == ".git" or name == "git~1"


def _check_accept(lc: Lifecycle, r) -> None:
    from gitstate.law.grammar import PatternRefused, compile_accept
    for i, pattern in enumerate(lc.accept):
        try:
            rx = compile_accept(pattern)
        except PatternRefused as exc:
            r.bad(("grammar", "accept", i), f"grammar.accept pattern {pattern!r} {exc}")
            continue
        if not {"id", "state"} <= set(rx.groupindex):
            r.bad(("grammar", "accept", i), "grammar.accept pattern needs the named groups "
                                            "(?P<id>...) and (?P<state>...)")


def _check_movers(lc: Lifecycle, r) -> None:
    """`policies.movers` names declared states, and declared roles where custom roles are not
    allowed."""
    for where, move in _moves_named(lc, r):
        for side in move.split(" -> "):
            if not _names_state(lc, side):
                r.bad(where, f"movers: '{move}' names '{side}', which is not a state")


def _moves_named(lc: Lifecycle, r) -> list[tuple[tuple, str]]:
    """(where, move) of each move `policies.movers` names; its roles, and the states of
    `changes_in`, checked on the way."""
    movers = lc.policies.movers
    named: list[tuple[tuple, str]] = [(("policies", "movers", "parent"), m)
                                      for m in movers.parent]
    for role, moves in movers.roles.items():
        where: tuple = ("policies", "movers", "roles", role)
        if not lc.policies.custom_roles and role not in lc.roles:
            r.bad(where, f"movers.roles names role '{role}', which the lifecycle does not "
                         "declare")
        named += [(where, m) for m in moves]
    named += [(("policies", "movers", "system"), m) for m in movers.system]
    for key, states in lc.policies.changes_in.items():
        _undeclared_states(lc, r, states, ("policies", "changes_in", key),
                           f"changes_in.{key} names")
    return named


CHECKS = (_check_has_states, _check_one_initial, _check_transitions_name_states,
          _check_no_exit_from_terminal, _check_reachable, _check_no_trap, _check_can_end,
          _check_requires, _check_approval, _check_timeouts, _check_timeout_roles,
          _check_heartbeat, _check_retry, _check_role_states, _check_urgent_forbids, _check_layout,
          _check_accept, _check_movers)
