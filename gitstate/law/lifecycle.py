"""Lifecycles as data: the model of `protocols/lifecycle.yaml` and the questions rules ask it.

Reading and checking a lifecycle file is `gitstate.law.load`.
"""

from __future__ import annotations

import re
TYPE_CHECKING = False  # importing typing costs the hooks milliseconds

from gitstate.law.record import Record

if TYPE_CHECKING:
    from typing import Any

ROSTERS = ("living", "frozen", "dead")
STATE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
ROLE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
DEFAULT_STATE_FILE = "agent/{id}/_state.md"
LIFECYCLE_PATH = "protocols/lifecycle.yaml"   # the law of a managed repository
SIGNERS_PATH = "protocols/allowed_signers"    # the keys of the humans who approve
SHIMS_DIR = ".githooks/"                      # the hook shims, as committed


def is_law_path(path: str) -> bool:
    """Is `path` part of the law: the lifecycle, the allowed signers, or a hook shim?"""
    return path in (LIFECYCLE_PATH, SIGNERS_PATH) or path.startswith(SHIMS_DIR)
_DURATION_RE = re.compile(r"(\d{1,18})\s*([smhd]?)")   # fullmatch of the stripped text
_DURATION_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}

TOP_KEYS = {"name", "description", "initial", "states", "transitions", "roles", "policies",
            "layout", "grammar", "defaults"}
# `defaults`: fields a new agent's state file starts with unless `spawn` is told otherwise
# (e.g. person, project); never the ones gitstate itself sets at birth
NOT_DEFAULTS = ("agent", "state", "parent", "depth", "updated")
STATE_KEYS = {"roster", "terminal", "requires", "description", "protocol", "outcome", "log"}
OUTCOMES = ("success", "failure")
ROLE_KEYS = {"mandate", "max", "description", "spawns", "never_spawns", "self_spawn", "timeout"}
POLICY_KEYS = {"humans", "approval", "mortality", "max_living", "max_depth", "timeouts",
               "custom_roles", "atomic_commits", "role_timeout", "heartbeat",
               "context_window"}
TIMEOUT_KEYS = {"after", "except_roles", "sooner"}
MORTALITY_KEYS = {"midlife", "legacy", "urgent", "urgent_forbids"}


class State(Record):
    # outcome: how an ending reads to whoever waits on it (success, or failure)
    # log: a shared file the commit entering this state appends an entry to (era's logout.log)
    __slots__ = ("name", "roster", "terminal", "requires", "description", "protocol", "outcome",
                 "log")
    _defaults = {"terminal": False, "requires": (), "description": "", "protocol": None,
                 "outcome": "success", "log": None}


class Role(Record):
    # spawns: kinds this role may spawn (None: any); never_spawns: kinds it must never spawn;
    # self_spawn: whether it may spawn its own kind; timeout: seconds an agent of this role
    # may stay living from its birth before `sweep` ends it as failed
    __slots__ = ("name", "mandate", "max", "description", "spawns", "never_spawns", "self_spawn",
                 "timeout")
    _defaults = {"mandate": None, "max": None, "description": "", "spawns": None,
                 "never_spawns": (), "self_spawn": False, "timeout": None}


class Mortality(Record):
    __slots__ = ("midlife", "legacy", "urgent", "urgent_forbids")
    _defaults = {"midlife": 50, "legacy": 75, "urgent": 90, "urgent_forbids": ()}

    def phase(self, context_pct: float | None) -> str:
        if context_pct is None:
            return "unknown"
        if context_pct >= self.urgent:
            return "urgent"
        if context_pct >= self.legacy:
            return "legacy"
        if context_pct >= self.midlife:
            return "midlife"
        return "fresh"


# What each phase of the mortality clock asks of an agent (seed 000's thresholds).
PHASE_ADVICE = {
    "midlife": "midlife: make sure key decisions are written down",
    "legacy": "legacy: consolidate; fewer new reads, more writes; write your freeze-state "
              "(`gitstate freeze ID` writes the template)",
    "urgent": "urgent: externalize now, then freeze or die; no new work",
}


class Policies(Record):
    # approval: (from-pattern, to-pattern) pairs, '*' matching any state; law_approval: changes
    # of the law itself (`law` in the file's approval list) need a human's approval;
    # timeouts: (from, to) -> seconds; timeout_exempt: (from, to) -> roles it never applies
    # to; role_timeout: the cap (seconds) for roles without their own `timeout`, custom roles
    # included; heartbeat: seconds without a state commit after which `reap` ends a living
    # agent that has no recorded process; timeout_sooner: timed moves an agent may also make
    # before they are due (era's idle -> inbox: sweep makes it at the check interval)
    __slots__ = ("humans", "approval", "mortality", "max_living", "max_depth", "timeouts",
                 "custom_roles", "atomic_commits", "law_approval", "timeout_exempt",
                 "role_timeout", "heartbeat", "timeout_sooner", "context_window")
    # context_window: tokens of the agents' model window, when the runtime's table of known
    # models does not know it (or to override it)
    _defaults = {"humans": (), "approval": (), "mortality": None, "max_living": None,
                 "max_depth": None, "timeouts": {}, "custom_roles": True,
                 "atomic_commits": False, "law_approval": False, "timeout_exempt": {},
                 "role_timeout": None, "heartbeat": None, "timeout_sooner": (),
                 "context_window": None}


class Lifecycle(Record):
    __slots__ = ("name", "initial", "states", "transitions", "roles", "policies", "state_file",
                 "accept", "description", "source", "defaults")
    _defaults = {"roles": {}, "policies": Policies(), "state_file": DEFAULT_STATE_FILE, "accept": (),
                 "description": "", "source": "lifecycle.yaml", "defaults": {}}

    # -- questions the rules ask ---------------------------------------------------------

    def targets(self, state: str) -> tuple[str, ...]:
        """States reachable in one step (not counting staying put)."""
        return self.transitions.get(state, ())

    def allowed_from(self, state: str) -> tuple[str, ...]:
        """Every legal next state, staying put included where the state is not terminal."""
        if state not in self.states:
            return ()
        stay = () if self.states[state].terminal or state in self.targets(state) else (state,)
        return self.targets(state) + stay

    def is_legal(self, old: str, new: str) -> bool:
        return new in self.allowed_from(old)

    def needs_approval(self, old: str, new: str) -> bool:
        if old == new:
            return False
        return any(_glob(a, old) and _glob(b, new) for a, b in self.policies.approval)

    def timeout_applies(self, old: str, new: str, role: str | None) -> bool:
        """Is (old -> new) a timed transition for an agent holding `role`?"""
        return (old, new) in self.policies.timeouts \
            and not (role and role in self.policies.timeout_exempt.get((old, new), ()))

    def timeout_refuses_early(self, old: str, new: str, role: str | None) -> bool:
        """Is (old -> new), for `role`, refused before it is due?"""
        return self.timeout_applies(old, new, role) \
            and (old, new) not in self.policies.timeout_sooner

    def role_timeout(self, role: str | None) -> int | None:
        """How long an agent of `role` may live (its role's own, else the default cap)."""
        spec = self.roles.get(role) if role else None
        if spec is not None and spec.timeout is not None:
            return spec.timeout
        return self.policies.role_timeout if role else None

    def roster_of(self, state: str) -> str | None:
        s = self.states.get(state)
        return s.roster if s else None

    @property
    def mortality(self) -> Mortality:
        return self.policies.mortality or _DEFAULT_MORTALITY

    def state_path(self, agent: str) -> str:
        return self.state_file.replace("{id}", agent)

    def state_path_regex(self) -> re.Pattern:
        return state_path_regex(self.state_file)

    def accept_patterns(self) -> tuple:
        """The grammar.accept patterns, compiled for RE2 (linear time; see grammar)."""
        from gitstate.law.grammar import compile_accept
        return tuple(compile_accept(p) for p in self.accept)

    def to_dict(self) -> dict[str, Any]:
        pol = self.policies
        return {
            "name": self.name,
            "description": self.description,
            "initial": self.initial,
            "states": {n: {"roster": s.roster, "terminal": s.terminal, "requires": list(s.requires),
                           "description": s.description, "protocol": s.protocol,
                           "outcome": s.outcome, "log": s.log}
                       for n, s in self.states.items()},
            "transitions": {k: list(v) for k, v in self.transitions.items()},
            "roles": {n: {"mandate": r.mandate, "max": r.max, "description": r.description,
                          "timeout": r.timeout} for n, r in self.roles.items()},
            "policies": {
                "humans": list(pol.humans),
                "approval": [f"{a} -> {b}" for a, b in pol.approval]
                + (["law"] if pol.law_approval else []),
                "mortality": None if pol.mortality is None else {
                    "midlife": pol.mortality.midlife, "legacy": pol.mortality.legacy,
                    "urgent": pol.mortality.urgent,
                    "urgent_forbids": list(pol.mortality.urgent_forbids)},
                "max_living": pol.max_living,
                "max_depth": pol.max_depth,
                "timeouts": {f"{a} -> {b}": s if (a, b) not in pol.timeout_exempt
                             and (a, b) not in pol.timeout_sooner else
                             {"after": s, "except_roles": list(pol.timeout_exempt.get((a, b), ())),
                              "sooner": (a, b) in pol.timeout_sooner}
                             for (a, b), s in pol.timeouts.items()},
                "role_timeout": pol.role_timeout,
                "heartbeat": pol.heartbeat,
                "custom_roles": pol.custom_roles,
                "atomic_commits": pol.atomic_commits,
                "context_window": pol.context_window,
            },
            "layout": {"state_file": self.state_file},
            "grammar": {"accept": list(self.accept)},
            "defaults": dict(self.defaults),
        }


_DEFAULT_MORTALITY = Mortality()


def _glob(pattern: str, name: str) -> bool:
    """Shell-style match where only '*' is special (state names have no other metacharacter)."""
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), name) is not None


_PATH_RES: dict[str, re.Pattern] = {}


def state_path_regex(pattern: str) -> re.Pattern:
    """The regular expression of a layout's state-file paths (asked for every commit judged:
    made once per layout)."""
    found = _PATH_RES.get(pattern)
    if found is None:
        if len(_PATH_RES) > 64:   # a history of many layouts: keep it bounded
            _PATH_RES.clear()
        head, _, tail = pattern.partition("{id}")
        found = _PATH_RES[pattern] = re.compile(
            f"^{re.escape(head)}(?P<id>[^/]+){re.escape(tail)}$")
    return found


def parse_duration(value: Any) -> int | None:
    """Seconds in `30m`, `2h`, `45s`, `1d` or a bare number of seconds; None if unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    m = _DURATION_RE.fullmatch(str(value).strip())
    if not m or int(m.group(1)) == 0:
        return None
    return int(m.group(1)) * _DURATION_UNITS[m.group(2)]


def fmt_duration(seconds: int) -> str:
    """30m, 2h, 1d, 45s: the shortest exact form."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def parse_arrow(text: str) -> tuple[str, str] | None:
    """`"a -> b"` -> ("a", "b")."""
    if not isinstance(text, str) or "->" not in text:
        return None
    a, _, b = text.partition("->")
    a, b = a.strip(), b.strip()
    return (a, b) if a and b else None
