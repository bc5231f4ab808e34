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
from pydantic import BaseModel, ValidationError

# the Python parameter -> the argument's published name (the command line's)
RENAMED = {"sets": "set", "giver": "from"}
PUBLISHED = {v: k for k, v in RENAMED.items()}


def strict(schema: dict) -> dict:
    """The published input schema: no key beyond those declared, each under its published
    name, without the titles the SDK derives from parameter names."""
    out = {k: v for k, v in schema.items() if k not in ("properties", "required", "title")}
    out["properties"] = _properties(schema)
    required = _published(schema.get("required") or [])
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _properties(schema: dict) -> dict:
    """The schema's properties, each under its published name and without its title."""
    return {RENAMED.get(k, k): {kk: vv for kk, vv in v.items() if kk != "title"}
            for k, v in (schema.get("properties") or {}).items()}


def _published(names) -> list[str]:
    """Python parameter names, each under its published name."""
    return [RENAMED.get(k, k) for k in names]


# what a value should have been, by the error of a strict validation (nothing converted)
WANTED = {"string_type": "a string", "int_type": "an integer", "float_type": "a number",
          "bool_type": "true or false", "list_type": "a list", "dict_type": "an object"}


def problem(tool: str, model: type[BaseModel], arguments: dict) -> str | None:
    """What is wrong with `arguments` (by their published names) for `tool`, whose
    arguments `model` declares, in gitstate's words (never the validation library's)."""
    takes = _published(model.model_fields)
    unknown = next((key for key in arguments if key not in takes), None)
    if unknown is not None:
        return _unknown(tool, unknown, takes)
    try:
        model.model_validate({PUBLISHED.get(k, k): v for k, v in arguments.items()},
                             strict=True)
    except ValidationError as exc:
        first = sorted(exc.errors(), key=lambda error: error["type"] != "missing")[0]
        return f"{tool}: {_said(first, arguments)}"
    return None


def _unknown(tool: str, key: str, takes: list[str]) -> str:
    """An argument `tool` does not take, and the one meant where it can be told."""
    near = difflib.get_close_matches(key, takes, n=1)
    alias = {"text": "message", **RENAMED}.get(key)
    guess = alias if alias in takes else (near[0] if near else None)
    return (f"{tool}: unknown argument '{key}'"
            + (f" (did you mean '{guess}'?)" if guess else "")
            + f"; {tool} takes: {', '.join(takes) or 'no arguments'}")


def _said(error: Any, arguments: dict) -> str:
    """A validation error of one argument, in gitstate's words."""
    key = RENAMED.get(str(error["loc"][0]), str(error["loc"][0]))
    if error["type"] == "missing":
        return f"missing argument '{key}'"
    value = arguments[key]
    if error["type"] == "greater_than_equal":
        return f"argument '{key}' must be at least {error['ctx']['ge']}, not {value}"
    want = WANTED.get(error["type"], "of another kind")
    if len(error["loc"]) > 1:   # an item of a list
        want = f"a list of {want.removeprefix('a ').removeprefix('an ')}s"
    return f"argument '{key}' must be {want}, not {json.dumps(value)[:60]}"


class StrictServer(MCPServer):
    """MCPServer whose tools publish strict schemas and judge their arguments first."""

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
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            arguments = await _judged(name, tool.fn_metadata.arg_model, arguments, context)
        arguments = {PUBLISHED.get(k, k): v for k, v in arguments.items()}
        return await super().call_tool(name, arguments, context)


async def _judged(name: str, model: type[BaseModel], arguments: dict[str, Any],
                  context) -> dict[str, Any]:
    """`arguments` of tool `name` judged (a ToolError says what is wrong), the repository
    taken from the client's roots where none is given."""
    said = problem(name, model, arguments)
    if said:
        raise ToolError(f"Error executing tool {name}: {said}")
    if "repository" in model.model_fields and arguments.get("repository") is None:
        root = await _root(context)
        if root:
            return {**arguments, "repository": root}
    return arguments


async def _root(context) -> str | None:
    """The first `file://` root the client offers (MCP roots), if it offers any."""
    try:
        session = _rooted(context)
        if session is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # roots are deprecated in the newest spec
            found = await session.list_roots()
    except Exception:  # noqa: BLE001 — no roots: the server's own directory
        return None
    return _first_file(found.roots)


def _rooted(context):
    """The client's session, if it offers roots (else None)."""
    session = context.session if context is not None else None
    caps = session.client_capabilities if session is not None else None
    return session if caps is not None and caps.roots is not None else None


def _first_file(roots) -> str | None:
    for root in roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            return unquote(uri.path)
    return None
