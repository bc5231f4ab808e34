"""The runtime's events in the law: which event of an agent's runtime (a Claude Code hook, ...)
moves the agent where, declared once per lifecycle under `runtime:`.

    runtime:
      prompt: [{moves: ["idle -> active"]}]
      session_end:
        - {when: [clear, logout], moves: ["idle -> cleanup"]}
        - {moves: ["idle -> suspended", "active -> suspended"]}

An event's rules are tried in order. A rule applies when its `when` names one of the event's
kinds (a session's end reason, an outcome; no `when`: every kind) and one of its moves leaves
the agent's state (`*`: any state); the first such move is made, judged like any move
(`record: true`: where no move leaves the state, the event is recorded in a progress commit).
No rule applies: nothing happens, and no git process is started. The subject is the
session's agent, and for the sub-agent events the sub-agent, which `spawn: true` at
`subagent_start` registers (its parent, depth and kind) in the lifecycle's initial state.

Pure: the runtime's hooks (`gitstate.runtime.events`) ask `decide`, and `gitstate lifecycle`
shows `table`.
"""

from __future__ import annotations

from gitstate.law.patterns import glob, parse_arrow
from gitstate.law.record import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# event -> (when it happens, the kinds a rule's `when` may name)
EVENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "session_start": ("a session starts; kind: how (startup, resume, clear, compact)",
                      ("startup", "resume", "clear", "compact")),
    "prompt": ("a prompt is submitted to the agent", ()),
    "stop": ("the agent's turn ends; kind: success, or failure when it ended on an API error",
             ("success", "failure")),
    "pre_compact": ("the context is about to be compacted; kind: manual or auto",
                    ("manual", "auto")),
    "session_end": ("the session ends; kinds: its reason (clear, resume, logout, "
                    "prompt_input_exit, other) and its outcome (failure when its last turn "
                    "ended on an error or was interrupted, else success)",
                    ("clear", "resume", "logout", "prompt_input_exit", "other", "success",
                     "failure")),
    "subagent_start": ("a sub-agent starts; the subject is the sub-agent", ()),
    "subagent_stop": ("a sub-agent ends; the subject is the sub-agent; kind: success, or "
                      "failure when it ended on an error or was interrupted",
                      ("success", "failure")),
}
SUBJECT_IS_CHILD = ("subagent_start", "subagent_stop")


class RuntimeRule(Record):
    moves: tuple[str, ...] = field(
        (), about="the moves ('from -> to', '*' for any state) this event makes: the first "
                  "that leaves the agent's state")
    when: tuple[str, ...] = field(
        (), about="the kinds of the event this rule is for (none: every kind)")
    spawn: bool = field(
        False, about="subagent_start only: register the sub-agent (parent, depth, kind) in the "
                     "lifecycle's initial state")
    record: bool = field(
        False, about="when no move applies: a progress commit that records the event, the "
                     "state unchanged")
    summary: str | None = field(
        None, about="the front-matter key that gets the session's (or sub-agent's) last "
                    "message with the move")


RULE_KEYS = {"moves", "when", "spawn", "record", "summary"}
# keys a last message may never be written into: gitstate's own, and the runtime's facts
RESERVED = ("agent", "state", "parent", "depth", "updated", "key", "role", "session", "pid",
            "host", "model", "worktree", "context_pct", "tokens", "started", "ended")


def decide(runtime: dict[str, tuple[RuntimeRule, ...]], event: str, kinds: tuple[str, ...],
           state: str | None) -> tuple[str | None, RuntimeRule | None]:
    """(the state `event`, of `kinds`, moves an agent in `state` to: "" for a birth in the
    initial state, `state` itself for a recorded event; the rule), or (None, None)."""
    for rule in runtime.get(event, ()):
        target = _outcome(rule, state) if _for_kinds(rule, kinds) else None
        if target is not None:
            return target, rule
    return None, None


def _for_kinds(rule: RuntimeRule, kinds: tuple[str, ...]) -> bool:
    """Is the rule for one of the event's kinds (no `when`: for every kind)?"""
    return not rule.when or any(k in rule.when for k in kinds)


def _outcome(rule: RuntimeRule, state: str | None) -> str | None:
    """Where the rule takes an agent in `state`: "" a birth in the initial state, a move's
    target, or, recorded, `state` itself; None: nowhere."""
    if rule.spawn and state is None:
        return ""    # a birth: the initial state
    target = _leaving(rule, state)
    if target is not None:
        return target
    return state if rule.record else None    # recorded where it stands


def _leaving(rule: RuntimeRule, state: str | None) -> str | None:
    """Where the first of the rule's moves that leaves `state` goes, if one does."""
    if state is None:
        return None
    for move in rule.moves:
        arrow = parse_arrow(move)
        if arrow and glob(arrow[0], state) and arrow[1] != state:
            return arrow[1]
    return None


def table(runtime: dict[str, tuple[RuntimeRule, ...]]) -> list[dict]:
    """One row per rule, in the order they are tried: {event, when, moves, spawn, record,
    summary}."""
    return [{"event": event, **rule.as_plain()}
            for event in EVENTS for rule in runtime.get(event, ())]


def describe(runtime: dict[str, tuple[RuntimeRule, ...]]) -> list[str]:
    """The table as `gitstate lifecycle` shows it: a line per rule, in the order they are
    tried (the presets' tables in docs/how-to/claude-code.md are these lines)."""
    out = []
    for row in table(runtime):
        when = f" ({', '.join(row['when'])})" if row["when"] else ""
        does = _does(row)
        keeps = f"; last message as {row['summary']}" if row["summary"] else ""
        out.append(f"  {row['event']}{when}: {'; '.join(does)}{keeps}")
    return out


def _does(row: dict) -> list[str]:
    """What a rule does: its moves, a sub-agent registered, the event recorded."""
    does = [", ".join(row["moves"])] if row["moves"] else []
    does += ["registers the sub-agent"] if row["spawn"] else []
    does += ["else recorded where it stands" if row["moves"] else "recorded where it stands"
             ] if row["record"] else []
    return does


def read_runtime(r, raw: Any, states: dict, transitions: dict, initial: str | None
                 ) -> dict[str, tuple[RuntimeRule, ...]]:
    """`runtime:` of a lifecycle file, checked: known events and kinds, moves between declared
    states that the transitions allow, `spawn` only where a sub-agent starts."""
    where = ("runtime",)
    events = r.mapping(raw, where, "runtime")
    out: dict[str, tuple[RuntimeRule, ...]] = {}
    for event, rules in events.items():
        at = where + (event,)
        if event not in EVENTS:
            r.bad(at, f"runtime: unknown event {event!r}; known: {', '.join(EVENTS)}")
            continue
        if isinstance(rules, dict):
            rules = [rules]
        if not isinstance(rules, list):
            r.bad(at, f"runtime.{event} must be a list of rules {{moves: [...], when: [...]}}")
            continue
        read = []
        for i, rule in enumerate(rules):
            got = _read_rule(r, rule, at + (i,), event, states, transitions, initial)
            if got is not None:
                read.append(got)
        out[str(event)] = tuple(read)
    return out


def _read_rule(r, rule: Any, at: tuple, event: str, states: dict, transitions: dict,
               initial: str | None) -> RuntimeRule | None:
    what = f"runtime.{event}"
    if not isinstance(rule, dict):
        r.bad(at, f"{what}: a rule is a mapping {{moves: [...], when: [...]}}")
        return None
    r.unknown_keys(rule, RULE_KEYS, at, what)
    when = _read_when(r, rule, at, event, what)
    spawn = _read_spawn(r, rule, at, event, what)
    moves = _read_moves(r, rule, at, what, states, transitions)
    record = r.flag(rule.get("record", False), at + ("record",), f"{what}: record")
    summary = _read_summary(r, rule, at, what)
    if not moves and not spawn and not record:
        r.bad(at, f"{what}: a rule needs moves, or record: true (or, at subagent_start, "
                  "spawn: true)")
        return None
    if spawn and initial is None:
        r.bad(at, f"{what}: spawn needs the lifecycle's initial state")
    return RuntimeRule(moves=tuple(moves), when=when, spawn=spawn, record=record,
                       summary=summary)


def _read_when(r, rule: dict, at: tuple, event: str, what: str) -> tuple[str, ...]:
    """The kinds a rule is for: kinds of its event."""
    kinds = EVENTS[event][1]
    when = tuple(r.names(rule.get("when"), at + ("when",), f"{what}: when"))
    for kind in when:
        if kind not in kinds:
            r.bad(at + ("when",), f"{what}: {kind!r} is not a kind of this event"
                  + (f"; its kinds: {', '.join(kinds)}" if kinds else "; it has no kinds"))
    return when


def _read_spawn(r, rule: dict, at: tuple, event: str, what: str) -> bool:
    """`spawn`: true or false, and true only where a sub-agent starts."""
    spawn = rule.get("spawn", False)
    if not isinstance(spawn, bool) or (spawn and event != "subagent_start"):
        r.bad(at + ("spawn",), f"{what}: spawn must be true or false, and only "
                               "subagent_start registers a sub-agent")
        return False
    return spawn


def _read_moves(r, rule: dict, at: tuple, what: str, states: dict, transitions: dict
                ) -> list[str]:
    moves = []
    for i, item in enumerate(r.names(rule.get("moves"), at + ("moves",), f"{what}: moves")):
        move = _read_move(r, item, at + ("moves", i), what, states, transitions)
        if move is not None:
            moves.append(move)
    return moves


def _read_move(r, item: str, at: tuple, what: str, states: dict, transitions: dict
               ) -> str | None:
    """One of a rule's moves, 'from -> to': to a state, by a transition the lifecycle
    declares."""
    move = r.arrow(item, at, f"{what}:")
    if move is None:
        return None
    old, _, new = move.partition(" -> ")
    if new not in states:
        r.bad(at, f"{what}: {item!r} moves to {new!r}, which is not a state")
        return None
    sources = [s for s in states if glob(old, s)]
    if not any(new in transitions.get(s, ()) for s in sources):
        r.bad(at, f"{what}: no transition makes {item!r}; a runtime event makes only moves "
                  "the transitions allow")
        return None
    return move


def _read_summary(r, rule: dict, at: tuple, what: str) -> str | None:
    """The front-matter key that gets the last message: any but gitstate's own."""
    summary = rule.get("summary")
    if summary is not None and (not isinstance(summary, str) or not summary.strip()
                                or summary in RESERVED):
        r.bad(at + ("summary",), f"{what}: summary names the front-matter key that gets the "
                                 f"last message, not one of gitstate's ({', '.join(RESERVED)})")
        return None
    return summary
