"""The MCP server as a client author expects it (the MCP spec's tools: JSON Schema inputs,
annotations): a tool refuses an argument it does not take instead of dropping it, says what
was wrong in gitstate's words (never a validation library's text), and finds the repository
from its `repository` argument, else the client's roots, else where the server started.

Arguments are published under the command line's names (`message` for -m/--message, `set`
for --set, `from` for --from); a tool's Python parameter may be named otherwise (`set` is a
builtin, `from` a keyword): RENAMED maps one to the other.
"""

from __future__ import annotations

import difflib
import json
import warnings
from typing import Any
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# the Python parameter -> the argument's published name (the command line's)
RENAMED = {"sets": "set", "giver": "from"}
PUBLISHED = {v: k for k, v in RENAMED.items()}
TYPES = {"string": "a string", "integer": "an integer", "number": "a number",
         "boolean": "true or false", "array": "a list", "object": "an object", "null": "null"}


def strict(schema: dict) -> dict:
    """The published input schema: no key beyond those declared, each under its published
    name, without the titles the SDK derives from parameter names."""
    props = {RENAMED.get(k, k): {kk: vv for kk, vv in v.items() if kk != "title"}
             for k, v in (schema.get("properties") or {}).items()}
    out = {k: v for k, v in schema.items() if k not in ("properties", "required", "title")}
    out["properties"] = props
    required = [RENAMED.get(k, k) for k in schema.get("required") or []]
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _types(spec: dict) -> list[str]:
    if "type" in spec:
        kind = spec["type"]
        return list(kind) if isinstance(kind, list) else [kind]
    return [t for alt in spec.get("anyOf") or [] for t in _types(alt)]


def _is(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    return isinstance(value, dict) if kind == "object" else True


def problem(tool: str, schema: dict, arguments: dict) -> str | None:
    """What is wrong with `arguments` for `tool` (published schema), in gitstate's words."""
    props = schema.get("properties") or {}
    unknown = next((key for key in arguments if key not in props), None)
    if unknown is not None:
        return _unknown(tool, unknown, list(props))
    missing = next((key for key in schema.get("required") or [] if key not in arguments), None)
    if missing is not None:
        return f"{tool}: missing argument '{missing}'"
    for key, value in arguments.items():
        said = _mistyped(value, props[key]) or _below(value, props[key]) \
            or _mistyped_items(value, props[key])
        if said:
            return f"{tool}: argument '{key}' must be {said}"
    return None


def _unknown(tool: str, key: str, takes: list[str]) -> str:
    """An argument `tool` does not take, and the one meant where it can be told."""
    near = difflib.get_close_matches(key, takes, n=1)
    alias = {"text": "message", "sets": "set", "giver": "from"}.get(key)
    guess = alias if alias in takes else (near[0] if near else None)
    return (f"{tool}: unknown argument '{key}'"
            + (f" (did you mean '{guess}'?)" if guess else "")
            + f"; {tool} takes: {', '.join(takes) or 'no arguments'}")


def _alternatives(spec: dict) -> list[dict]:
    return [spec, *(spec.get("anyOf") or [])]


def _mistyped(value: Any, spec: dict) -> str | None:
    """What `value` should have been, when it is of none of the kinds `spec` allows."""
    kinds = _types(spec)
    if not kinds or any(_is(value, k) for k in kinds):
        return None
    want = " or ".join(TYPES.get(k, k) for k in kinds if k != "null")
    return f"{want}, not {json.dumps(value)[:60]}"


def _below(value: Any, spec: dict) -> str | None:
    """The least `spec` allows, when `value` is a number below it."""
    least = [alt["minimum"] for alt in _alternatives(spec) if alt.get("minimum") is not None]
    if least and _is(value, "number") and value < least[0]:
        return f"at least {least[0]}, not {value}"
    return None


def _mistyped_items(value: Any, spec: dict) -> str | None:
    """What a list's items should have been, when some are of none of the kinds allowed."""
    items = next((alt["items"] for alt in _alternatives(spec) if alt.get("items")), None)
    if not isinstance(value, list) or not items:
        return None
    if all(any(_is(v, k) for k in _types(items)) for v in value):
        return None
    want = " or ".join(TYPES.get(k, k) for k in _types(items))
    return f"a list of {want.removeprefix('a ').removeprefix('an ')}s, not {json.dumps(value)[:60]}"


class StrictServer(MCPServer):
    """MCPServer whose tools publish strict schemas and judge their arguments first."""

    _schemas: dict[str, dict] | None = None

    async def list_tools(self):
        tools = await super().list_tools()
        for t in tools:
            t.input_schema = strict(t.input_schema)
        return tools

    # resources listed beyond those registered (the state files on the team line, read
    # through the template that serves them)
    more_resources: Any = None

    async def list_resources(self):
        listed = await super().list_resources()
        return listed + (self.more_resources() if self.more_resources else [])

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if self._schemas is None:
            self._schemas = {t.name: t.input_schema for t in await self.list_tools()}
        schema = self._schemas.get(name)
        if schema is not None:
            said = problem(name, schema, arguments)
            if said:
                raise ToolError(f"Error executing tool {name}: {said}")
            if "repository" in schema["properties"] and arguments.get("repository") is None:
                root = await _root(context)
                if root:
                    arguments = {**arguments, "repository": root}
        arguments = {PUBLISHED.get(k, k): v for k, v in arguments.items()}
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            from pydantic import ValidationError
            if isinstance(exc.__cause__, ValidationError):   # never the library's text
                first = exc.__cause__.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise ToolError(f"Error executing tool {name}: {name}: argument '{where}' "
                                "cannot be taken as given") from None
            raise


async def _root(context) -> str | None:
    """The first `file://` root the client offers (MCP roots), if it offers any."""
    try:
        session = context.session if context is not None else None
        caps = session.client_capabilities if session is not None else None
        if session is None or caps is None or caps.roots is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # roots are deprecated in the newest spec
            found = await session.list_roots()
    except Exception:  # noqa: BLE001 — no roots: the server's own directory
        return None
    for root in found.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            return unquote(uri.path)
    return None
