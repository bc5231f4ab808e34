"""YAML the way gitstate reads it: strict, located, and without YAML 1.1 surprises.

PyYAML follows YAML 1.1, where `on`, `off`, `yes`, `no`, `y` and `n` are booleans and
`2026-11-22` is a date. A state called `on` must stay the text "on", and a timestamp in a
state file must stay the text the agent wrote, so the loader here only knows `true`/`false`
as booleans and never builds dates. Every value keeps the line it came from, so that errors
can point at "file:line".
"""

from __future__ import annotations

import re

import yaml

from gitstate.errors import InvalidFile
from gitstate.law import limits
from gitstate.law.rule_ids import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader with YAML 1.2 booleans and no timestamp type."""


StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.copy().items()
}
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))

# Lines of a loaded document: a key path (tuple of mapping keys / list indexes) -> 1-based line.
LineMap = dict

_STR, _NULL, _BOOL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool"
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_MERGE, _VALUE = "tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"
_SAFE = yaml.constructor.SafeConstructor()   # its int and float readers, for plain scalars


def load(text: str, *, where: str, line_offset: int = 0, strict: bool = True,
         rule: Rule = Rule.UNREADABLE) -> tuple[Any, LineMap]:
    """Parse one YAML document; return (data, lines). Raises InvalidFile with file:line.

    The document is built from libyaml's stream of events with a stack of our own, never by
    PyYAML's recursive composer, and every limit is checked as the events come: nesting
    (`too-deep`), explicit tags (`yaml-tag`), number length (`long-number`), keys given twice
    (`duplicate-key`) and merge keys. `strict` (state files) refuses anchors and aliases
    outright; otherwise (lifecycles) an alias is a reference, never expanded, and all aliases
    together may repeat at most `limits.ALIAS_NODES` values (`yaml-alias`). Broken YAML is
    `rule`.
    """
    limits.check_breaks(text, where, line_offset)
    loader = StrictLoader(text)
    try:
        return _Builder(loader, where, line_offset, strict).document()
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):
            # libyaml's scanner (PyYAML >= 6.0.3) runs ahead of the events over a long run of
            # `[` or `{` and stops at its own depth limit before our stack sees depth 33.
            raise InvalidFile(f"nested more than {limits.DEPTH} deep; gitstate reads lists and "
                              f"mappings nested at most {limits.DEPTH} deep",
                              where=_at(where, exc, line_offset), rule=Rule.TOO_DEEP) from None
        raise InvalidFile(_describe(exc), where=_at(where, exc, line_offset), rule=rule) from None
    finally:
        loader.dispose()


_NO_KEY = object()


class _Frame:
    """An open list or mapping: its value, its key path, and (mappings) the key awaiting its
    value and the line of every key seen."""

    __slots__ = ("value", "path", "is_map", "key", "key_lines", "anchor", "start")

    def __init__(self, value, path, anchor, start):
        self.value, self.path, self.anchor, self.start = value, path, anchor, start
        self.is_map = isinstance(value, dict)
        self.key = _NO_KEY
        self.key_lines: dict = {}


class _Builder:
    def __init__(self, loader, where: str, offset: int, strict: bool):
        self.loader, self.where, self.offset, self.strict = loader, where, offset, strict
        self.lines: LineMap = {}
        self.anchors: dict = {}    # name -> (value, how many values it holds)
        self.count = 0             # values read, an alias counting as all it repeats
        self.repeated = 0          # values repeated by aliases

    def fail(self, message: str, line: int, rule: Rule) -> None:
        raise InvalidFile(message, where=f"{self.where}:{line}", rule=rule)

    def document(self) -> tuple[Any, LineMap]:
        get = self.loader.get_event
        get()                                        # StreamStart
        event = get()
        if isinstance(event, yaml.StreamEndEvent):
            return None, {}
        data = self.node()                           # after DocumentStart
        get()                                        # DocumentEnd
        event = get()
        if not isinstance(event, yaml.StreamEndEvent):
            self.fail("expected a single document, but found another one (a second '---')",
                      event.start_mark.line + 1 + self.offset, Rule.UNREADABLE)
        return data, self.lines

    def node(self) -> Any:
        """Read one whole node (the document's root) with an explicit stack."""
        get = self.loader.get_event
        stack: list[_Frame] = []
        while True:
            event = get()
            kind = type(event)
            if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value = self.close(stack.pop())
            else:
                line = event.start_mark.line + 1 + self.offset
                parent = stack[-1] if stack else None
                is_key = parent is not None and parent.is_map and parent.key is _NO_KEY
                if kind is not yaml.AliasEvent and kind is not yaml.ScalarEvent:
                    stack.append(self.open(event, line, parent, is_key, len(stack)))
                    continue
                value = self.leaf(event, line, is_key)
                if parent is None:
                    self.lines[()] = line
                    return value
                if is_key:
                    self.key(parent, value, line)
                    continue
                self.lines.setdefault(self.path_of(parent), line)
            if not stack:
                return value
            self.attach(stack[-1], value)

    def leaf(self, event, line: int, is_key: bool) -> Any:
        """A scalar's value, or the value an alias repeats."""
        if type(event) is yaml.AliasEvent:
            return self.alias(event, line)
        self.check_node(event, line)
        self.count += 1
        value = self.scalar(event, line, is_key)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1)
        return value

    def open(self, event, line: int, parent: _Frame | None, is_key: bool,
             depth: int) -> _Frame:
        """A list or mapping that starts: never a key, nor deeper than the limit."""
        self.check_node(event, line)
        self.count += 1
        if is_key:
            self.fail("a key must be a plain value, not a list or mapping", line, Rule.UNREADABLE)
        if depth >= limits.DEPTH:
            self.fail(f"nested more than {limits.DEPTH} deep; gitstate reads lists and mappings "
                      f"nested at most {limits.DEPTH} deep", line, Rule.TOO_DEEP)
        path = self.path_of(parent)
        self.lines.setdefault(path, line)
        container: dict | list = {} if type(event) is yaml.MappingStartEvent else []
        return _Frame(container, path, event.anchor, self.count)

    def close(self, frame: _Frame) -> Any:
        """A list or mapping that ends: its value, remembered under its anchor."""
        if frame.anchor is not None:
            self.anchors[frame.anchor] = (frame.value, self.count - frame.start + 1)
        return frame.value

    @staticmethod
    def attach(parent: _Frame, value: Any) -> None:
        if parent.is_map:
            parent.value[parent.key] = value
            parent.key = _NO_KEY
        else:
            parent.value.append(value)

    def path_of(self, parent: _Frame | None) -> tuple:
        if parent is None:
            return ()
        if parent.is_map:
            return parent.path + (parent.key,)
        return parent.path + (len(parent.value),)

    def key(self, frame: _Frame, key: Any, line: int) -> None:
        try:
            first = frame.key_lines.get(key)
        except TypeError:
            self.fail("a key must be a plain value, not a list or mapping", line, Rule.UNREADABLE)
        if first is not None:
            raise limits.given_twice(key, first, line, f"{self.where}:{line}")
        frame.key_lines[key] = line
        frame.key = key
        # the key's line is more useful than its value's first line for messages
        self.lines[frame.path + (key,)] = line

    def check_node(self, event, line: int) -> None:
        if event.tag is not None:
            self.fail(f"explicit YAML tag {event.tag!r}: gitstate reads plain data only "
                      "(no tags)", line, Rule.YAML_TAG)
        if event.anchor is not None and self.strict:
            self.fail(f"anchor &{event.anchor}: anchors and aliases are not allowed in a "
                      "state file", line, Rule.YAML_ALIAS)

    def alias(self, event, line: int) -> Any:
        if self.strict:
            self.fail(f"alias *{event.anchor}: anchors and aliases are not allowed in a state "
                      "file", line, Rule.YAML_ALIAS)
        if event.anchor not in self.anchors:
            self.fail(f"alias *{event.anchor} names no anchor defined (and closed) before it",
                      line, Rule.UNREADABLE)
        value, size = self.anchors[event.anchor]
        self.count += size
        self.repeated += size
        if self.repeated > limits.ALIAS_NODES:
            self.fail(f"aliases repeat more than {limits.ALIAS_NODES:,} values (an alias bomb?)",
                      line, Rule.YAML_ALIAS)
        return value

    def scalar(self, event, line: int, is_key: bool) -> Any:
        value = event.value
        if not event.implicit[0]:
            return value          # quoted or a block scalar: text
        tag = _resolve(value)
        if tag == _STR:
            return value
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return value.lower() == "true"
        if tag == _INT or tag == _FLOAT:
            return self.number(value, tag, line)
        self.refuse(value, tag, line, is_key)

    def number(self, value: str, tag: str, line: int) -> Any:
        limits.check_number(value, f"{self.where}:{line}")
        node = yaml.ScalarNode(tag, value)
        try:
            return _SAFE.construct_yaml_int(node) if tag == _INT \
                else _SAFE.construct_yaml_float(node)
        except (ValueError, OverflowError):   # e.g. `0x_`, which PyYAML cannot read either
            self.fail(f"{value!r} looks like a number but is not one (quote it if it is "
                      "text)", line, Rule.UNREADABLE)

    def refuse(self, value: str, tag: str, line: int, is_key: bool) -> None:
        """A plain scalar YAML reads as something gitstate does not take: a merge key, ..."""
        if tag == _MERGE:
            self.fail("merge keys ('<<') are not allowed: write each key out" if is_key else
                      "'<<' must be quoted to be text", line, Rule.UNREADABLE)
        self.fail(f"{value!r} must be quoted to be text (YAML reads it as {tag})", line,
                  Rule.UNREADABLE)


def _resolve(value: str) -> str:
    """The tag YAML gives a plain scalar (what PyYAML's resolver does, with StrictLoader's
    resolvers: no timestamps, YAML 1.2 booleans)."""
    resolvers = StrictLoader.yaml_implicit_resolvers
    for tag, rx in resolvers.get(value[:1] if value else "", []) + resolvers.get(None, []):
        if rx.match(value):
            return tag
    return _STR


def _describe(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    return f"invalid YAML: {context + ', ' if context else ''}{problem}"


def _at(where: str, exc: yaml.YAMLError, offset: int) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f"{where}:{mark.line + 1 + offset}" if mark is not None else where


def dump_entry(key: str, value: Any) -> str:
    """The YAML text of one `key: value` entry, newline-terminated, that reads back as `value`.

    PyYAML quotes by the YAML 1.1 rules, a superset of what StrictLoader needs, so the text
    always reads back equal. Long or multi-line strings may take several lines.
    """
    if value is None:
        return f"{key}: null\n"
    return yaml.safe_dump({key: value}, default_flow_style=False, sort_keys=False,
                          allow_unicode=True, width=1 << 16)
