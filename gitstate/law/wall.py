"""Who writes what of a state file, and who speaks in a commit (seed 004, era): the fourth
wall, keys that change only in some states, and work commits that name their agent. Pure.

- The fourth wall (`policies.fourth_wall`): the keys the system measures (`statekeys.MEASURED`:
  context_pct, tokens, max_tokens, the runtime's session and process, the time stamps a move
  does not write) and the moves `policies.movers.system` names are the system's. A commit that
  changes them is the runtime's (its hooks' commits say `Moved-by: gitstate runtime`), a team
  operation's, or a human's (`Approved-by:`); else `fourth-wall`. The trailers are proven
  where keys exist: the runtime's moves of an agent with a key by a signature of a human or an
  operator (`law/proofs.py`), a human's approval by that human's signature
  (`unsigned-approval`); where no keys exist the wall is advisory against an agent that
  writes the trailer itself. The stamps a move writes of its own (`ended`, a state's `stamp`:
  era's idle_since) are the move's own time: one hand-picked (`--set idle_since=...`) further
  from the commit's time than the law's clock tolerance is the system's too.
- `policies.changes_in` (era: `thread: [distill]`): a key changes only in a move that leaves
  one of the states named (births aside): `changes-in`.
- `policies.work_commits_name_agent`: a commit the hub or `verify` judges on the team line,
  not a merge, speaks as `@id:`, or is a human's: signed by a key allowed_signers lists for a
  human, or, where the law has no allowed_signers, with a human's `Approved-by:`
  (`unnamed-work`).
"""

from __future__ import annotations

from gitstate.law.changed import move_of, op_kind, parsed_changes, team_operation
from gitstate.law.grammar import Message
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.patterns import glob, parse_arrow
from gitstate.law.rule_ids import Rule
from gitstate.law.statekeys import MEASURED
from gitstate.law.verdict import Parsed, Violation

RUNTIME = "runtime"   # `Moved-by: gitstate runtime`: a commit of the runtime's hooks


def runtime_move(msg: Message | None) -> bool:
    """Does the commit say it is the runtime's (`Moved-by: gitstate runtime`)?"""
    return msg is not None and any(v.split() == ["gitstate", RUNTIME]
                                   for v in (x.lower() for x in msg.trailer("moved-by")))


def system_move(lc: Lifecycle, old: str | None, new: str | None) -> bool:
    """Is old -> new one of the moves `policies.movers.system` keeps for the system?"""
    if not old or not new or old == new:
        return False
    return any(glob(a, old) and glob(b, new) for m in lc.policies.movers.system
               if (arrow := parse_arrow(m)) is not None for a, b in [arrow])


def written(lc: Lifecycle, old: str | None, new: str | None) -> set[str]:
    """The stamps the move old -> new writes of its own: `ended` entering a terminal state,
    the stamp of the state it enters."""
    if new == old or new not in lc.states:
        return set()
    spec = lc.states[new]
    return ({"ended"} if spec.terminal else set()) | ({spec.stamp} if spec.stamp else set())


def system_changes(lc: Lifecycle, p: Parsed) -> list[str]:
    """What of this change of an agent's state file is the system's under the fourth wall: the
    measured keys it changes (a stamp the move itself writes aside), and a move of
    `movers.system`. A birth is its parent's or the lead's: none."""
    if p.old is None or p.new is None or not lc.policies.fourth_wall:
        return []
    old, new = move_of(p)
    out = _measured_changed(lc, p.old.front, p.new.front, written(lc, old, new))
    if system_move(lc, old, new):
        out.append(f"move {old} -> {new}")
    return out


def _measured_changed(lc: Lifecycle, before: dict, after: dict, own: set[str]) -> list[str]:
    """The measured keys and stamps that differ, but those the move writes of its own."""
    keys = set(MEASURED) | {s.stamp for s in lc.states.values() if s.stamp}
    return sorted(k for k in keys - own if before.get(k) != after.get(k))


def systems(lc: Lifecycle, msg: Message, p: Parsed) -> bool:
    """Does the commit say this change is the system's: the runtime's, a human's, or a team
    operation's of a move of the kind that operation makes (a `Moved-by: gitstate sweep` on
    any other change is the agent's words, which no door could tell from its own)?"""
    if runtime_move(msg) or lc.policies.approved(msg):
        return True
    op = team_operation(msg)
    if op is None:
        return False
    from gitstate.law.statefile import as_text
    old, new = move_of(p)
    doc = p.old or p.new
    front = doc.front if doc is not None else {}
    # an operation makes the move and writes the move's own stamps; a measured key it never
    # writes (an agent's own context_pct) is still the runtime's or a human's
    return op_kind(lc, op, old, new, as_text(front.get("role"))) \
        and all(what.startswith("move ") for what in system_changes(lc, p))


def walled(lc: Lifecycle, changes: list, memo: dict | None = None) -> list[str]:
    """What of a commit the fourth wall keeps for the system, as a human's approval of it reads
    ("era-1's context_pct"): approved like a gated move (`agent-approval`,
    `unsigned-approval`)."""
    if not lc.policies.fourth_wall:
        return []
    return [f"{p.agent}'s {', '.join(what)}" for p in parsed_changes(lc, changes, memo)
            if (what := system_changes(lc, p))]


def waits_for_message(lc: Lifecycle, changes: list, memo: dict | None) -> bool:
    """Does the verdict on these changes wait for the message (its trailers tell whose the
    system's changes are)?"""
    return any(system_changes(lc, p) for p in parsed_changes(lc, changes, memo))


def check_walls(lc: Lifecycle, changes: list, msg: Message | None,
                memo: dict | None, ctx=None) -> list[Violation]:
    """`fourth-wall` and `changes-in` of a commit's state-file changes (the fourth wall waits
    for the message: the trailers tell). With the door's context, a stamp the move writes of
    its own is the commit's time."""
    out: list[Violation] = []
    for p in parsed_changes(lc, changes, memo):
        if msg is not None:
            out += _check_wall(lc, p, msg, ctx)
        out += _changes_in(lc, p)
    return out


def _check_wall(lc: Lifecycle, p: Parsed, msg: Message, ctx) -> list[Violation]:
    what = system_changes(lc, p)
    if what and not systems(lc, msg, p):
        return [_fourth_wall(lc, p, what)]
    if ctx is not None and lc.policies.fourth_wall and not systems(lc, msg, p):
        return _picked_stamps(lc, p, ctx)
    return []


def _picked_stamps(lc: Lifecycle, p: Parsed, ctx) -> list[Violation]:
    """A stamp the move writes of its own (era's idle_since, `ended`) that is not the move's
    own time: further from the commit's time than the law's clock tolerance (`SKEW`)."""
    from gitstate.law.times import iso
    if p.old is None or p.new is None:
        return []
    old, new = move_of(p)
    out = []
    for key in sorted(written(lc, old, new)):
        value = p.new.front.get(key)
        if value is None or value == p.old.front.get(key):
            continue
        at = ctx.committed()
        if _within_skew(value, at):
            continue
        out.append(Violation(Rule.FOURTH_WALL, f"{p.agent}'s {key} is the time of the move that "
                             f"writes it ({old} -> {new}, committed {iso(at)}), not {value!s} "
                             "(policies.fourth_wall: a stamp is the system's measurement); "
                             f"leave it out (no `--set {key}=...`) and the move writes its "
                             "own", f"{p.change.path}:{p.new.line_of(key)}"))
    return out


def _within_skew(value, at: float) -> bool:
    """Is `value` a time within the law's clock tolerance of `at`?"""
    from gitstate.law.times import SKEW, parse_iso
    try:
        return abs(parse_iso(str(value)) - at) <= SKEW
    except (ValueError, OverflowError, OSError):
        return False


def _fourth_wall(lc: Lifecycle, p: Parsed, what: list[str]) -> Violation:
    keys = [w for w in what if not w.startswith("move ")]
    human = lc.policies.humans[0] if lc.policies.humans else "HUMAN"
    instead = _leave_as_they_are(keys)
    at = f"{p.change.path}:{p.new.line_of(keys[0])}" if keys and p.new else p.change.path
    return Violation(Rule.FOURTH_WALL, f"{p.agent}'s {', '.join(what)} "
                     f"{'are' if len(what) > 1 else 'is'} the system's (policies.fourth_wall): "
                     "the runtime's hooks record what they measure and make its moves (their "
                     "commits say `Moved-by: gitstate runtime`), or a human does, with "
                     f"`--approved-by {human}` from a terminal of their own; {instead}", at)


def _leave_as_they_are(keys: list[str]) -> str:
    if not keys:
        return "make another move"
    return f"leave {', '.join(keys)} as {'they are' if len(keys) > 1 else 'it is'} " \
        f"(no `--set {keys[0]}=...`)"


def _changes_in(lc: Lifecycle, p: Parsed) -> list[Violation]:
    """A key of `policies.changes_in` changed in a move that leaves no state it names."""
    if p.old is None or p.new is None:
        return []
    old, new = move_of(p)
    out = []
    for key, states in lc.policies.changes_in.items():
        if old not in states and p.old.front.get(key) != p.new.front.get(key):
            out.append(_changed_outside(p, key, states, old, new))
    return out


def _changed_outside(p: Parsed, key: str, states: tuple[str, ...], old, new) -> Violation:
    assert p.old is not None and p.new is not None
    where = " or ".join(states) or "no state"
    was = p.old.front.get(key)
    kept = f"keep {key} as it was ({was!r})" if was is not None else f"leave {key} unset"
    how = f"`gitstate transition {p.agent} <next> --set {key}=...` from {states[0]}" \
        if states else "no move"
    return Violation(Rule.CHANGES_IN, f"{p.agent}'s {key} changes only in a move that "
                     f"leaves {where} (policies.changes_in), and this one leaves {old} "
                     f"({old} -> {new}); {kept}, and change it then: {how}",
                     f"{p.change.path}:{p.new.line_of(key)}")


def unnamed_work(lc: Lifecycle, msg: Message, proofs) -> list[Violation]:
    """`unnamed-work`: under `work_commits_name_agent`, a commit (not a merge) judged on the
    team line where its signatures are seen, that speaks as no agent and is no human's."""
    if not lc.policies.work_commits_name_agent or msg.prefix is not None or msg.malformed:
        return []
    human = lc.policies.humans[0] if lc.policies.humans else "HUMAN"
    proof = _missing_proof(lc, msg, proofs, human)
    if proof is None:
        return []
    return [Violation(Rule.UNNAMED_WORK, f"every work commit names its agent "
                      f"(policies.work_commits_name_agent): {msg.subject[:60]!r} speaks as no "
                      f"agent and has no {proof}; an agent commits its work with its state: "
                      "'@<id>: [STATE:<state>] <text>' (`gitstate transition <id> <state> -m "
                      f"TEXT`); a human signs it, or adds `Approved-by: {human}`",
                      "commit message")]


def _missing_proof(lc: Lifecycle, msg: Message, proofs, human: str) -> str | None:
    """What would show the commit is a human's, where nothing does (None: something does)."""
    listed = proofs.signers()
    if listed is None:
        if lc.policies.approved(msg):
            return None
        return f"a human's `Approved-by: {human}` trailer (the law has no allowed_signers)"
    from gitstate.law.signers import keys_of
    keys = [k for h in lc.policies.humans for k in keys_of(listed, h)]
    why = proofs.signed_by_any(keys)
    return None if why is None else \
        f"a signature by a key allowed_signers lists for a human ({why})"
