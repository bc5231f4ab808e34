"""Judging a history by its tags alone: the moves its subjects name (`@id: [STATE:x]`, or a
`grammar.accept` form), without reading a state file.

An adopted history — one written before its lifecycle was committed, often with state files
in a format of its own — can still be held to the law it adopted: which state each agent
was born in, which moves it made, and whether it moved again after an end. Approvals,
roles and required fields live in the state files and commit bodies, and are not judged so.
"""

from __future__ import annotations

from gitstate.law.grammar import subject_tag
from gitstate.law.rule_ids import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.law.lifecycle import Lifecycle

BY_TAG = " (judged by its tag alone: this commit is older than the lifecycle)"


def judge_tags(lc: Lifecycle, commits) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(violations as (sha, rule, message), shas judged) for `commits` (sha, subject),
    oldest first, replayed as one line."""
    accept = lc.accept_patterns()
    now: dict[str, str] = {}
    found: list[tuple[str, str, str]] = []
    judged: list[str] = []
    for sha, subject in commits:
        tag = subject_tag(subject, accept)
        if tag is None:
            continue
        agent, state, _text = tag
        judged.append(sha)
        rule_message = _judge_move(lc, agent, now.get(agent), state)
        if rule_message is not None:
            found.append((sha, rule_message[0], rule_message[1] + BY_TAG))
        if state in lc.states:
            now[agent] = state
    return found, judged


def _judge_move(lc: Lifecycle, agent: str, before: str | None,
                state: str) -> tuple[str, str] | None:
    from gitstate.law.rules import legal_moves
    if state not in lc.states:
        from gitstate.law.suggest import did_you_mean
        return (Rule.UNKNOWN_STATE, f"'{state}' is not a state of lifecycle '{lc.name}'"
                f"{did_you_mean(state, lc.states)} (states: {', '.join(lc.states)})")
    if before is None:
        if state != lc.initial:
            return (Rule.NOT_INITIAL, f"{agent} is born in {state}; a new agent starts in "
                    f"{lc.initial}")
        return None
    from gitstate.law.retry import is_retry
    if is_retry(lc, before, state, None):
        return None   # a retry: its count and backoff are judged with the state files
    if lc.states[before].terminal:
        return (Rule.TERMINAL, f"{agent} ended in {before} (terminal) and moves again, to {state}")
    if state not in lc.allowed_from(before):
        return (Rule.ILLEGAL_TRANSITION, f"{agent} is in {before}; {legal_moves(lc, before)}, "
                f"not {state}")
    return None
