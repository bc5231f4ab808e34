"""The moves — `spawn`, `transition`, `freeze`, `wake`, `bury`, `handover`, `assume`,
`logout`, `say`, `inbox --mark-read` — made without loading click: a move is what an agent
runs most, and starting click cost a move a third of its CPU (bench/move_cost.py, issue 39).

A form is taken here only when it is read exactly as click reads it (parsed from the one
declaration of the command, cli/declared.py: its arguments, options, flags, `--set` given
several times, `--json`, `--push`, a leading `-C DIR`); anything else — an option not declared,
`--help`, a short option run together with its value, a value that begins with `-`, `--`, an
argument missing or one too many, `$GITSTATE_CHECK_JSON` — goes the whole way through the
command line before anything is done (tests/cli/test_fast_moves.py parses every form both
ways). Once taken, the move is made and said here, by the same functions the command line
calls (`made`, `said_moved`: cli/moving.py calls them too), its errors in the same words, on
the same stream, with the same exit code (cli/main.py `_run`).
"""

from __future__ import annotations

import os
import re
import sys

from gitstate.cli.declared import DECLARED, Command, Param, data_args
from gitstate.cli.fast import LOUD, directory_and_rest

MOVES = (*(c.name for c in DECLARED.values() if c.data and c.hint in ("move", "ends")),
         "inbox")   # `inbox --mark-read` (or `--push`) only: a plain inbox is a view (cli/fast.py)
SAYS = {"handover": "hands {role} to {to}", "assume": "assumes {role}"}
_NUMBER = re.compile(r"\d+(\.\d+)?")
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")   # what click.echo strips for a pipe


def run(args: list[str]) -> int | None:
    """The exit code if the move was made here, else None (then the command line runs)."""
    parsed = parse(args)
    if parsed is None or os.environ.get("GITSTATE_CHECK_JSON") \
            or "_GITSTATE_COMPLETE" in os.environ:
        return None
    directory, command, params = parsed
    as_json = params.pop("as_json")
    from gitstate.history import progress
    if not as_json and sys.stderr.isatty():
        progress.enable(sys.stderr)
    try:
        return _made_and_said(directory, command, params, as_json)
    finally:
        progress.done()


def _made_and_said(directory: str | None, command: str, params: dict, as_json: bool) -> int:
    """The move made and said, with the exit code the command line gives (cli/main.py)."""
    from gitstate.errors import GitstateError
    try:
        from gitstate.git.repo import open_managed
        here = open_managed(directory, command=True)
        try:
            push = params.pop("push")
            record = made(command, here, params, push)
            return said_moved(command, here, record, params, push, as_json, _json,
                              directory=directory)
        finally:
            here.git.close()
    except GitstateError as exc:
        return _error(exc, as_json)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:   # a bug of ours: said as the command line says it
        if os.environ.get("GITSTATE_DEBUG") or os.environ.get(LOUD):
            raise   # (under the tests, $GITSTATE_FAST_LOUD, a bug is never said quietly)
        from gitstate.errors import EXIT_REJECTED
        _write(sys.stderr, f"gitstate: internal error: {type(exc).__name__}: {exc}\n"
               "  (set GITSTATE_DEBUG=1 to see the traceback; please report it)\n")
        return EXIT_REJECTED


def made(command: str, repo, params: dict, push: bool) -> dict:
    """The move's record, from its declared data function (gitstate/moves/commands.py;
    `say`: gitstate/moves/say.py) given its parameters (not `push`, not `as_json`)."""
    import importlib
    if command == "inbox":   # read, and marked read with a move
        from gitstate.moves.commands import inbox
        return inbox(repo, params["agent"], mark_read=params["mark_read"], push=push,
                     at=params["at"])
    module, function = (DECLARED[command].data or "").split(":")
    found = getattr(importlib.import_module(module), function)
    if command == "say":
        message = params["message"]
        text = _stdin_text() if message == "-" else message
        return found(repo, params["to"], text, push=push)
    return found(repo, **data_args(params), push=push)


def _stdin_text() -> str:
    """The message on stdin, as text (bytes that are not UTF-8 kept as `surrogateescape`
    makes them, for the message's check to name)."""
    return sys.stdin.buffer.read((64 << 10) + 1).decode("utf-8", "surrogateescape")


def said_moved(command: str, repo, record: dict, params: dict, push: bool, as_json: bool,
               emit, *, directory: str | None = None) -> int:
    """The record printed (`emit(command, record)` for `--json`, else by the command's
    printer, cli/text.py); the exit code: 1 when a `--push` did not land (`directory`: where
    the command runs, `-C`, for the note an inbox adds)."""
    from gitstate.cli import text
    from gitstate.errors import EXIT_REJECTED
    landing = record.get("push")
    landed = landing is None or landing["outcome"] == "landed"
    if command == "inbox":
        from gitstate.cli.fast import noted
        if as_json:
            emit(command, record)
        else:
            text.print_inbox(record)
        noted(command, params["at"], as_json, directory)
    elif as_json:
        emit(command, record)
    elif DECLARED[command].printer == "print_said":
        text.print_said(record)
    else:   # print_move, or as the move landed
        says = SAYS[command].format(**params) if command in SAYS else None
        (text.print_landing if push else text.print_move)(record, says)
    if not landed:
        return EXIT_REJECTED
    if not as_json and command == "bury":
        for notice in record["vacancies"]:
            text.echo(notice)
    if not as_json and command == "logout":
        from gitstate.moves.logbook import log_tail
        log = repo.lifecycle().states[record["to"]].log
        text.echo(f"{log}, last entries:")
        for line in log_tail(repo, log):
            text.echo(f"  {line}")
    return 0


def _json(command: str, data) -> None:
    from gitstate.cli.text import json_text
    _write(sys.stdout, json_text(data))


def _error(exc, as_json: bool) -> int:
    """gitstate's own error, as cli/app.py `report_error` says it."""
    if as_json:
        _json("error", exc.to_dict())
    else:
        _write(sys.stderr, f"gitstate: {exc}\n")
    return exc.exit_code


def _write(stream, text: str) -> None:
    if not stream.isatty():
        text = _ANSI.sub("", text)
    stream.write(text)
    stream.flush()


# -- the forms taken: as click reads them --------------------------------------------------


def parse(args: list[str]) -> tuple[str | None, str, dict] | None:
    """(-C DIR, command, the parameters click would give the command, and `as_json`), or None
    for a form not taken here."""
    split = directory_and_rest(args)
    if split is None or not split[1] or split[1][0] not in MOVES:
        return None
    directory, rest = split
    params = _params(DECLARED[rest[0]], rest[1:])
    if params is None or (rest[0] == "inbox" and not (params["mark_read"] or params["push"])):
        return None
    return directory, rest[0], params


def _params(command: Command, words: list[str]) -> dict | None:
    """The parameters of `command` given `words`, as click gives them, or None."""
    declared = command.of("cli")
    spelled = {f: p for p in declared for f in p.flags}
    params: dict = {p.name: () if p.kind is list else p.default for p in declared}
    params["as_json"], given, i = False, [], 0
    while i < len(words):
        word = words[i]
        if word == "--json":
            params["as_json"] = True
        elif word.startswith("-") and word != "-":
            name, value = word.split("=", 1) if word.startswith("--") and "=" in word \
                else (word, None)
            p = spelled.get(name)
            if p is None or p.click or (p.kind is bool and value is not None):
                return None   # not declared, `--help`, `-mTEXT`, `--key`, `--push=x`: click
            if p.kind is bool:
                params[p.name] = True
                i += 1
                continue
            if value is None:
                if i + 1 >= len(words) or words[i + 1].startswith("-"):
                    return None
                value, i = words[i + 1], i + 1
            taken = _typed(p, value)
            if taken is None:
                return None
            params[p.name] = (*params[p.name], taken) if p.kind is list else taken
        else:
            given.append(word)
        i += 1
    return params if _placed(declared, given, params) else None


def _typed(p: Param, value: str) -> object | None:
    """An option's value as click converts it, or None where click might read it otherwise."""
    if p.kind in (str, list):
        return value
    if not _NUMBER.fullmatch(value) or (p.kind is int and "." in value):
        return None
    number = p.kind(value)
    return None if p.least is not None and number < p.least else number


def _placed(declared: list[Param], given: list[str], params: dict) -> bool:
    """The arguments given in their places, as click places them (one that takes several
    leaves the ones after it theirs); False where click would refuse them (one missing or too
    many, an option it requires not given)."""
    if any(p.flags and p.required and params[p.name] is None for p in declared):
        return False
    arguments = [p for p in declared if not p.flags]
    if not all(p.required for p in arguments) or sum(p.kind is list for p in arguments) > 1:
        return False   # an optional argument: where click puts it is not worth copying
    singles = sum(p.kind is not list for p in arguments)
    if len(given) < len(arguments) or (singles == len(arguments) and len(given) > singles):
        return False
    rest = list(given)
    for at, p in enumerate(arguments):
        if p.kind is list:
            n = len(rest) - sum(q.kind is not list for q in arguments[at + 1:])
            params[p.name], rest = tuple(rest[:n]), rest[n:]
        else:
            params[p.name], rest = rest[0], rest[1:]
    return True
