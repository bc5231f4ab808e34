"""What a freeze asks of its freeze-state file (seed 000's tier-1 self-portrait): the agent's
own file, `data/freeze-states/<id>.md`, written in the freeze commit itself, with its front
matter (`frozen_at` the time of the freeze, `wake_if` the condition to wake it on) and its five
sections written. Pure: the files are seen through the `Context` the caller hands in.
"""

from __future__ import annotations

import re

from gitstate.law import limits, statefile
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import SYMLINK_MODE, Context, Violation

FREEZE_SECTIONS = ("Key Decisions", "Accumulated Knowledge", "Open Questions", "Files Changed",
                   "Handoff Notes")
FREEZE_KEYS = ("session_id", "frozen_at", "role", "primary_situation", "wake_if")
# Headings of a freeze-state file (the caller strips them): linear, where `(.+?)[ \t]*$`
# backtracked quadratically on a long line of blanks.
_HEADING = re.compile(r"^##[ \t]+([^\n]*)", re.MULTILINE)
_STAMP = rb"^frozen_at:[^\n]*\n"   # what every freeze rewrites (compiled by `re` when used)
_PLACEHOLDER = re.compile(r"^(?:-[ \t]*)?\(.*\)$")
# ISO 8601 as the law reads a moment: a date, a time to the second at least, and its zone
_ISO_TIME = (r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
             r"(?:Z|[+-]\d{2}:?\d{2})")


def freeze_state_path(agent: str) -> str:
    """Where an agent's freeze-state lives: its own file, the only one its freeze may name."""
    return f"data/freeze-states/{agent}.md"


def freeze_file_problems(text: str) -> list[str]:
    """What a freeze-state file lacks: its front matter keys (a `wake_if`, a `frozen_at` that
    is a time), or any of the sections."""
    return [problem for problem, _line in freeze_file_findings(text)]


def freeze_file_findings(text: str) -> list[tuple[str, int | None]]:
    """(problem, line of the freeze-state it is on, where one is) for each thing it lacks."""
    bodies = _sections(text)
    missing = [s for s in FREEZE_SECTIONS if s.lower() not in bodies]
    # A freeze-state is read instead of waking its agent: the template's placeholders would
    # answer nothing, so a section still holding only them counts as not written.
    blank = [s for s in FREEZE_SECTIONS if s.lower() in bodies and _unwritten(bodies[s.lower()])]
    found = _front_findings(text)
    if missing:
        found.append((f"it lacks the {_section_names(missing)}", None))
    if blank:
        found.append((f"the {_section_names(blank)} {'are' if len(blank) > 1 else 'is'} still "
                      "the template's placeholder; write what a questioner needs", None))
    return found


def _front_findings(text: str) -> list[tuple[str, int | None]]:
    """What a freeze-state file's front matter lacks or gets wrong."""
    try:
        doc = statefile.parse(text, "freeze-state")
    except Exception:  # InvalidFile: no or broken front matter
        doc = None
    if doc is None or doc.front is None:
        return [("it has no readable front matter (" + ", ".join(FREEZE_KEYS) + ")", None)]
    missing = [k for k in FREEZE_KEYS if k not in doc.front and k != "wake_if"]
    found: list[tuple[str, int | None]] = []
    if missing:
        found.append(("its front matter lacks " + ", ".join(missing), None))
    return found + _wake_if_findings(doc) + _frozen_at_findings(doc)


def _wake_if_findings(doc: statefile.StateDoc) -> list[tuple[str, int | None]]:
    if statefile.is_filled(doc.front.get("wake_if")):
        return []
    return [("it says no `wake_if`: write the condition to wake this agent on (the "
             "seed's 'Wake me if ...'), e.g. `wake_if: the parser's tests pass "
             "again` (`gitstate freeze ID --wake-if TEXT` writes it)",
             doc.line_of("wake_if") if "wake_if" in doc.front else None)]


def _frozen_at_findings(doc: statefile.StateDoc) -> list[tuple[str, int | None]]:
    front = doc.front
    if "frozen_at" not in front or is_moment(front["frozen_at"]):
        return []
    return [(f"frozen_at {front['frozen_at']!r} is not an ISO-8601 time: write when "
             "the agent froze, e.g. `frozen_at: '2026-11-22T10:00:00Z'` (`gitstate "
             "freeze` stamps it)", doc.line_of("frozen_at"))]


def is_moment(value: object) -> bool:
    """An ISO-8601 date and time with its zone (as text, or as YAML read a timestamp)."""
    import datetime
    if not isinstance(value, str):
        return isinstance(value, datetime.datetime)
    text = value.strip()
    if re.fullmatch(_ISO_TIME, text) is None:
        return False
    try:   # a real date and time, not 2026-13-45T99:00:00Z
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _section_names(names: list[str]) -> str:
    """`section '## A'` or `sections '## A', '## B'`."""
    return "section" + ("s " if len(names) > 1 else " ") + ", ".join(f"'## {n}'" for n in names)


def _sections(text: str) -> dict[str, str]:
    """Each `## Heading` (lower case) -> the text under it."""
    parts = _HEADING.split(text)
    return {parts[i].strip().lower(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _unwritten(body: str) -> bool:
    """Empty, or only the template's bracketed placeholders (`- (decision, and why)`)."""
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    return all(_PLACEHOLDER.match(ln) for ln in lines)


def check_freeze_file(p, ctx: Context, out: list[Violation]) -> None:
    """A freeze names the agent's own freeze-state, which the same commit writes (adds or
    changes: at least its `frozen_at`), complete."""
    new = p.new
    target = statefile.as_text(new.get("freeze_state"))
    where = f"{p.change.path}:{new.line_of('freeze_state')}"
    if not target or statefile.FIELDS["freeze_state"](target):
        return  # missing-field / bad-field already say so
    own = freeze_state_path(p.agent)
    if target != own:
        out.append(Violation(Rule.FREEZE_STATE, f"{p.agent}'s freeze names {target}, which is "
                             f"not its own freeze-state: an agent freezes with {own} "
                             f"(`freeze_state: {own}`; `gitstate freeze {p.agent}` writes it)",
                             where))
        return
    data = ctx.tree_file(target)
    unfit = _unfit(p.agent, target, data, ctx, where)
    if unfit is not None:
        out.append(unfit)
        return
    assert data is not None   # _unfit
    text = data.decode("utf-8", "replace")
    for problem, line in freeze_file_findings(text):
        out.append(Violation(Rule.FREEZE_STATE, f"{target}: {problem}",
                             f"{target}:{line}" if line else where))
    _future_stamp(text, target, ctx, out)
    _check_rewritten(p, target, data, ctx, where, out)


def _unfit(agent: str, target: str, data: bytes | None, ctx: Context,
           where: str) -> Violation | None:
    """The freeze-state is missing from the commit, a symbolic link, or too large."""
    if data is None:
        return Violation(Rule.FREEZE_STATE, f"{target} is not in this commit: write the "
                         "freeze-state file and commit it with the freeze "
                         f"(`gitstate freeze {agent}` does both)", where)
    if ctx.tree_mode(target) == SYMLINK_MODE:
        return Violation(Rule.FREEZE_STATE, f"{target} is a symbolic link: its text would "
                         "be read as the freeze-state here and as a link in every work "
                         f"tree; commit it as a file (`gitstate freeze {agent}` writes "
                         "one)", where)
    if limits.byte_size(data) > limits.STATE_FILE_BYTES:
        return Violation(Rule.TOO_LARGE, f"{target} is {limits.byte_size(data):,} bytes; "
                         "a freeze-state file has at most "
                         f"{limits.STATE_FILE_BYTES:,}", where)
    return None


def _check_rewritten(p, target: str, data: bytes, ctx: Context, where: str,
                     out: list[Violation]) -> None:
    """The freeze commit writes the freeze-state anew (a re-freeze: more than its stamp)."""
    base = ctx.base_file(target)
    before = statefile.as_text(p.old.get("freeze_state")) if p.old is not None else None
    if before and base is not None and _unstamped(base) == _unstamped(data):
        out.append(Violation(Rule.FREEZE_STATE, f"{p.agent} froze before and was woken; its "
                             f"freeze-state {target} is the one of that freeze (but its "
                             "frozen_at): update it (what it learned since, what is open now) "
                             "in the same commit", where))
    elif base == data:
        out.append(Violation(Rule.FREEZE_STATE, f"{target} is unchanged by this commit: a "
                             "freeze writes its freeze-state in the freeze commit (at least "
                             "frozen_at, the time of the freeze; `gitstate freeze "
                             f"{p.agent}` stamps it)", where))


def _future_stamp(text: str, target: str, ctx: Context, out: list[Violation]) -> None:
    """A `frozen_at` later than the freeze commit itself (beyond the clock tolerance): the
    freeze's time is the commit's, never one to come."""
    from gitstate.law.times import SKEW, iso
    try:
        doc = statefile.parse(text, target)
    except Exception:  # InvalidFile: the findings above say so
        return
    at = _seconds(doc.front.get("frozen_at") if doc.front else None)
    if at is None:
        return
    if at > ctx.committed() + SKEW:
        out.append(Violation(Rule.FREEZE_STATE, f"{target}: frozen_at {iso(at)} is later than "
                             f"this freeze ({iso(ctx.committed())}): write the time of the "
                             "freeze (`gitstate freeze` stamps it)",
                             f"{target}:{doc.line_of('frozen_at')}"))


def _seconds(value: object) -> int | None:
    """The seconds of a moment (`is_moment`): as text, or as YAML read it, a datetime (UTC
    where it gives no zone); None for anything else."""
    import datetime
    if not is_moment(value):
        return None
    if isinstance(value, datetime.datetime):
        return int((value if value.tzinfo else value.replace(tzinfo=datetime.UTC)).timestamp())
    from gitstate.law.times import parse_iso
    return parse_iso(str(value).strip())


def _unstamped(data: bytes) -> bytes:
    """A freeze-state without its `frozen_at` line: what a re-freeze must change."""
    return re.sub(_STAMP, b"", data, count=1, flags=re.MULTILINE)


def freeze_notice(pct: object, path: str, situation: object, wake_if: object) -> str:
    """The seed's board post on a freeze: "Frozen at X% context. Freeze-state at <path>.
    Working on <situation>. Wake me if <condition>." (a part gitstate does not know is left
    out)."""
    measured = isinstance(pct, (int, float)) and not isinstance(pct, bool)
    said = [f"Frozen at {pct:g}% context." if measured else "Frozen.",
            f"Freeze-state at {path}."]
    if statefile.is_filled(situation):
        said.append(f"Working on {_clause(situation)}.")
    if statefile.is_filled(wake_if):
        said.append(f"Wake me if {_clause(wake_if)}.")
    return " ".join(said)


def _clause(value: object) -> str:
    """A value said inside a sentence: one line, without its own full stop."""
    return " ".join(str(value).split()).rstrip(".")
