"""`gitstate init --runtime codex`: gitstate's hooks merged into the project's
`.codex/hooks.json`, its MCP server into `.codex/config.toml`, and the shim both run.

`.codex/hooks.json` has Claude Code's shape (`{"hooks": {"<Event>": [{"matcher": ...,
"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}`) and is merged by Claude
Code's merge: a group per event of the registry's Codex entry, the user's groups never
dropped, edited or reordered, gitstate's updated where it stands, nothing written when
nothing changes. Codex runs a hook's command with `/bin/bash -c` in the session's folder; the
command is `"$(git rev-parse --show-toplevel)"/.codex/hooks/gitstate NAME --runtime codex`, a
committed shell script that finds gitstate at run time (the clone's `gitstate.python`, else
`gitstate` on PATH, else a Python that imports it): no path of one machine is committed.

`.codex/config.toml` is the project's Codex configuration (read only in a trusted project).
Read with tomllib; written by hand, only what gitstate owns:
- `[mcp_servers.gitstate]`: the shim's `mcp`, from the top of the work tree. `required =
  true`: `codex exec` does not wait for a server that is not required before its first model
  request, so a non-interactive agent would start without gitstate's tools (and Codex says so
  when a required server fails to start: "required MCP servers failed to initialize").
  `env_vars`: Codex starts a server with few variables of its own environment; these pass on
  the agent a `codex` run was started as (Codex gives a server no session id to bind by:
  gitstate/mcp/binding.py). Appended when absent, replaced where it stands when it is
  gitstate's in another form, refused when a server of that name is someone else's.
- `allow_login_shell = false` (top level, inserted before the first table when the file does
  not set it): Codex runs the model's commands in a login shell (`bash -lc`), whose
  /etc/profile may reset PATH and lose a venv's gitstate; without one they keep the PATH
  `codex` was started with. A value the user set is kept.

Trust is Codex's own: a project's `.codex/` is loaded only in a trusted project, and each
hook only once its entry is trusted (`codex` asks about both in its interactive session;
`codex app-server` can record them); `init` says so and prompts for nothing.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from gitstate.doors.shims import write_executable
from gitstate.errors import InvalidFile
from gitstate.runtime import shared
from gitstate.runtime.claude_code.settings import merge
from gitstate.runtime.registry import RUNTIMES
from gitstate.runtime.shared import read_json, shim_text, write_json

HOOKS_FILE = ".codex/hooks.json"
CONFIG = ".codex/config.toml"
SHIM = ".codex/hooks/gitstate"
COMMAND = f'"$(git rev-parse --show-toplevel)"/{SHIM} '
SUFFIX = " --runtime codex"
OURS = (COMMAND,)
MCP_NAME = "gitstate"
MCP_SERVER = {"command": "sh",
              "args": ["-c", f'exec "$(git rev-parse --show-toplevel)/{SHIM}" mcp'],
              "required": True, "env_vars": ["GITSTATE_AGENT", "GITSTATE_SESSION"]}
HOOKS: dict[str, tuple] = RUNTIMES["codex"].hooks
SHIM_TEXT = shim_text("""\
# gitstate-shim: codex -- written by `gitstate init --runtime codex`; run it again to update
# this file. Codex runs it for gitstate's hooks (.codex/hooks.json) and MCP server
# (.codex/config.toml): `gitstate hook NAME` (or `gitstate mcp`) with the gitstate this clone
# uses, found as the git hooks find it.
""", CONFIG, "Codex")
TRUST = ("Codex loads a project's .codex/ only in a trusted project, and runs each hook only "
         "once it is trusted (a new or changed entry is skipped without a word in `codex "
         "exec`): run `codex` here once and accept the project and the hooks it lists "
         "(/hooks reviews them), or record both through `codex app-server` (config/batchWrite "
         "of projects.\"<path>\".trust_level and, from hooks/list, hooks.state.\"<key>\"."
         "trusted_hash). `gitstate doctor` says what is trusted.")


def runs_our_mcp(server: object) -> bool:
    """Is a `[mcp_servers.*]` table gitstate's server (the shim, `gitstate mcp`, `python -m
    gitstate mcp`)?"""
    return shared.runs_our_mcp(server, SHIM)


def _toml(value) -> str:
    """A TOML value: a string, a boolean, a number or a list of these (JSON's escapes are
    TOML's for these)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def _plain(value) -> bool:
    return isinstance(value, (str, bool, int, float)) or (
        isinstance(value, list) and all(_plain(v) and not isinstance(v, list) for v in value))


def _table() -> str:
    return f"[mcp_servers.{MCP_NAME}]\n" + "".join(
        f"{key} = {_toml(value)}\n" for key, value in MCP_SERVER.items())


HEADER = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(\"gitstate\"|gitstate)\s*\]\s*(#.*)?$", re.M)
ANY_HEADER = re.compile(r"^\s*\[", re.M)   # a table begins (or an array of tables)


def merge_config(text: str) -> tuple[str, list[str]]:
    """(the new `.codex/config.toml`, what was added or updated); the same text when nothing
    changes. Only gitstate's table and the login-shell key are ever written."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidFile(f"{CONFIG}: not valid TOML ({exc})",
                          hint="fix it; gitstate merges, it never replaces") from exc
    server = _our_server(data)
    changed: list[str] = []
    if server is None or {k: server.get(k) for k in MCP_SERVER} != MCP_SERVER:
        text = _appended(text) if server is None else _rewrite_table(text, server)
        changed.append(f"mcp_servers.{MCP_NAME}")
    if "allow_login_shell" not in data:
        text = _login_shell(text)
        changed.append("allow_login_shell")
    tomllib.loads(text)    # what is written always reads
    return text, changed


def _our_server(data: dict) -> dict | None:
    """The config's `[mcp_servers.gitstate]` (None: there is none); refused when it is not
    gitstate's."""
    servers = data.get("mcp_servers") or {}
    if not isinstance(servers, dict):
        raise InvalidFile(f"{CONFIG}: 'mcp_servers' must be a table",
                          hint="fix it by hand; gitstate will not replace it")
    server = servers.get(MCP_NAME)
    if server is not None and not runs_our_mcp(server):
        raise InvalidFile(f"{CONFIG}: the MCP server '{MCP_NAME}' is not gitstate's MCP "
                          "server", hint="rename it; gitstate will not replace it")
    return server


def _appended(text: str) -> str:
    return text + ("" if not text or text.endswith("\n") else "\n") + \
        ("\n" if text.strip() else "") + _table()


def _login_shell(text: str) -> str:
    """`text` with `allow_login_shell = false` above its first table."""
    first = ANY_HEADER.search(text)
    line = "allow_login_shell = false   # gitstate: the model's shell keeps codex's PATH\n"
    at = first.start() if first else len(text)
    return text[:at] + line + ("\n" if first else "") + text[at:]


def _rewrite_table(text: str, server: dict) -> str:
    """`text` with gitstate's `[mcp_servers.gitstate]` table (`server`, in another form)
    rewritten where it stands, its other plain keys and its own sub-tables kept."""
    found = HEADER.search(text)
    if found is None:   # written inline or dotted: not ours to rewrite
        raise InvalidFile(f"{CONFIG}: gitstate's MCP server is not a [mcp_servers."
                          f"{MCP_NAME}] table of its own",
                          hint="make it one, or remove it and run init again")
    end = ANY_HEADER.search(text, found.end())
    rest = text[end.start():] if end else ""
    body = _table() + "".join(f"{k} = {_toml(v)}\n" for k, v in _kept(text, server).items())
    return text[:found.start()] + body + ("\n" if rest else "") + rest.lstrip("\n")


def _kept(text: str, server: dict) -> dict:
    """The keys of gitstate's server that are not gitstate's (its own sub-tables stay where
    they are); refused where one is not a plain value."""
    kept = {k: v for k, v in server.items()
            if k not in MCP_SERVER and not _sub_table(text, k, v)}
    odd = [k for k, v in kept.items() if not _plain(v)]
    if odd:
        raise InvalidFile(f"{CONFIG}: gitstate's MCP server has keys gitstate cannot "
                          f"rewrite ({', '.join(odd)})",
                          hint="set command and args as `gitstate init --runtime codex` "
                               "writes them, by hand")
    return kept


def _sub_table(text: str, key: str, value) -> bool:
    return isinstance(value, dict) and re.search(
        rf"^\s*\[\s*mcp_servers\s*\.\s*\"?{MCP_NAME}\"?\s*\.\s*\"?"
        rf"{re.escape(key)}\"?\s*\]", text, re.M) is not None


def install(top: Path) -> list[dict]:
    """Merge into `top/.codex/hooks.json` and `top/.codex/config.toml` (both read and merged
    before either is written) and write the shim; the `init` report's entries."""
    hooks_path, config_path = top / HOOKS_FILE, top / CONFIG
    merged, changed, kept = merge(read_json(hooks_path, HOOKS_FILE), HOOKS, HOOKS_FILE, COMMAND,
                                  SUFFIX, OURS)
    before = config_path.read_text(encoding="utf-8") if config_path.is_file() else ""
    after, added = merge_config(before)
    if changed:
        write_json(hooks_path, merged)
    shim = write_executable(top / SHIM, SHIM_TEXT)
    if after != before:
        config_path.write_text(after, encoding="utf-8")
    theirs = sorted(set(tomllib.loads(after).get("mcp_servers") or {}) - {MCP_NAME})
    return [{"kind": "runtime", "name": "codex", "path": HOOKS_FILE,
             "changed": bool(changed) or shim, "added": changed, "kept": kept},
            {"kind": "runtime", "name": "codex", "path": CONFIG, "changed": bool(added),
             "added": added, "kept": theirs, "then": TRUST}]

