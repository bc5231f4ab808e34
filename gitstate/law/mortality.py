"""What an agent's context allows it to enter: the mortality clock (no new work at urgent
context) and a state's token budget (era's deep_work ends at `max_tokens`). Pure."""

from __future__ import annotations

from gitstate.law import statefile
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import Parsed, Violation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.law.lifecycle import Lifecycle


def check_mortality(p: Parsed, lc: Lifecycle, old_state: str | None, state: str,
                    where: str, out: list[Violation]) -> None:
    mort = lc.policies.mortality
    if mort is None or state == old_state or state not in mort.urgent_forbids:
        return
    pct = p.new.get("context_pct") if p.new else None
    if isinstance(pct, (int, float)) and not isinstance(pct, bool) and pct >= mort.urgent:
        out.append(Violation(Rule.URGENT, f"{p.agent} is at {pct}% context (urgent from "
                             f"{mort.urgent}%): entering {state} is refused; "
                             f"{_urgent_ways(p, lc, old_state, pct)}", where))


def _urgent_ways(p: Parsed, lc: Lifecycle, old_state: str | None, pct: float) -> str:
    """The urgent phase's advice, and the moves the lifecycle allows from where the agent
    stands."""
    start = old_state or lc.initial
    role = statefile.as_text(p.new.get("role")) if p.new is not None else None
    ways = lc.open_moves(start, context_pct=pct, role=role, waited=float("inf")) if start else []
    advice = (lc.phase_advice("urgent", p.agent) or "").removeprefix("urgent: ")
    allowed = f" (from {start} the lifecycle allows at urgent context: {', '.join(ways)})" \
        if ways else ""
    return advice + allowed


def check_tokens(p: Parsed, lc: Lifecycle, state: str, out: list[Violation]) -> None:
    """A state with a `token_limit` (era's deep_work) ends once the agent's `tokens` reach its
    `max_tokens`: it may not stay there, nor enter it, past its budget."""
    leave = lc.states[state].token_limit
    if not leave or p.new is None:
        return
    used, most = p.new.get("tokens"), p.new.get("max_tokens")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (used, most)) \
            or used < most:
        return
    out.append(Violation(Rule.TOKEN_LIMIT, f"{p.agent} has used {used:,} tokens of its "
                         f"max_tokens {most:,}: {state} ends at the token limit; go to "
                         f"{leave} (or raise max_tokens)",
                         f"{p.change.path}:{p.new.line_of('tokens')}"))
