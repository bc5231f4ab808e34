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
    pct = _urgent_pct(p, mort.urgent)
    if pct is not None:
        out.append(Violation(Rule.URGENT, f"{p.agent} is at {pct}% context (urgent from "
                             f"{mort.urgent}%): entering {state} is refused; "
                             f"{_urgent_ways(p, lc, old_state, pct)}", where))


def _urgent_pct(p: Parsed, urgent: int) -> float | None:
    """The agent's context_pct where it is a number at `urgent` or above."""
    pct = p.new.get("context_pct") if p.new else None
    if isinstance(pct, (int, float)) and not isinstance(pct, bool) and pct >= urgent:
        return pct
    return None


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


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def token_budget(lc: Lifecycle, max_tokens) -> int | None:
    """An agent's token budget: its `max_tokens`; where its state file has none (absent, or
    `null`), the lifecycle's `defaults: max_tokens`, as a newborn gets it; neither: no budget
    is declared, and no token limit holds."""
    own = _count(max_tokens)
    return own if own is not None else _count(lc.defaults.get("max_tokens"))


def check_tokens(p: Parsed, lc: Lifecycle, state: str, out: list[Violation]) -> None:
    """A state with a `token_limit` (era's deep_work) ends once the agent's `tokens` reach its
    budget (`token_budget`): it may not stay there, nor enter it, past its budget."""
    leave = lc.states[state].token_limit
    if not leave or p.new is None:
        return
    used, most = _count(p.new.get("tokens")), token_budget(lc, p.new.get("max_tokens"))
    if used is None or most is None or used < most:
        return
    whose = "its max_tokens" if _count(p.new.get("max_tokens")) is not None else \
        "the lifecycle's default max_tokens (its own is not set)"
    out.append(Violation(Rule.TOKEN_LIMIT, f"{p.agent} has used {used:,} tokens of "
                         f"{whose} {most:,}: {state} ends at the token limit; go to "
                         f"{leave} (or raise max_tokens)",
                         f"{p.change.path}:{p.new.line_of('tokens')}"))
