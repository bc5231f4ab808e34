"""Taking a role other than at birth, or one the lifecycle does not declare: the commit says
so with a trailer (`Assumes-role:`, `New-role:`), and these rules judge what it says. Pure."""

from __future__ import annotations

from gitstate.law.verdict import Parsed, Violation
from gitstate.rule_ids import Rule

TYPE_CHECKING = False  # typing costs a hook ~3 ms to import (bench/README.md, "Hook latency")
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
    problem = None
    if wanted is None:
        problem = "a commit assumes one role ('Assumes-role:' given more than once)"
    elif p.old is None:
        problem = f"a new agent is born with its role (`gitstate spawn {p.agent} --role {wanted}`)"
    elif old_role:
        problem = (f"{p.agent} holds role '{old_role}'; an agent holds one role at a time "
                   f"(hand it on first: `gitstate handover {old_role} --to ID`)")
    elif role != wanted:
        problem = f"the commit says 'Assumes-role: {wanted}' but writes 'role: {role}'"
    elif not living:
        problem = f"{p.agent} is {p.new.state}, not living: only a living agent takes a role"
    else:
        others = [h for h in holders if h != p.agent]
        if others:
            problem = (f"role '{wanted}' is not vacant: {named(others)} hold"
                       f"{'s' if len(others) == 1 else ''} it (a hand-over gives it: "
                       f"`gitstate handover {wanted} --from {others[0]} --to {p.agent}`)")
    if problem:
        out.append(Violation(Rule.ASSUME_ROLE, problem, where))


NEW_ROLE = "new-role"   # the trailer that says a role not declared is meant (`spawn --new-role`)


def check_new_role(p, lc: Lifecycle, role: str, msg: Message | None,
                    where: str, out: list[Violation]) -> None:
    """A role the lifecycle does not declare is taken only where custom roles are allowed,
    and only when the commit says so (`New-role: ROLE`): a typo (`stewrad`) would otherwise
    become a role for good, fixed at birth and vacant forever."""
    from gitstate.law.suggest import did_you_mean
    near = did_you_mean(role, lc.roles)
    declared = f"({', '.join(lc.roles) or 'none'})"
    if not lc.policies.custom_roles:
        out.append(Violation(Rule.UNKNOWN_ROLE, f"role '{role}' is not one of this lifecycle's "
                             f"roles{near} {declared}, and custom roles are not allowed", where))
        return
    if msg is None:   # pre-commit has no message yet
        return
    said = [v.strip() for v in msg.trailer(NEW_ROLE)]
    if role in said:
        return
    out.append(Violation(Rule.UNKNOWN_ROLE, f"role '{role}' is not one of this lifecycle's "
                         f"roles{near} {declared}; a new role is taken only when the commit "
                         f"says so: `--new-role` (trailer 'New-role: {role}')", where))
