"""The judge: the one judgement of one commit, from its facts.

Every door — the commit hooks (the index about to be committed), the ref guard, the hub and
its landing queue, `verify`, and the move commands before they commit — gathers what it knows
of a commit into `Facts` and calls `judge`. Nothing else decides whether a commit is legal,
so a refusal reads the same wherever it is made.

The facts are those of the commit where it joins the line: the law in force at its first
parent (or, for a commit that brings the first law, that law), the state files and files of
the law it changes against its first parent, its message exactly as git shows it, and, at the
doors that see it as made, its `encoding` header, its date against the door's clock and its
signatures (`law.proofs`). What needs git beyond that (the other agents, when an agent entered
a state) is asked through `context`, only when a rule needs it.

The line rule (docs/explanation/promises.md): where the law in force declares the
team line (`line:`), a commit of that line with more than one parent carries work only — no
change to a state file or to the law against its first parent (`merge-moves`), and no subject
that reads as a move (`tag-on-merge`). Moves reach the line one by one, each judged here on the
line's tip. A merge made before the law declared the line is read, not judged.
"""

from __future__ import annotations

from gitstate.law.grammar import Message, subject_tag
from gitstate.law.rule_ids import Rule
from gitstate.law.rules import check_law_change, validate
from gitstate.law.times import SKEW as SKEW  # seconds a committer's clock may run ahead
from gitstate.law.verdict import SYMLINK_MODE, Violation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from gitstate.law.lifecycle import Lifecycle
    from gitstate.law.proofs import Proofs
    from gitstate.law.verdict import Context, FileChange

UTF8 = ("utf-8", "utf8")


class Facts:
    """What a door knows of the commit it judges.

    `lc`: the law in force; `changes`: its agents' state files that differ from the first
    parent; `law_changed`: the files of the law that differ from it (a commit that brings the
    first law changes none); `law_problem`: the lifecycle the commit leaves is deleted or
    invalid; `message`: as git shows it (None: not written yet, at pre-commit); `merge`: more
    than one parent; `line`: the commit is judged as one of the team line (merges off it are
    work on a branch, not judged); `bound`: the agent the session that makes it is bound to;
    `mark`: the variable that marks that session as an agent runtime's (`law.movers`);
    `signers_known()`: whether the law in force has protocols/allowed_signers (asked only of an
    approval made from an agent's session); `encoding`: its `encoding` header; `ahead`:
    seconds it is dated ahead of the door's clock; `proofs`: its signatures, where the door
    sees them; `memo`: state files parsed already; `brings_law`: the commit brings the first
    law (judged by it, as its own)."""

    __slots__ = ("lc", "changes", "law_changed", "law_problem", "message", "merge", "line",
                 "context", "bound", "mark", "signers_known", "encoding", "ahead", "proofs",
                 "memo", "brings_law")

    def __init__(self, lc: Lifecycle, changes: list[FileChange], *,
                 message: Message | None = None, law_changed: list[str] | None = None,
                 law_problem: Violation | None = None, merge: bool = False, line: bool = True,
                 context: Context | None = None, bound: str | None = None,
                 mark: str | None = None, signers_known: Callable[[], bool] | None = None,
                 encoding: str | None = None, ahead: float | None = None,
                 proofs: Proofs | None = None, memo: dict | None = None,
                 brings_law: bool = False):
        self.lc, self.changes, self.message = lc, changes, message
        self.law_changed = law_changed or []
        self.law_problem, self.merge, self.line = law_problem, merge, line
        self.context, self.bound, self.mark, self.encoding = context, bound, mark, encoding
        self.signers_known = signers_known or (
            (lambda: proofs.signers() is not None) if proofs is not None else (lambda: False))
        self.ahead, self.proofs, self.memo = ahead, proofs, memo
        self.brings_law = brings_law


def judge(f: Facts) -> list[Violation]:
    """Every violation of the commit these facts describe."""
    out = as_made(f.encoding, f.ahead)
    if f.law_problem is not None:
        out.append(f.law_problem)
    if f.merge:
        return out + judge_merge(f)
    msg = f.message
    if msg is not None and f.law_changed:
        out += check_law_change(f.lc, msg, f.law_changed)
    if _concerns_agents(f):
        out += validate(f.changes, f.lc, msg, context=f.context, memo=f.memo)
        out += _tag_form(f.lc, msg)
        out += _movers(f)
        out += _walls(f)
    out += _unnamed_work(f)
    return out + _approvals(f, out)


def _unnamed_work(f: Facts) -> list[Violation]:
    """A work commit on the line names its agent, where the law says so and the door sees
    its signatures (law/wall.py)."""
    msg = f.message
    if f.proofs is None or not f.line or msg is None or f.brings_law \
            or not f.lc.policies.work_commits_name_agent:
        return []
    from gitstate.law.wall import unnamed_work
    return unnamed_work(f.lc, msg, f.proofs)


def _walls(f: Facts) -> list[Violation]:
    """The fourth wall and `changes_in` (law/wall.py), where the lifecycle has them."""
    pol = f.lc.policies
    if not f.changes or not (pol.fourth_wall or pol.changes_in or pol.movers.system):
        return []
    from gitstate.law.wall import check_walls
    return check_walls(f.lc, f.changes, f.message, f.memo, f.context)


def _approvals(f: Facts, so_far: list[Violation]) -> list[Violation]:
    """A human's approval (`Approved-by:`) typed in an agent's session, or not signed by the
    human it names (where no approval was missing already)."""
    msg = f.message
    if msg is None or not msg.trailer("approved-by"):
        return []
    out: list[Violation] = []
    if f.bound or f.mark:
        from gitstate.law.movers import agent_approval  # a human's name typed by an agent
        out += agent_approval(f.lc, f.bound, f.mark, f.changes, f.law_changed, msg,
                              f.signers_known)
    if f.proofs is not None and not any(v.rule == Rule.NEEDS_APPROVAL for v in so_far + out):
        from gitstate.law.proofs import unsigned_approvals
        out += unsigned_approvals(f.lc, f.changes, f.law_changed, msg, f.proofs)
    return out


def line_rule(lc: Lifecycle | None) -> bool:
    """Is the line rule in force under this law?"""
    return lc is not None and lc.line is not None


def judge_merge(f: Facts) -> list[Violation]:
    """A merge on the team line carries work only: no state file and no file of the law may
    differ from its first parent, and its subject is no move. Off the line, or before the law
    declared the line, a merge is work on a branch: not judged."""
    if not f.line or not line_rule(f.lc):
        return []
    out = _merge_changes(f)
    msg = f.message
    if msg is not None and (msg.has_tag or subject_tag(msg.subject, f.lc.accept_patterns())):
        out.append(Violation(Rule.TAG_ON_MERGE, f"a merge is not a move, but its subject reads "
                             f"as one ({msg.subject[:80]!r}); say what the merge brings without "
                             "a state tag", "commit message"))
    return out


def _merge_changes(f: Facts) -> list[Violation]:
    """`merge-moves`: a merge on the line changes no state file and no file of the law."""
    # the same bytes made a symbolic link are a change too
    changed = sorted({ch.path for ch in f.changes
                      if ch.old != ch.new or ch.new_mode == SYMLINK_MODE} | set(f.law_changed))
    if not changed:
        return []
    named = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5
                                      else "")
    return [Violation(Rule.MERGE_MOVES, f"a merge on the team line carries work only, "
                      f"but this one changes {named} against its first parent; land "
                      "each move on the line by itself (`gitstate transition ... --push`"
                      ", `gitstate sync`) and merge work: keep the line's version of "
                      "those files in the merge (`git checkout HEAD -- PATH`)", changed[0])]


def as_made(encoding: str | None, ahead: float | None) -> list[Violation]:
    """What the commit object itself says: its encoding, and its date against the door's
    clock."""
    out = []
    if encoding is not None and encoding.strip().lower() not in UTF8:
        out.append(Violation(Rule.ENCODING, f"the commit declares `encoding {encoding[:40]}`: "
                             "its message reads one way to git and another to every reader of "
                             "bytes; commit it as UTF-8 (git config i18n.commitEncoding UTF-8)",
                             "commit message"))
    if ahead is not None and ahead > SKEW:
        out.append(Violation(Rule.FUTURE_DATE, f"committed {int(ahead)}s in the hub's future "
                             "(more than 5 minutes of clock skew); fix the committer's clock and "
                             "recommit"))
    return out


def _concerns_agents(f: Facts) -> bool:
    """Can the commit say anything about an agent? No state file changes, and a subject that
    could be no tag: ordinary work (the fast path of a long history)."""
    msg = f.message
    if f.changes or msg is None:
        return bool(f.changes)
    return "[" in msg.subject or bool(f.lc.accept) or _atomic_concern(f, msg)


def _atomic_concern(f: Facts, msg: Message) -> bool:
    """Under atomic commits, a subject that speaks as an agent, or a bound session's commit,
    concerns an agent."""
    return f.lc.policies.atomic_commits and (msg.subject.startswith("@") or bool(f.bound))


def _tag_form(lc: Lifecycle, msg: Message | None) -> list[Violation]:
    """Once the law is in force, a subject that reads as a move is a move in the standard
    grammar: the `grammar.accept` forms are for reading the history before it."""
    if msg is None or not lc.accept or msg.has_tag or msg.malformed:
        return []
    tag = subject_tag(msg.subject, lc.accept_patterns())
    if tag is None:
        return []
    agent, state, text = tag
    return [Violation(Rule.TAG_FORM, f"the subject reads as a move of {agent} to {state} in a "
                      "form `grammar.accept` keeps for the history before the law; a move now "
                      f"is written '@{agent}: [STATE:{state}] {text or '<text>'}'",
                      "commit message")]


def _movers(f: Facts) -> list[Violation]:
    """Who moved whom: the session's binding (`not-yours`) and the committer's own work
    (`atomic`), then signatures where the door sees them (`unsigned-move`)."""
    out = _binding(f, f.bound) if f.bound else []
    msg = f.message
    if f.proofs is not None and msg is not None and f.changes:
        from gitstate.law.proofs import unproven_movers
        out += unproven_movers(f.lc, f.changes, msg, f.context, f.proofs, f.memo)
    return out


def _binding(f: Facts, bound: str) -> list[Violation]:
    """The session's binding: whom `bound` may move (`not-yours`), and its own work carried
    with its state (`atomic`)."""
    out: list[Violation] = []
    msg = f.message
    from gitstate.law.movers import judge_binding
    if f.changes:
        agents = f.context.agents if f.context is not None else dict
        out += judge_binding(f.lc, bound, f.changes, msg, agents, f.memo)[0]
    if msg is not None and f.lc.policies.atomic_commits:
        from gitstate.law.society import working_agent_violations
        rx = f.lc.state_path_regex()
        changed = {m.group("id") for c in f.changes if (m := rx.match(c.path))}
        front = f.context.agents().get(bound) if f.context is not None else None
        out += working_agent_violations(f.lc, bound, msg, changed, front)
    return out
