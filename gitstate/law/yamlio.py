"""YAML the way gitstate reads it: strict, located, and without YAML 1.1 surprises.

PyYAML follows YAML 1.1, where `on`, `off`, `yes`, `no`, `y` and `n` are booleans and
`2026-11-22` is a date. A state called `on` must stay the text "on", and a timestamp in a
state file must stay the text the agent wrote, so the loader here only knows `true`/`false`
as booleans and never builds dates. Every value keeps the line it came from, so that errors
can point at "file:line".
"""

from __future__ import annotations

import re
TYPE_CHECKING = False  # importing typing costs the hooks milliseconds

import yaml

if TYPE_CHECKING:
    from typing import Any

from gitstate.errors import InvalidFile

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


def load(text: str, *, where: str, line_offset: int = 0) -> tuple[Any, LineMap]:
    """Parse one YAML document; return (data, lines). Raises InvalidFile with file:line."""
    try:
        node = yaml.compose(text, Loader=StrictLoader)
    except yaml.YAMLError as exc:
        raise InvalidFile(_describe(exc), where=_at(where, exc, line_offset)) from None
    if node is None:
        return None, {}
    try:
        data = StrictLoader(text).construct_document(node)
    except yaml.YAMLError as exc:  # e.g. an unhashable key
        raise InvalidFile(_describe(exc), where=_at(where, exc, line_offset)) from None
    lines: LineMap = {}
    _collect_lines(node, (), lines, line_offset)
    return data, lines


def _collect_lines(node: yaml.Node, path: tuple, lines: LineMap, offset: int) -> None:
    lines[path] = node.start_mark.line + 1 + offset
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is None:
                continue
            lines[path + (key,)] = key_node.start_mark.line + 1 + offset
            _collect_lines(value_node, path + (key,), lines, offset)
            # the key line is more useful than the value's first line for messages
            lines[path + (key,)] = key_node.start_mark.line + 1 + offset
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _collect_lines(item, path + (i,), lines, offset)


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
