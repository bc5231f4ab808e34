"""The commit message against the state files it commits: the tag, the speaking prefix, and
the approvals gated moves need. Pure."""

from __future__ import annotations

from gitstate.law.grammar import Message
from gitstate.law.verdict import Parsed, Violation
from gitstate.rule_ids import Rule

TYPE_CHECKING = False  # typing costs a hook ~3 ms to import (bench/README.md, "Hook latency")
if TYPE_CHECKING:
    from gitstate.law.lifecycle import Lifecycle


def check_message(parsed: list[Parsed], msg: Message, lc: Lifecycle,
                   out: list[Violation]) -> None:
    where = "commit message"
    if msg.malformed:
        out.append(Violation(Rule.MALFORMED_SUBJECT, f"{msg.malformed}; got {msg.subject!r}",
                             where))
    if not parsed:
        if msg.tag is not None:
            path = lc.state_path(msg.prefix or "<id>")
            out.append(Violation(Rule.TAG_WITHOUT_CHANGE, "the subject is tagged "
                                 f"[STATE:{msg.tag}] but the commit changes no state file; "
                                 f"stage {path} with 'state: {msg.tag}', or drop the tag",
                                 where))
        return
    if not msg.has_tag:
        for p in parsed:
            written = p.new.state if p.new is not None else None
            suggestion = (f"'@{p.agent}: [STATE:{written}] <text>'" if isinstance(written, str)
                          else f"'@{p.agent}: [STATE:<state>] <text>'")
            out.append(Violation(Rule.CHANGE_WITHOUT_TAG, f"{p.change.path} changes but the "
                                 f"subject has no state tag; use {suggestion}", where))
        return
    if msg.tag is None:
        return  # malformed, already reported
    for p in parsed:   # a held agent (haak: frozen) is changed only with a human's approval
        if p.new is not None and p.old is not None and not p.new_problem \
                and isinstance(p.old.state, str) and p.old.state == p.new.state \
                and lc.held(p.old.state):
            check_approval(p, msg, lc, p.old.state, p.old.state, out)
    if msg.prefix is not None and msg.prefix not in {p.agent for p in parsed}:
        changed = ", ".join(p.agent for p in parsed)
        out.append(Violation(Rule.PREFIX_MISMATCH, f"the subject speaks as @{msg.prefix} but the "
                             f"commit changes the state of {changed}", where))
    for p in parsed:
        if msg.prefix is not None and p.agent != msg.prefix:
            continue
        written = p.new.state if p.new is not None else None
        if isinstance(written, str) and written != msg.tag:
            out.append(Violation(Rule.TAG_MISMATCH, f"the subject says [STATE:{msg.tag}] but "
                                 f"{p.change.path} writes 'state: {written}'", where))
        if p.new is not None and not p.new_problem and p.old is not None \
                and isinstance(p.old.state, str) and isinstance(written, str) \
                and lc.needs_approval(p.old.state, written):
            check_approval(p, msg, lc, p.old.state, written, out)


def check_approval(p: Parsed, msg: Message, lc: Lifecycle, old: str, new: str,
                    out: list[Violation]) -> None:
    humans = {h.lower(): h for h in lc.policies.humans}
    given = [v for v in msg.trailer("approved-by")]
    if any(v.strip().lower() in humans for v in given):
        return
    named = f" ('{', '.join(given)}' is not one of them)" if given else ""
    if old == new:
        out.append(Violation(Rule.NEEDS_APPROVAL, f"{p.agent} is {old}: every change to it "
                             "(its role handed away included) needs a human's approval: add "
                             f"the trailer 'Approved-by: <human>' naming one of "
                             f"{', '.join(lc.policies.humans)}{named}", "commit message"))
        return
    out.append(Violation(Rule.NEEDS_APPROVAL, f"{old} -> {new} needs a human's approval: add the "
                         f"trailer 'Approved-by: <human>' naming one of "
                         f"{', '.join(lc.policies.humans)}{named}", "commit message"))
