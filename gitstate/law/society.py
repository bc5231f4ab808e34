"""Rules that look beyond the agent being moved: roles and their limits, the pool cap, who may
spawn whom, freeze-state files, and atomic commits. Pure: the repository is seen through the
`Context` the caller hands in, and asked only when a rule needs it.
"""

from __future__ import annotations

from gitstate.law import statefile
from gitstate.law.freezestate import check_freeze_file, freeze_file_problems  # noqa: F401  (freeze_file_problems: part of this module's API)
from gitstate.law.grammar import Message, is_valid_id
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.roles import NAMED_HOLDERS, article, check_assumed, check_new_role, named, way_out  # noqa: F401  (NAMED_HOLDERS: part of this module's API)
from gitstate.law.rule_ids import Rule
from gitstate.law.times import duration
from gitstate.law.verdict import Context, Violation


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_society(parsed: list, lc: Lifecycle, ctx: Context, msg: Message | None) -> list:
    """Violations of the rules about the whole society."""
    out: list[Violation] = []
    census = Census(ctx, lc)
    for p in parsed:
        if p.new is not None and not p.new_problem and p.new.state in lc.states:
            _check_agent(p, lc, ctx, census, out, msg)
    if msg is not None and lc.policies.atomic_commits:
        out += _speaks_without_state(lc, msg, {p.agent for p in parsed})
    return out


def _speaks_without_state(lc: Lifecycle, msg: Message, changed: set[str]) -> list[Violation]:
    """A commit that speaks as an agent carries that agent's state file."""
    if not msg.prefix or msg.prefix in changed:
        return []
    return [Violation(Rule.ATOMIC, f"every commit of an agent carries its state file: this "
                      f"commit speaks as @{msg.prefix} but does not change "
                      f"{lc.state_path(msg.prefix)}", "commit message")]


def working_agent_violations(lc: Lifecycle, agent: str, msg: Message, changed: set[str],
                             front: dict | None) -> list[Violation]:
    """Where `atomic_commits` holds and the committer is known to be `agent` (its runtime
    sets GITSTATE_AGENT), an unprefixed commit while that agent is working is its work
    without its state: refused. A spawn, sweep or a human's commit made elsewhere is not
    concerned: only the environment of this very commit names the agent."""
    if not lc.policies.atomic_commits or msg.prefix is not None or agent in changed \
            or front is None or not _living(lc, front):
        return []
    state = front.get("state")
    return [Violation(Rule.ATOMIC, f"GITSTATE_AGENT says this commit is {agent}'s, and {agent} is "
                      f"working ({state}): every commit of an agent carries its state file; "
                      f"stage {lc.state_path(agent)} and use '@{agent}: [STATE:{state}] "
                      "<text>'", "commit message")]


def society_violations(lc: Lifecycle, fronts: dict[str, dict]) -> list[Violation]:
    """The limits of the society as a whole, for a set of state files (path -> front matter)
    seen at once, such as a work tree: living holders of each role, and living agents."""
    out = _over_role_max(lc, _living_holders(lc, fronts))
    cap = lc.policies.max_living
    living = [p for p, f in sorted(fronts.items()) if _living(lc, f)]
    if cap and len(living) > cap:
        out.append(Violation(Rule.MAX_LIVING, f"at most {cap} agents may be living at once; "
                             f"{len(living)} are", living[-1]))
    return out


def _living_holders(lc: Lifecycle, fronts: dict[str, dict]) -> dict[str, list[str]]:
    """Each role -> the paths of its living holders, sorted."""
    holders: dict[str, list[str]] = {}
    for path, front in sorted(fronts.items()):
        role = statefile.as_text(front.get("role"))
        if role and _living(lc, front):
            holders.setdefault(role, []).append(path)
    return holders


def _over_role_max(lc: Lifecycle, holders: dict[str, list[str]]) -> list[Violation]:
    out: list[Violation] = []
    for role, paths in sorted(holders.items()):
        most = lc.max_of(role)
        if most and len(paths) > most and not lc.max_advisory(role):
            out.append(Violation(Rule.ROLE_MAX, f"role '{role}' may have {most} living "
                                 f"holder{'s' if most != 1 else ''}, but {len(paths)} hold "
                                 f"it ({', '.join(paths)})", paths[-1]))
    return out


def _living(lc: Lifecycle, front: dict) -> bool:
    state = front.get("state")
    return isinstance(state, str) and lc.roster_of(state) == "living"


class Census:
    """The society as the judged commit leaves it, read once per judgement: the agents, the
    living holders of each role (sorted) and the number of living agents. Every rule about the
    whole society asks here, so a commit that changes N agents costs one pass over the agents,
    not one per changed agent. Nothing is read until a rule asks."""

    __slots__ = ("_ctx", "_lc", "_agents", "_holders", "_living")

    def __init__(self, ctx: Context, lc: Lifecycle):
        self._ctx, self._lc = ctx, lc
        self._agents: dict[str, dict] | None = None
        self._holders: dict[str, set[str]] | None = None
        self._living = 0

    def agents(self) -> dict[str, dict]:
        """agent id -> front matter of every readable state file in the commit."""
        if self._agents is None:
            self._agents = self._ctx.agents()
        return self._agents

    def _count(self) -> dict[str, set[str]]:
        if self._holders is None:
            known = self._ctx.living_roles(self._lc)
            self._holders, self._living = known if known is not None \
                else _counted(self._lc, self.agents())
        return self._holders

    def holders(self, role: str) -> list[str]:
        """The living holders of `role`, sorted."""
        return sorted(self._count().get(role, ()))

    def living(self) -> int:
        self._count()
        return self._living


def _counted(lc: Lifecycle, agents: dict[str, dict]) -> tuple[dict[str, set[str]], int]:
    """(role -> its living holders, number of living agents) of a set of agents."""
    holders: dict[str, set[str]] = {}
    living = 0
    for agent, front in agents.items():
        alive, role = census_entry(lc, front)
        if alive:
            living += 1
            if role:
                holders.setdefault(role, set()).add(agent)
    return holders, living


def census_entry(lc: Lifecycle, front: dict) -> tuple[bool, str | None]:
    """What one agent's front matter counts for in a census: (living, role held)."""
    return _living(lc, front), statefile.as_text(front.get("role"))


class _Move:
    """One agent's change as the society's rules read it: its state and role before and after,
    whether it is living on either side, and where its role is written."""

    __slots__ = ("state", "old_state", "living", "was_living", "role", "old_role", "role_at",
                 "spec")

    def __init__(self, p, lc: Lifecycle):
        old = p.old
        self.state: str = p.new.state
        self.old_state = old.state if old is not None else None
        self.living = lc.roster_of(self.state) == "living"
        self.was_living = isinstance(self.old_state, str) \
            and lc.roster_of(self.old_state) == "living"
        self.role = statefile.as_text(p.new.get("role"))
        self.old_role = statefile.as_text(old.get("role")) if old is not None else None
        self.role_at = f"{p.change.path}:{p.new.line_of('role')}"
        self.spec = lc.roles.get(self.role) if self.role else None


def _check_agent(p, lc: Lifecycle, ctx: Context, census: Census, out: list[Violation],
                 msg: Message | None = None) -> None:
    m = _Move(p, lc)
    if m.role and m.role not in lc.roles:
        check_new_role(p, lc, m.role, msg, m.role_at, out, old_role=m.old_role)
    _check_role_forbids(p, lc, m, out)
    if msg is not None and msg.prefix == p.agent and msg.trailer("assumes-role"):
        _check_assumes(p, lc, census, m, msg, out)
    _check_role_max(p, lc, census, m, out)
    _check_max_living(p, lc, census, m, out)
    if p.old is None:
        _check_birth(p, lc, census, m.role, out)
    _check_entering(p, lc, ctx, m, out)


def _check_assumes(p, lc: Lifecycle, census: Census, m: _Move, msg: Message,
                   out: list[Violation]) -> None:
    check_assumed(p, lc, census.holders(m.role) if m.role else [], msg, m.role, m.old_role,
                  m.living, m.role_at, out)


def _check_role_forbids(p, lc: Lifecycle, m: _Move, out: list[Violation]) -> None:
    """An agent never enters a state its role forbids."""
    spec = m.spec
    if spec is None or m.state == m.old_state or m.state not in spec.forbids:
        return
    instead = _ways_allowed(lc, m.old_state, spec.forbids)
    why = f" ({spec.description})" if spec.description else ""
    out.append(Violation(Rule.ROLE_FORBIDS, f"{p.agent} holds role '{m.role}', which never "
                         f"enters {m.state}{why}{instead}",
                         f"{p.change.path}:{p.new.line_of('state')}"))


def _ways_allowed(lc: Lifecycle, old_state, forbids: tuple[str, ...]) -> str:
    """"; from idle it may go to: ..." (the moves out of `old_state` a role allows)."""
    if not isinstance(old_state, str):
        return ""
    ways = [t for t in lc.allowed_from(old_state) if t not in forbids]
    return f"; from {old_state} it may go to: {', '.join(ways) or 'nowhere'}"


def _check_role_max(p, lc: Lifecycle, census: Census, m: _Move, out: list[Violation]) -> None:
    """An agent that comes to hold a role while living (born, woken, or taking it) finds room
    under the role's max."""
    role, most = _role_taken(m), lc.max_of(m.role)
    if not (role and most) or lc.max_advisory(role):
        return
    holders = census.holders(role)
    if len(holders) <= most:
        return
    out.append(_over_max(p, lc, m, role, most, holders))


def _over_max(p, lc: Lifecycle, m: _Move, role: str, most: int, holders: list[str]) -> Violation:
    # the first holder other than this agent (ids are unique: it is one of the first two)
    giver = next((h for h in holders[:2] if h != p.agent), None)
    default = "" if m.spec is not None and m.spec.max else " (policies.role_max: " \
        "the limit of every role without its own max)"
    return Violation(Rule.ROLE_MAX, f"role '{role}' may have {most} living "
                     f"holder{'s' if most != 1 else ''}{default}; with this commit it "
                     f"would have {len(holders)} ({named(holders)}). "
                     + way_out(p, role, giver, lc), m.role_at)


def _role_taken(m: _Move) -> str | None:
    """The role the agent comes to hold living (born, woken, or taking it), if any."""
    if not m.living or (m.was_living and m.role == m.old_role):
        return None
    return m.role


def _check_max_living(p, lc: Lifecycle, census: Census, m: _Move, out: list[Violation]) -> None:
    """An agent that comes to life finds room under the pool's cap."""
    cap = lc.policies.max_living
    if not m.living or m.was_living or not cap:
        return
    count = census.living()
    if count > cap:
        what = "spawn" if p.old is None else f"move out of {m.old_state}"
        out.append(Violation(Rule.MAX_LIVING, f"at most {cap} agents may be living at once; "
                             f"this {what} would make {count}. Let one end, freeze or "
                             "suspend first", f"{p.change.path}:{p.new.line_of('state')}"))


def _check_entering(p, lc: Lifecycle, ctx: Context, m: _Move, out: list[Violation]) -> None:
    """What the state entered asks of the same commit (its freeze-state file, its log entry),
    and that a timed move is due."""
    state, old_state = m.state, m.old_state
    if state != old_state:
        if lc.roster_of(state) == "frozen" and "freeze_state" in lc.states[state].requires:
            check_freeze_file(p, ctx, out)
        log = lc.states[state].log
        if log:
            _check_log(p, ctx, log, out)
    if isinstance(old_state, str) and lc.timeout_refuses_early(old_state, state, m.role):
        _check_timeout(p, lc, ctx, old_state, state, out)


def _check_log(p, ctx: Context, log: str, out: list[Violation]) -> None:
    """Entering a state with a `log` appends an entry to that shared file in the same commit:
    what was there stays, byte for byte, and something follows it."""
    before, after = ctx.base_file(log) or b"", ctx.tree_file(log) or b""
    if len(after) > len(before) and after.startswith(before):
        return
    how = "it was rewritten, not appended to" if after != before else "it is unchanged"
    out.append(Violation(Rule.LOG, f"entering {p.new.state} appends an entry to {log} in the same "
                         f"commit; {how} (`gitstate logout {p.agent} --note TEXT` does both)",
                         f"{p.change.path}:{p.new.line_of('state')}"))


def _check_timeout(p, lc: Lifecycle, ctx: Context, old: str, new: str,
                   out: list[Violation]) -> None:
    """A timed transition is taken only once it is due, counted from entering the state."""
    spec = lc.policies.timeout(old, new)
    if spec is None:   # not a timed move
        return
    wait = spec.after
    since = ctx.entered(p.agent, old)
    now = ctx.now()
    if since is not None and now - since >= wait:
        return
    left = f"; due in {int(wait - (now - since))}s" if since is not None else ""
    out.append(Violation(Rule.TIMEOUT, f"{old} -> {new} happens only after "
                         f"{duration(wait, exact=True)} in {old}{left} (`gitstate sweep` makes "
                         "it when due)",
                         f"{p.change.path}:{p.new.line_of('state')}"))


def _check_birth(p, lc: Lifecycle, census: Census, role: str | None,
                 out: list[Violation]) -> None:
    """A new agent's parent, its depth under that parent, and the depth limit."""
    new, path = p.new, p.change.path
    parent = new.get("parent")
    depth = _int(new.get("depth"))
    depth_at = f"{path}:{new.line_of('depth')}"
    if isinstance(parent, str) and is_valid_id(parent):
        pf = census.agents().get(parent.lower())
        if pf is None:
            out.append(Violation(Rule.PARENT, f"parent '{parent}' is not an agent of this "
                                 "repository", f"{path}:{new.line_of('parent')}"))
            return
        _check_parent(p, lc, parent, pf, depth, depth_at, out)
        _check_spawn(p, lc, role, parent, pf, out)
    elif depth not in (None, 0):
        out.append(Violation(Rule.DEPTH, f"an agent without a parent is at depth 0, not {depth}",
                             depth_at))
    _check_max_depth(p, lc.policies.max_depth, depth, depth_at, out)


def _check_max_depth(p, limit: int | None, depth: int | None, depth_at: str,
                     out: list[Violation]) -> None:
    if limit is not None and depth is not None and depth > limit:
        out.append(Violation(Rule.MAX_DEPTH, f"{p.agent} would be at depth {depth}; this "
                             f"lifecycle allows depths up to {limit}", depth_at))


def _check_parent(p, lc: Lifecycle, parent: str, pf: dict, depth: int | None, depth_at: str,
                  out: list[Violation]) -> None:
    """The parent has not ended, and the child is one level below it."""
    pstate = pf.get("state")
    if isinstance(pstate, str) and lc.roster_of(pstate) == "dead":
        out.append(Violation(Rule.PARENT_ENDED, f"parent '{parent}' has ended ({pstate}); an "
                             "agent that ended spawns no children (spawn from a living "
                             "agent, or without --parent)",
                             f"{p.change.path}:{p.new.line_of('parent')}"))
    expected = (_int(pf.get("depth")) or 0) + 1
    if depth != expected:
        out.append(Violation(Rule.DEPTH, f"depth must be the parent's plus one: {parent} is at "
                             f"depth {expected - 1}, so {p.agent} is at {expected}, not "
                             f"{depth}", depth_at))


def _check_spawn(p, lc: Lifecycle, role: str | None, parent: str, pf: dict,
                 out: list[Violation]) -> None:
    """The parent's role may spawn the child's: its own kind only with `self_spawn`, and only
    what its `spawns` and `never_spawns` allow."""
    prole = statefile.as_text(pf.get("role"))
    pspec = lc.roles.get(prole) if prole else None
    if not role:
        return
    at = f"{p.change.path}:{p.new.line_of('role')}"
    if role == prole and not (pspec is not None and pspec.self_spawn):
        out.append(Violation(Rule.SELF_SPAWN, f"{article(prole)} {prole} may not spawn "
                             f"another {prole} ({parent} spawning {p.agent}); only roles "
                             "with 'self_spawn: true' may", at))
    elif pspec is not None and not _spawns(pspec, role):
        allowed = _spawnable(lc, pspec, prole)
        out.append(Violation(Rule.SELF_SPAWN, f"{article(prole)} {prole} may not spawn "
                             f"{article(role)} {role}; it may spawn: "
                             f"{', '.join(allowed) or 'nothing'}", at))


def _spawnable(lc: Lifecycle, pspec, prole: str | None) -> list[str]:
    """The roles a holder of `prole` may spawn."""
    return [r for r in (pspec.spawns or lc.roles)
            if r not in pspec.never_spawns and (r != prole or pspec.self_spawn)]


def _spawns(spec, role: str) -> bool:
    """Whether a role's `spawns` and `never_spawns` let it spawn `role`."""
    return role not in spec.never_spawns and (spec.spawns is None or role in spec.spawns)
