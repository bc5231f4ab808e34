"""A commit's changes of state files as the rules about movers read them: both sides parsed,
the move each makes, the team operation a commit's `Moved-by:` trailer names, and the moves of
that operation's kind. Pure; shared by `movers.py`, `proofs.py` and `wall.py`."""

from __future__ import annotations

from gitstate.law.grammar import Message
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.verdict import Parsed

TEAM_OPERATIONS = ("sweep", "reap", "shutdown")


def team_operation(msg: Message | None) -> str | None:
    """`sweep` of a commit whose `Moved-by:` trailer says `gitstate sweep`; else None."""
    if msg is None:
        return None
    for value in msg.trailer("moved-by"):
        words = value.split()
        if len(words) == 2 and words[0].lower() == "gitstate" \
                and words[1].lower() in TEAM_OPERATIONS:
            return words[1].lower()
    return None


def move_of(p: Parsed) -> tuple[str | None, str | None]:
    """(from, to) states of a parsed change (from None: a birth)."""
    old = p.old.state if p.old is not None else None
    new = p.new.state if p.new is not None else None
    return (old if isinstance(old, str) else None), (new if isinstance(new, str) else None)


def parsed_changes(lc: Lifecycle, changes: list, memo: dict | None) -> list[Parsed]:
    """The state-file changes of a commit, both sides parsed (a side that does not parse is
    left out: other rules refuse it)."""
    from gitstate.errors import InvalidFile
    from gitstate.law.rules import parse_state
    rx = lc.state_path_regex()
    out = []
    for ch in changes:
        m = rx.match(ch.path)
        if m is None or ch.old == ch.new:
            continue
        p = Parsed(ch, m.group("id"))
        try:
            p.old = parse_state(ch.old, ch.path, None) if ch.old is not None else None
            p.new = parse_state(ch.new, ch.path, memo) if ch.new is not None else None
        except InvalidFile:
            continue
        out.append(p)
    return out


def op_kind(lc: Lifecycle, op: str, old: str | None, new: str | None,
            role: str | None) -> bool:
    """Is old -> new a move of the kind team operation `op` makes? `sweep`: a timed move, or
    an end of an agent past its role's timeout; `reap`: an end that reads as a failure;
    `shutdown`: a move that brings the agent nearer a frozen or terminal state."""
    if old is None or new is None or new not in lc.states or old == new:
        return False
    kind = _KINDS.get(op)
    return kind is not None and kind(lc, old, new, role)


def _ends_failed(lc: Lifecycle, new: str) -> bool:
    spec = lc.states[new]
    return spec.outcome == "failure" and spec.roster != "living"


def _swept(lc: Lifecycle, old: str, new: str, role: str | None) -> bool:
    return lc.timeout_applies(old, new, role) or (
        lc.role_timeout(role) is not None and _ends_failed(lc, new))


def _reaped(lc: Lifecycle, old: str, new: str, role: str | None) -> bool:
    return _ends_failed(lc, new)


def _shut_down(lc: Lifecycle, old: str, new: str, role: str | None) -> bool:
    return _steps_to_rest(lc, new) < _steps_to_rest(lc, old)


_KINDS = {"sweep": _swept, "reap": _reaped, "shutdown": _shut_down}


def at_rest(lc: Lifecycle, state: str) -> bool:
    """A frozen (resumable) or terminal state; a crash state (frozen, and a failure: squad's
    error) is no place to rest."""
    spec = lc.states.get(state)
    if spec is None:      # a state the law does not declare (a hostile or older file)
        return False
    return spec.terminal or (spec.roster == "frozen" and spec.outcome != "failure")


def _steps_to_rest(lc: Lifecycle, start: str) -> float:
    """The fewest moves (timed moves aside: they are sweep's) from `start` to a frozen or
    terminal state: a shutdown's every move brings its agent nearer."""
    frontier, seen, steps = [start], {start}, 0
    while frontier:
        if any(at_rest(lc, s) for s in frontier):
            return steps
        frontier, steps = _nearer(lc, frontier, seen), steps + 1
    return float("inf")


def _nearer(lc: Lifecycle, frontier: list[str], seen: set[str]) -> list[str]:
    """The states one move (not a timed one) from `frontier` not seen yet (now seen)."""
    nearer = []
    for s in frontier:
        for t in lc.targets(s):
            if t not in seen and lc.policies.timeout(s, t) is None:
                seen.add(t)
                nearer.append(t)
    return nearer
