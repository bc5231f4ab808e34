"""gitstate's Claude Code plugin: the files of `gitstate/claude_plugin/` that are made, not
written by hand, and the command that writes them (`python -m gitstate.runtime.claude_code.plugin`;
`--check` says whether the committed files are what it makes, and exits 1 where not).

The plugin is listed by the marketplace at the top of the repository
(`.claude-plugin/marketplace.json`): `claude plugin marketplace add <clone or owner/repo>`,
then `claude plugin install gitstate@gitstate`. It ships inside the Python package, so that an
installed wheel carries it too. Its parts:

- `hooks/hooks.json`: gitstate's hooks, made from the one declaration `settings.HOOKS` (the
  same groups `init --runtime claude-code` merges into `.claude/settings.json`, extra keys
  included), each running `"${CLAUDE_PLUGIN_ROOT}"/bin/gitstate hook NAME`;
- `.mcp.json`: gitstate's MCP server, `bin/gitstate mcp`;
- `bin/gitstate`: the shim, which finds gitstate as the project's shim does (the project's
  `gitstate.python`, else a `gitstate` on PATH other than itself, else a Python that imports
  it). Claude Code also puts `bin/` on the PATH of the session's Bash, after the rest;
- `.claude-plugin/plugin.json`: the manifest, with gitstate's version;
- `commands/*.md` (by hand): `/gitstate:status`, `roster`, `inbox`, `transition`.

Never both: in a project whose committed settings run gitstate's hooks or MCP server
(`init --runtime claude-code`), the plugin's shim stands down for that part (exit 0, no
output), and `gitstate doctor` says which one runs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from gitstate import __version__
from gitstate.doors.shims import (
    PLUGIN_COMMAND,
    PLUGIN_NAME,
    PLUGIN_SHIM,
    PROJECT_HOOK_MARKS,
    PROJECT_MCP_MARK,
    RUNTIME_SHIM,
)
from gitstate.law.lifecycle import LIFECYCLE_PATH
from gitstate.runtime.claude_code.settings import HOOKS, group
from gitstate.runtime.shared import LAST

ROOT = Path(__file__).resolve().parents[2] / "claude_plugin"

SHIM = r"""#!/bin/sh
# gitstate-shim: claude-plugin -- gitstate's Claude Code plugin runs it for its hooks
# (`hook NAME`) and MCP server (`mcp`), and the session's Bash may run it as `gitstate`: it
# runs `gitstate ARGS` with the gitstate this project uses, found as the project's own shim
# (@RUNTIME_SHIM@) finds it. Made by `python -m gitstate.runtime.claude_code.plugin`.
top=${CLAUDE_PROJECT_DIR:-$(git rev-parse --show-toplevel 2>/dev/null || pwd)}
case $1 in
    hook)   # the project's committed settings run gitstate's hooks: theirs, not these
        if grep -qsF @HOOK_MARKS@ "$top/.claude/settings.json"; then exit 0; fi
        what="the Claude Code hook '$2' (gitstate plugin)" ;;
    mcp)
        if grep -qsF -e '@MCP_MARK@' "$top/.mcp.json"; then
            echo "gitstate: this project runs gitstate's MCP server from its .mcp.json; the" \
                 "plugin's stays off ('gitstate doctor' says which runs)" >&2
            exit 0
        fi
        what="gitstate's MCP server (gitstate plugin)" ;;
    *) what="gitstate" ;;
esac
py=${GITSTATE_PYTHON:-$(git -C "$top" config --get gitstate.python 2>/dev/null)}
if [ -n "$py" ] && [ -x "$py" ]; then exec "$py" -P -m gitstate "$@"; fi
if [ "$1" = hook ] && [ -z "$py" ] && ! [ -f "$top/@LIFECYCLE@" ]; then
    exit 0   # a project gitstate does not manage (the plugin may be on for every project)
fi
old=$IFS; IFS=:
for dir in $PATH; do   # a gitstate on PATH, but not this very file (bin/ is on Bash's PATH)
    IFS=$old
    if [ -n "$dir" ] && [ -x "$dir/gitstate" ] && ! [ "$dir/gitstate" -ef "$0" ]; then
        exec "$dir/gitstate" "$@"
    fi
done
IFS=$old
""" + LAST + "   # a non-blocking error: Claude Code shows it and goes on\n"


def shim() -> str:
    marks = " ".join(f"-e '{m}'" for m in PROJECT_HOOK_MARKS)
    return (SHIM.replace("@RUNTIME_SHIM@", RUNTIME_SHIM).replace("@HOOK_MARKS@", marks)
            .replace("@MCP_MARK@", PROJECT_MCP_MARK).replace("@LIFECYCLE@", LIFECYCLE_PATH))


def hooks() -> dict:
    """hooks/hooks.json: every hook of HOOKS, as `init --runtime claude-code` declares it,
    run by the plugin's shim."""
    return {"description": "gitstate's lifecycle hooks (the same as `gitstate init --runtime "
                           "claude-code` writes; they stand down in a project that has those)",
            "hooks": {event: [group(*spec, command=PLUGIN_COMMAND)]
                      for event, spec in HOOKS.items()}}


def mcp() -> dict:
    return {"mcpServers": {PLUGIN_NAME: {"command": f"${{CLAUDE_PLUGIN_ROOT}}/{PLUGIN_SHIM}",
                                         "args": ["mcp"]}}}


def manifest() -> dict:
    return {"name": PLUGIN_NAME, "version": __version__,
            "description": "gitstate: a git-native lifecycle state machine for AI agents. "
                           "Briefs each session, measures its context, guards its sub-agents "
                           "and serves its moves over MCP; /gitstate:status, roster, inbox, "
                           "transition.",
            "author": {"name": "gitstate"}, "license": "MIT",
            "keywords": ["agents", "git", "lifecycle", "state-machine"]}


def files() -> dict[str, str]:
    """path in the plugin -> the text it must hold."""
    def text(data: dict) -> str:
        return json.dumps(data, indent=2) + "\n"
    return {".claude-plugin/plugin.json": text(manifest()), "hooks/hooks.json": text(hooks()),
            ".mcp.json": text(mcp()), PLUGIN_SHIM: shim()}


def stale(root: Path = ROOT) -> list[str]:
    """The made files of the plugin at `root` that differ from what `files()` makes."""
    out = []
    for rel, want in files().items():
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != want or \
                (rel == PLUGIN_SHIM and not os.access(path, os.X_OK)):
            out.append(rel)
    return out


def write(root: Path = ROOT) -> list[str]:
    """Write the made files that differ; which were written."""
    from gitstate.doors.shims import write_executable
    changed = stale(root)
    for rel in changed:
        path = root / rel
        if rel == PLUGIN_SHIM:
            write_executable(path, files()[rel])
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(files()[rel], encoding="utf-8")
    return changed


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        old = stale()
        for rel in old:
            print(f"{ROOT / rel}: not what gitstate makes; run `python -m "
                  "gitstate.runtime.claude_code.plugin`", file=sys.stderr)
        return 1 if old else 0
    for rel in write():
        print(f"wrote {ROOT / rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
