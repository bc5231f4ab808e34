"""A commit's changes of state files as the rules about movers read them: both sides parsed,
the move each makes, and the team operation a commit's `Moved-by:` trailer names. Pure; shared
by `movers.py`, `proofs.py` and `wall.py`."""

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
