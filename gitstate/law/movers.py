"""Who may move whom (docs/explanation/movers.md). Pure: given who is moving and the
move, say whether the law lets them.

An agent is moved by itself; by its parent, which spawns it and may make the moves the
lifecycle lists under `policies.movers.parent` (registry: ending it); by a living holder of a
role listed under `policies.movers.roles` (e.g. a supervisor that may freeze others); by
gitstate's team operations (`sweep`, `reap`, `shutdown`), which say so in a `Moved-by:`
trailer; and by a human, for a gated move (its `Approved-by:`). Anyone else's move is
`not-yours`.

Who is moving is known locally from the session's binding (`GITSTATE_AGENT`); at the hub and
in `verify` it is proven by signatures (`history/signatures.py`).

A human's approval typed in an agent's session proves nothing: until `protocols/allowed_signers`
lets a signature show which human approved, a gated move made from an agent's session (bound,
or run by an agent runtime, which marks what it runs in its environment) is refused
(`agent-approval`).
"""

from __future__ import annotations

from gitstate.law.changed import (  # noqa: F401  (TEAM_OPERATIONS, at_rest: this module's API)
    TEAM_OPERATIONS,
    at_rest,
    move_of,
    op_kind,
    parsed_changes,
    team_operation,
)
from gitstate.law.grammar import Message
from gitstate.law.lifecycle import Lifecycle, parse_arrow
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import Parsed, Violation

TYPE_CHECKING = False
if TYPE_CHECKING:   # the hooks import this on every state commit: no collections.abc then
    from collections.abc import Callable, Mapping

KEY_FIELD = "key"   # an agent's public key, recorded at birth (fixed, like `parent`)

# What an agent runtime leaves in the environment of what it runs (its tools' commands, its
# MCP servers): gitstate's SessionStart exports GITSTATE_SESSION; Claude Code sets CLAUDECODE
# and CLAUDE_CODE_SESSION_ID (and AI_AGENT for a sub-agent's); Codex, Gemini CLI and Cursor
# their own.
RUNTIME_MARKS = ("GITSTATE_SESSION", "CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "AI_AGENT",
                 "CODEX_THREAD_ID", "CODEX_SANDBOX", "GEMINI_CLI", "CURSOR_AGENT")


def agent_session(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(the agent a session is bound to, the variable that marks it as an agent runtime's) of
    the session's environment; (None, None): a person at a terminal."""
    agent = (env.get("GITSTATE_AGENT") or "").strip().lower() or None
    return agent, next((m for m in RUNTIME_MARKS if env.get(m)), None)


def _text(value) -> str | None:
    return value.strip().lower() if isinstance(value, str) and value.strip() else None


def may_move(lc: Lifecycle, mover: str, agent: str, old_front: dict | None,
             new_front: dict | None, move: tuple[str | None, str | None],
             agents: dict[str, dict], msg: Message | None) -> bool | None:
    """Does the law let `mover` make `move` of `agent`? None when only the commit message
    could tell (a human's approval, a team operation) and there is none yet (pre-commit)."""
    if mover == agent:
        return True
    old, new = move
    front = old_front if old_front is not None else (new_front or {})
    parent = _text(front.get("parent"))
    if old is None:   # a birth: by the parent it names, or by anyone if it names none
        return parent is None or parent == mover
    if new is None:
        return False
    if _movers_let(lc, mover, parent, agents, old, new):
        return True
    return _message_lets(lc, msg, old, new, _text(front.get("role")))


def _movers_let(lc: Lifecycle, mover: str, parent: str | None, agents: dict[str, dict],
                old: str, new: str) -> bool:
    """`policies.movers` lets `mover` make the move: as the agent's parent, or as a living
    holder of a role listed for it."""
    movers = lc.policies.movers
    if parent == mover and movers.parent_may(old, new):
        return True
    mine = agents.get(mover) or {}
    role, state = _text(mine.get("role")), mine.get("state")
    return bool(role) and role in movers.roles_for(old, new) and isinstance(state, str) \
        and lc.roster_of(state) == "living"


def _message_lets(lc: Lifecycle, msg: Message | None, old: str, new: str,
                  role: str | None) -> bool | None:
    """The commit message lets anyone make the move: a human's approval of a gated move, or
    a team operation's trailer. None without a message yet, where one could tell."""
    if msg is None:
        return None if lc.needs_approval(old, new) or old != new else False
    if lc.needs_approval(old, new) and lc.policies.approved(msg):
        return True
    # Of the team operations' trailers only sweep's counts here: its moves are due by the
    # clock. A reap or a shutdown acts on what only an operator's clone sees (a pid, a stop);
    # typed in an agent's session its trailer proves nothing, as a typed approval does not.
    return team_operation(msg) == "sweep" and op_kind(lc, "sweep", old, new, role)


def who_may(lc: Lifecycle, agent: str, front: dict, old: str | None, new: str | None) -> str:
    """Who the law lets make this move: 'bob itself, its parent root, ...'."""
    parent = _text(front.get("parent"))
    if old is None:
        return f"{agent} itself or its parent {parent}" if parent else "anyone"
    if new is None:
        return f"{agent} itself"
    out = [f"{agent} itself"] + _others_who_may(lc, front, parent, old, new)
    return ", ".join(out[:-1]) + f" or {out[-1]}" if len(out) > 1 else out[0]


def _others_who_may(lc: Lifecycle, front: dict, parent: str | None, old: str,
                    new: str) -> list[str]:
    """Who besides the agent may make a move: its parent, living holders of roles, a human,
    team operations."""
    movers = lc.policies.movers
    out = [f"its parent {parent}"] if parent and movers.parent_may(old, new) else []
    out += [f"a living {r}" for r in movers.roles_for(old, new)]
    if lc.needs_approval(old, new):
        out.append("a human's approval (Approved-by:)")
    return out + _operations(lc, front, old, new)


def _operations(lc: Lifecycle, front: dict, old: str, new: str) -> list[str]:
    """The team operations that may make a move, as one alternative (or none)."""
    ops = [op for op in TEAM_OPERATIONS if op_kind(lc, op, old, new, _text(front.get("role")))]
    if not ops:
        return []
    # reap and shutdown: run from a terminal of one's own, not an agent's session
    return [" or ".join(f"`gitstate {op}`" + ("" if op == "sweep" else " from a terminal no "
                                              "agent is bound to") for op in ops)]


def not_yours(lc: Lifecycle, mover: str, p: Parsed, agents: dict[str, dict],
              msg: Message | None, transfer_from: str | None = None) -> Violation | None:
    """`not-yours` if the bound `mover` may not make this change of `p.agent` (None if it may,
    or if only the message could tell and there is none yet). `transfer_from`: the giver of a
    `Role-transfer:`, who writes the taker's file."""
    if p.new is None and p.old is None:
        return None
    if transfer_from == mover and p.agent != mover:
        return None
    old_front, new_front = _fronts(p)
    move = move_of(p)
    if may_move(lc, mover, p.agent, old_front, new_front, move, agents, msg) is not False:
        return None
    return _not_yours(lc, mover, p, old_front or new_front or {}, move)


def _not_yours(lc: Lifecycle, mover: str, p: Parsed, front: dict,
               move: tuple[str | None, str | None]) -> Violation:
    old, new = move
    what = f"{old} -> {new}" if old else f"its birth in {new}"
    return Violation(Rule.NOT_YOURS, f"this session is bound to {mover} (GITSTATE_AGENT), and "
                     f"{mover} may not move {p.agent} ({what}); the law lets "
                     f"{who_may(lc, p.agent, front, old, new)} make this move", p.change.path)


def _fronts(p: Parsed) -> tuple[dict | None, dict | None]:
    """The front matter of both sides of a change (None: that side is not parsed)."""
    return (p.old.front if p.old is not None else None,
            p.new.front if p.new is not None else None)


def check_bound(lc: Lifecycle, mover: str, parsed: list[Parsed], agents: dict[str, dict],
                msg: Message | None) -> list[Violation]:
    """`not-yours` for every change the bound `mover` may not make."""
    giver = msg.prefix if msg is not None and msg.trailer("role-transfer") else None
    found = (not_yours(lc, mover, p, agents, msg, giver) for p in parsed)
    return [v for v in found if v is not None]


def describe_movers(lc: Lifecycle) -> list[str]:
    """The lines of `gitstate lifecycle` that say who may move whom."""
    movers = lc.policies.movers
    out = ["  an agent is moved by itself; spawned by its parent; timed moves by `gitstate "
           "sweep`; ends by `gitstate reap` and `gitstate shutdown`"]
    if movers.parent:
        out.append(f"  its parent may also move it: {', '.join(_arrows(movers.parent))}")
    for role, moves in movers.roles.items():
        out.append(f"  a living {role} may move any agent: {', '.join(_arrows(moves))}")
    if lc.policies.approval_pairs:
        out.append("  a human may make the gated moves (Approved-by:)")
    signers = ", ".join(("the humans",) + movers.operators)
    out.append(f"  reap and shutdown are proven by a signature of {signers}")
    if lc.policies.fourth_wall:
        system = f", and makes {', '.join(_arrows(movers.system))}" if movers.system else ""
        out.append("  the fourth wall: only the runtime's hooks (Moved-by: gitstate runtime) or a "
                   f"human change what the system measures{system}")
    for key, states in lc.policies.changes_in.items():
        out.append(f"  {key} changes only in a move that leaves {' or '.join(states)}")
    return out


def _arrows(moves: tuple[str, ...]) -> list[str]:
    return [f"{a[0]} -> {a[1]}" for m in moves if (a := parse_arrow(m)) is not None]


def agent_approval(lc: Lifecycle, agent: str | None, mark: str | None, changes: list,
                   law: list[str], msg: Message | None,
                   signers: Callable[[], bool]) -> list[Violation]:
    """`agent-approval`: a gated move (`law`: the files of the law the commit changes) that a
    human approves by name (`Approved-by:`), made from an agent's session (bound to `agent`, or
    marked as a runtime's by the variable `mark`) while the law in force has no
    allowed_signers (`signers()`: whether it has; asked last). With allowed_signers, the human's
    signature decides (`unsigned-approval`)."""
    if msg is None or (agent is None and mark is None):
        return []
    from gitstate.law.signers import approvers
    names = approvers(lc, msg)
    what = _approved_gated(lc, changes, law) if names else []
    if not what or signers():
        return []
    human = names[0]
    who = f"bound to agent {agent}" if agent else f"an agent runtime's ({mark} is set)"
    return [Violation(Rule.AGENT_APPROVAL, f"{'; '.join(what)} is approved by {human}, but "
                      f"this session is {who}, and with no protocols/allowed_signers nothing "
                      f"shows that {human} approved it: an agent may not approve as a human "
                      f"by writing the human's name. {human} makes this move from a terminal "
                      "of their own, outside any agent's session; or record the humans' SSH "
                      "keys in protocols/allowed_signers (`gitstate init --signing-key PATH "
                      f"--approved-by {human}`, run by {human}), and the approval is then "
                      f"proven by {human}'s signature", "commit message")]


def _approved_gated(lc: Lifecycle, changes: list, law: list[str]) -> list[str]:
    """What in the commit needs a human's approval: gated moves, the law, the fourth wall."""
    from gitstate.law.signers import gated
    from gitstate.law.wall import walled  # the fourth wall's keys, set by a human
    return gated(lc, changes, list(law)) + walled(lc, changes)


def judge_binding(lc: Lifecycle, mover: str, changes: list, msg: Message | None,
                  agents, memo: dict | None = None) -> tuple[list[Violation], bool]:
    """(`not-yours` violations, whether the verdict waits for the message) of a commit made
    by a session bound to `mover`. `agents()`: every agent's front matter, asked only when a
    role could let the mover make the move."""
    parsed = parsed_changes(lc, changes, memo)
    if all(p.agent == mover for p in parsed):
        return [], False
    everyone = agents() if lc.policies.movers.roles else {}
    found = check_bound(lc, mover, parsed, everyone, msg)
    return found, msg is None and _waits(lc, mover, parsed, everyone)


def _waits(lc: Lifecycle, mover: str, parsed: list[Parsed], everyone: dict[str, dict]) -> bool:
    """Only the message could tell whether `mover` may make one of these changes."""
    return any(p.agent != mover and may_move(lc, mover, p.agent, *_fronts(p), move_of(p),
                                             everyone, None) is None for p in parsed)
