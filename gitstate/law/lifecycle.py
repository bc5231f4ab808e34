"""Lifecycles as data: the model of `protocols/lifecycle.yaml` and the questions rules ask it
(reading and checking a lifecycle file is `gitstate.law.load`)."""

from __future__ import annotations

import re

from gitstate.law.patterns import glob as _glob, parse_arrow, state_path_regex
from gitstate.law.record import Record, field
from gitstate.law.retry import Retry
from gitstate.law.runtime_table import RuntimeRule
from gitstate.law.statekeys import DEFAULTS, KEYS
from gitstate.law.timed import Heartbeat, Timeout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ROSTERS = ("living", "frozen", "dead")
DEFAULT_STATE_FILE = "agent/{id}/_state.md"
LIFECYCLE_PATH = "protocols/lifecycle.yaml"   # the law of a managed repository
SIGNERS_PATH = "protocols/allowed_signers"    # the keys of the humans who approve
SHIMS_DIR = ".githooks/"                      # the hook shims, as committed


def is_law_path(path: str, lc: Lifecycle | None = None) -> bool:
    """Is `path` law: the lifecycle, allowed signers, a shim, an agent file of `lc` (agents.py)?"""
    return path in (LIFECYCLE_PATH, SIGNERS_PATH) or path.startswith(SHIMS_DIR) or bool(
        lc and lc.policies.agents_from == path.rpartition("/")[0] and path.endswith(".md"))

# `defaults`: fields a new agent's state file starts with unless `spawn` is told otherwise
# (e.g. person, project); never the ones gitstate itself sets at birth
NOT_DEFAULTS = tuple(k.name for k in KEYS if DEFAULTS not in k.by)   # law/statekeys.py
OUTCOMES = ("success", "failure")

# The lifecycle, declared once. Each record's fields are the keys of its part of
# `protocols/lifecycle.yaml` (the loader refuses any other), of `gitstate lifecycle --json`
# and of `gitstate schema lifecycle`; a field's default is what a file that leaves it out gets.


class State(Record):
    name: str
    roster: str = field(
        "living", about="living, frozen or dead: where an agent in this state is listed")
    terminal: bool = field(False, about="true when no move leaves this state")
    requires: tuple[str, ...] = field(
        (), about="front-matter keys an agent must have to enter this state")
    description: str = field("", about="what the state means")
    protocol: str | None = field(None, about="the protocol document an agent in this state follows")
    outcome: str = field(
        "success", about="how an ending here reads to whoever waits on it: success or failure")
    log: str | None = field(
        None, about="a shared file that a commit entering this state appends to")
    token_limit: str | None = field(
        None, about="the state an agent goes to once its `tokens` reach `max_tokens`")
    stamp: str | None = field(
        None, about="a front-matter key set to the moment an agent enters this state")
    _plain_skip = ("name",)    # a state is keyed by its name


class Role(Record):
    name: str
    mandate: str | None = field(None, about="what a holder of the role is for")
    max: int | None = field(None, about="how many living holders the role may have")
    max_advisory: bool = field(False, about="the max is a convention, not law (seed 000's one "
                               "holder per role): more holders are warned of, never refused")
    description: str = field("", about="what the role is")
    spawns: tuple[str, ...] | None = field(None, about="the roles a holder may spawn (null: any)")
    never_spawns: tuple[str, ...] = field((), about="the roles a holder must never spawn")
    self_spawn: bool = field(False, about="whether a holder may spawn its own role")
    timeout: int | None = field(
        None, about="seconds a holder may stay living from birth before `sweep` ends it")
    forbids: tuple[str, ...] = field(
        (), about="states a holder never enters (squad: a core session is never suspended)")
    load: str | None = field(
        None, about="the state `gitstate team load` brings a new holder to at once")
    _plain_skip = ("name",)


NO_ROLE = Role(name="")   # what an undeclared role (or none) is held to


class Mortality(Record):
    midlife: int = field(50, about="context_pct from which an agent is in midlife")
    legacy: int = field(
        75, about="context_pct from which it is in legacy (writes what it leaves behind)")
    urgent: int = field(90, about="context_pct from which it is urgent (must freeze or end)")
    urgent_forbids: tuple[str, ...] = field((), about="states an urgent agent may not move to")

    def phase(self, context_pct: float | None) -> str:
        """The phase of an agent whose context is `context_pct` full: the last mark reached."""
        marks = (("urgent", self.urgent), ("legacy", self.legacy), ("midlife", self.midlife))
        if context_pct is None:
            return "unknown"
        return next((name for name, mark in marks if context_pct >= mark), "fresh")


class Movers(Record):
    """Who may move an agent besides itself (explanation/movers.md): its `parent` may
    make these moves of it (beyond spawning it); a living holder of a role in `roles` may
    make its moves of any agent; `operators` are principals of `protocols/allowed_signers`
    (besides the humans) whose signature proves `gitstate reap` and `gitstate shutdown`.
    Moves are written 'from -> to', '*' matching any state."""
    parent: tuple[str, ...] = field(
        (), about="moves ('from -> to') an agent's parent may make of it")
    roles: dict[str, tuple[str, ...]] = field(
        {}, about="for each role, the moves its living holders may make of any agent")
    operators: tuple[str, ...] = field(
        (), about="principals whose signature proves `reap`, `shutdown` and the runtime's moves")
    system: tuple[str, ...] = field((), about="moves only the runtime or a human makes")

    def parent_may(self, old: str, new: str) -> bool:
        return _matches(self.parent, old, new)

    def roles_for(self, old: str, new: str) -> list[str]:
        """The roles whose holders may make this move of another agent."""
        return [r for r, moves in self.roles.items() if _matches(moves, old, new)]


def _matches(moves: tuple[str, ...], old: str, new: str) -> bool:
    return any(_glob(a, old) and _glob(b, new)
               for m in moves if (arrow := parse_arrow(m)) is not None for a, b in [arrow])


class Policies(Record):
    humans: tuple[str, ...] = field((), about="the humans who may approve gated moves")
    approval: tuple[str, ...] = field(
        (), about="moves ('from -> to', or `law`) that need a human's approval")
    mortality: Mortality | None = field(
        None, about="the context thresholds of the mortality phases")
    max_living: int | None = field(None, about="how many agents may be living at once")
    max_depth: int | None = field(None, about="how deep agents may spawn agents")
    timeouts: dict[str, Timeout] = field({}, about="timed moves, keyed 'from -> to'")
    role_timeout: int | None = field(
        None, about="seconds a holder of a role without its own timeout may live")
    role_max: int | None = field(
        None, about="how many living holders a role without its own `max` may have")
    heartbeat: Heartbeat | None = field(
        None, about="how long a working agent may be silent before `reap` ends it")
    custom_roles: bool = field(
        True, about="whether agents may hold roles the lifecycle does not declare")
    atomic_commits: bool = field(
        False, about="whether a state commit must hold the agent's state file alone")
    fourth_wall: bool = field(False, about="whether only the runtime or a human changes the "
                                           "keys the system measures, and makes movers.system")
    changes_in: dict[str, tuple[str, ...]] = field({}, about="key -> the states a move leaves "
                                                            "when it may change that key")
    work_commits_name_agent: bool = field(False, about="whether every commit on the team line "
                                                       "speaks as @id (or is a human's)")
    context_window: int | None = field(None, about="tokens of the agents' model window, if unknown")
    movers: Movers = field(Movers(), about="who may move an agent besides itself")
    decisions: str | None = field(
        None, about="the team's decisions file: a resumed session's briefing shows its newest "
                    "entries")
    retry: Retry | None = field(None, about="how often, and how soon, a failed agent may retry")
    agents_from: str | None = field(None, about="agent files whose forbiddenAgents lists are law")
    _private = ("_pairs",)
    _pairs: tuple[tuple[str, str], ...] | None   # approval's 'from -> to' pairs, read once

    @property
    def law_approval(self) -> bool:
        return "law" in self.approval

    def approved(self, msg) -> bool:
        """Does an `Approved-by:` trailer of the commit message `msg` name one of the humans?"""
        humans = {h.lower() for h in self.humans}
        return any(v.strip().lower() in humans for v in msg.trailer("approved-by"))

    @property
    def approval_pairs(self) -> tuple[tuple[str, str], ...]:
        if self._pairs is None:
            self._pairs = tuple(
                arrow for a in self.approval if (arrow := parse_arrow(a)) is not None)
        return self._pairs

    def timeout(self, old: str, new: str) -> Timeout | None:
        return self.timeouts.get(f"{old} -> {new}")

    def timed_moves(self):
        """(from, to, Timeout) of every timed move."""
        for key, spec in self.timeouts.items():
            a, _, b = key.partition(" -> ")
            yield a, b, spec


class Layout(Record):
    state_file: str = field(
        DEFAULT_STATE_FILE, about="where an agent's state file lives (`{id}` is its id)")


class Grammar(Record):
    accept: tuple[str, ...] = field(
        (), about="further patterns of commit subjects read as state commits")


class Lifecycle(Record):
    name: str = field("unnamed", about="the lifecycle's name")
    description: str = field("", about="what it is for")
    initial: str | None = field(None, about="the state a spawned agent starts in")
    states: dict[str, State] = field({}, about="every state, by name")
    transitions: dict[str, tuple[str, ...]] = field(
        {}, about="for each state, the states it may move to")
    roles: dict[str, Role] = field({}, about="every declared role, by name")
    policies: Policies = field(Policies(), about="the rules beyond the moves")
    layout: Layout = field(Layout(), about="where state files live")
    grammar: Grammar = field(Grammar(), about="how commit subjects are read")
    line: str | None = field(
        None, about="the team line: the branch whose first-parent history is the lifecycle's; "
                    "declaring it puts the line rule in force (a merge there carries work, never "
                    "a move or a change of the law)")
    defaults: dict = field({}, about="front-matter values a spawned agent gets")
    runtime: dict[str, tuple[RuntimeRule, ...]] = field(
        {}, about="which event of the agent's runtime moves it where: rules by event")
    source: str = "lifecycle.yaml"
    _plain_skip = ("source",)

    @property
    def state_file(self) -> str:
        return self.layout.state_file

    @property
    def accept(self) -> tuple[str, ...]:
        return self.grammar.accept


    # -- questions the rules ask ---------------------------------------------------------

    def targets(self, state: str) -> tuple[str, ...]:
        """States reachable in one step (not counting staying put)."""
        return self.transitions.get(state, ())

    def allowed_from(self, state: str | None) -> tuple[str, ...]:
        """Every legal next state, staying put included where the state is not terminal."""
        if state is None or state not in self.states:
            return ()
        stay = () if self.states[state].terminal or state in self.targets(state) else (state,)
        return self.targets(state) + stay

    def is_legal(self, old: str, new: str) -> bool:
        return new in self.allowed_from(old)

    def held(self, state: str) -> bool:
        """Is an agent in `state` a human's to move (approval for `state -> *`, haak's frozen)?
        Then every change to it needs approval, staying in the state included (its role
        handed away): it cannot speak for itself."""
        return any(_glob(a, state) and b == "*" for a, b in self.policies.approval_pairs)

    def gated(self, old: str, new: str) -> bool:
        """Does a change of an agent's file from `old` to `new` need a human's approval: a
        gated move, or any change of a held agent (`held`)?"""
        return self.needs_approval(old, new) or (old == new and self.held(old))

    def needs_approval(self, old: str, new: str) -> bool:
        if old == new:
            return False
        return any(_glob(a, old) and _glob(b, new) for a, b in self.policies.approval_pairs)

    def timeout_applies(self, old: str, new: str, role: str | None) -> bool:
        """Is (old -> new) a timed transition for an agent holding `role`?"""
        spec = self.policies.timeout(old, new)
        return spec is not None and not (role and role in spec.except_roles)

    def timeout_refuses_early(self, old: str, new: str, role: str | None) -> bool:
        """Is (old -> new), for `role`, refused before it is due?"""
        spec = self.policies.timeout(old, new)
        return self.timeout_applies(old, new, role) and spec is not None and not spec.sooner

    def _role(self, role: str | None) -> Role:
        """`role`'s declaration (an undeclared role, or none, has the defaults)."""
        return (self.roles.get(role) if role else None) or NO_ROLE

    def max_of(self, role: str | None) -> int | None:
        """How many living holders `role` may have: its own `max`, else `policies.role_max`
        (custom roles included; the seed's default_max_per_role)."""
        return (self._role(role).max or self.policies.role_max) if role else None

    def max_advisory(self, role: str | None) -> bool:
        """Whether `role`'s max is a convention (warned of), not law (refused)."""
        return self._role(role).max_advisory

    def forbidden_by_role(self, role: str | None, state: str) -> bool:
        """Does holding `role` keep an agent out of `state` (`roles.R.forbids`)?"""
        return state in self._role(role).forbids

    def heartbeat_for(self, role: str | None, state: str | None = None) -> int | None:
        """How long an agent of `role` in `state` may be silent before `reap` fails it (None:
        forever: no heartbeat, a role exempt, or a state where the agent waits by design)."""
        beat = self.policies.heartbeat
        if beat is None or (role and role in beat.except_roles) \
                or (state is not None and beat.states and state not in beat.states):
            return None
        return beat.after

    def open_moves(self, state: str | None, *, role: str | None = None,
                   context_pct: float | None = None, waited: float | None = None) -> list[str]:
        """The next states the hooks would accept now (`status`'s `next`): the legal ones,
        without those the agent's role forbids, those the mortality policy forbids at urgent
        context, and timed moves not yet due after `waited` seconds in `state` (unknown:
        not due)."""
        urgent = context_pct is not None and context_pct >= self.mortality.urgent
        return [t for t in self.allowed_from(state)
                if (t == state or not self._barred(t, role, urgent))
                and not self._not_due(state, t, role, waited)]

    def _barred(self, state: str, role: str | None, urgent: bool) -> bool:
        """Is `state` closed to an agent of `role` by its role, or by urgent context?"""
        return self.forbidden_by_role(role, state) or (
            urgent and state in self.mortality.urgent_forbids)

    def _not_due(self, state: str | None, t: str, role: str | None,
                 waited: float | None) -> bool:
        """Is `state -> t` a timed move not yet due after `waited` seconds (unknown: not
        due)?"""
        if not state:
            return False
        spec = self.policies.timeout(state, t)
        return spec is not None and self.timeout_refuses_early(state, t, role) \
            and (waited is None or waited < spec.after)

    def ways_to_rest(self, agent: str = "ID") -> list[tuple[str, str]]:
        """How an agent of this lifecycle leaves for good or for later, as (verb, command):
        freeze (a frozen state with a freeze-state), log out (a state with a log), die or
        end (the first terminal state that is not a failure)."""
        ways = []
        for spec in self.states.values():
            if spec.roster == "frozen" and "freeze_state" in spec.requires:
                ways.append(("freeze", f"gitstate freeze {agent}"))
            elif spec.log:
                ways.append(("log out", f"gitstate logout {agent} --note TEXT"))
        return list(dict.fromkeys(ways + self._way_to_end(agent)))

    def _way_to_end(self, agent: str) -> list[tuple[str, str]]:
        """Die or end: the first terminal state that is not a failure, if any."""
        end = next((n for n, spec in self.states.items()
                    if spec.terminal and spec.outcome != "failure"), None)
        if end is None:
            return []
        verb = "die" if end == "dead" else "end"
        return [(verb, f"gitstate bury {agent} --summary TEXT"
                 if "final_summary" in self.states[end].requires
                 else f"gitstate transition {agent} {end}")]

    def phase_advice(self, phase: str | None, agent: str = "ID") -> str | None:
        """What a phase of the mortality clock asks of an agent of this lifecycle (seed 000's
        words), with this lifecycle's own ways out: no freezing where there is no freezer.
        Only a lifecycle that declares a mortality policy asks anything (squad, maos,
        registry and era declare none: their agents are told their context, never advised)."""
        if self.policies.mortality is None:
            return None
        if phase == "midlife":
            return "midlife: make sure key decisions are written down"
        if phase == "legacy":
            return "legacy: consolidate; fewer new reads, more writes" + self._legacy_then(agent)
        if phase == "urgent":
            return f"urgent: externalize now, then {self._ways_said(agent)}; no new work"
        return None

    def _ways_said(self, agent: str) -> str:
        """"freeze or die (`...`, `...`)": the ways to rest, or where there is none, an end."""
        ways = self.ways_to_rest(agent)
        if not ways:
            return "head for an end"
        return (" or ".join(v for v, _ in ways) + " ("
                + ", ".join(f"`{c}`" for _, c in ways) + ")")

    def _legacy_then(self, agent: str) -> str:
        """What legacy asks an agent to write: its freeze-state, or a draft of its log note."""
        if any(s.roster == "frozen" and "freeze_state" in s.requires for s in self.states.values()):
            return ("; write your freeze-state (`gitstate freeze " + agent + "` writes the "
                    "template)")
        log = next((s.log for s in self.states.values() if s.log), None)
        return f"; read {log} and draft your note" if log else ""

    def role_timeout(self, role: str | None) -> int | None:
        """How long an agent of `role` may live (its role's own, else the default cap)."""
        own = self._role(role).timeout
        return own if own is not None or not role else self.policies.role_timeout

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
        """`gitstate lifecycle --json`: the lifecycle's plain form."""
        return self.as_plain()


_DEFAULT_MORTALITY = Mortality()
