"""The read commands — `status`, `roster`, `vacancies`, `inbox`, `log`, `show`, `situations`,
in text and with `--json` — answered without loading click: starting click costs more than a
warm view takes (measured with bench/reads.py's history: ~60 ms of CPU per call, a third of
`roster --json`).

Only the plain forms are taken here: `[-C DIR] COMMAND [AGENT] [--json]` with the options in
FORMS, spelled as click reads them; the text is printed by the command line's own printers
(`cli/text.py`). Anything else, and `$GITSTATE_CHECK_JSON` (the typed
models check the output), goes the whole way through the command line, which then says what is
wrong in its usual words; so does any error. The data is the command line's own: the same
functions, called with the same parameters (tests/cli/test_fast_reads.py parses every form
both ways).
"""

from __future__ import annotations

import os
import sys

# command: (fewest, most AGENT arguments, {option taking a value: its parameter},
#           {flag: its parameter}); `--json` is the parameter `as_json`.
FORMS = {
    "status": (0, 1, {"--at": "at"}, {}),
    "roster": (0, 0, {"--at": "at"}, {}),
    "vacancies": (0, 0, {"--at": "at"}, {}),
    "inbox": (1, 1, {"--at": "at"}, {}),
    "log": (0, 1, {"-n": "limit", "--limit": "limit", "--since": "since", "--at": "at"},
            {"--newest-first": "newest_first", "--reverse": "newest_first"}),
    "show": (1, 1, {"--at": "at"}, {}),
    "situations": (0, 0, {"--at": "at", "--sqlite": "sqlite_path"}, {"--no-sqlite": "no_sqlite"}),
}
_DEFAULTS = {"agent": None, "at": None, "limit": None, "since": None, "newest_first": False,
             "sqlite_path": None, "no_sqlite": False}


def run(args: list[str]) -> int | None:
    """The exit code if this answered, else None (then the command line runs as usual)."""
    parsed = parse(args)
    if parsed is None or os.environ.get("GITSTATE_CHECK_JSON"):
        return None
    directory, command, params = parsed
    as_json = params["as_json"]
    from gitstate.history import progress
    if not as_json and sys.stderr.isatty():
        progress.enable(sys.stderr)
    parts = None
    try:
        parts = _whole_log(directory, params) if _plain_log(command, params) else None
        if parts is None:
            repo, data = _answer(directory, command, params)
            from gitstate.cli.text import json_text
            text = json_text(data) if as_json else _text(command, params, repo, data)
    except Exception:   # noqa: BLE001 - the whole command line says what went wrong
        return None
    finally:
        progress.done()
    try:
        if parts is None:
            sys.stdout.write(text)
        else:
            sys.stdout.flush()
            for part in parts:
                sys.stdout.buffer.write(part)
        sys.stdout.flush()
    except BrokenPipeError:
        return 0
    if not as_json and params["at"] is None and command in NOTED:
        note_upstream(directory)
    return 0


NOTED = ("status", "roster", "vacancies", "log", "inbox")   # the views that say it


def note_upstream(directory: str | None) -> None:
    """On stderr, when the branch read has a remote-tracking upstream that it differs from
    (as of the last fetch): how, and the command that brings them in step. One git call;
    nothing is said, and nothing fails, when it cannot be told."""
    try:
        from gitstate.git.runner import Git
        from gitstate.git.upstream import standing
        found = standing(Git(directory))
        if found is not None:
            from gitstate.cli.text import upstream_note
            sys.stderr.write(upstream_note(*found) + "\n")
            sys.stderr.flush()
    except Exception:   # noqa: BLE001 - a note, never a reason for a view to fail
        pass


def _plain_log(command: str, params: dict) -> bool:
    """`log` of the whole history at HEAD, in text or compact JSON: kept as printed."""
    return command == "log" and params["agent"] is None and params["limit"] is None \
        and params["since"] is None and params["at"] is None and not params["newest_first"] \
        and not (params["as_json"] and sys.stdout.isatty()) \
        and (sys.stdout.encoding or "").lower().replace("-", "") == "utf8"   # kept in UTF-8


def _whole_log(directory: str | None, params: dict) -> list[bytes] | None:
    from gitstate.cli.printed import whole_log
    from gitstate.git.repo import open_managed
    return whole_log(open_managed(directory, bare_ok=True), params["as_json"])


def _text(command: str, params: dict, repo, data) -> str:
    """What the command line's printer prints for `data`, whole (nothing is written unless
    all of it could be made)."""
    import contextlib
    import io

    from gitstate.cli import text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if command == "status":
            text.print_status_view(data, params["agent"])
        elif command == "log":
            text.print_log(data, params["since"], params["limit"])
        elif command == "show":
            text.print_freeze_state(repo.git, data)
        else:
            {"roster": text.print_roster, "vacancies": text.print_vacancies,
             "inbox": text.print_inbox, "situations": text.print_situations}[command](data)
    return out.getvalue()


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
    if not fewest <= len(agents) <= most:
        return None
    if most:
        params["agent"] = agents[0] if agents else None
    return directory, command, {**params, "as_json": as_json}


def _answer(directory: str | None, command: str, params: dict):
    """(the repository, the command's data), from the functions the command line calls."""
    from gitstate.git.repo import open_managed
    repo = open_managed(directory, bare_ok=True)   # a hub is read as well: its HEAD
    if command == "status":
        from gitstate.history.status import status
        return repo, status(repo, params["agent"], params["at"])
    if command == "situations":
        from gitstate.history.entities import situations
        return repo, situations(repo, sqlite_path=params["sqlite_path"],
                                no_sqlite=params["no_sqlite"], at=params["at"])
    from gitstate.history import views
    if command == "roster":
        return repo, views.roster(repo, params["at"])
    if command == "vacancies":
        return repo, views.vacant_roles(repo, params["at"])
    if command == "show":
        return repo, views.freeze_state(repo, params["agent"], params["at"])
    if command == "log":
        return repo, views.log_rows(repo, params["agent"], limit=params["limit"],
                                    since=params["since"], newest_first=params["newest_first"],
                                    at=params["at"])
    return repo, views.inbox(repo, params["agent"], params["at"])
