"""The read commands agents poll — `status`, `roster`, `vacancies`, `inbox`, `log` with `--json` —
answered without loading click: starting click costs more than a warm view takes (measured
with bench/reads.py's history: ~60 ms of CPU per call, a third of `roster --json`).

Only the plain forms are taken here: `[-C DIR] COMMAND [AGENT] --json` with the options in
FORMS, spelled as click reads them. Anything else, and `$GITSTATE_CHECK_JSON` (the typed
models check the output), goes the whole way through the command line, which then says what is
wrong in its usual words; so does any error. The data is the command line's own: the same
functions, called with the same parameters (tests/cli/test_fast_reads.py parses every form
both ways).
"""

from __future__ import annotations

import os
import sys

# command: (fewest, most AGENT arguments, {option taking a value: its parameter},
#           {flag: its parameter}); `--json` (the parameter `as_json`) is always needed.
FORMS = {
    "status": (0, 1, {"--at": "at"}, {}),
    "roster": (0, 0, {"--at": "at"}, {}),
    "vacancies": (0, 0, {"--at": "at"}, {}),
    "inbox": (1, 1, {"--at": "at"}, {}),
    "log": (0, 1, {"-n": "limit", "--limit": "limit", "--since": "since", "--at": "at"},
            {"--newest-first": "newest_first", "--reverse": "newest_first"}),
}
_DEFAULTS = {"agent": None, "at": None, "limit": None, "since": None, "newest_first": False}


def run(args: list[str]) -> int | None:
    """The exit code if this answered, else None (then the command line runs as usual)."""
    parsed = parse(args)
    if parsed is None or os.environ.get("GITSTATE_CHECK_JSON"):
        return None
    directory, command, params = parsed
    try:
        data = _answer(directory, command, params)
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


def parse(args: list[str]) -> tuple[str | None, str, dict] | None:
    """(-C DIR, command, the parameters click would give the command), or None for a form not
    taken here."""
    directory, rest = None, list(args)
    if rest[:1] == ["-C"] and len(rest) > 1:
        directory, rest = rest[1], rest[2:]
        if not os.path.isdir(directory):
            return None
    if not rest or rest[0] not in FORMS:
        return None
    command, words = rest[0], rest[1:]
    fewest, most, valued, flags = FORMS[command]
    params: dict = {p: _DEFAULTS[p] for p in (*valued.values(), *flags.values())}
    agents, as_json, i = [], False, 0
    while i < len(words):
        word, value = words[i], None
        if word.startswith("--") and "=" in word:
            word, value = word.split("=", 1)
        if word in valued:
            if value is None:
                if i + 1 >= len(words) or words[i + 1].startswith("-"):
                    return None
                value, i = words[i + 1], i + 1
            if valued[word] == "limit" and not (value.isascii() and value.isdigit()):
                return None
            params[valued[word]] = int(value) if valued[word] == "limit" else value
        elif value is not None:
            return None
        elif word == "--json":
            as_json = True
        elif word in flags:
            params[flags[word]] = True
        elif word.startswith("-"):
            return None
        else:
            agents.append(word)
        i += 1
    if not as_json or not fewest <= len(agents) <= most:
        return None
    if most:
        params["agent"] = agents[0] if agents else None
    return directory, command, {**params, "as_json": True}


def _answer(directory: str | None, command: str, params: dict):
    from gitstate.git.repo import open_managed
    repo = open_managed(directory)
    if command == "status":
        from gitstate.history.status import status
        return status(repo, params["agent"], params["at"])
    from gitstate.history import views
    if command == "roster":
        return views.roster(repo, params["at"])
    if command == "vacancies":
        return views.vacant_roles(repo, params["at"])
    if command == "log":
        return views.log_rows(repo, params["agent"], limit=params["limit"],
                              since=params["since"], newest_first=params["newest_first"],
                              at=params["at"])
    return views.inbox(repo, params["agent"], params["at"])
