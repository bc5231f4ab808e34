"""`gitstate say`: a message to agents (or @ALL) in one commit, without writing a raw one.

The commit changes no file and carries no tag: ordinary work by the commit grammar, which
every reader of history takes as a message to each `@id` it names. Its subject says who it is
to, and, from an agent's session, who speaks (the `@id:` prefix, which is never a message to
that agent itself):

    to @ana: please rebase on main              (a person; git's author says who)
    @bob: to @ana @carl: the parser is in       (bob's session: GITSTATE_AGENT, MCP)

The first line of the text ends the subject; the rest is the body. The text can never make
the commit read as a move: it comes after the subject's own opening, a control character in
it becomes a space (an invisible direction mark goes), and a first line that reads as a state
tag, text that is not UTF-8, or text too long for a message is refused before anything is
written. The commit is judged by the same judge as every move (a lifecycle with
`atomic_commits` keeps an agent's words in its moves) and again by the ref guard.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator

from gitstate.errors import GitstateError, Rejected, UsageError
from gitstate.git.atomic import Plan, Result
from gitstate.git.repo import GitContext, Managed
from gitstate.law import statefile
from gitstate.law.grammar import canonical_id, parse_message, subject_tag
from gitstate.law.judge import Facts, judge
from gitstate.law.limits import SUBJECT_CHARS
from gitstate.law.movers import agent_session
from gitstate.law.rule_ids import Rule
from gitstate.moves.commands import warn_unknown_mentions
from gitstate.moves.landing import push_move
from gitstate.moves.principals import bound_agent, session_env
from gitstate.moves.workfile import at_commit, commit_move

MESSAGE_BYTES = 64 << 10     # a message's text, all told; a document goes in a file
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_INVISIBLE = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")   # direction marks
_TAG_LIKE = re.compile(r"\[\s*state\s*:[^\]]{0,40}\]?", re.IGNORECASE)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def say(repo: Managed, to: Iterable[str], text: str, *, push: bool = False,
        warn: Callable[[str], None] = _stderr) -> dict:
    """Commit `text` as a message to the agents `to` (ids, `@id`, `ALL`): its record (the
    model Said). With `push`, land it on the upstream as `--push` lands a move."""
    bound = bound_agent()
    speaker = canonical_id(bound) if bound else None
    targets = addressees(to)
    first, body, controls, marks = cleaned(text)
    head = repo.head()
    lc = repo.lifecycle(head)
    _known(repo, lc, head, speaker, targets, warn)
    message = compose(speaker, targets, first, body)
    reads_as_no_move(message, lc)

    def prepare(tip: str | None) -> Plan:
        _judge(repo, tip, message, speaker, targets)
        return Plan({}, message, {"from": speaker, "to": targets}, with_staged=False,
                    judged=False)

    def made() -> Result:
        return commit_move(repo, prepare, reflog="gitstate say")

    subject = message.split("\n", 1)[0]
    record: dict = {"from": speaker, "to": targets, "subject": subject, "body": body}
    if push:
        landing, result = push_move(repo, speaker or "message", made, queue=False)
        landed = landing.outcome == "landed" and landing.commit
        record = {"commit": landing.commit if landed else result.sha, **record,
                  "push": landing.as_plain()}
    else:
        result = made()
        _detached_note(result, warn)
        record = {"commit": result.sha, **record}
    _cleaning_notes(controls, marks, warn)
    warn_unknown_mentions(repo, message, result.sha, warn)
    return record


def _detached_note(result: Result, warn: Callable[[str], None]) -> None:
    if result.detached:
        warn(f"gitstate: warning: detached HEAD: {result.sha[:10]} is on no branch; "
             "`git switch -c NAME` keeps it")


def _cleaning_notes(controls: int, marks: int, warn: Callable[[str], None]) -> None:
    """What `cleaned` changed in the text, said."""
    if controls:
        warn(f"gitstate: note: {_count(controls, 'control character')} of the message "
             f"became {'a space' if controls == 1 else 'spaces'}")
    if marks:
        warn(f"gitstate: note: {_count(marks, 'invisible direction mark')} of the message "
             f"{'was' if marks == 1 else 'were'} left out")


def _count(n: int, what: str) -> str:
    return f"{'the' if n == 1 else n} {what}{'s' if n != 1 else ''}"


def addressees(to: Iterable[str]) -> list[str]:
    """The ids a message goes to, as given (`ana`, `@ana`, `@ana:`, `ana,bob`, `ALL`), each
    once and in order; `all` alone when @ALL is among them (it speaks to everyone)."""
    found = list(dict.fromkeys(_ids(to)))
    if not found:
        raise UsageError("say needs someone to speak to: an agent's id, several, or ALL",
                         hint="e.g. `gitstate say ana 'please rebase on main'`")
    return ["all"] if "all" in found else found


def _ids(to: Iterable[str]) -> Iterator[str]:
    for word in to:
        for part in str(word).split(","):
            part = part.strip().removeprefix("@").removesuffix(":")   # `say @ana: ...`
            if part:
                yield "all" if part.lower() == "all" else canonical_id(part)


def cleaned(text: str) -> tuple[str, str, int, int]:
    """(the first line, the rest, how many control characters became spaces, how many
    direction marks were left out) of a message's text; a UsageError for text that is empty,
    not UTF-8, or too long."""
    _refuse_not_utf8(text)
    if len(text.encode("utf-8")) > MESSAGE_BYTES:
        raise UsageError(f"the message is longer than a message takes ({MESSAGE_BYTES:,} "
                         "bytes): nothing was committed",
                         hint="commit the text as a file and say where it is")
    text = text.replace("\r\n", "\n")
    text, controls = _CONTROL.subn(" ", text)
    text, marks = _INVISIBLE.subn("", text)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    if not lines:
        raise UsageError("the message is empty: nothing was committed")
    body = "\n".join(lines[1:]).strip("\n")
    return _subject(lines[0]), body, controls, marks


def _subject(line: str) -> str:
    """The first line, its runs of spaces one space; refused when too long for a subject."""
    first = " ".join(line.split())
    if len(first) > SUBJECT_CHARS:
        raise UsageError(f"the message's first line is {len(first):,} characters; it is the "
                         f"commit's subject, which takes at most {SUBJECT_CHARS:,}: nothing "
                         "was committed", hint="say it shortly on the first line, and the "
                         "rest on the lines after it")
    return first


def _refuse_not_utf8(text: str) -> None:
    """A UsageError naming the first character of `text` that is no UTF-8 (a surrogate)."""
    bad = re.search(r"[\ud800-\udfff]", text)
    if bad:
        code = ord(bad.group())
        what = f"byte 0x{code - 0xdc00:02x}" if 0xdc80 <= code <= 0xdcff \
            else f"a lone surrogate U+{code:04X}"
        raise UsageError(f"the message is not UTF-8 ({what} at character {bad.start() + 1}): "
                         "nothing was committed", hint="a commit message is UTF-8; convert the "
                         "text first (e.g. `iconv -f latin1 -t utf-8`)")


def compose(speaker: str | None, targets: list[str], first: str, body: str) -> str:
    """The commit message: `to @ana: TEXT` (a person), `@bob: to @ana: TEXT` (an agent)."""
    subject = f"{f'@{speaker}: ' if speaker else ''}to {_to_words(targets)}: {first}"
    return subject + (f"\n\n{body}" if body else "") + "\n"


def _to_words(targets: list[str]) -> str:
    return " ".join("@ALL" if t == "all" else f"@{t}" for t in targets)


def reads_as_no_move(message: str, lc) -> None:
    """Refuse a message whose subject would read as a state tag, to gitstate or to the
    lifecycle's `grammar.accept` forms: a message never moves an agent."""
    accept = lc.accept_patterns()
    msg = parse_message(message, accept)
    tag = subject_tag(msg.subject, accept)
    if not (msg.has_tag or tag):
        return
    found = _TAG_LIKE.search(msg.subject)
    said = f"holds {found.group()!r}, which reads as a state tag" if found else \
        f"reads as a move of {tag[0]} to {tag[1]} (a form the lifecycle reads)" if tag else \
        "reads as a state tag"
    raise GitstateError(f"say refused: the message's first line {said}; a message never "
                        "moves an agent, so nothing was committed",
                        hint="write it another way, or on a later line of the message; an "
                             "agent moves with `gitstate transition ID STATE`")


def _known(repo: Managed, lc, head: str | None, speaker: str | None, targets: list[str],
           warn: Callable[[str], None]) -> None:
    """Every addressee is an agent here (else the closest id is named), and so is the agent
    that speaks; a dead addressee is said (its inbox is read by no one)."""
    _refuse_own_words(speaker, targets)
    ids = [t for t in targets if t != "all"] + ([speaker] if speaker else [])
    for agent, data in zip(ids, at_commit(repo, head, [lc.state_path(a) for a in ids])):
        if agent == speaker:
            _refuse_unknown_speaker(lc, speaker, data)
        elif data is None:
            raise repo.unknown_agent(agent, head, lc)
        else:
            _dead_note(lc, agent, data, warn)


def _refuse_own_words(speaker: str | None, targets: list[str]) -> None:
    if speaker is not None and speaker in targets:
        raise UsageError(f"{speaker} speaks here (this session is bound to it), and its own "
                         "words are no message to it: nothing was committed",
                         hint="name another agent, or ALL")


def _refuse_unknown_speaker(lc, speaker: str, data: bytes | None) -> None:
    if data is None:
        raise GitstateError(f"this session is bound to '{speaker}' (GITSTATE_AGENT), which "
                            f"is no agent here: {lc.state_path(speaker)} is not committed",
                            hint="unset GITSTATE_AGENT to speak as yourself")


def _dead_note(lc, agent: str, data: bytes, warn: Callable[[str], None]) -> None:
    """A dead addressee is said: its inbox is read by no one."""
    try:
        state = statefile.parse_bytes(data, lc.state_path(agent)).state
    except GitstateError:
        return
    if isinstance(state, str) and lc.roster_of(state) == "dead":
        warn(f"gitstate: note: {agent} is {state} (in the cemetery): the message is "
             "committed, and no one will read it")


def _judge(repo: Managed, tip: str | None, message: str, speaker: str | None,
           targets: list[str]) -> None:
    """The commit as every door judges it (no file changed): refused in the law's words."""
    lc = repo.lifecycle(tip, index=False, worktree=False)
    context = GitContext(repo.git, tip, tree=tip, lc=lc)
    bound, mark = agent_session(session_env())
    found = judge(Facts(lc, [], message=parse_message(message), context=context,
                        bound=bound, mark=mark))
    if not found:
        return
    refused = Rejected(found, action="say")
    if speaker and any(v.rule == Rule.ATOMIC for v in found):
        refused.hint = _in_a_move(context, speaker, targets)
    raise refused


def _in_a_move(context: GitContext, speaker: str, targets: list[str]) -> str:
    """How an agent whose words the lifecycle keeps in its moves says them."""
    state = (context.agents().get(speaker) or {}).get("state")
    return (f"this lifecycle keeps an agent's words in its moves: `gitstate "
            f"transition {speaker} {state if isinstance(state, str) else 'STATE'}"
            f" --body '{_to_words(targets)} ...'` says it with a progress update")
