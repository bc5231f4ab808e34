"""`gitstate freeze`: the agent's freeze-state written (or checked) and the freeze, in one
commit. The freeze stamps `frozen_at` with its own time and takes `wake_if` (the condition to
wake the agent on) from `--wake-if` or from the file; the commit's body carries the seed's
board post ("Frozen at X% context. Freeze-state at <path>. Working on <situation>. Wake me if
<condition>.")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitstate.errors import GitstateError
from gitstate.git.atomic import Result
from gitstate.git.repo import Managed
from gitstate.law import statefile
from gitstate.law.freezestate import freeze_file_problems, freeze_notice, freeze_state_path
from gitstate.law.grammar import canonical_id
from gitstate.moves.agent import current_state, move_to_roster, transition
from gitstate.moves.fields import now_iso
from gitstate.resources import read_shipped

# what a freeze-state gitstate wrote for an agent says of when to wake it
WAKE_UNSAID = "a human decides (the agent named no condition before it was stopped)"


def freeze(repo: Managed, agent: str, *, text: str | None = None,
           situation: str | None = None, sets: dict[str, Any] | None = None,
           unwritten: str | None = None, moved_by: str | None = None,
           wake_if: str | None = None) -> Result:
    """Freeze with the agent's freeze-state file, in one commit, its `frozen_at` the time of
    this freeze and its `wake_if` the one given (else the file's). Without the file, write the
    template and refuse — unless `unwritten` is given (a shutdown): then every section says
    that text, so a questioner learns that the agent never wrote it."""
    agent = canonical_id(agent)
    lc, state, front = current_state(repo, agent)
    target = move_to_roster(lc, state, "frozen", verb="freeze")
    rel = freeze_state_path(agent)
    existing = repo.top / rel if repo.top is not None else None
    if existing is None or not existing.is_file():
        data = _unwritten(agent, rel, existing, front, situation, unwritten, moved_by, wake_if)
    else:
        data = _as_found(existing, rel, unwritten, moved_by)
    doc = statefile.parse(statefile.decode(data, rel), rel)
    data = statefile.with_fields(doc, _stamp(doc, wake_if, unwritten)).encode()
    _refuse_incomplete(agent, rel, data)
    new = statefile.parse(data.decode(), rel)
    pct = front.get("context_pct")
    default = f"frozen at {pct}%" if isinstance(pct, (int, float)) else "frozen"
    post = freeze_notice(pct, rel, new.get("primary_situation"), new.get("wake_if"))
    return transition(repo, agent, target, text=text or default, body=post,
                      sets={**(sets or {}), "freeze_state": rel}, files={rel: data},
                      action="freeze", moved_by=moved_by)


def _as_found(existing: Path, rel: str, unwritten: str | None, moved_by: str | None) -> bytes:
    """The agent's freeze-state; marked as gitstate's when `unwritten` (a woken agent stopped
    before it wrote an updated one)."""
    data = existing.read_bytes()
    return _written_by(data, rel, moved_by) if unwritten else data


def _stamp(doc, wake_if: str | None, unwritten: str | None) -> dict[str, Any]:
    """The fields the freeze sets in the freeze-state: `frozen_at`, and `wake_if` when given
    (or, unsaid in a file gitstate writes, that a human decides)."""
    stamp: dict[str, Any] = {"frozen_at": now_iso()}
    if wake_if is not None:
        stamp["wake_if"] = wake_if
    elif unwritten and not statefile.is_filled(doc.get("wake_if")):
        stamp["wake_if"] = WAKE_UNSAID
    return stamp


def _refuse_incomplete(agent: str, rel: str, data: bytes) -> None:
    problems = freeze_file_problems(statefile.decode(data, rel))
    if problems:
        raise GitstateError(f"{rel} is not a complete freeze-state: " + "; ".join(problems),
                            hint="fill it in from the template (delete it to have gitstate "
                                 "write the template); `--wake-if TEXT` says when to wake "
                                 f"{agent}")


def _unwritten(agent: str, rel: str, existing: Path | None, front: dict,
               situation: str | None, unwritten: str | None, moved_by: str | None,
               wake_if: str | None) -> bytes:
    """An agent without a freeze-state: the template, filled in where gitstate knows the
    answer (a freeze-state of placeholders answers no question). Written for the agent to
    finish, and refused; with `unwritten` (a shutdown), each section says that text. Its
    `frozen_at` is left for the freeze to stamp."""
    data = _template(agent, rel, front, situation, wake_if)
    if existing is None:
        raise GitstateError(f"{rel} does not exist and there is no work tree to write it in")
    if not unwritten:
        existing.parent.mkdir(parents=True, exist_ok=True)
        existing.write_bytes(data)
        wake = "" if wake_if else ", and `wake_if:` (when to wake it)"
        raise GitstateError(f"{agent} is not frozen yet: {rel} was written from the "
                            "template; its sections are placeholders",
                            hint=f"write the sections of {rel} (key decisions, knowledge, "
                                 f"open questions, files, handoff){wake}, then run "
                                 f"`gitstate freeze {agent}` again")
    data = b"".join((unwritten.encode() + b"\n") if ln.strip().startswith((b"(", b"- ("))
                    else ln for ln in data.splitlines(keepends=True))
    return _written_by(data, rel, moved_by)


def _template(agent: str, rel: str, front: dict, situation: str | None,
              wake_if: str | None) -> bytes:
    """The shipped template, filled in where gitstate knows the answer."""
    template = statefile.parse(read_shipped("data", "freeze-state.md"), rel)
    return statefile.with_fields(template, {
        "session_id": agent,
        "role": statefile.as_text(front.get("role")),
        "primary_situation": situation or statefile.as_text(front.get("thread"))
        or statefile.as_text(front.get("summary")),
        **({"wake_if": wake_if} if wake_if is not None else {})}).encode()


def _written_by(data: bytes, rel: str, by: str | None) -> bytes:
    """A freeze-state marked as written by gitstate (`written_by:`, with when), not by its
    agent: `show` says so, so that nobody takes its boilerplate for what the agent knew. The
    time is what changes it from the last such freeze (a re-freeze changes more than its
    `frozen_at`)."""
    return statefile.with_fields(statefile.parse_bytes(data, rel), {
        "written_by": f"gitstate {by or 'shutdown'} at {now_iso(precise=True)}"}).encode()
