"""Freeze-state files (`data/freeze-states/<id>.md`): what one must hold to be read instead of
waking its agent, and the rule that a freeze commits one. Pure."""

from __future__ import annotations

import re

from gitstate.law import limits, statefile
from gitstate.law.verdict import Context, Violation
from gitstate.rule_ids import Rule

FREEZE_SECTIONS = ("Key Decisions", "Accumulated Knowledge", "Open Questions", "Files Changed",
                   "Handoff Notes")
# Headings of a freeze-state file (the caller strips them): linear, where `(.+?)[ \t]*$`
# backtracked quadratically on a long line of blanks.
_HEADING = re.compile(r"^##[ \t]+([^\n]*)", re.MULTILINE)

FREEZE_KEYS = ("session_id", "frozen_at", "role", "primary_situation")
WRITTEN_BY = "written_by:"   # a freeze-state gitstate wrote for the agent (shutdown), not the agent


def freeze_file_problems(text: str) -> list[str]:
    """What a freeze-state file lacks: its front matter keys, or any of the sections."""
    problems = []
    try:
        front = statefile.parse(text, "freeze-state").front
    except Exception:  # InvalidFile: no or broken front matter
        front = None
    if front is None:
        problems.append("it has no readable front matter (" + ", ".join(FREEZE_KEYS) + ")")
    else:
        missing_keys = [k for k in FREEZE_KEYS if k not in front]
        if missing_keys:
            problems.append("its front matter lacks " + ", ".join(missing_keys))
    bodies = _sections(text)
    missing = [s for s in FREEZE_SECTIONS if s.lower() not in bodies]
    if missing:
        problems.append("it lacks the section" + ("s " if len(missing) > 1 else " ")
                        + ", ".join(f"'## {m}'" for m in missing))
    # A freeze-state is read instead of waking its agent: the template's placeholders would
    # answer nothing, so a section still holding only them counts as not written.
    blank = [s for s in FREEZE_SECTIONS if s.lower() in bodies and _unwritten(bodies[s.lower()])]
    if blank:
        problems.append("the section" + ("s " if len(blank) > 1 else " ")
                        + ", ".join(f"'## {b}'" for b in blank)
                        + (" are" if len(blank) > 1 else " is")
                        + " still the template's placeholder; write what a questioner needs")
    return problems


_PLACEHOLDER = re.compile(r"^(?:-[ \t]*)?\(.*\)$")


def _sections(text: str) -> dict[str, str]:
    """Each `## Heading` (lower case) -> the text under it."""
    parts = _HEADING.split(text)
    return {parts[i].strip().lower(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _unwritten(body: str) -> bool:
    """Empty, or only the template's bracketed placeholders (`- (decision, and why)`)."""
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    return all(_PLACEHOLDER.match(ln) for ln in lines)


def check_freeze_file(p, ctx: Context, out: list[Violation]) -> None:
    new = p.new
    target = statefile.as_text(new.get("freeze_state"))
    where = f"{p.change.path}:{new.line_of('freeze_state')}"
    if not target or statefile.FIELDS["freeze_state"](target):
        return  # missing-field / bad-field already say so
    data = ctx.tree_file(target)
    if data is None:
        out.append(Violation(Rule.FREEZE_STATE, f"{target} is not in this commit: write the "
                             "freeze-state file and commit it with the freeze "
                             f"(`gitstate freeze {p.agent}` does both)", where))
        return
    if limits.byte_size(data) > limits.STATE_FILE_BYTES:
        out.append(Violation(Rule.TOO_LARGE, f"{target} is {limits.byte_size(data):,} bytes; a "
                             f"freeze-state file has at most {limits.STATE_FILE_BYTES:,}", where))
        return
    for problem in freeze_file_problems(data.decode("utf-8", "replace")):
        out.append(Violation(Rule.FREEZE_STATE, f"{target}: {problem}", where))
    before = statefile.as_text(p.old.get("freeze_state")) if p.old is not None else None
    if before and ctx.base_file(target) == data and WRITTEN_BY not in data.decode(
            "utf-8", "replace").split("\n---", 1)[0]:
        out.append(Violation(Rule.FREEZE_STATE, f"{p.agent} froze before and was woken; its "
                             f"freeze-state {target} is the one of that freeze: update it "
                             "(what it learned since, what is open now) in the same commit",
                             where))
