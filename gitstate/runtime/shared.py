"""What the runtimes' packages share, written once: the shim their hooks and MCP server run,
their JSON files read and written, gitstate's MCP server told from another, and `doctor`'s
check of a runtime's hooks file (gitstate's hooks there, and their command run as the runtime
runs it). Each runtime gives its own names, files and words; the hooks file itself has Claude
Code's shape and is merged by `claude_code.settings.merge`.
"""

from __future__ import annotations

import json
from pathlib import Path

from gitstate.doors.doctor import finding
from gitstate.doors.shims import runs_our_mcp  # noqa: F401  (one test for every runtime)
from gitstate.errors import InvalidFile

BY_HAND = "fix it by hand; gitstate will not replace it"

SHIM = r"""#!/bin/sh
@HEADER@case $1 in
    mcp) what="gitstate's MCP server (@MCP@)" ;;
    *) what="the @TITLE@ hook '$1'"; set -- hook "$@" ;;
esac
dir=@DIR@
py=${GITSTATE_PYTHON:-$(git -C "$dir" config --get gitstate.python 2>/dev/null)}
if [ -n "$py" ] && [ -x "$py" ]; then exec "$py" -P -m gitstate "$@"; fi
if command -v gitstate >/dev/null 2>&1; then exec gitstate "$@"; fi
@LAST@@EXIT@
"""
# a shim's last resort: a Python that imports gitstate, else why it cannot run (exit 1)
LAST = r"""for py in python3 python; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -P -c 'import gitstate' 2>/dev/null; then
        exec "$py" -P -m gitstate "$@"
    fi
done
echo "gitstate: $what cannot run: gitstate is not found (no gitstate.python in this" \
     "clone's git config, no gitstate on PATH). Run 'gitstate init' in this clone, or set" \
     "GITSTATE_PYTHON to a Python that has gitstate." >&2
exit 1"""


def shim_text(header: str, mcp: str, title: str, folder: str = '$(dirname "$0")',
              exit_note: str = "") -> str:
    """The shell script a runtime runs for gitstate's hooks (`NAME`) and MCP server (`mcp`):
    `header` its comment lines, `mcp` the file that names the server, `title` the runtime's,
    `folder` where the clone is found; it finds gitstate as the git hooks find it."""
    return (SHIM.replace("@HEADER@", header).replace("@MCP@", mcp)
            .replace("@TITLE@", title).replace("@DIR@", folder).replace("@LAST@", LAST)
            .replace("@EXIT@", exit_note))


def read_json(path: Path, rel: str, line: bool = False) -> dict:
    """The JSON object in `path` (`rel` in messages, with the line of an error when `line`);
    {} when there is no file or it is empty."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        at = f":{getattr(exc, 'lineno', '?')}" if line else ""
        raise InvalidFile(f"{rel}{at}: not valid JSON ({exc})",
                          hint="fix it; gitstate merges, it never replaces") from exc
    if not isinstance(data, dict):
        raise InvalidFile(f"{rel}: must hold a JSON object")
    return data


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")



def merge_servers(config: dict, where: str, name: str, server: dict, is_ours,
                  stdio: bool = False) -> tuple[list[str], list[str]]:
    """Merge gitstate's MCP server into `config["mcpServers"]` (in place): (the names of the
    servers added or updated, the user's servers kept). Added as `name` when no server is
    gitstate's, updated where it stands when one is (`stdio`: its `type` made `stdio`)."""
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidFile(f"{where}: 'mcpServers' must be an object, not "
                          f"{type(servers).__name__}", hint=BY_HAND)
    ours = [key for key, found in servers.items() if is_ours(found)]
    kept = [key for key in servers if key not in ours]
    if not ours:
        return _added(servers, where, name, server), kept
    return _updated(servers, name if name in ours else ours[0], server, stdio), kept


def _added(servers: dict, where: str, name: str, server: dict) -> list[str]:
    if name in servers:
        raise InvalidFile(f"{where}: the server '{name}' is not gitstate's MCP "
                          "server", hint="rename it; gitstate will not replace it")
    servers[name] = dict(server)
    return [name]


def _updated(servers: dict, mine: str, server: dict, stdio: bool) -> list[str]:
    """gitstate's server `mine` given `server`'s keys where it stands: [mine] if it changed."""
    want = {**servers[mine], **server}
    if stdio and want.get("type") not in (None, "stdio"):
        want["type"] = "stdio"
    if servers[mine] == want:
        return []
    servers[mine] = want
    return [mine]


class HooksFile:
    """A runtime's hooks file as `doctor` checks it: `name` (its checks are `NAME-hooks`),
    `title` (in its words), the file (`rel`), the shim, the command before a hook's name and
    the suffix after it, its hooks (the registry's), the shell that runs a command, what fixes
    it, and whether a hooks entry that is not a list is passed over (else the file is
    unreadable)."""

    __slots__ = ("name", "title", "rel", "shim", "command", "suffix", "hooks", "shell", "fix",
                 "lenient")

    def __init__(self, name: str, title: str, rel: str, shim: str, command: str, suffix: str,
                 hooks: dict[str, tuple], shell: str, lenient: bool = False):
        self.name, self.title, self.rel, self.shim = name, title, rel, shim
        self.command, self.suffix, self.hooks, self.shell = command, suffix, hooks, shell
        self.fix, self.lenient = f"run `gitstate init --runtime {name}`", lenient

    def found(self, top: Path) -> list[tuple[str, str, int, int]] | None:
        """(event, gitstate hook, group, handler) of each of gitstate's hooks in the file
        (None: no readable file)."""
        try:
            data = json.loads((top / self.rel).read_text(encoding="utf-8"))
            return [hook for event, groups in (data.get("hooks") or {}).items()
                    if isinstance(groups, list) or not self.lenient
                    for hook in self._ours(event, groups)]
        except (OSError, ValueError, AttributeError, TypeError):
            return None

    def _ours(self, event: str, groups: list):
        for g, group in enumerate(groups):
            for h, hook in enumerate(group.get("hooks") or []):
                command = hook.get("command")
                if isinstance(command, str) and command.startswith(self.command):
                    yield event, command[len(self.command):].split(" ")[0], g, h

    def findings(self, top: Path, trust) -> list[dict]:
        """`doctor`'s findings: none where the project does not use the runtime, else the
        hooks' (`NAME-hooks`) and then `trust(top, found)`'s when they are all there."""
        found = self.found(top)
        if not found and not (top / self.shim).is_file():
            return []     # the project does not use the runtime (with gitstate): nothing to say
        check = f"{self.name}-hooks"
        if found is None:
            return [finding("warn", check, f"{self.rel} cannot be read", self.fix)]
        missing = sorted({spec[1] for spec in self.hooks.values()}
                         - {name for _e, name, _g, _h in found})
        if missing:
            return [finding("warn", check, f"{self.rel} lacks gitstate's hooks: "
                            f"{', '.join(missing)}", self.fix)]
        return [self.runs(top), trust(top, found)]

    def runs(self, top: Path) -> dict:
        """Whether the context hook's command runs as the runtime runs it: its shell in the
        project, an empty event on stdin."""
        import subprocess
        check, title = f"{self.name}-hooks", self.title
        try:
            res = subprocess.run([self.shell, "-c", f"{self.command}context{self.suffix}"],
                                 cwd=top, input="{}", capture_output=True, text=True,
                                 timeout=WAIT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return finding("fail", check, f"gitstate's {title} hook cannot run: {exc}",
                           self.fix)
        if res.returncode != 0:
            said = (res.stderr.strip().splitlines() or ["no output"])[-1][:300]
            return finding("fail", check, f"gitstate's {title} hook fails "
                           f"(exit {res.returncode}): {said}", self.fix)
        return finding("ok", check, f"gitstate's hooks are in {self.rel} and run")


WAIT = 30          # seconds for a hook's command run by `doctor`
