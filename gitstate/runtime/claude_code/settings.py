"""`gitstate init --runtime claude-code`: gitstate's hooks merged into `.claude/settings.json`,
its MCP server into `.mcp.json`.

The file is Claude Code's project settings (https://code.claude.com/docs/en/hooks):
`hooks.<Event>` is a list of groups `{"matcher": ..., "hooks": [{"type": "command",
"command": ..., "timeout": seconds}]}`. gitstate adds one group per event and never drops,
edits or reorders anything of the user's: a group of gitstate's (a command that runs the
shim below, or the bare `gitstate hook ` of older versions) is updated where it stands, any
other group is kept as it is, and a run that changes nothing writes nothing.

The command is `"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate NAME`: a small shell script,
committed with the settings, that finds gitstate at run time as the git hook shims do (the
`gitstate.python` of this clone's git config, else `gitstate` on PATH, else a Python that
imports it). No path of one machine is written into a file a team commits.

`.mcp.json` is Claude Code's project-scoped MCP configuration (`{"mcpServers": {NAME:
{"command": ..., "args": [...]}}}`). gitstate's server runs the same script (`... mcp`),
from the top of the work tree the session runs in; every other server is kept as it is, a
server of gitstate's in another form (`gitstate mcp` by bare name, `python -m gitstate mcp`)
is updated where it stands, under its own name, and none is ever added twice. Claude Code asks
the user before it starts a project's server (`gitstate doctor` says whether it was approved).
"""

from __future__ import annotations

from pathlib import Path

from gitstate.doors.shims import (
    BARE_COMMAND,
    MCP_CONFIG,
    MCP_NAME,
    MCP_SERVER,
    RUNTIME_COMMAND,
    RUNTIME_SHIM,
    STATUSLINE_COMMAND,
    runs_our_mcp,
    write_executable,
)
from gitstate.errors import InvalidFile
from gitstate.runtime.registry import RUNTIMES
from gitstate.runtime.shared import merge_servers, read_json, shim_text, write_json

SETTINGS = ".claude/settings.json"
LOCAL_SETTINGS = ".claude/settings.local.json"   # a person's own, not committed
OURS = (RUNTIME_COMMAND, BARE_COMMAND)
SHIM = shim_text("""\
# gitstate-shim: claude-code -- written by `gitstate init --runtime claude-code`; run it again
# to update this file. Claude Code runs it for gitstate's hooks (.claude/settings.json) and
# MCP server (.mcp.json): `gitstate hook NAME` (or `gitstate mcp`) with the gitstate this
# clone uses, found as the git hooks find it.
""", MCP_CONFIG, "Claude Code", '${CLAUDE_PROJECT_DIR:-$(dirname "$0")}',
                 "   # a non-blocking error: Claude Code shows it and goes on")
TIMEOUT = 30   # seconds; the hooks take well under one (bench/README.md)

# event -> (matcher or None, hook name[, extra keys of the hook entry]): Claude Code's entry of
# the one declaration of the runtimes' hooks (runtime/registry.py). `init --runtime claude-code`
# merges them into .claude/settings.json, and the plugin's hooks/hooks.json is made from them
# (gitstate/runtime/claude_code/plugin.py).
HOOKS: dict[str, tuple] = RUNTIMES["claude-code"].hooks


def group(matcher: str | None, name: str, extra: dict | None = None, *,
          command: str = RUNTIME_COMMAND, suffix: str = "") -> dict:
    """The group of one entry of HOOKS, whose command is `command` followed by the hook's
    name (the project's shim; the plugin gives its own) and `suffix`."""
    g: dict = {} if matcher is None else {"matcher": matcher}
    g["hooks"] = [{"type": "command", "command": f"{command}{name}{suffix}",
                   "timeout": TIMEOUT, **(extra or {})}]
    return g


def runs(command: str, name: str | None = None, ours: tuple[str, ...] = OURS) -> bool:
    """Is `command` gitstate's hook (NAME), in any of the forms `ours`?"""
    if name is not None:
        return any(command == f"{o}{name}" or command.startswith(f"{o}{name} ")
                   for o in ours)
    return any(command.startswith(o) for o in ours)


def _is_ours(g, ours: tuple[str, ...] = OURS) -> bool:
    return isinstance(g, dict) and any(
        isinstance(h, dict) and runs(str(h.get("command", "")), None, ours)
        for h in g.get("hooks") or [])


def merge(settings: dict, hooks_of: dict[str, tuple] = HOOKS, where: str = SETTINGS,
          command: str = RUNTIME_COMMAND, suffix: str = "",
          ours: tuple[str, ...] = OURS) -> tuple[dict, list[str], list[str]]:
    """(merged settings, events whose gitstate group was added or updated, events where the
    user's own groups were kept). Another runtime whose hooks file has this shape gives its
    own hooks, file, command (and `suffix` after the hook's name) and forms of gitstate's."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidFile(f"{where}: 'hooks' must be an object, not {type(hooks).__name__}",
                          hint="fix it by hand; gitstate will not replace it")
    changed, kept = [], []
    for event, spec in hooks_of.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidFile(f"{where}: hooks.{event} must be a list",
                              hint="fix it by hand; gitstate will not replace it")
        if any(not _is_ours(g, ours) for g in groups):
            kept.append(event)
        if _put(groups, group(*spec, command=command, suffix=suffix), spec[1], ours):
            changed.append(event)
    return settings, changed, kept


def _put(groups: list, want: dict, name: str, ours: tuple[str, ...]) -> bool:
    """gitstate's group of the hook `name` made `want` where it stands, else appended:
    whether that changed anything."""
    mine = [i for i, g in enumerate(groups) if _runs_hook(g, name, ours)]
    if not mine:
        groups.append(want)
        return True
    if groups[mine[0]] == want:
        return False
    groups[mine[0]] = want
    return True


def _runs_hook(g, name: str, ours: tuple[str, ...]) -> bool:
    return _is_ours(g, ours) and any(runs(str(h.get("command", "")), name, ours)
                                     for h in g.get("hooks") or [] if isinstance(h, dict))


def merge_mcp(config: dict) -> tuple[dict, list[str], list[str]]:
    """(merged `.mcp.json`, servers added or updated, the user's servers kept)."""
    added, kept = merge_servers(config, MCP_CONFIG, MCP_NAME, MCP_SERVER, runs_our_mcp,
                                stdio=True)
    return config, added, kept


def _read(top: Path, rel: str) -> dict:
    return read_json(top / rel, rel, line=True)


def runs_our_statusline(settings: dict) -> bool | None:
    """Whether `settings` sets a `statusLine` that is gitstate's (None: it sets none)."""
    line = settings.get("statusLine")
    if line is None:
        return None
    command = line.get("command") if isinstance(line, dict) else None
    return isinstance(command, str) and any(
        f"{ours} statusline" in command for ours in (RUNTIME_SHIM, "gitstate", "gitstate hook"))


def install_statusline(top: Path, user: Path) -> dict:
    """gitstate's `statusLine` in `top/.claude/settings.local.json` (this person's settings of
    the project, which Claude Code reads above the shared ones), only where no settings file
    this person's Claude Code reads (`user`: ~/.claude/settings.json, the project's shared and
    local settings) sets a status line of the user's own: that one is kept, and the entry says
    how to chain both. The local file is kept out of git (`.git/info/exclude`)."""
    entry = {"kind": "runtime", "name": "claude-code", "path": LOCAL_SETTINGS,
             "changed": False, "added": [], "kept": []}
    local = _read(top, LOCAL_SETTINGS)
    try:
        mine = _read(user.parent, user.name)
    except InvalidFile as exc:   # whether it sets a status line cannot be told: none is added
        return {**entry, "kept": ["statusLine (~/.claude/settings.json)"],
                "then": f"no statusLine added: {exc.message}"}
    scopes = [("~/.claude/settings.json", mine), (SETTINGS, _read(top, SETTINGS)),
              (LOCAL_SETTINGS, local)]
    theirs = [(where, s["statusLine"]) for where, s in scopes if runs_our_statusline(s) is False]
    if theirs:
        return _theirs_kept(entry, *theirs[0])
    want = {"type": "command", "command": STATUSLINE_COMMAND, "padding": 0}
    if local.get("statusLine") == want:
        return entry
    local["statusLine"] = want
    write_json(top / LOCAL_SETTINGS, local)
    _exclude(top, LOCAL_SETTINGS)
    return {**entry, "changed": True, "added": ["statusLine"]}


def _theirs_kept(entry: dict, where: str, line) -> dict:
    """The status line of the user's (in `where`) kept, and how to show gitstate's after it."""
    command = line.get("command") if isinstance(line, dict) else None
    ours = f"printf '%s' \"$input\" | {STATUSLINE_COMMAND}"
    chain = (f'input=$(cat); echo "$(printf \'%s\' \"$input\" | {command}) | $({ours})"'
             if isinstance(command, str) else STATUSLINE_COMMAND)
    return {**entry, "kept": [f"statusLine ({where})"],
            "then": f"your statusLine ({where}) is kept; to show gitstate's after it, set "
                    f"its command to: {chain}"}


def _exclude(top: Path, rel: str) -> None:
    """Keep `rel` out of git in this clone (`.git/info/exclude`), unless git ignores it."""
    from gitstate.git.runner import Git
    git = Git(top)
    if git.call("check-ignore", "-q", rel)[0] == 0:
        return
    exclude = Path(top, git.text("rev-parse", "--git-path", "info/exclude"))
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
    exclude.write_text(text + ("" if not text or text.endswith("\n") else "\n") + f"/{rel}\n",
                       encoding="utf-8")


def install(top: Path, user: Path | None = None) -> list[dict]:
    """Merge into `top/.claude/settings.json` and `top/.mcp.json` (both read and merged before
    either is written), and add the status line where the person has none; what changed (the
    `init` report's entries). `user`: the user's Claude Code settings (~/.claude/settings.json)."""
    user = user or Path.home() / ".claude" / "settings.json"
    merged, changed, kept = merge(_read(top, SETTINGS))
    servers, added, theirs = merge_mcp(_read(top, MCP_CONFIG))
    line = install_statusline(top, user)   # its own file: written before the others, or none
    if changed:
        write_json(top / SETTINGS, merged)
    shim = write_executable(top / RUNTIME_SHIM, SHIM)
    if added:
        write_json(top / MCP_CONFIG, servers)
    hooks = {"kind": "runtime", "name": "claude-code", "path": SETTINGS,
             "changed": bool(changed) or shim, "added": changed, "kept": kept}
    from gitstate.runtime.claude_code.setup_checks import plugin_enabled
    plugin = plugin_enabled(top)
    if plugin:    # never both: the plugin's shim leaves these to the project's settings
        hooks["then"] = (f"gitstate's Claude Code plugin is enabled ({plugin[0]} in "
                         f"{plugin[1]}): in this project it leaves the hooks and the MCP "
                         "server to these settings, for everyone who clones it (`gitstate "
                         "doctor` says which runs)")
    return [hooks,
            {"kind": "runtime", "name": "claude-code", "path": MCP_CONFIG,
             "changed": bool(added), "added": added, "kept": theirs}, line]
