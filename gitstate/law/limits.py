"""Limits on what gitstate reads from files anyone can commit (docs/explanation/promises.md,
"Limits").

One hostile file committed by one agent must not stop every clone and the hub, so sizes are
checked on the bytes and text before any YAML parser sees them, and nesting, anchors, tags and
number lengths are checked while the YAML is read as a stream of events, before any document is
composed (`yamlio.load`): nothing recursive ever runs on unchecked input. Each refusal names
its rule, file and line.

The numbers are generous for what the files are for: a state file is a page of notes, a
lifecycle is a few dozen states (10,000 load in well under a second, and stay legal).
"""

from __future__ import annotations

import re

from gitstate.errors import InvalidFile
from gitstate.law.rule_ids import Rule

STATE_FILE_BYTES = 1 << 20       # a whole `_state.md`, notes included
FRONT_MATTER_BYTES = 64 << 10    # the YAML between its `---` lines
LINE_CHARS = 16 << 10            # one front-matter line: a key or value that long is a payload
LIFECYCLE_BYTES = 1 << 20        # protocols/lifecycle.yaml (20,000 states take ~0.5 MB)
DEPTH = 32                       # nested lists and mappings; a state file needs 1, a lifecycle 4
NUMBER_CHARS = 100               # digits (and signs, dots, underscores) of one number
ALIAS_NODES = 100_000            # lifecycles: values that aliases may repeat, all told
SUBJECT_CHARS = 1_000            # subjects longer than this are not read with grammar.accept

# Line breaks other than LF and CRLF: YAML (1.1) breaks lines at NEL, LS, PS and a lone CR, so
# `summary: ok<NEL>state: dead` would hide a key on what `git diff` shows as one line.
# A lone surrogate is not text at all (no UTF-8 file holds one; a str handed in might).
# (Compiled when first needed, through `re`'s cache: ASCII text without CR needs no search.)
_ODD_BREAK = "[\x85\u2028\u2029\ud800-\udfff]|\r(?!\n)"
_BREAK_NAMES = {"\x85": "NEXT LINE (U+0085)", "\u2028": "LINE SEPARATOR (U+2028)",
                "\u2029": "PARAGRAPH SEPARATOR (U+2029)", "\r": "a carriage return without a "
                "line feed"}


class Oversized(bytes):
    """Stands for an object too large to be read at all (see `Git.cat_batch`): its bytes are
    the object's id, so that two of them differ as their objects do; `size` is its size."""

    size: int

    def __new__(cls, sha: str, size: int):
        self = super().__new__(cls, sha.encode())
        self.size = size
        return self


def byte_size(data: bytes) -> int:
    return data.size if isinstance(data, Oversized) else len(data)


def utf8_size(text: str) -> int:
    """Bytes of `text` in UTF-8 (lone surrogates count as three, as they would be written)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def check_size(size: int, limit: int, what: str, where: str,
               rule: Rule = Rule.TOO_LARGE) -> None:
    if size > limit:
        raise InvalidFile(f"{what} is {size:,} bytes; gitstate reads at most {limit:,}",
                          where=where, rule=rule)


def check_number(digits: str, where: str) -> None:
    """`long-number`: a number literal longer than NUMBER_CHARS (both YAML readers ask)."""
    if len(digits) > NUMBER_CHARS:
        raise InvalidFile(f"a number of {len(digits):,} characters; gitstate reads numbers of "
                          f"at most {NUMBER_CHARS} (quote it if it is text)", where=where,
                          rule=Rule.LONG_NUMBER)


def given_twice(key, first: int, line: int, where: str) -> InvalidFile:
    """`duplicate-key`: a key given twice in one mapping (both YAML readers refuse it)."""
    return InvalidFile(f"key {key!r} is given twice (lines {first} and {line}); each key may "
                       "appear once, or readers would disagree on which one counts",
                       where=where, rule=Rule.DUPLICATE_KEY)


def check_breaks(text: str, where: str, line_offset: int = 0) -> None:
    """Refuse line breaks other than LF and CRLF, and lone surrogates (`unreadable`), with the
    line they are on."""
    if text.isascii() and "\r" not in text:
        return
    m = re.search(_ODD_BREAK, text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1 + line_offset
        if "\ud800" <= m.group() <= "\udfff":
            raise InvalidFile(f"a lone surrogate (U+{ord(m.group()):04X}) is not text",
                              where=f"{where}:{line}")
        raise InvalidFile(f"{_BREAK_NAMES[m.group()[0]]} inside a line: YAML would break the "
                          "line there, so what is read would differ from what `git diff` shows; "
                          "use plain line breaks", where=f"{where}:{line}")


def check_lines(text: str, where: str, line_offset: int = 0, limit: int = LINE_CHARS) -> None:
    """Refuse a line longer than `limit` characters (`too-large`), with its number."""
    if len(text) <= limit:
        return
    start = 0
    number = 1 + line_offset
    while True:
        end = text.find("\n", start)
        stop = len(text) if end < 0 else end
        if stop - start > limit:
            raise InvalidFile(f"line {number} is {stop - start:,} characters long; gitstate "
                              f"reads lines of at most {limit:,}", where=f"{where}:{number}",
                              rule=Rule.TOO_LARGE)
        if end < 0:
            return
        start = end + 1
        number += 1


def shorten(names, limit: int = 20) -> str:
    """`a, b, c` for a few names; the first `limit` and how many more for a long list (a message
    about a 10,000-state lifecycle should not list them all)."""
    names = list(names)
    shown = ", ".join(str(n) for n in names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit:,} more"
