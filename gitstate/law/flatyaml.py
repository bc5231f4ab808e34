"""A reader for the flat YAML that state files almost always hold, without importing PyYAML.

Importing PyYAML costs a hook ~7 ms quiet (bench/README.md, "Hook latency"): its reader
compiles large regular expressions at import. Front matter is nearly always flat
`key: scalar` lines, so this module reads that subset itself and answers None for anything
else: nesting, lists, flow collections, anchors, tags, double quotes, numbers other than plain
integers, sexagesimal or octal lookalikes. The caller then parses with PyYAML. Within the
subset the result is the same as `yamlio.load` (tests/law/test_flatyaml.py checks that with
generated input), and so are its refusals: a key given twice (`duplicate-key`) and a number
too long to read (`long-number`).
"""

from __future__ import annotations

import re

from gitstate.law.limits import check_number, given_twice

# The expressions for lines outside the usual form are compiled when such a line is first read
# (through `re`'s own cache): the hooks read state files whose every line is usual, and compiling
# these costs them about a millisecond.
_KEY = r"([A-Za-z_][A-Za-z0-9_.-]*):(?:[ \t]+(.*))?\Z"
_INT = r"[-+]?(?:0|[1-9][0-9]*)\Z"
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False,
          "FALSE": False}
# Anything YAML might read as something other than the text itself sends us to PyYAML.
_NOT_PLAIN = (
    r"""[\[\]{}"`\\\t]|: |:\Z| \#|\A[-?:,&*!|>'%@#]"""
    r"""|\A(?:=|<<)\Z""")
# The YAML 1.1 forms of numbers (binary, octal, hex, underscores, base 60, floats, .inf, .nan).
_NUMBER_LIKE = (
    r"""[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"""
    r"""|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"""
    r"""|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"""
    r"""|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)""")
_RESERVED_KEYS = frozenset(_NULLS) | frozenset(_BOOLS)


# `key: value` where value is empty, a plain integer, a single-quoted text without quotes
# inside, or words that start with a letter and hold nothing YAML could read otherwise.
_COMMON = re.compile(
    r"([A-Za-z_][A-Za-z0-9_.-]*):"
    r"(?:[ \t]+(?:([A-Za-z][A-Za-z0-9_./,()+-]*(?: [A-Za-z0-9_./,()+-]+)*)"
    r"|((?:0|[1-9][0-9]*))|'([^'\t]*)'))?"
    r"(?:[ \t]+#[^\n]*)?[ \t]*\Z")
_NULL_OR_BOOL = {"null": None, "Null": None, "NULL": None, "true": True, "True": True,
                 "TRUE": True, "false": False, "False": False, "FALSE": False}
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _printable(text: str) -> bool:
    """YAML's printable set, less its extra line breaks (NEL, LS, PS): the check PyYAML's
    reader makes with an expression that is costly to compile."""
    if text.isascii():
        return not _ASCII_CONTROL.search(text)
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and o not in (9, 10, 13)) or 0x7F <= o <= 0x9F or o in (0x2028, 0x2029) \
                or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF, 0xFEFF):
            return False
    return True


def load_flat(text: str, line_offset: int = 0, where: str = "front matter"):
    """(mapping, lines) like `yamlio.load`, or None if `text` is not flat simple YAML.
    InvalidFile for a key given twice or a number too long, as `yamlio.load` would say."""
    if not _printable(text) or "\r" in text:
        return None
    data: dict = {}
    lines: dict = {(): 1 + line_offset}
    first = None
    for number, line in enumerate(text.split("\n"), start=1 + line_offset):
        read = _SEEN.get(line)
        if read is not None:   # a line read before: what it says depends on it alone
            _once(read[0], number, where, lines)
        else:
            read = _read_line(line, number, where, lines)
            if read is None:
                return None
            if not read:
                continue
        key, value, at = read
        data[key] = value
        lines[at] = number
        first = first or number
    if not data:
        return None  # an empty document is None in YAML; let PyYAML say so
    lines[()] = first
    return data, lines


def _read_line(line: str, number: int, where: str, lines: dict) -> tuple | None:
    """(key, value, (key,)) of one line not read before; () for a blank or comment line;
    None for a line outside the flat subset. A key given before (in `lines`) is refused
    before its value is read."""
    fast = _COMMON.match(line)
    if fast is not None:   # the usual line, read with one expression
        return _read_common(fast, line, number, where, lines)
    stripped = line.strip(" \t")
    if not stripped or stripped.startswith("#"):
        # an indented comment may sit inside a block
        return None if line[:1] in (" ", "\t") and stripped else ()
    return _read_other(line, number, where, lines)


def _read_other(line: str, number: int, where: str, lines: dict) -> tuple | None:
    """A `key: value` line `_COMMON` did not match, if it is in the flat subset."""
    m = re.match(_KEY, line)
    if m is None or m.group(1) in _RESERVED_KEYS:
        return None
    key = m.group(1)
    _once(key, number, where, lines)
    value = _scalar((m.group(2) or "").strip(" \t"), number, where)
    return None if value is _NO else (key, value, (key,))


def _read_common(fast: re.Match, line: str, number: int, where: str, lines: dict
                 ) -> tuple | None:
    """A line `_COMMON` matched: a word, a plain integer, a single-quoted text or nothing."""
    key, word, integer, quoted = fast.groups()
    if key in _RESERVED_KEYS:
        return None
    _once(key, number, where, lines)
    if word is not None:
        value = _NULL_OR_BOOL.get(word, word)
    elif integer is not None:
        value = _int(integer, number, where)
    else:
        value = quoted   # None for a key without a value
    read = (key, value, (key,))
    if len(line) <= _SEEN_CHARS:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        _SEEN[line] = read
    return read


# Lines read with `_COMMON` -> (key, value, (key,)). The lines of state files repeat across a
# history (`state: inbox`, `role: architect`, `depth: 0`), and verify reads every version of
# every state file: a line seen before costs a lookup instead of an expression (values are
# immutable scalars, shared safely). Bounded: short lines only, emptied when full (~3 MB).
_SEEN: dict[str, tuple] = {}
_SEEN_MAX = 1 << 14
_SEEN_CHARS = 160


def _once(key: str, line: int, where: str, lines: dict) -> None:
    """Refuse a key already read (its line in `lines`)."""
    if (key,) in lines:
        raise given_twice(key, lines[(key,)], line, f"{where}:{line}")


def _int(digits: str, line: int, where: str) -> int:
    check_number(digits, f"{where}:{line}")
    return int(digits)


class _No:
    pass


_NO = _No()


def _scalar(raw: str, line: int, where: str):
    if raw.startswith("'"):
        return _single_quoted(raw)
    if " #" in raw:
        raw = raw.split(" #", 1)[0].rstrip(" \t")
    if raw in _NULLS:
        return None
    if raw in _BOOLS:
        return _BOOLS[raw]
    if re.match(_INT, raw):
        return _int(raw, line, where)
    if re.search(_NOT_PLAIN, raw) or re.fullmatch(_NUMBER_LIKE, raw):
        return _NO
    return raw


def _single_quoted(raw: str):
    body, rest = _split_quote(raw[1:])
    if body is None or "\t" in body:
        return _NO
    if rest and not re.match(r"[ \t]+(?:#.*)?\Z", rest):
        return _NO
    return body


def _split_quote(text: str):
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "'":
            if text[i + 1:i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), text[i + 1:]
        out.append(ch)
        i += 1
    return None, ""


# What `yamlio.dump_entry` (PyYAML) writes for the values a move sets, written without it: a
# name plain, a time stamp single-quoted (YAML 1.1 would read it as a date), an integer, a
# boolean, null. Anything else is None: PyYAML writes it (tests/law/test_flatyaml.py checks
# that both write the same text).
_NAME = r"[A-Za-z_][A-Za-z0-9_-]*\Z"
_STAMP = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z\Z"
_YAML11_WORDS = frozenset(w for word in ("yes", "no", "true", "false", "on", "off", "null")
                          for w in (word, word.capitalize(), word.upper()))


def dump_flat_entry(key: str, value) -> str | None:
    """The `key: value` line PyYAML writes for a flat value, or None where it is not one."""
    if not re.match(_NAME, key) or key in _YAML11_WORDS:
        return None
    if value is None:
        return f"{key}: null\n"
    if isinstance(value, bool):
        return f"{key}: {'true' if value else 'false'}\n"
    if type(value) is int:
        return f"{key}: {value}\n"
    return _text_entry(key, value) if type(value) is str else None


def _text_entry(key: str, value: str) -> str | None:
    """A name plain, a time stamp single-quoted; None for other text."""
    if re.match(_NAME, value) and value not in _YAML11_WORDS:
        return f"{key}: {value}\n"
    if re.match(_STAMP, value):
        return f"{key}: '{value}'\n"
    return None
