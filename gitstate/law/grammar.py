"""The commit grammar (docs/explanation/rules.md): agent ids, `@id: [STATE:x] text` subjects,
trailers, mentions.

Pure functions over strings; no git, no files.
"""

from __future__ import annotations

import re

from gitstate.errors import InvalidId
from gitstate.law.limits import SUBJECT_CHARS
from gitstate.law.record import Record


class _Compiled:
    """An expression compiled when it is first used, then used directly: a state commit's
    pre-commit hook reads no message, and compiling the message's expressions at import cost
    it ~0.5 ms (`python -X importtime`)."""

    _METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "split")

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)

    def __getattr__(self, name: str):   # asked only for what the instance does not hold
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self._compiled = re.compile(*self._args)
            for method in self._METHODS:   # found on the instance from now on
                setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
_ID_RE = re.compile(rf"^{ID_PATTERN}\Z")     # not `$`: "alice\n" is no id
# `@ALL` addresses every agent, so no agent may be called "all".
RESERVED_IDS = frozenset({"all"})

# The canonical subject. The tag is matched case-insensitively so that `[state:x]` is not
# silently taken for an ordinary commit; anything but the exact form is reported.
_SUBJECT_RE = _Compiled(rf"^@(?P<id>{ID_PATTERN}):[ \t]*"
                        rf"\[STATE:(?P<state>[^\]\s]*)\][ \t]*(?P<text>.*)$")
_PREFIX_RE = _Compiled(rf"^@(?P<id>{ID_PATTERN}):")
_BRANCH_RE = _Compiled(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_TAG_ANYWHERE_RE = _Compiled(r"\[\s*state\s*:", re.IGNORECASE)
_MENTION_RE = _Compiled(rf"(?<![\w@.+-])@(?P<id>{ID_PATTERN})")
# A trailer's value is read without a regular expression: `[ \t]*(.*\S)?[ \t]*$` backtracks
# quadratically on a long line of blanks, and commit messages come from anyone.
_TRAILER_RE = _Compiled(r"(?P<key>[A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:(?P<value>.*)\Z")
_SCISSORS_RE = _Compiled(r"^# -+ >8 -+$")


def is_valid_id(text: str) -> bool:
    return bool(_ID_RE.match(text)) and text.lower() not in RESERVED_IDS


def is_branch_name(name: str) -> bool:
    """A branch name gitstate takes for the team line: what `git check-ref-format` takes, in a
    narrower alphabet."""
    return (len(name) <= 200 and _BRANCH_RE.fullmatch(name) is not None and ".." not in name
            and "//" not in name and "/." not in name
            and not name.endswith((".", "/", ".lock")))


def canonical_id(text: str) -> str:
    """The id as stored (lower case); raises InvalidId with what is allowed."""
    if not isinstance(text, str) or not is_valid_id(text):
        shown = text if isinstance(text, str) and len(text) <= 80 else f"{str(text)[:77]}..."
        reason = ("'all' is reserved for @ALL" if isinstance(text, str) and text.lower() == "all"
                  else "ids are 1-64 letters, digits, '.', '_' or '-', "
                       "starting with a letter or digit")
        raise InvalidId(f"invalid agent id {shown!r}: {reason}")
    return text.lower()


class PatternRefused(ValueError):
    """A grammar.accept pattern gitstate will not run; the text says why."""


def compile_accept(pattern: str):
    """A grammar.accept pattern, compiled by RE2 (the google-re2 package).

    Patterns come from a lifecycle anyone may propose, and run on every subject of the
    history, so they run on an engine whose time is linear in the subject: RE2 never
    backtracks. What it cannot run in linear time (backreferences, lookahead, lookbehind) it
    refuses, and so do we, at lifecycle load. RE2's `\\w`, `\\d` and `\\s` are ASCII only,
    as ids and state names are. Imported here only: no hook of an ordinary or state commit
    compiles a pattern."""
    try:
        import re2
    except ImportError:   # pragma: no cover - a dependency of gitstate
        raise PatternRefused("cannot be run: the google-re2 package, which gitstate uses to "
                             "run grammar.accept patterns in linear time, is not installed "
                             "(pip install google-re2)") from None
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options=options)
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
        raise PatternRefused("is refused: gitstate runs these patterns with RE2, which takes "
                             "time linear in the subject and so has no backreferences, "
                             f"lookahead or lookbehind ({why})") from None


class Message(Record):
    """A commit message, read by the grammar.

    prefix: canonical id of a leading `@id:`; tag: the state a well-formed `[STATE:x]` names;
    text: the subject after the tag; malformed: why a tag-like subject is not well formed;
    trailers: lower-case keys to values; mentions: canonical ids, "all" for @ALL.
    """

    subject: str
    body: str
    prefix: str | None = None
    tag: str | None = None
    text: str = ""
    malformed: str | None = None
    trailers: dict[str, list[str]] = {}
    mentions: frozenset[str] = frozenset()

    @property
    def has_tag(self) -> bool:
        return self.tag is not None or self.malformed is not None

    def trailer(self, key: str) -> list[str]:
        return self.trailers.get(key.lower(), [])


def clean_message(raw: str) -> list[str]:
    """Message lines as git's default cleanup keeps them: comment lines and everything below
    scissors dropped (what a commit-msg hook's file becomes once git has committed it)."""
    lines = []
    for line in raw.replace("\r\n", "\n").split("\n"):
        if _SCISSORS_RE.match(line):
            break
        if line.startswith("#"):
            continue
        lines.append(line)
    return lines


def split_message(raw: str, *, cleanup: bool = False) -> tuple[str, str]:
    """(subject, body) as git reads them: the subject is the first paragraph, its lines joined
    by spaces (what `git log --format=%s` shows, and so what every reader of history sees);
    the body is what follows it.

    `cleanup`: `raw` is a message git has yet to clean (the commit-msg hook's file), whose
    comment lines git's default cleanup drops. A committed message is read as it is stored:
    `git commit -m` and `--cleanup=verbatim` keep a `#` line, and then it is the subject."""
    lines = clean_message(raw) if cleanup else raw.split("\n")
    lines = [ln.rstrip(" \t\r") for ln in lines]
    start = 0
    while start < len(lines) and not lines[start]:
        start += 1
    end = start
    while end < len(lines) and lines[end]:
        end += 1
    return " ".join(lines[start:end]), "\n".join(lines[end:]).strip("\n")


def parse_message(raw: str, accept: tuple = (), *, cleanup: bool = False) -> Message:
    """Read a commit message (`split_message`: as committed, or with `cleanup` as git will
    commit it). `accept` adds other subject forms (named groups `id`, `state`;
    `compile_accept`), tried on subjects of at most `limits.SUBJECT_CHARS` characters."""
    subject, body = split_message(raw, cleanup=cleanup)
    prefix, tag, text, malformed = _parse_subject(subject, accept)
    trailers = parse_trailers(body)
    mentions = find_mentions(subject, body, prefix)
    return Message(subject, body, prefix, tag, text, malformed, trailers, mentions)


def _parse_subject(subject: str, accept: tuple):
    """(prefix, tag, text, malformed) of a subject."""
    m = _SUBJECT_RE.match(subject)
    if m:
        return _standard_subject(m)
    found = _accepted_subject(subject, accept)
    return found if found is not None else _untagged_subject(subject)


def _standard_subject(m: re.Match):
    """A subject in the standard form '@id: [STATE:x] text' (malformed: a bad id, no state)."""
    ident, state = m.group("id"), m.group("state")
    if not is_valid_id(ident):
        return None, state or None, m.group("text"), f"'{ident}' is not a valid agent id"
    if not state:
        return ident.lower(), None, m.group("text"), "the tag names no state: [STATE:]"
    return ident.lower(), state, m.group("text"), None


def _accepted_subject(subject: str, accept: tuple):
    """A subject in one of the lifecycle's `grammar.accept` forms, or None."""
    for pattern in accept if len(subject) <= SUBJECT_CHARS else ():
        am = pattern.search(subject)
        if am and is_valid_id(am.group("id") or "") and am.group("state"):
            return am.group("id").lower(), am.group("state"), subject[am.end():].strip(), None
    return None


def _untagged_subject(subject: str):
    """A subject without a tag in any form: its `@id:` prefix, if any; malformed where a
    state tag stands elsewhere than at its opening."""
    pm = _PREFIX_RE.match(subject)
    prefix = pm.group("id").lower() if pm and is_valid_id(pm.group("id")) else None
    if _TAG_ANYWHERE_RE.search(subject):
        return prefix, None, subject, (
            "a state tag must open the subject exactly as '@<id>: [STATE:<state>] <text>'")
    return prefix, None, subject[pm.end():].strip() if pm else subject, None


def subject_tag(subject: str, accept: tuple = ()):
    """(agent, state, text) of a well-formed tagged subject, else None. The fast path of
    `parse_message` for reading history: no trailers, no mentions."""
    m = _SUBJECT_RE.match(subject)
    if m:
        ident, state = m.group("id"), m.group("state")
        if state and ident.lower() not in RESERVED_IDS:
            return ident.lower(), state, m.group("text")
        return None
    found = _accepted_subject(subject, accept)
    return found[:3] if found is not None else None


def parse_trailers(body: str) -> dict[str, list[str]]:
    """`Key: value` lines of the body's last paragraph (keys lower-cased)."""
    paragraphs = [p for p in body.split("\n\n") if p.strip()]
    found: dict[str, list[str]] = {}
    for line in paragraphs[-1].split("\n") if paragraphs else ():
        if line[:1].isspace() and found:
            continue  # continuation of the previous trailer
        trailer = _trailer(line)
        if trailer is None:
            return {}
        found.setdefault(trailer[0], []).append(trailer[1])
    return found


def _trailer(line: str) -> tuple[str, str] | None:
    """(key lower-cased, value) of a `Key: value` line; None for any other line."""
    m = _TRAILER_RE.match(line)
    value = m.group("value").strip(" \t") if m else ""
    if not m or value[-1:].isspace():   # a value ends with a visible character
        return None
    return m.group("key").lower(), value.strip()


def find_mentions(subject: str, body: str, prefix: str | None = None) -> frozenset[str]:
    """Canonical ids addressed with `@id` or `@ALL`; the author's own prefix is not one."""
    text = subject
    if prefix is not None:
        pm = _PREFIX_RE.match(subject)
        if pm:
            text = subject[pm.end():]
    found: set[str] = set()
    for chunk in (text, body):
        if "@" in chunk:   # (most messages: no expression run)
            _add_mentions(chunk, found)
    return frozenset(found)


def _add_mentions(chunk: str, found: set[str]) -> None:
    for m in _MENTION_RE.finditer(chunk):
        ident = m.group("id").rstrip(".")
        if ident.lower() == "all":
            found.add("all")
        elif is_valid_id(ident):
            found.add(ident.lower())


def format_subject(agent: str, state: str, text: str) -> str:
    text = " ".join(text.split())
    return f"@{agent}: [STATE:{state}] {text}".rstrip()


def format_message(agent: str, state: str, text: str, body: str = "",
                   trailers: list[tuple[str, str]] | None = None) -> str:
    """The message of a state commit. A text of several lines is a subject (its first line)
    and the start of the body (the rest), as `git commit -m` would make it."""
    text, _, more = text.strip().partition("\n")
    body = "\n\n".join(p for p in (more.strip(), body.strip()) if p)
    parts = [format_subject(agent, state, text)]
    if body.strip():
        parts.append(body.strip())
    if trailers:
        parts.append("\n".join(f"{k}: {v}" for k, v in trailers))
    return "\n\n".join(parts) + "\n"
