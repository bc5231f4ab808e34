"""The read commands agents poll — `status`, `roster`, `vacancies`, `inbox`, `log` with `--json` —
answered without loading click: starting click costs more than a warm view takes.

Only the plain forms are taken here (`[-C DIR] COMMAND [AGENT] [--at REV] --json`, and log's
`-n N`, `--since D`, `--newest-first`); anything
else, any error, and `$GITSTATE_CHECK_JSON` (the typed models check the output) go the whole
way through the command line, which then says what is wrong in its usual words. The output
is the command line's own: the same functions, the same JSON.
"""

from __future__ import annotations

import os
import sys

_TAKES = {"status": (0, 1, False), "roster": (0, 0, True), "vacancies": (0, 0, True),
          "inbox": (1, 1, False), "log": (0, 1, False)}   # (least, most agents, --at?)


def run(args: list[str]) -> int | None:
    """The exit code if this answered, else None (then the command line runs as usual)."""
    parsed = _parse(args)
    if parsed is None or os.environ.get("GITSTATE_CHECK_JSON"):
        return None
    command, directory, agents, at, options = parsed
    try:
        data = _answer(command, directory, agents[0] if agents else None, at, options)
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
    at, options = None, {}
    if command == "log":
        words, options = _log_options(words)
        if words is None:
            return None
    if takes_at and words[:1] == ["--at"] and len(words) > 1:
        at, words = words[1], words[2:]
    elif takes_at and words[:1] and words[0].startswith("--at="):
        at, words = words[0][5:], words[1:]
    if any(w.startswith("-") for w in words) or not least <= len(words) <= most \
            or rest.count("--json") != 1 or (directory and not os.path.isdir(directory)):
        return None
    return command, directory, words, at, options


def _log_options(words: list[str]):
    """(the words left, {limit, since, newest_first}) of log's options, or (None, None)."""
    opts: dict = {"limit": None, "since": None, "newest_first": False}
    left, i = [], 0
    while i < len(words):
        w = words[i]
        if w in ("-n", "--limit", "--since") and i + 1 < len(words):
            value = words[i + 1]
            if w == "--since":
                opts["since"] = value
            elif value.isdigit():
                opts["limit"] = int(value)
            else:
                return None, None
            i += 2
        elif w in ("--newest-first", "--reverse"):
            opts["newest_first"] = True
            i += 1
        elif w.startswith("-"):
            return None, None
        else:
            left.append(w)
            i += 1
    return left, opts


def _answer(command: str, directory: str | None, agent: str | None, at: str | None,
            options: dict):
    from gitstate.git.repo import open_managed
    repo = open_managed(directory)
    if command == "status":
        from gitstate.history.status import status
        return status(repo, agent)
    from gitstate.history import views
    if command == "roster":
        return views.roster(repo, at)
    if command == "vacancies":
        return views.vacant_roles(repo, at)
    if command == "log":
        return views.log_rows(repo, agent, **options)
    return views.inbox(repo, agent)
