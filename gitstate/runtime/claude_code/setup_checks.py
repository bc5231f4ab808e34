"""What `gitstate doctor` checks of Claude Code, in a project set up by `gitstate init --runtime
claude-code`:

- runtime: gitstate's hooks are in `.claude/settings.json` and can run, and an agent's Bash
  can run the commands its briefing gives. The SessionStart hook is run as Claude Code runs it
  (the command the settings name, in `sh`, with a `$CLAUDE_ENV_FILE` of its own), then a Bash
  whose PATH is only /usr/bin:/bin sources that file, as Claude Code does before each Bash
  command, and runs each program the briefing names (`gitstate`) with `--version`.
- mcp: gitstate's server in `.mcp.json`: can it start in this clone, and has the user approved
  it? Claude Code (2.1.331, read from its behaviour) starts a project's server once it is
  named in `enabledMcpjsonServers` (or `enableAllProjectMcpServers` is true) of the user's
  settings (~/.claude/settings.json), or, in a folder the user trusted (`hasTrustDialogAccepted`
  of the project in ~/.claude.json), of `.claude/settings.local.json`, which is where its own
  approval dialog records it; `disabledMcpjsonServers` rejects one. A server of the same name
  added with `claude mcp add` (the local scope, ~/.claude.json) takes the project's place.

Which runs them, the project's settings or gitstate's Claude Code plugin: plugin_check.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from gitstate.doors.doctor import finding
from gitstate.doors.shims import (
    BARE_COMMAND,
    MCP_CONFIG,
    MCP_NAME,
    PLUGIN_NAME,
    RUNTIME_COMMAND,
    RUNTIME_SHIM,
    runs_our_mcp,
)
from gitstate.git.repo import Managed
from gitstate.resources import install_extra

BARE_PATH = "/usr/bin:/bin"   # what an agent's Bash is sure to have
WAIT = 60                     # seconds for the hook, and for Bash


def findings(repo: Managed) -> list[dict]:
    if repo.top is None:
        return []
    top = Path(repo.top)
    return [f for f in (_runtime(repo, top), _mcp(repo, top)) if f is not None]


# -- the hooks, and the agents' Bash ----------------------------------------------------------


def _runtime(repo: Managed, top: Path) -> dict | None:
    """Claude Code's settings, when the project has any: are gitstate's hooks in them, can
    they run, and can an agent's Bash run what the briefing tells it to?"""
    settings = top / ".claude" / "settings.json"
    if not settings.is_file():
        return None
    ours = _our_commands(settings)
    if ours is None:
        return finding("warn", "runtime", ".claude/settings.json cannot be read as Claude "
                       "Code settings", "fix it, then run `gitstate init --runtime claude-code`")
    missing = [n for n in ("session-start", "context", "spawn-guard") if not _running(ours, n)]
    if missing:
        return _missing(top, ours, missing)
    return _broken(repo, top, ours) or _bash_runs(top, ours)


def _missing(top: Path, ours: list[str], missing: list[str]) -> dict | None:
    if not ours and plugin_enabled(top):
        return None        # the plugin runs them: its own check says so
    return finding("warn", "runtime", "Claude Code runs without gitstate's hooks "
                   f"({', '.join(missing)})", "`gitstate init --runtime claude-code`")


def _broken(repo: Managed, top: Path, ours: list[str]) -> dict | None:
    broken = _cannot_run(repo, top, ours)
    return finding("fail", "runtime", f"Claude Code's gitstate hooks cannot run: {broken}",
                   "`gitstate init --runtime claude-code` in this clone (the hooks then "
                   f"run {RUNTIME_SHIM}, which finds gitstate as the git hooks do)") \
        if broken else None


def _bash_runs(top: Path, ours: list[str]) -> dict:
    ran, why = agent_bash(top, _running(ours, "session-start")[0])
    if why:
        return finding("fail", "runtime", "an agent's Bash cannot run the commands its "
                       f"briefing gives: {why}", "run `gitstate init --runtime claude-code` "
                       "with the gitstate you use (recorded as gitstate.python; its "
                       "SessionStart hook puts that gitstate on the PATH of the session's Bash "
                       "through $CLAUDE_ENV_FILE), or put a `gitstate` on the PATH Claude Code "
                       "starts with")
    return finding("ok", "runtime", "Claude Code briefs agents, measures their context and "
                   "guards their spawns (.claude/settings.json); an agent's Bash runs the "
                   f"briefing's {ran} with a PATH of {BARE_PATH} and what SessionStart exports")


def _running(commands: list[str], hook: str) -> list[str]:
    """The commands (sorted) that run gitstate's hook `hook`."""
    return sorted(c for c in commands
                  if c.startswith((f"{RUNTIME_COMMAND}{hook}", f"{BARE_COMMAND}{hook}")))


def _our_commands(settings: Path) -> list[str] | None:
    """The commands of gitstate's hooks in Claude Code's settings (None: not readable)."""
    try:
        hooks = json.loads(settings.read_text(encoding="utf-8")).get("hooks") or {}
        commands = {h.get("command", "") for groups in hooks.values() for g in groups
                    for h in g.get("hooks") or []}
    except (ValueError, AttributeError, TypeError):
        return None
    return list(filter(_ours, commands))


def _ours(command) -> bool:
    return isinstance(command, str) and command.startswith((RUNTIME_COMMAND, BARE_COMMAND))


def _cannot_run(repo: Managed, top: Path, commands: list[str]) -> str | None:
    """Why a hook command of gitstate's in Claude Code's settings would fail, or None: the
    shim (or `gitstate` by bare name) must be found, and the shim must find gitstate."""
    if any(c.startswith(BARE_COMMAND) for c in commands) and shutil.which("gitstate") is None:
        return ("they run `gitstate hook ...` by bare name, and `gitstate` is not on PATH "
                "(every hook fails)")
    if any(c.startswith(RUNTIME_COMMAND) for c in commands):
        return _shim_fails(repo, top)
    return None


def _shim_fails(repo: Managed, top: Path) -> str | None:
    if _shim_missing(top):
        return f"{RUNTIME_SHIM} is missing or not executable"
    if _python(repo) is None and shutil.which("gitstate") is None:
        return (f"{RUNTIME_SHIM} finds no gitstate (no gitstate.python in this clone's git "
                "config, none on PATH)")
    return None


def _shim_missing(top: Path) -> bool:
    shim = top / RUNTIME_SHIM
    return not shim.is_file() or not os.access(shim, os.X_OK)


def _python(repo: Managed) -> str | None:
    """The Python the shim runs gitstate with, when it names one that exists."""
    python = os.environ.get("GITSTATE_PYTHON") or repo.git.config("gitstate.python")
    return python if python and os.access(python, os.X_OK) else None


_NAMED = re.compile(r"`(\S*gitstate\S*) [^`]*`", re.IGNORECASE)


def agent_bash(top: Path, start: str) -> tuple[str, str | None]:
    """(what the agent's Bash ran, why it could not), as Claude Code would: the SessionStart
    command `start` with an environment file of its own, then, in a Bash whose PATH is only
    BARE_PATH, that file sourced and each program the briefing names run with --version."""
    bash = shutil.which("bash") or "/bin/sh"
    keep = {k: v for k, v in os.environ.items() if k not in (
        "GITSTATE_AGENT", "GITSTATE_SESSION", "GITSTATE_DEBUG", "CLAUDE_ENV_FILE",
        "CLAUDE_PROJECT_DIR")}
    with tempfile.TemporaryDirectory(prefix="gitstate-doctor-") as tmp:
        env_file = Path(tmp) / "session-env.sh"
        env_file.write_text("", encoding="utf-8")
        hook = _session_start(top, start, {**keep, "CLAUDE_PROJECT_DIR": str(top),
                                            "CLAUDE_ENV_FILE": str(env_file)})
        if isinstance(hook, str):
            return "", hook
        programs = sorted(set(_NAMED.findall(_context_of(hook.stdout)))) or ["gitstate"]
        exported = env_file.read_text(encoding="utf-8", errors="replace")
        script = " && ".join(f"{p} --version" for p in programs)
        try:
            ran = subprocess.run([bash, "-c", f'. "$1" && {script}', "bash", str(env_file)],
                                 cwd=top, capture_output=True, text=True, timeout=WAIT,
                                 env={**keep, "PATH": BARE_PATH,
                                      "CLAUDE_CODE_SESSION_ID": "gitstate-doctor"})
        except subprocess.TimeoutExpired:
            return "", f"`{script}` did not end within {WAIT} s"
    return _bash_said(programs, ran, hook, exported)


def _session_start(top: Path, start: str, env: dict):
    """The SessionStart command `start` run as Claude Code runs it (or why it did not end)."""
    event = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(top)}
    try:
        return subprocess.run(["sh", "-c", start], cwd=top, input=json.dumps(event),
                              capture_output=True, text=True, timeout=WAIT, env=env)
    except subprocess.TimeoutExpired:
        return f"the SessionStart hook did not end within {WAIT} s"


def _context_of(reply: str) -> str:
    try:
        return json.loads(reply)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return ""


def _bash_said(programs: list[str], ran, hook, exported: str) -> tuple[str, str | None]:
    """`agent_bash`'s answer from the Bash run (`ran`), the hook's and what it exported."""
    shown = " and ".join(f"`{p}`" for p in programs)
    if ran.returncode == 0:
        version = (ran.stdout.strip().splitlines() or ["?"])[-1].rpartition(" ")[2]
        return f"{shown} ({version})", None
    err = (ran.stderr.strip().splitlines() or ["exit code " + str(ran.returncode)])[-1]
    return "", (f"{shown} fails ({err}) in a Bash whose PATH is {BARE_PATH}, "
                f"{_exported(hook, exported)}")


def _exported(hook, exported: str) -> str:
    if exported.strip():
        return "after what the SessionStart hook exported"
    hook_err = hook.stderr.strip().splitlines()[-1:]
    return ("and the SessionStart hook exported nothing for it through $CLAUDE_ENV_FILE"
            + (f" (the hook said: {hook_err[0]})" if hook_err else ""))


# -- the MCP server ---------------------------------------------------------------------------


def _mcp(repo: Managed, top: Path) -> dict | None:
    """gitstate's server in `.mcp.json`: can it start here, and may Claude Code start it?"""
    found = _our_server(top)
    if found is None:
        return None
    name, server = found
    broken = _mcp_cannot_start(repo, top, server)
    if broken:
        return finding("fail", "mcp", f"gitstate's MCP server ({MCP_CONFIG} '{name}') cannot "
                       f"start in this clone: {broken[0]}", broken[1])
    project = _claude_project(top)
    local = project.get("mcpServers") or {}
    if isinstance(local, dict) and name in local:
        return finding("warn", "mcp", f"a server '{name}' added with `claude mcp add` (local "
                       f"scope, {_tilde(_global_config())}) takes the place of {MCP_CONFIG}'s: "
                       f"Claude Code runs `{_shown(local[name])}`",
                       f"`claude mcp remove {name} -s local`")
    return _approved(top, name, project)


def _our_server(top: Path) -> tuple[str, dict] | None:
    """(the name, the entry) of gitstate's server in `.mcp.json`, if there is one."""
    path = top / MCP_CONFIG
    servers = _json(path).get("mcpServers") if path.is_file() else None
    if not isinstance(servers, dict):
        return None
    ours = [n for n, s in servers.items() if runs_our_mcp(s)]
    if not ours:
        return None
    name = MCP_NAME if MCP_NAME in ours else ours[0]
    return name, servers[name]


def _approved(top: Path, name: str, project: dict) -> dict:
    """Whether Claude Code may start gitstate's server `name`: approved, rejected, waiting."""
    state, where = approval(top, name, project)
    if state == "approved":
        return finding("ok", "mcp", f"Claude Code starts gitstate's MCP server ({MCP_CONFIG} "
                       f"'{name}'): approved in {where}")
    if state == "rejected":
        return finding("warn", "mcp", f"gitstate's MCP server ({MCP_CONFIG} '{name}') was "
                       f"rejected (disabledMcpjsonServers in {where}): its tools are not there",
                       f"remove '{name}' from disabledMcpjsonServers in {where} (or `claude "
                       "mcp reset-project-choices`), then approve it")
    gated = f"; it is approved in {where}, which Claude Code reads only once the folder is " \
        "trusted" if where else ""
    return finding("warn", "mcp", f"gitstate's MCP server ({MCP_CONFIG} '{name}') waits for "
                   f"your approval: an interactive `claude` asks before it starts it{gated}",
                   f"run `claude` in {top}, trust the folder and choose \"Use this MCP "
                   "server\" (Claude Code records it in .claude/settings.local.json, "
                   f"enabledMcpjsonServers), or add \"enabledMcpjsonServers\": [\"{name}\"] "
                   f"to {_tilde(_config_dir() / 'settings.json')}")


def _mcp_cannot_start(repo: Managed, top: Path, server: dict) -> tuple[str, str] | None:
    """(why the server's command would fail here, the fix), or None."""
    init = "`gitstate init --runtime claude-code` (the server then runs " \
        f"`{RUNTIME_SHIM} mcp`, which finds gitstate as the hooks do)"
    words = [server["command"], *(str(a) for a in server.get("args") or [])]
    if any(RUNTIME_SHIM in w for w in words):
        return _shim_cannot_serve(repo, top, init)
    if not _found(words[0]):
        return (f"it runs `{_shown(server)}`, and `{words[0]}` is not found (the PATH Claude "
                "Code starts with need not hold it)", init)
    return None


def _shim_cannot_serve(repo: Managed, top: Path, init: str) -> tuple[str, str] | None:
    """Why the shim would not start gitstate's MCP server (the fix), or None."""
    failed = _shim_fails(repo, top)
    if failed:
        return failed, init
    python = _python(repo)
    if python is None or _has_sdk(python):
        return None
    return (f"the gitstate it runs ({python}) has no MCP Python SDK",
            f"`{python} -m pip install {install_extra('mcp')}`")


def _has_sdk(python: str) -> bool:
    return subprocess.run([python, "-c", "import importlib.util as u, sys; "
                           "sys.exit(u.find_spec('mcp') is None)"],
                          capture_output=True, timeout=WAIT).returncode == 0


def _found(program: str) -> bool:
    return (os.path.isabs(program) and os.access(program, os.X_OK)) \
        or shutil.which(program) is not None


def _shown(server: object) -> str:
    if not isinstance(server, dict):
        return "?"
    return " ".join([str(server.get("command", "")), *(str(a) for a in server.get("args")
                                                       or [])])


def _config_dir() -> Path:
    found = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(found) if found else Path.home() / ".claude"


def _global_config() -> Path:
    found = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(found) / ".claude.json" if found else Path.home() / ".claude.json"


def _tilde(path: Path) -> str:
    """A path as a user reads it: under the home folder, from `~`."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _claude_project(top: Path) -> dict:
    """This project's entry in Claude Code's own configuration (~/.claude.json)."""
    projects = _json(_global_config()).get("projects")
    if not isinstance(projects, dict):
        return {}
    for key in (str(top), os.path.realpath(top)):
        if isinstance(projects.get(key), dict):
            return projects[key]
    return {}


def approval(top: Path, name: str, project: dict | None = None) -> tuple[str, str | None]:
    """("approved" | "rejected" | "pending", the file that says so) for a project server."""
    project = _claude_project(top) if project is None else project
    trusted = project.get("hasTrustDialogAccepted") is True
    user, shared, local = _settings_files(top)
    legacy = (_tilde(_global_config()), project)
    rejected = _first((user, local, legacy), name, _rejects)
    if rejected is not None:
        return "rejected", rejected
    approved = _first([user] + ([local, shared, legacy] if trusted else []), name, _enables)
    if approved is not None:
        return "approved", approved
    return "pending", _first((local, shared), name, _enables)


def _first(files, name: str, says) -> str | None:
    """The first of the settings `files` (where, settings) that `says(settings, name)`."""
    return next((where for where, said in files if says(said, name)), None)


def _rejects(settings: dict, name: str) -> bool:
    return _names(settings, "disabledMcpjsonServers", name)


def _enables(settings: dict, name: str) -> bool:
    """Do these settings approve the project's server `name` (or every project server)?"""
    return settings.get("enableAllProjectMcpServers") is True \
        or _names(settings, "enabledMcpjsonServers", name)


def _names(settings: dict, key: str, name: str) -> bool:
    found = settings.get(key)
    if isinstance(found, str):
        found = [found]
    return isinstance(found, list) and name in found


# -- the plugin -------------------------------------------------------------------------------


def plugin_enabled(top: Path) -> tuple[str, str] | None:
    """(its id, the file that enables it) when gitstate's Claude Code plugin is on for this
    project: `enabledPlugins` of the user's settings, of the project's, then of the person's
    own local settings of the project (the later decides)."""
    found = None
    for where, said in _settings_files(top):
        enabled = said.get("enabledPlugins")
        if not isinstance(enabled, dict):
            continue
        for key, on in enabled.items():
            if isinstance(key, str) and key.partition("@")[0] == PLUGIN_NAME:
                found = (key, where) if on is True else None
    return found


def _settings_files(top: Path) -> list[tuple[str, dict]]:
    user = _config_dir() / "settings.json"
    return [(_tilde(user), _json(user)),
            (".claude/settings.json", _json(top / ".claude" / "settings.json")),
            (".claude/settings.local.json", _json(top / ".claude" / "settings.local.json"))]
