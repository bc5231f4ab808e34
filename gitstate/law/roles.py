"""Taking a role other than at birth, one the lifecycle does not declare, or handing one over:
the commit says so with a trailer (`Assumes-role:`, `New-role:`, `Role-transfer:`), and these
rules judge what it says; the fields fixed at birth, a role among them; and the words refusals
about roles share. Pure."""

from __future__ import annotations

from gitstate.law import statefile
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import Parsed, Violation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.law.grammar import Message
    from gitstate.law.lifecycle import Lifecycle

# A role-max names at most this many holders (the rest are counted): each changed agent gets
# its own violation, and naming every holder in each would make the words of a commit that
# adds N holders grow as N * N.
NAMED_HOLDERS = 20


def named(holders: list[str]) -> str:
    if len(holders) <= NAMED_HOLDERS:
        return ", ".join(holders)
    return ", ".join(holders[:NAMED_HOLDERS]) + f" and {len(holders) - NAMED_HOLDERS:,} more"


def over_advisory_max(lc: Lifecycle, fronts) -> list[str]:
    """A warning for each role whose max is a convention (`max_advisory`, seed 000) that more
    living agents hold than it says (`fronts`: the agents' front matters): the law lets it be,
    the team should know."""
    holders = _advisory_holders(lc, fronts, {r for r in lc.roles if lc.max_advisory(r)})
    return [f"role '{role}' has {len(held)} living holders ({named(sorted(held))}); its max of "
            f"{lc.max_of(role)} is a convention (max_advisory: true), warned of, not refused: "
            f"coordinate, or hand it on (`gitstate handover {role} --from ID --to ID2`)"
            for role, held in sorted(holders.items()) if len(held) > (lc.max_of(role) or 0)]


def _advisory_holders(lc: Lifecycle, fronts, advisory: set[str]) -> dict[str, list[str]]:
    """Each role of `advisory` -> the ids of its living holders."""
    holders: dict[str, list[str]] = {}
    for front in fronts if advisory else ():
        role, state = statefile.as_text(front.get("role")), front.get("state")
        if role in advisory and isinstance(state, str) and lc.roster_of(state) == "living":
            holders.setdefault(role, []).append(str(front.get("agent")))
    return holders


ASSUMES = "assumes-role"   # the trailer of `gitstate assume ID ROLE`


def assumed_role(parsed: list[Parsed], msg: Message | None) -> str | None:
    """The agent that takes a vacant role in this commit (`Assumes-role: ROLE`, the agent
    speaking): its role may change from none to that one; `society` judges the rest."""
    if msg is None or msg.prefix is None or len(msg.trailer(ASSUMES)) != 1:
        return None
    return msg.prefix if any(p.agent == msg.prefix for p in parsed) else None


def check_assumed(p, lc: Lifecycle, holders: list[str], msg: Message, role: str | None,
                   old_role: str | None, living: bool, where: str,
                   out: list[Violation]) -> None:
    """A living agent takes a vacant role (the seed: any agent may assume one), in a commit
    of its own that says so (`Assumes-role: ROLE`): it holds no other role, and no other
    living agent holds this one."""
    said = msg.trailer("assumes-role")
    wanted = said[0].strip() if len(said) == 1 else None
    problem = _why_not_assume(p, wanted, role, old_role, living)
    if problem is None and wanted is not None:
        problem = _occupied(p.agent, wanted, holders)
    if problem:
        out.append(Violation(Rule.ASSUME_ROLE, problem, where))


def _why_not_assume(p, wanted: str | None, role: str | None, old_role: str | None,
                    living: bool) -> str | None:
    """What keeps this agent from taking a role, whoever holds it."""
    if wanted is None:
        return "a commit assumes one role ('Assumes-role:' given more than once)"
    if p.old is None:
        return f"a new agent is born with its role (`gitstate spawn {p.agent} --role {wanted}`)"
    if old_role:
        return (f"{p.agent} holds role '{old_role}'; an agent holds one role at a time "
                f"(hand it on first: `gitstate handover {old_role} --to ID`)")
    if role != wanted:
        return f"the commit says 'Assumes-role: {wanted}' but writes 'role: {role}'"
    if not living:
        return f"{p.agent} is {p.new.state}, not living: only a living agent takes a role"
    return None


def _occupied(agent: str, wanted: str, holders: list[str]) -> str | None:
    """The role is held by another living agent."""
    others = [h for h in holders if h != agent]
    if not others:
        return None
    return (f"role '{wanted}' is not vacant: {named(others)} hold"
            f"{'s' if len(others) == 1 else ''} it (a hand-over gives it: "
            f"`gitstate handover {wanted} --from {others[0]} --to {agent}`)")


NEW_ROLE = "new-role"   # the trailer that says a role not declared is meant (`spawn --new-role`)


def assumes_undeclared(p, msg: Message | None, role: str, old_role: str | None) -> bool:
    """Does this commit take `role` after birth by assuming it (`Assumes-role:`)? Then a role
    the lifecycle does not declare needs the commit's `New-role: ROLE` as a birth does, or an
    `Assumes-role: architcet` would make a typo a role for good. (A role handed over with
    `Role-transfer:` was its giver's already.)"""
    return p.old is not None and role != old_role and msg is not None \
        and msg.prefix == p.agent and bool(msg.trailer(ASSUMES))


def check_new_role(p, lc: Lifecycle, role: str, msg: Message | None,
                    where: str, out: list[Violation], old_role: str | None = None) -> None:
    """A role the lifecycle does not declare is held only where custom roles are allowed,
    and taken (at birth, or assumed later) only when the commit says so (`New-role: ROLE`):
    a typo (`stewrad`) would otherwise become a role for good, fixed and vacant forever."""
    if p.old is not None and lc.policies.custom_roles \
            and not assumes_undeclared(p, msg, role, old_role):
        return    # held since its birth, or handed over by its holder
    if not lc.policies.custom_roles:
        out.append(Violation(Rule.UNKNOWN_ROLE, f"{_not_a_role(lc, role)}, and custom roles are "
                             "not allowed", where))
    elif msg is not None and role not in [v.strip() for v in msg.trailer(NEW_ROLE)]:
        # (pre-commit has no message yet)
        out.append(Violation(Rule.UNKNOWN_ROLE, f"{_not_a_role(lc, role)}; a new role is taken "
                             "only when the commit says so: `--new-role` (trailer 'New-role: "
                             f"{role}')", where))


def _not_a_role(lc: Lifecycle, role: str) -> str:
    from gitstate.law.suggest import did_you_mean
    return (f"role '{role}' is not one of this lifecycle's roles{did_you_mean(role, lc.roles)} "
            f"({', '.join(lc.roles) or 'none'})")


def article(word: str | None) -> str:
    """'a' or 'an' before a role's name (by its first letter: roles are names, not sounds)."""
    first = (word or "")[:1].lower()
    return "an" if first and first in "aeiou" else "a"


def way_out(p, role: str, giver: str | None, lc: Lifecycle) -> str:
    """A way past `role-max` that works: a living holder (`giver`, the first other than this
    agent) hands the role over first (a frozen agent that still holds it keeps it, and is woken
    as the one holder), or a vacancy."""
    giver = giver or "HOLDER"
    held = p.old is not None and isinstance(p.old.state, str) and lc.held(p.old.state)
    hand = f"`gitstate handover {role} --from {giver} --to {p.agent}" + (
        " --approved-by HUMAN`" if held else "`")
    if p.old is None:
        return (f"Spawn {p.agent} without the role and have {giver} hand it over ({hand}), "
                "or wait for a vacancy")
    return f"First have {giver} hand it over ({hand}), then retry; or wait for a vacancy"


def role_transfer(value: str) -> tuple[str, str] | None:
    """(role, to) of `Role-transfer: <role> -> <to>`, read without a regular expression (one
    backtracked quadratically on a value of many arrows)."""
    role, arrow, to = value.strip().rpartition("->")
    role, to = role.rstrip(), to.lstrip()
    if not arrow or not role or not to or any(c.isspace() for c in role + to):
        return None
    return role, to


def is_role_transfer(parsed: list[Parsed], msg: Message | None, out: list) -> bool:
    """The one commit that may touch two agents: `Role-transfer: <role> -> <to>` hands a role
    from the agent that speaks to another, so that the role is never vacant nor doubly held.
    The receiver's file may change only in `role` (and `updated`)."""
    parties = _transfer_parties(parsed, msg)
    if parties is None:
        return False
    role, to, giver, taker = parties
    _check_transfer(role, to, giver, taker, out)
    return True


def _transfer_parties(parsed: list[Parsed], msg: Message | None
                      ) -> tuple[str, str, Parsed, Parsed] | None:
    """(role, receiver's id, giver, receiver) of a role transfer between two agents, both
    read on both sides."""
    found = _transfer_trailer(parsed, msg)
    if found is None:
        return None
    role, to = found
    giver = _party(parsed, msg.prefix) if msg else None
    taker = _party(parsed, to)
    if giver is None or taker is None or giver is taker or not _both_sides(giver) \
            or not _both_sides(taker):
        return None
    return role, to, giver, taker


def _party(parsed: list[Parsed], agent: str | None) -> Parsed | None:
    return next((p for p in parsed if p.agent == agent), None)


def _transfer_trailer(parsed: list[Parsed], msg: Message | None) -> tuple[str, str] | None:
    """(role, receiver's id) of the one `Role-transfer: <role> -> <to>` trailer of a commit
    that changes two agents and speaks as one."""
    if msg is None or len(parsed) != 2 or msg.prefix is None:
        return None
    values = msg.trailer("role-transfer")
    found = role_transfer(values[0]) if len(values) == 1 else None
    return (found[0], found[1].lower()) if found else None


def _both_sides(p: Parsed) -> bool:
    return p.old is not None and p.new is not None


def _check_transfer(role: str, to: str, giver: Parsed, taker: Parsed,
                    out: list[Violation]) -> None:
    """The giver held the role and lets it go; the receiver takes it and changes nothing
    else."""
    problem = _giver_problem(role, giver)
    if problem is None:
        problem = _taker_problem(role, to, taker)
    if problem is not None:
        out.append(problem)


def _giver_problem(role: str, giver: Parsed) -> Violation | None:
    """The giver held the role and holds none after."""
    assert giver.old is not None and giver.new is not None   # _transfer_parties
    if statefile.as_text(giver.old.get("role")) != role:
        return Violation(Rule.MULTIPLE_AGENTS, f"{giver.agent} cannot hand over role '{role}': "
                         "it does not hold it", "commit message")
    kept = statefile.as_text(giver.new.get("role"))
    if kept == role:
        return Violation(Rule.MULTIPLE_AGENTS, f"{giver.agent} hands over '{role}' but keeps "
                         "it; set its role to null in the same commit", "commit message")
    if kept:   # a role taken past `Assumes-role:` (a vacancy) and `New-role:` (a typo)
        return Violation(Rule.ASSUME_ROLE, f"{giver.agent} hands over '{role}' and takes "
                         f"'{kept}' in the same commit; a giver's role becomes null (then "
                         f"`gitstate assume {giver.agent} {kept}` takes a vacant one)",
                         f"{giver.change.path}:{giver.new.line_of('role')}")
    return None


def _besides_role(front: dict) -> dict:
    return {k: v for k, v in front.items() if k not in ("role", "updated")}


def _taker_problem(role: str, to: str, taker: Parsed) -> Violation | None:
    """The receiver held no other role, and takes this one changing nothing else."""
    assert taker.old is not None and taker.new is not None
    held = statefile.as_text(taker.old.get("role"))
    if held and held != role:   # its own role would vanish with no hand-over of it
        return Violation(Rule.ASSUME_ROLE, f"{to} holds role '{held}'; an agent holds one "
                         f"role at a time (have {to} hand '{held}' on first)",
                         f"{taker.change.path}:{taker.new.line_of('role')}")
    before, after = _besides_role(taker.old.front), _besides_role(taker.new.front)
    if before != after or statefile.as_text(taker.new.get("role")) != role:
        return Violation(Rule.MULTIPLE_AGENTS, f"in a role transfer {to}'s state file may only "
                         f"take the role ('role: {role}')",
                         f"{taker.change.path}:{taker.new.line_of('role')}")
    return None


def check_fixed_fields(parsed: list[Parsed], msg: Message | None, transfer: bool,
                       out: list[Violation]) -> None:
    """The fields fixed at birth of each changed agent, its role free to change by a transfer
    or by taking a vacant one."""
    assumed = assumed_role(parsed, msg)
    several = msg is None and len({p.agent for p in parsed}) > 1
    for p in parsed:
        # without the message (pre-commit) a role taken (`Assumes-role:`) cannot be told
        # apart either: judged at commit-msg
        taking = msg is None and p.old is not None and not p.old.get("role")
        _check_fixed(p, out, role_may_change=transfer or several or p.agent == assumed or taking)


FIXED_AT_BIRTH = ("parent", "depth", "role", "key")   # and `agent`: its directory


def _check_fixed(p: Parsed, out: list[Violation], role_may_change: bool) -> None:
    """`parent`, `depth` and `role` are fixed when an agent is born (`agent` is held to its
    directory by `agent-mismatch`); a role changes hands only by a role transfer (the
    `Role-transfer:` commit of `bury`)."""
    if p.old is None or p.new is None or p.new_problem:
        return
    for key in FIXED_AT_BIRTH:
        if key == "role" and role_may_change:
            continue
        before, after = p.old.get(key), p.new.get(key)
        if before != after:
            out.append(Violation(Rule.FIXED_FIELD, f"'{key}' is fixed when an agent is born "
                                 f"({before!r}); it may not change{_fixed_ways(key, before)}, "
                                 f"not to {after!r}", f"{p.change.path}:{p.new.line_of(key)}"))


def _fixed_ways(key: str, before) -> str:
    """How a fixed field may change after all: only a role, by a transfer (or, vacant, by
    being taken)."""
    if key != "role":
        return ""
    how = " except by a role transfer (`gitstate handover ROLE --to ID2`, or " \
        "`gitstate bury ID --transfer-role-to ID2`)"
    if not before:
        how += " or by taking a vacant role (`gitstate assume ID ROLE`, trailer " \
            "'Assumes-role: ROLE')"
    return how
