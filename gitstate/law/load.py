"""Loading a lifecycle: read `protocols/lifecycle.yaml` into the model and check it.

A lifecycle is checked the way a state-machine library checks a machine when it is defined:
one `_check_*` function per rule (in `checks`), each naming the offending states and the line
they are on. All problems are reported together, not just the first.
"""

from __future__ import annotations

import re

from gitstate.errors import InvalidFile
from gitstate.law import limits
from gitstate.law.checks import CHECKS, Reader
from gitstate.law.grammar import is_branch_name
from gitstate.law.lifecycle import (
    DEFAULT_STATE_FILE,
    NOT_DEFAULTS,
    OUTCOMES,
    ROSTERS,
    Grammar,
    Heartbeat,
    Layout,
    Lifecycle,
    Mortality,
    Movers,
    Policies,
    Retry,
    Role,
    State,
    Timeout,
    parse_arrow,
)
from gitstate.law.rule_ids import Rule
from gitstate.law.runtime_table import read_runtime
from gitstate.law.times import parse_duration

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitstate.law.record import Record


def file_keys(record: type[Record]) -> set[str]:
    """The keys a part of the lifecycle file may have: its record's plain fields."""
    return set(record._fields) - set(record._plain_skip)


TOP_KEYS = file_keys(Lifecycle)
STATE_KEYS = file_keys(State)
ROLE_KEYS = file_keys(Role)
POLICY_KEYS = file_keys(Policies)
TIMEOUT_KEYS = file_keys(Timeout)
MORTALITY_KEYS = file_keys(Mortality)
MOVERS_KEYS = file_keys(Movers)


# what a state or a role may be called (the names a lifecycle declares)
STATE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
ROLE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


class LifecycleInvalid(InvalidFile):
    """Every problem found in a lifecycle file, each with its line."""

    rule = Rule.LIFECYCLE

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


def read_lifecycle(data: bytes, source: str = "protocols/lifecycle.yaml") -> Lifecycle:
    """`load_lifecycle` of a file's bytes: at most `limits.LIFECYCLE_BYTES`, UTF-8, no BOM."""
    from gitstate.law.statefile import decode
    return load_lifecycle(decode(data, source, limits.LIFECYCLE_BYTES), source)


def load_lifecycle(text: str, source: str = "protocols/lifecycle.yaml") -> Lifecycle:
    """Parse and check a lifecycle; raises LifecycleInvalid listing every problem, or
    InvalidFile (with its rule: `too-large`, `too-deep`, `yaml-alias`, ...) for YAML that is
    not read at all. Every check is linear in the size of the file."""
    from gitstate.law import yamlio
    limits.check_size(limits.utf8_size(text), limits.LIFECYCLE_BYTES, "the lifecycle", source)
    data, lines = yamlio.load(text, where=source, strict=False, rule=Rule.LIFECYCLE)
    r = Reader(lines)
    if not isinstance(data, dict):
        raise LifecycleInvalid(source, [(1, "a lifecycle must be a mapping with at least "
                                            "'initial', 'states' and 'transitions'")])
    r.unknown_keys(data, TOP_KEYS, (), "lifecycle")
    states = _read_states(r, data.get("states"))
    transitions = _read_transitions(r, data.get("transitions"))
    roles = _read_roles(r, data.get("roles"))
    policies = read_policies(r, data.get("policies"))
    layout = r.mapping(data.get("layout"), ("layout",), "layout")
    r.unknown_keys(layout, file_keys(Layout), ("layout",), "layout")
    state_file = layout.get("state_file", DEFAULT_STATE_FILE)
    grammar = r.mapping(data.get("grammar"), ("grammar",), "grammar")
    r.unknown_keys(grammar, file_keys(Grammar), ("grammar",), "grammar")
    accept = tuple(r.names(grammar.get("accept"), ("grammar", "accept"), "grammar.accept"))
    initial = data.get("initial")
    defaults = read_defaults(r, data.get("defaults"))
    line = _read_line(r, data.get("line"))
    runtime = read_runtime(r, data.get("runtime"), states, transitions, initial)
    lc = Lifecycle(name=str(data.get("name", "unnamed")), initial=initial, states=states,
                   transitions=transitions, roles=roles, policies=policies,
                   layout=Layout(state_file), grammar=Grammar(accept),
                   description=str(data.get("description") or ""),
                   source=source, defaults=defaults, line=line, runtime=runtime)
    for check in CHECKS:
        check(lc, r)
    if r.problems:
        raise LifecycleInvalid(source, sorted(r.problems, key=lambda p: (p[0] or 0)))
    return lc


def _read_line(r: Reader, raw: Any) -> str | None:
    """The team line's branch name (`line: main`), or None where the lifecycle names none."""
    if raw is not None and not (isinstance(raw, str) and is_branch_name(raw)):
        r.bad(("line",), f"line: {raw!r} is not a branch name (e.g. 'main')")
        return None
    return raw


def _named(r: Reader, raw: Any, section: str, pattern, allowed: str, keys: set[str]):
    """(name, path, spec) of each well-named entry of `section` (states, roles), its keys
    checked."""
    what = section[:-1]
    for name, spec in r.mapping(raw, (section,), section).items():
        path = (section, name)
        if not isinstance(name, str) or not pattern.match(name):
            r.bad(path, f"{what} name {name!r} must start with a letter and use only letters, "
                        f"digits, {allowed}")
            continue
        spec = r.mapping(spec, path, f"{what} '{name}'")
        r.unknown_keys(spec, keys, path, f"{what} '{name}'")
        yield name, path, spec


def _read_states(r: Reader, raw: Any) -> dict[str, State]:
    states: dict[str, State] = {}
    for name, path, spec in _named(r, raw, "states", STATE_NAME_RE, "'_' or '-'", STATE_KEYS):
        roster = _one_of(r, spec, "roster", ROSTERS, path, f"state '{name}'")
        terminal = r.flag(spec.get("terminal", False), path + ("terminal",),
                          f"state '{name}': terminal")
        outcome = _one_of(r, spec, "outcome", OUTCOMES, path, f"state '{name}'")
        states[name] = State(
            name=name, roster=roster, terminal=terminal, outcome=outcome,
            requires=tuple(r.names(spec.get("requires"), path + ("requires",),
                                   f"state '{name}': requires")),
            description=str(spec.get("description") or ""),
            protocol=spec.get("protocol"), log=_log_path(r, spec.get("log"), path + ("log",)),
            token_limit=_text_or_none(spec, "token_limit"), stamp=_text_or_none(spec, "stamp"))
    return states


def _one_of(r, spec: dict, key: str, allowed: tuple[str, ...], path: tuple, what: str) -> str:
    """`spec[key]`, one of `allowed` (the first of them, where it is not given or not one)."""
    value = spec.get(key, allowed[0])
    if value in allowed:
        return value
    r.bad(path + (key,), f"{what}: {key} must be one of {', '.join(allowed)}, not {value!r}")
    return allowed[0]


def _text_or_none(spec: dict, key: str) -> str | None:
    return None if spec.get(key) is None else str(spec.get(key))


def _log_path(r, value, path: tuple) -> str | None:
    """A relative path inside the work tree, outside .git."""
    if value is None:
        return None
    text = str(value)
    parts = text.replace("\\", "/").split("/")
    if not text or text.startswith("/") or ".." in parts or parts[0] == ".git":
        r.bad(path, f"{path[-1]} {text!r} must be a relative path inside the repository")
        return None
    return text


def _read_transitions(r: Reader, raw: Any) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for src, targets in r.mapping(raw, ("transitions",), "transitions").items():
        out[str(src)] = tuple(r.names(targets, ("transitions", src),
                                      f"transitions from '{src}'"))
    return out


def _read_roles(r: Reader, raw: Any) -> dict[str, Role]:
    roles: dict[str, Role] = {}
    for name, path, spec in _named(r, raw, "roles", ROLE_NAME_RE, "'.', '_' or '-'",
                                   ROLE_KEYS):
        spawns = spec.get("spawns")
        # a role spawns its own kind only if allowed
        self_spawn = r.flag(spec.get("self_spawn", False), path + ("self_spawn",),
                            f"role '{name}': self_spawn")
        advisory = r.flag(spec.get("max_advisory", False), path + ("max_advisory",),
                          f"role '{name}': max_advisory")
        roles[name] = Role(
            name=name, max_advisory=advisory, mandate=_text_or_none(spec, "mandate"),
            max=r.integer(spec.get("max"), path + ("max",), f"role '{name}': max", lo=1),
            description=str(spec.get("description") or ""),
            spawns=None if spawns is None else tuple(
                r.names(spawns, path + ("spawns",), f"role '{name}': spawns")),
            never_spawns=tuple(r.names(spec.get("never_spawns"), path + ("never_spawns",),
                                       f"role '{name}': never_spawns")),
            self_spawn=self_spawn,
            timeout=duration(r, spec, "timeout", path, f"role '{name}': timeout"),
            forbids=tuple(r.names(spec.get("forbids"), path + ("forbids",),
                                  f"role '{name}': forbids")),
            load=_text_or_none(spec, "load"))
    return roles


# -- policies and defaults --------------------------------------------------------------


def read_policies(r, raw: Any) -> Policies:
    p = r.mapping(raw, ("policies",), "policies")
    r.unknown_keys(p, POLICY_KEYS, ("policies",), "policies")
    approval = _read_approval(r, p)
    mortality = _read_mortality(r, p.get("mortality")) if "mortality" in p else None
    timeouts = _read_timeouts(r, p)
    heartbeat = None if p.get("heartbeat") is None else \
        _timed(r, p.get("heartbeat"), ("policies", "heartbeat"), "policies.heartbeat", Heartbeat)
    custom_roles = r.flag(p.get("custom_roles", True), ("policies", "custom_roles"),
                          "custom_roles", True)
    atomic = r.flag(p.get("atomic_commits", False), ("policies", "atomic_commits"),
                    "atomic_commits")
    flags = {k: r.flag(p.get(k, False), ("policies", k), k)
             for k in ("fourth_wall", "work_commits_name_agent")}
    return Policies(
        humans=tuple(r.names(p.get("humans"), ("policies", "humans"), "policies.humans")),
        approval=approval, mortality=mortality,
        max_living=r.integer(p.get("max_living"), ("policies", "max_living"), "max_living", 1),
        role_max=r.integer(p.get("role_max"), ("policies", "role_max"), "role_max", 1),
        max_depth=r.integer(p.get("max_depth"), ("policies", "max_depth"), "max_depth", 0),
        timeouts=timeouts,
        role_timeout=duration(r, p, "role_timeout", ("policies",), "policies.role_timeout"),
        heartbeat=heartbeat, custom_roles=custom_roles,
        decisions=_log_path(r, p.get("decisions"), ("policies", "decisions")),
        agents_from=(_log_path(r, p.get("agents_from"), ("policies", "agents_from")) or "")
        .strip("/") or None,
        retry=_read_retry(r, p.get("retry")), atomic_commits=atomic,
        context_window=r.integer(p.get("context_window"), ("policies", "context_window"),
                                 "context_window", 1000),
        movers=_read_movers(r, p.get("movers")), changes_in=_read_changes_in(r, p), **flags)


def _read_changes_in(r, p: dict) -> dict[str, tuple[str, ...]]:
    """`policies.changes_in`: a front-matter key -> the states a move that changes it leaves
    (era: `thread: [distill]`); never a key gitstate writes at every move."""
    where = ("policies", "changes_in")
    out = {}
    for key, states in r.mapping(p.get("changes_in"), where, "policies.changes_in").items():
        if key in ("agent", "state", "updated"):
            r.bad(where + (key,), f"changes_in: '{key}' is written by gitstate at every move")
            continue
        out[str(key)] = tuple(r.names(states, where + (key,), f"changes_in.{key}"))
    return out


def _read_approval(r, p: dict) -> tuple[str, ...]:
    """`policies.approval`: moves 'from -> to', and `law` for changes of the law."""
    approval = []
    for i, item in enumerate(r.names(p.get("approval"), ("policies", "approval"),
                                     "policies.approval")):
        # `law`: changes of the lifecycle, allowed_signers and the shims
        move = "law" if item.strip() == "law" else \
            r.arrow(item, ("policies", "approval", i), "approval rule")
        if move is not None:
            approval.append(move)
    return tuple(approval)


def _read_mortality(r, raw: Any) -> Mortality:
    """`policies.mortality`: thresholds from 0 to 100 that rise, and the states urgent
    context forbids."""
    m = r.mapping(raw, ("policies", "mortality"), "policies.mortality")
    r.unknown_keys(m, MORTALITY_KEYS, ("policies", "mortality"), "mortality")
    usual = Mortality()
    vals = {k: r.integer(m.get(k, getattr(usual, k)), ("policies", "mortality", k),
                         f"mortality.{k}", 0, 100) for k in ("midlife", "legacy", "urgent")}
    mortality = Mortality(
        **{k: getattr(usual, k) if v is None else v for k, v in vals.items()},
        urgent_forbids=tuple(r.names(m.get("urgent_forbids"),
                                     ("policies", "mortality", "urgent_forbids"),
                                     "mortality.urgent_forbids")))
    if not mortality.midlife <= mortality.legacy <= mortality.urgent:
        r.bad(("policies", "mortality"), "mortality thresholds must rise: "
              f"midlife {mortality.midlife} <= legacy {mortality.legacy} "
              f"<= urgent {mortality.urgent}")
    return mortality


def _read_timeouts(r, p: dict) -> dict[str, Timeout]:
    """`policies.timeouts`: 'from -> to' -> when the move is due."""
    timeouts: dict[str, Timeout] = {}
    for key, value in r.mapping(p.get("timeouts"), ("policies", "timeouts"),
                                "policies.timeouts").items():
        arrow = parse_arrow(key)
        spec = _timed(r, value, ("policies", "timeouts", key), f"timeout '{key}'")
        if arrow is None:
            r.bad(("policies", "timeouts", key), f"timeout key {key!r} must read 'from -> to'")
        elif spec is not None:
            timeouts[f"{arrow[0]} -> {arrow[1]}"] = spec
    return timeouts


def _timed(r, value: Any, where: tuple, what: str, kind: type = Timeout) -> Any:
    """A length of time, bare (`30m`) or with exemptions (`{after: 30m, except_roles: [core]}`;
    a timed move's `sooner: true`, the heartbeat's `states: [active]`)."""
    roles: tuple[str, ...] = ()
    options: dict = {}
    if isinstance(value, dict):
        r.unknown_keys(value, file_keys(kind), where, what)
        roles = tuple(r.names(value.get("except_roles"), where + ("except_roles",),
                              f"{what}: except_roles"))
        if kind is Heartbeat:
            options["states"] = tuple(r.names(value.get("states"), where + ("states",),
                                              f"{what}: states"))
        else:
            options["sooner"] = r.flag(value.get("sooner", False), where + ("sooner",),
                                       f"{what}: sooner")
        if "after" not in value:
            r.bad(where, f"{what} needs 'after: <duration>'")
        value = value.get("after", 1)
    seconds = parse_duration(value)
    if seconds is None:
        r.bad(where, f"{what} {value!r} must be a duration such as 45s, 30m, 2h or 1d")
        return None
    return kind(seconds, roles, **options)


def _read_retry(r, raw: Any) -> Retry | None:
    """`policies.retry: {max: 3, backoff: 30s}` (and `states`, `to`, `except_roles`)."""
    if raw is None:
        return None
    where = ("policies", "retry")
    m = r.mapping(raw, where, "policies.retry")
    r.unknown_keys(m, file_keys(Retry), where, "retry")
    most = r.integer(m.get("max"), where + ("max",), "retry.max", 1)
    backoff = duration(r, m, "backoff", where, "retry.backoff")
    if most is None or backoff is None:
        r.bad(where, "policies.retry needs 'max: <count>' and 'backoff: <duration>'")
        return None
    return Retry(max=most, backoff=backoff, **{k: tuple(r.names(
        m.get(k), where + (k,), f"retry.{k}")) for k in ("states", "to", "except_roles")})


def _read_movers(r, raw: Any) -> Movers:
    """`policies.movers`: moves ('from -> to') a parent, or a holder of a role, may make of
    another agent, and the operators who sign reap and shutdown."""
    where = ("policies", "movers")
    m = r.mapping(raw, where, "policies.movers")
    r.unknown_keys(m, MOVERS_KEYS, where, "movers")

    def arrows(value, path: tuple, what: str) -> tuple[str, ...]:
        moves = (r.arrow(item, path + (i,), f"{what}:")
                 for i, item in enumerate(r.names(value, path, what)))
        return tuple(m for m in moves if m is not None)

    roles = {str(role): arrows(moves, where + ("roles", role), f"movers.roles.{role}")
             for role, moves in r.mapping(m.get("roles"), where + ("roles",),
                                          "movers.roles").items()}
    return Movers(parent=arrows(m.get("parent"), where + ("parent",), "movers.parent"),
                  system=arrows(m.get("system"), where + ("system",), "movers.system"),
                  roles=roles, operators=tuple(
                      r.names(m.get("operators"), where + ("operators",), "movers.operators")))


def read_defaults(r, raw: Any) -> dict:
    d = r.mapping(raw, ("defaults",), "defaults")
    out = {}
    for key, value in d.items():
        if key in NOT_DEFAULTS:
            r.bad(("defaults", key), f"'{key}' is set by gitstate at birth and has no default")
        elif isinstance(value, (dict, list)):
            r.bad(("defaults", key), f"the default of '{key}' must be a single value, "
                  f"not {'a list' if isinstance(value, list) else 'a mapping'}")
        else:
            out[str(key)] = value
    return out


def duration(r, spec: dict, key: str, path: tuple, what: str) -> int | None:
    if spec.get(key) is None:
        return None
    seconds = parse_duration(spec.get(key))
    if seconds is None:
        r.bad(path + (key,), f"{what} {spec.get(key)!r} must be a duration such as 45s, 30m, "
                             "2h or 1d")
    return seconds
