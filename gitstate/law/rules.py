"""The validator: what a commit changes in state files, plus its message -> every violation.

Pure: it is handed file contents and a lifecycle and never touches git. The hooks, `transition`
and (later) `verify` all call `validate`, so a move is judged the same wherever it is made.
"""

from __future__ import annotations

from gitstate.errors import InvalidFile
from gitstate.law import statefile
from gitstate.law.grammar import Message, is_valid_id, parse_message
from gitstate.law.mortality import check_mortality, check_tokens
from gitstate.law.retry import check_retries, is_retry
from gitstate.law.roles import check_fixed_fields, is_role_transfer, role_transfer  # noqa: F401  (role_transfer: part of this module's API)
from gitstate.law.rule_ids import Rule
from gitstate.law.society import check_society
from gitstate.law.verdict import SYMLINK_MODE, Context, FileChange, Parsed, Violation  # noqa: F401  (FileChange, Context: part of this module's API)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.law.lifecycle import Lifecycle


def validate(changes: list[FileChange], lc: Lifecycle, message: str | Message | None,
             *, context: Context | None = None, memo: dict | None = None) -> list[Violation]:
    """Every violation of a commit with one parent. `message` None checks content only
    (pre-commit). `changes` are the state files whose content (or mode) differs from the
    parent; merges carry no state change on the team line (`law.judge`)."""
    out: list[Violation] = []
    parsed = _parse_changes(changes, lc, out, context, memo)
    msg = parse_message(message) if isinstance(message, str) else message
    if msg is not None:
        _check_message(parsed, msg, lc, out)
    if context is not None:
        out += check_society(parsed, lc, context, msg)
    out += check_retries(parsed, lc, context)
    transfer = _check_one_agent(parsed, msg, out)
    check_fixed_fields(parsed, msg, transfer, out)
    return out


def _parse_changes(changes: list[FileChange], lc: Lifecycle, out: list[Violation],
                   context: Context | None, memo: dict | None) -> list[Parsed]:
    """Each state file the commit changes, both sides parsed and the file judged on its own."""
    rx = lc.state_path_regex()
    parsed: list[Parsed] = []
    for ch in changes:
        raw_id = _changed_agent(ch, rx)
        if raw_id is None or _check_id(raw_id, ch.path, out):
            continue
        p = _check_file(Parsed(ch, raw_id), lc, out, memo)
        parsed.append(p)
        if context is not None:
            _check_checkpoint(p, context, out)
    return parsed


def _changed_agent(ch: FileChange, rx) -> str | None:
    """The agent id in the path of a state file the commit changes; None for an unchanged
    file or one that is no state file."""
    if ch.old == ch.new and ch.new_mode != SYMLINK_MODE:
        return None   # (the same bytes made a symbolic link are a change: `symlink`)
    m = rx.match(ch.path)
    return m.group("id") if m else None


def _check_one_agent(parsed: list[Parsed], msg: Message | None, out: list[Violation]) -> bool:
    """One commit changes one agent's state, but for a role transfer (True for one)."""
    agents = sorted({p.agent for p in parsed})
    # Without the message (pre-commit) a role transfer cannot be told apart: judged later.
    if len(agents) < 2 or msg is None:
        return False
    if is_role_transfer(parsed, msg, out):
        return True
    out.append(Violation(Rule.MULTIPLE_AGENTS, "one commit may change one agent's state; this "
                         f"one changes {', '.join(agents)} (commit each agent separately)"))
    return False


def _parse(data: bytes, path: str, memo: dict | None) -> statefile.StateDoc:
    """Parse, remembering the latest result (or error) per path in `memo` when one is given:
    when replaying history, a file's old side is the new side judged just before."""
    if memo is None:
        return statefile.parse_bytes(data, path)
    hit = memo.get(path)
    if hit is None or hit[0] != data:
        try:
            hit = (data, statefile.parse_bytes(data, path))
        except InvalidFile as exc:
            hit = (data, exc)
        memo[path] = hit
    if isinstance(hit[1], InvalidFile):
        raise hit[1]
    return hit[1]


parse_state = _parse


def _check_id(raw_id: str, path: str, out: list[Violation]) -> bool:
    """True (and a violation) if the id in a state file's path is not a valid agent id."""
    if is_valid_id(raw_id) and raw_id == raw_id.lower():
        return False
    hint = (f"; agent directories are lower case: use '{raw_id.lower()}'"
            if is_valid_id(raw_id) else "")
    out.append(Violation(Rule.INVALID_ID, f"'{raw_id}' is not a valid agent id{hint} "
                         "(1-64 letters, digits, '.', '_' or '-', starting with a letter "
                         "or digit; 'all' is reserved)", path))
    return True


def file_violations(path: str, data: bytes, lc: Lifecycle) -> list[Violation]:
    """What is wrong with one state file on its own, whatever came before it: its id, its
    front matter, its known keys, its state and that state's required fields. `gitstate check`
    judges the work tree with this; commits add the transition rules on top."""
    out: list[Violation] = []
    m = lc.state_path_regex().match(path)
    if m is None or _check_id(m.group("id"), path, out):
        return out
    p = Parsed(FileChange(path, None, data), m.group("id"))
    new = _check_content(p, data, lc, out, None)
    if new is not None:
        _check_requires(new, path, lc, new.state, out)
    return out


def _check_file(p: Parsed, lc: Lifecycle, out: list[Violation],
                memo: dict | None = None) -> Parsed:
    ch = p.change
    if ch.old is not None:
        try:
            p.old = _parse(ch.old, ch.path, memo)
        except InvalidFile:
            pass  # a broken past does not block a repair
    if ch.new is None or ch.new_mode == SYMLINK_MODE:
        _check_gone(p, out)
        return p
    new = _check_content(p, ch.new, lc, out, memo)
    if new is None:
        return p
    state = new.state
    where = f"{ch.path}:{new.line_of('state')}"
    old_state = p.old.state if p.old is not None else None
    _check_transition(p, lc, state, where, out)
    _check_requires(new, ch.path, lc, state, out)
    check_mortality(p, lc, old_state, state, where, out)
    check_tokens(p, lc, state, out)
    return p


def _check_gone(p: Parsed, out: list[Violation]) -> None:
    """A state file deleted, or made a symbolic link: nothing more is judged of its new side."""
    ch = p.change
    if ch.new is None:
        state = p.old.state if p.old else "unknown"
        out.append(Violation(Rule.DELETED, f"{p.agent}'s state file was deleted (state {state}); "
                             "state files are history and stay: move the agent to a terminal "
                             "state instead", ch.path))
    else:
        out.append(Violation(Rule.SYMLINK, f"{p.agent}'s state file is committed as a symbolic "
                             "link; a state file must be a plain file", ch.path))
    p.new_problem = True


def _check_transition(p: Parsed, lc: Lifecycle, state: str, where: str,
                      out: list[Violation]) -> None:
    """A new agent starts in the initial state; an agent moves only as the lifecycle allows,
    and never out of a terminal state."""
    if p.change.old is None and state != lc.initial:
        out.append(Violation(Rule.NOT_INITIAL, f"a new agent starts in '{lc.initial}', not "
                             f"'{state}'", where))
    elif p.change.old is not None and p.old is not None:
        _check_move(p, lc, p.old.state, state, where, out)


def _check_move(p: Parsed, lc: Lifecycle, old_state, state: str, where: str,
                out: list[Violation]) -> None:
    assert p.old is not None
    if not isinstance(old_state, str):
        out.append(Violation(Rule.ILLEGAL_TRANSITION, f"{p.agent}'s state before this commit "
                             f"({old_state!r}) is not a state name, so no move from it is "
                             "legal; restore its last valid state file", where))
    elif is_retry(lc, old_state, state, statefile.as_text(p.old.get("role"))):
        return   # out of a failure state, as policies.retry allows: law/retry.py judges it
    elif old_state in lc.states and lc.states[old_state].terminal:
        out.append(Violation(Rule.TERMINAL, f"{p.agent} is {old_state}, a terminal state; its "
                             "state file is final and may not change", where))
    elif old_state in lc.states and not lc.is_legal(old_state, state):
        out.append(Violation(Rule.ILLEGAL_TRANSITION, f"{p.agent} is in {old_state}; "
                             f"{legal_moves(lc, old_state)}, not {state}", where))


def _check_content(p: Parsed, data: bytes, lc: Lifecycle, out: list[Violation],
                   memo: dict | None) -> statefile.StateDoc | None:
    """Parse the new side (`data`) and judge it on its own; the parsed side if it names a
    declared state."""
    ch = p.change
    try:
        p.new = new = _parse(data, ch.path, memo)
    except InvalidFile as exc:
        said = exc.message + (f" ({exc.hint})" if exc.hint else "")
        out.append(Violation(Rule.of(exc.rule), said, exc.where or ch.path))
        p.new_problem = True
        return None
    _check_fields(p, new, out)
    state = new.state
    if p.new_problem or not isinstance(state, str):
        return None
    if state not in lc.states:
        from gitstate.law.suggest import did_you_mean
        out.append(Violation(Rule.UNKNOWN_STATE, f"'{state}' is not a state of lifecycle "
                             f"'{lc.name}'{did_you_mean(state, lc.states)} (states: "
                             f"{', '.join(lc.states)})",
                             f"{ch.path}:{new.line_of('state')}"))
        p.new_problem = True
        return None
    return new


def _check_fields(p: Parsed, new: statefile.StateDoc, out: list[Violation]) -> None:
    """The known keys' values, and the `agent` key against the file's directory."""
    path = p.change.path
    for key, line, problem in statefile.field_problems(new):
        out.append(Violation(Rule.BAD_FIELD, problem, f"{path}:{line}"))
        if key in ("agent", "state"):
            p.new_problem = True
    agent_field = new.agent
    if isinstance(agent_field, str) and agent_field.lower() != p.agent:
        out.append(Violation(Rule.AGENT_MISMATCH, f"'agent: {agent_field}' but the file belongs to "
                             f"'{p.agent}' (its directory); they must be the same id",
                             f"{path}:{new.line_of('agent')}"))


def _check_requires(new: statefile.StateDoc, path: str, lc: Lifecycle, state: str,
                    out: list[Violation]) -> None:
    for req in lc.states[state].requires:
        if not statefile.is_filled(new.get(req)):
            line = new.line_of(req) if req in new.front else 2
            how = " (`gitstate freeze ID` writes one from the template)" \
                if req == "freeze_state" else ""
            out.append(Violation(Rule.MISSING_FIELD, f"state '{state}' requires '{req}:' to be "
                                 f"filled in{how}", f"{path}:{line}"))


def check_law_change(lc: Lifecycle, message: str | Message, changed: list[str]) -> list[Violation]:
    """A commit that changes the law (lifecycle, allowed signers, hook shims) needs a human's
    approval where the law in force says so (`law` in `policies.approval`)."""
    if not changed or not lc.policies.law_approval:
        return []
    msg = parse_message(message) if isinstance(message, str) else message
    return _unapproved(lc, msg, f"this commit changes the law ({', '.join(changed)}); that")


def _unapproved(lc: Lifecycle, msg: Message, what: str) -> list[Violation]:
    """`what` needs a human's approval: refused unless an `Approved-by:` trailer names one of
    the lifecycle's humans."""
    if lc.policies.approved(msg):
        return []
    given = msg.trailer("approved-by")
    named = f" ('{', '.join(given)}' is not one of them)" if given else ""
    return [Violation(Rule.NEEDS_APPROVAL, f"{what} needs a human's approval: add the trailer "
                      f"'Approved-by: <human>' naming one of {', '.join(lc.policies.humans)}"
                      f"{named}", _MESSAGE)]


def legal_moves(lc: Lifecycle, state: str) -> str:
    """"from inbox the lifecycle allows: distill (or staying in inbox)"."""
    targets = lc.targets(state)
    stay = state in lc.allowed_from(state) and state not in targets
    text = f"from {state} the lifecycle allows: {', '.join(targets) or 'nothing'}"
    return text + (f" (or staying in {state})" if stay else "")


def _check_checkpoint(p: Parsed, ancestry: Context, out: list[Violation]) -> None:
    """An inbox checkpoint only moves forward, and only to a commit already in the history."""
    if p.new is None or p.new_problem:
        return
    new = p.new.get("last_read_commit")
    old = p.old.get("last_read_commit") if p.old is not None else None
    if new is None or str(new) == str(old):
        return
    where = f"{p.change.path}:{p.new.line_of('last_read_commit')}"
    new_sha = ancestry.commit(str(new))
    if new_sha is None or ancestry.base is None or not ancestry.is_ancestor(new_sha, ancestry.base):
        out.append(Violation(Rule.INBOX_CHECKPOINT, f"last_read_commit {new} is not a commit in "
                             "this history (it must be the parent of this commit or one of its "
                             "ancestors)", where))
    else:
        _check_forward(ancestry, old, new, new_sha, where, out)


def _check_forward(ancestry: Context, old, new, new_sha: str, where: str,
                   out: list[Violation]) -> None:
    """A checkpoint moved to a commit of the history descends from the one before it."""
    old_sha = ancestry.commit(str(old)) if old is not None else None
    if old_sha is not None and not ancestry.is_ancestor(old_sha, new_sha):
        out.append(Violation(Rule.INBOX_CHECKPOINT, f"last_read_commit may only move forward: "
                             f"{new} is not a descendant of the previous checkpoint {old}",
                             where))


def _check_message(parsed: list[Parsed], msg: Message, lc: Lifecycle,
                   out: list[Violation]) -> None:
    if msg.malformed:
        out.append(Violation(Rule.MALFORMED_SUBJECT, f"{msg.malformed}; got {msg.subject!r}",
                             _MESSAGE))
    if not parsed:
        _check_tag_without_change(msg, lc, out)
    elif not msg.has_tag:
        _check_untagged(parsed, out)
    elif msg.tag is not None:   # (else malformed, already reported)
        _check_tagged(parsed, msg, lc, out)


def _check_tagged(parsed: list[Parsed], msg: Message, lc: Lifecycle,
                  out: list[Violation]) -> None:
    _check_held(parsed, msg, lc, out)
    _check_prefix(parsed, msg, out)
    for p in parsed:
        if msg.prefix is None or p.agent == msg.prefix:
            _check_tag(p, msg, lc, out)


_MESSAGE = "commit message"


def _check_tag_without_change(msg: Message, lc: Lifecycle, out: list[Violation]) -> None:
    if msg.tag is not None:
        path = lc.state_path(msg.prefix or "<id>")
        out.append(Violation(Rule.TAG_WITHOUT_CHANGE, "the subject is tagged "
                             f"[STATE:{msg.tag}] but the commit changes no state file; "
                             f"stage {path} with 'state: {msg.tag}', or drop the tag",
                             _MESSAGE))


def _check_untagged(parsed: list[Parsed], out: list[Violation]) -> None:
    for p in parsed:
        written = _written(p)
        suggestion = (f"'@{p.agent}: [STATE:{written}] <text>'" if isinstance(written, str)
                      else f"'@{p.agent}: [STATE:<state>] <text>'")
        out.append(Violation(Rule.CHANGE_WITHOUT_TAG, f"{p.change.path} changes but the "
                             f"subject has no state tag; use {suggestion}", _MESSAGE))


def _check_held(parsed: list[Parsed], msg: Message, lc: Lifecycle,
                out: list[Violation]) -> None:
    """A held agent (haak: frozen) is changed only with a human's approval."""
    for p in parsed:
        old = _judged_old(p)
        if old is not None and old == _written(p) and lc.held(old):
            _check_approval(p, msg, lc, old, old, out)


def _check_prefix(parsed: list[Parsed], msg: Message, out: list[Violation]) -> None:
    if msg.prefix is not None and msg.prefix not in {p.agent for p in parsed}:
        changed = ", ".join(p.agent for p in parsed)
        out.append(Violation(Rule.PREFIX_MISMATCH, f"the subject speaks as @{msg.prefix} but the "
                             f"commit changes the state of {changed}", _MESSAGE))


def _check_tag(p: Parsed, msg: Message, lc: Lifecycle, out: list[Violation]) -> None:
    """The tag names the state the agent's file writes, and a gated move is approved."""
    written = _written(p)
    if isinstance(written, str) and written != msg.tag:
        out.append(Violation(Rule.TAG_MISMATCH, f"the subject says [STATE:{msg.tag}] but "
                             f"{p.change.path} writes 'state: {written}'", _MESSAGE))
    old = _judged_old(p)
    if old is not None and isinstance(written, str) and lc.needs_approval(old, written):
        _check_approval(p, msg, lc, old, written, out)


def _judged_old(p: Parsed) -> str | None:
    """The old state of a change with both sides parsed and the new one sound."""
    if p.new is None or p.old is None or p.new_problem or not isinstance(p.old.state, str):
        return None
    return p.old.state


def _written(p: Parsed):
    """The state the new side writes, if it is parsed."""
    return p.new.state if p.new is not None else None


def _check_approval(p: Parsed, msg: Message, lc: Lifecycle, old: str, new: str,
                    out: list[Violation]) -> None:
    what = f"{p.agent} is {old}: every change to it (its role handed away included)" \
        if old == new else f"{old} -> {new}"
    out += _unapproved(lc, msg, what)
