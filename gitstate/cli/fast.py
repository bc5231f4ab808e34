"""The read commands agents poll — `status`, `roster`, `vacancies`, `inbox` with `--json` —
answered without loading click: starting click costs more than a warm view takes.

Only the plain forms are taken here (`[-C DIR] COMMAND [AGENT] [--at REV] --json`); anything
else, any error, and `$GITSTATE_CHECK_JSON` (the typed models check the output) go the whole
way through the command line, which then says what is wrong in its usual words. The output
is the command line's own: the same functions, the same JSON.
"""

from __future__ import annotations

import os
import sys

_TAKES = {"status": (0, 1, False), "roster": (0, 0, True), "vacancies": (0, 0, True),
          "inbox": (1, 1, False)}   # command -> (least, most agents, takes --at)


def run(args: list[str]) -> int | None:
    """The exit code if this answered, else None (then the command line runs as usual)."""
    parsed = _parse(args)
    if parsed is None or os.environ.get("GITSTATE_CHECK_JSON"):
        return None
    command, directory, agents, at = parsed
    try:
        data = _answer(command, directory, agents[0] if agents else None, at)
    except Exception:   # noqa: BLE001 - the whole command line says what went wrong
        return None
    import json
    if sys.stdout.isatty():
        text = json.dumps(data, indent=2, default=str)
    else:
        text = json.dumps(data, separators=(",", ":"), default=str)
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0


def _parse(args: list[str]):
    directory, rest = None, list(args)
    if rest[:1] == ["-C"] and len(rest) > 1:
        directory, rest = rest[1], rest[2:]
    if not rest or rest[0] not in _TAKES or "--json" not in rest:
        return None
    command, words = rest[0], [w for w in rest[1:] if w != "--json"]
    least, most, takes_at = _TAKES[command]
    at = None
    if takes_at and words[:1] == ["--at"] and len(words) > 1:
        at, words = words[1], words[2:]
    elif takes_at and words[:1] and words[0].startswith("--at="):
        at, words = words[0][5:], words[1:]
    if any(w.startswith("-") for w in words) or not least <= len(words) <= most \
            or rest.count("--json") != 1 or (directory and not os.path.isdir(directory)):
        return None
    return command, directory, words, at


def _answer(command: str, directory: str | None, agent: str | None, at: str | None):
    from gitstate.git.repo import open_managed
    repo = open_managed(directory)
    if command == "status":
        from gitstate.history.status import status_rows
        rows = status_rows(repo, agent)
        return rows[0] if agent else rows
    from gitstate.history import views
    if command == "roster":
        return views.roster(repo, at)
    if command == "vacancies":
        return views.vacant_roles(repo, at)
    return views.inbox(repo, agent)
