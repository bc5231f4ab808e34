"""`_state.md`: YAML front matter (typed known keys) and a free markdown body
(docs/reference/state-file.md).

Writing is surgical: setting a key rewrites only that key's lines, so unknown keys, comments,
key order and the body stay byte-for-byte as they were.
"""

from __future__ import annotations

import re

from gitstate.errors import InvalidFile
from gitstate.law import limits
from gitstate.law.flatyaml import load_flat
from gitstate.law.grammar import is_valid_id
from gitstate.law.record import Record
from gitstate.law.statekeys import KEYS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_STATE_FILE_BYTES = limits.STATE_FILE_BYTES  # a state file is a page of notes, not a data store
_OPEN = re.compile(r"^---[ \t]*\r?\n?$")
_CLOSE_LINE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?(?:\n|\Z)", re.MULTILINE)   # in a text
_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]|$)")
_COMMIT_RE = re.compile(r"^[0-9a-fA-F]{4,64}$")


def decode(data: bytes, where: str, limit: int = MAX_STATE_FILE_BYTES) -> str:
    """Bytes of a data file as text; a clear error for oversized (`too-large`), non-UTF-8 or
    BOM-led (`unreadable`) input. `limit` is the most bytes read (a lifecycle has its own)."""
    limits.check_size(limits.byte_size(data), limit, "the file", where)
    if data.startswith(b"\xef\xbb\xbf"):
        raise InvalidFile("the file starts with a byte order mark (U+FEFF); save it as UTF-8 "
                          "without one", where=f"{where}:1")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InvalidFile(f"not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})",
                          where=f"{where}:{line}") from None


class StateDoc(Record):
    """A parsed state file. `head + front_text + close + body` is the original text;
    `front` is the parsed mapping and `lines` the line of each key."""

    __slots__ = ("path", "front", "lines", "head", "front_text", "close", "body")

    def __init__(self, path, front, lines, head, front_text, close, body):
        self.path, self.front, self.lines, self.head = path, front, lines, head
        self.front_text, self.close, self.body = front_text, close, body

    def text(self) -> str:
        return self.head + self.front_text + self.close + self.body

    def line_of(self, key: str) -> int:
        return self.lines.get((key,), 2)

    def get(self, key: str, default: Any = None) -> Any:
        return self.front.get(key, default)

    @property
    def agent(self) -> Any:
        return self.front.get("agent")

    @property
    def state(self) -> Any:
        return self.front.get("state")


def parse(text: str, path: str) -> StateDoc:
    """Split and parse a state file; InvalidFile names the file, line and rule of any problem.

    The front matter is checked against `limits` (its size, its lines, odd line breaks)
    before either YAML reader sees it. Lines end at LF only, as git shows them."""
    limits.check_size(limits.utf8_size(text), MAX_STATE_FILE_BYTES, "the file", path)
    # Lines are found with `find` and one search, not by splitting the whole file (notes
    # included): verify parses every state file of a history.
    nl = text.find("\n")
    head = text if nl < 0 else text[:nl + 1]
    _check_head(head, path)
    close = _close_line(text, len(head)) if nl >= 0 else None
    if close is None:
        raise InvalidFile("front matter opened on line 1 is never closed with a '---' line",
                          where=f"{path}:1")
    front_text = text[len(head):close.start()]
    data, linemap = _front(front_text, path)
    return StateDoc(path, data, linemap, head, front_text, close.group(), text[close.end():])


def _check_head(head: str, path: str) -> None:
    """The first line opens the front matter: '---', no byte order mark before it."""
    if head.startswith("\ufeff"):
        raise InvalidFile("the file starts with a byte order mark (U+FEFF); save it as UTF-8 "
                          "without one", where=f"{path}:1")
    if not head or not _OPEN.match(head):
        first = head.rstrip("\r\n")
        shown = f" (it starts with {first[:40]!r})" if first else " (the file is empty)"
        raise InvalidFile("no front matter: a state file must start with a line '---'" + shown,
                          where=f"{path}:1",
                          hint="expected '---', then 'agent: <id>' and 'state: <state>', "
                               "then '---'")


def _front(front_text: str, path: str) -> tuple[dict, dict]:
    """(mapping, line of each key) of the front matter, within `limits`."""
    limits.check_size(limits.utf8_size(front_text), limits.FRONT_MATTER_BYTES,
                      "the front matter", f"{path}:2")
    limits.check_lines(front_text, path, 1)
    limits.check_breaks(front_text, path, 1)
    flat = load_flat(front_text, line_offset=1, where=path)
    if flat is not None:   # flat lines: a mapping whose keys are names
        return flat
    from gitstate.law import yamlio  # only for front matter beyond flat `key: scalar` lines
    data, linemap = yamlio.load(front_text, where=path, line_offset=1)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidFile("front matter must be a mapping of 'key: value' lines",
                          where=f"{path}:2")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise InvalidFile(f"front matter key {bad[0]!r} is not text", where=f"{path}:2")
    return data, linemap


def _close_line(text: str, start: int) -> re.Match | None:
    """`_CLOSE_LINE.search(text, start)` (`start` begins a line): the expression is tried only
    where a line starts with `---` or `...`, found by `find`, instead of at every character."""
    at = start - 1
    while True:
        dashes, dots = text.find("\n---", at), text.find("\n...", at)
        at = dashes if dots < 0 or 0 <= dashes < dots else dots
        if at < 0:
            return None
        found = _CLOSE_LINE.match(text, at + 1)
        if found is not None:
            return found
        at += 1


def parse_bytes(data: bytes, path: str) -> StateDoc:
    return parse(decode(data, path), path)


# ---------------------------------------------------------------------------------------
# Known keys and their types (law/statekeys.py). One table serves the hooks, `check` and
# the writers.


def _text(v: Any) -> str | None:
    return None if isinstance(v, (str, int, float)) and not isinstance(v, bool) \
        else "must be text"


def _name(v: Any) -> str | None:
    return None if isinstance(v, str) else "must be a name (text), not a number, list or null"


def _id(v: Any) -> str | None:
    return None if isinstance(v, str) and is_valid_id(v) else \
        ("must be an agent id (1-64 letters, digits, '.', '_' or '-', "
         "starting with a letter or digit)")


def _count(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and v >= 0 \
        else "must be a whole number >= 0"


def _percent(v: Any) -> str | None:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 100
    return None if ok else "must be a number from 0 to 100"


def _commit(v: Any) -> str | None:
    return None if isinstance(v, (str, int)) and not isinstance(v, bool) \
        and _COMMIT_RE.match(str(v)) else "must be a commit hash (4-64 hex digits)"


def _relpath(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "must be a path inside the repository"
    parts = v.split("/")
    if v.startswith("/") or "\\" in v or any(p in ("", ".", "..") for p in parts):
        return "must be a relative path inside the repository, without '..'"
    return None


def _public_key(v: Any) -> str | None:
    """An OpenSSH public key line, as `ssh-keygen` writes one: 'ssh-ed25519 AAAA... comment'."""
    words = v.split() if isinstance(v, str) else []
    ok = len(words) >= 2 and re.fullmatch(r"(ssh|ecdsa|sk)-[A-Za-z0-9@.-]+", words[0]) \
        and re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", words[1])
    return None if ok else "must be an SSH public key ('ssh-ed25519 AAAA...')"


_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "id": _id, "name": _name, "text": _text, "count": _count, "percent": _percent,
    "commit": _commit, "path": _relpath, "public-key": _public_key}
# each typed key of the table (law/statekeys.py) -> the check of its type
FIELDS: dict[str, Callable[[Any], str | None]] = {
    k.name: _CHECKS[k.type] for k in KEYS if k.type is not None}
REQUIRED = ("agent", "state")


def field_problems(doc: StateDoc) -> list[tuple[str, int, str]]:
    """(key, line, problem) for each known key of the wrong type or a missing required key."""
    front = doc.front
    out = [(key, 2, f"'{key}:' is required") for key in REQUIRED if front.get(key) in (None, "")]
    for key, value in front.items():
        check = FIELDS.get(key)
        if check is None or value is None or (key in REQUIRED and value == ""):
            continue
        problem = _judged(key, value, check)
        if problem:
            out.append((key, doc.line_of(key), f"'{key}' {problem}, not {value!r}"))
    return out


def _judged(key: str, value: Any, check: Callable[[Any], str | None]) -> str | None:
    """`check(value)`, remembered for short values (judged before, most of them)."""
    kind = value.__class__
    if not (kind is int or kind is str and len(value) <= 160):
        return check(value)
    seen = (key, kind, value)
    problem = _JUDGED.get(seen, _UNSEEN)
    if problem is _UNSEEN:
        if len(_JUDGED) >= 1 << 14:
            _JUDGED.clear()
        problem = _JUDGED[seen] = check(value)
    return problem


# (key, type, value) -> what `FIELDS` says of it: each check depends on the value alone
# (short values only, emptied when full: ~3 MB at most).
_JUDGED: dict = {}
_UNSEEN = object()


def is_filled(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def as_text(value: Any) -> str | None:
    return None if value is None else str(value)


# ---------------------------------------------------------------------------------------
# Writing


def with_fields(doc: StateDoc, updates: dict[str, Any]) -> str:
    """The file's text with `updates` applied to the front matter; all else unchanged.
    (Flat values in flat front matter are written and read back without PyYAML, whose import
    costs a move more than the rest of its writing.)"""
    front_text = _edited(doc.front_text, updates)
    expected = dict(doc.front)
    expected.update(updates)
    if _reread(front_text, doc.path) != expected:
        # Unusual YAML (anchors, flow mappings, keys spread over lines): the surgical edit
        # could not be proven right, so write the whole mapping. Values are kept; layout is not.
        import yaml
        front_text = yaml.safe_dump(expected, sort_keys=False, allow_unicode=True,
                                    default_flow_style=False, width=1 << 16)
    return doc.head + front_text + doc.close + doc.body


def _edited(front_text: str, updates: dict[str, Any]) -> str:
    """The front matter with each key's lines replaced by its new entry (or one added)."""
    from gitstate.law.flatyaml import dump_flat_entry
    lines = front_text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for key, value in updates.items():
        entry = dump_flat_entry(key, value)
        if entry is None:
            from gitstate.law import yamlio
            entry = yamlio.dump_entry(key, value)
        span = _key_span(lines, key)
        if span is None:
            lines.append(entry)
        else:
            lines[span[0]:span[1]] = [entry]
    return "".join(lines)


def _reread(front_text: str, path: str) -> Any:
    """The mapping the front matter reads as (None: it does not read)."""
    try:
        flat = load_flat(front_text, where=path)
        if flat is None:
            from gitstate.law import yamlio
            flat = yamlio.load(front_text, where=path)
        return flat[0]
    except InvalidFile:
        return None


def _key_span(lines: list[str], key: str) -> tuple[int, int] | None:
    """Line range [start, end) of a top-level key's entry, continuation lines included."""
    start = _key_line(lines, key)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and _continues(lines[end]):
        end += 1
    while end > start + 1 and (lines[end - 1].strip() == ""
                               or lines[end - 1].lstrip().startswith("#")):
        end -= 1  # trailing blank or comment lines belong to what follows
    return start, end


def _key_line(lines: list[str], key: str) -> int | None:
    for i, line in enumerate(lines):
        m = _TOP_KEY.match(line)
        if m and m.group("key") == key:
            return i
    return None


def _continues(line: str) -> bool:
    """A line that continues the entry above it: blank, indented, or a list item."""
    return line.strip() == "" or line[0] in " \t" or line.startswith("- ") or line.rstrip() == "-"
