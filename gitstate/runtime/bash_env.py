"""What a Claude Code session's Bash calls need to run the commands its briefing gives.

The briefing tells the agent to run `gitstate ...` in its Bash tool. The hooks find gitstate
through the committed shim (`gitstate.python` in this clone's git config), but the Bash tool
runs with the user's PATH, which need not hold it (a venv that is not activated). So
SessionStart puts on the session's PATH a folder that holds one thing, a `gitstate` script
that runs the very gitstate the hooks run (`<git dir>/gitstate/bin/gitstate`, written by the
hook, per clone, never committed), through `$CLAUDE_ENV_FILE`: a file of `export` lines that
Claude Code sources before each Bash command of the session
(https://code.claude.com/docs/en/hooks#sessionstart). Only gitstate is added: the agent's
`python` and `pip` stay what they were.

Lines already in the file are kept (other hooks write there too); a line gitstate wrote
before is not written again.
"""

from __future__ import annotations

import os
import shlex
import sys

COMMAND = "gitstate"   # what every command of the briefing starts with
BIN = os.path.join("gitstate", "bin")   # under the git folder of the session's work tree
SCRIPT = """#!/bin/sh
# Written by gitstate's SessionStart hook (Claude Code): the gitstate this clone's hooks run,
# for the agents' Bash calls, whose PATH the hook starts with this folder. Rewritten by the
# next session's start when it differs; safe to delete.
exec {python} -P -m gitstate "$@"
"""


def bin_dir(gdir: str, python: str = sys.executable) -> str:
    """The folder that holds the `gitstate` of the agents' Bash, written when it differs."""
    folder = os.path.join(gdir, BIN)
    path = os.path.join(folder, COMMAND)
    text = SCRIPT.format(python=shlex.quote(python))
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text and os.access(path, os.X_OK):
                return folder
    except OSError:
        pass
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)     # atomic: sessions starting at once each write the same text
    return folder


def path_line(folder: str) -> str:
    return f'export PATH={shlex.quote(folder)}:"$PATH"'


def export(lines: list[str]) -> None:
    """Append to `$CLAUDE_ENV_FILE` the lines it does not hold yet (SessionStart only)."""
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if not env_file:
        return
    try:
        with open(env_file, encoding="utf-8", errors="replace") as fh:
            have = fh.read().splitlines()
    except OSError:
        have = []
    new = [line for line in lines if not _holds(have, line)]
    if new:
        _append(env_file, new)


def _append(env_file: str, new: list[str]) -> None:
    with open(env_file, "a+", encoding="utf-8") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell():     # a file whose last line has no newline: ours starts on its own
            fh.seek(fh.tell() - 1)
            last = fh.read(1)
            if last != "\n":
                fh.write("\n")
        fh.write("".join(f"{line}\n" for line in new))


def _holds(have: list[str], line: str) -> bool:
    """Does the file already say `line`: PATH's folder anywhere in it, any other variable as
    its last value?"""
    name = line.partition("=")[0]
    if name == "export PATH":
        return line in have
    last = next((old for old in reversed(have) if old.partition("=")[0] == name), None)
    return last == line


def for_session(cwd: str | None) -> None:
    """SessionStart, before the briefing (which may fail): the session's Bash runs the
    gitstate of the hooks. Quiet without `$CLAUDE_ENV_FILE` or a git folder."""
    if not os.environ.get("CLAUDE_ENV_FILE"):
        return
    from gitstate.runtime.memory import git_dir
    gdir = git_dir(cwd)
    if gdir is None:
        return
    export([path_line(bin_dir(gdir))])
