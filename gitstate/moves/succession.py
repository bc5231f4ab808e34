"""Roles changing hands after birth: a holder hands its role to another agent (`handover`,
trailer `Role-transfer:`), a living agent without one takes a vacant role (`assume`, trailer
`Assumes-role:`). Each is one commit, judged like any move."""

from __future__ import annotations

from gitstate.errors import GitstateError, InvalidFile
from gitstate.git.atomic import Result
from gitstate.git.repo import Managed
from gitstate.law import statefile
from gitstate.law.grammar import canonical_id
from gitstate.moves.agent import _role_transfer, current_state, transition


def handover(repo: Managed, role: str, to: str, *, giver: str | None = None,
             text: str | None = None, approved_by: str | None = None) -> Result:
    """A holder of `role` hands it to `to` in one commit (a progress update of the holder,
    trailer `Role-transfer: ROLE -> TO`), and stays in its state without the role. Without
    `giver`, the one living holder gives it."""
    head = repo.head()
    lc = repo.lifecycle(head)
    to = canonical_id(to)
    giver = canonical_id(_the_holder(repo, lc, head, role, to) if giver is None else giver)
    if giver == to:
        raise GitstateError(f"{to} cannot hand '{role}' to itself")
    _lc, state, front = current_state(repo, giver)
    if statefile.as_text(front.get("role")) != role:
        raise GitstateError(f"{giver} does not hold role '{role}' "
                            f"(its role: {statefile.as_text(front.get('role')) or 'none'})")
    files, sets, moved = _role_transfer(repo, lc, front, role, to)
    return transition(repo, giver, state, text=text or f"hands {role} to {to}", sets=sets,
                      files=files, action="handover", approved_by=approved_by,
                      trailers=[("Role-transfer", moved)])


def _the_holder(repo: Managed, lc, head: str | None, role: str, to: str) -> str:
    """The one living holder of `role` (besides `to`); refused when there is none or several."""
    holders = sorted(a for a, data in repo.agents_at(lc, head).items()
                     if _holds(data, lc, a, role, living=True) and a != to)
    if len(holders) != 1:
        who = f"living holders: {', '.join(holders)}" if holders else "no living holder"
        raise GitstateError(f"role '{role}' has {who}; say which one gives it",
                            hint=f"`gitstate handover {role} --from HOLDER --to {to}`")
    return holders[0]


def assume(repo: Managed, agent: str, role: str, *, text: str | None = None,
           new_role: bool = False) -> Result:
    """A living agent without a role takes a vacant one, in one commit of its own (trailer
    `Assumes-role: ROLE`): the seed's "any agent can choose to assume a vacant role".
    `new_role`: `role` is meant though the lifecycle does not declare it (trailer `New-role:`,
    as at a birth)."""
    _lc, state, _front = current_state(repo, agent)
    return transition(repo, agent, state, text=text or f"assumes {role}", sets={"role": role},
                      action="assume", trailers=[("Assumes-role", role)]
                      + ([("New-role", role)] if new_role else []))


def _holds(data: bytes, lc, agent: str, role: str, *, living: bool) -> bool:
    try:
        doc = statefile.parse_bytes(data, lc.state_path(agent))
    except InvalidFile:
        return False
    alive = isinstance(doc.state, str) and lc.roster_of(doc.state) == "living"
    return statefile.as_text(doc.get("role")) == role and (alive or not living)
