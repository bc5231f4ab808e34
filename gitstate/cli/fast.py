"""The read commands — `status`, `roster`, `vacancies`, `inbox`, `log`, `board`, `show`,
`situations`, in text and with `--json` — answered without loading click: starting click
costs more than a warm view takes (measured with bench/reads.py's history: ~60 ms of CPU per
call, a third of `roster --json`).

Only the plain forms are taken here: `[-C DIR] COMMAND [AGENT] [--json]` with the options in
FORMS (made from the views' declarations, cli/declared.py), spelled as click reads them; the
text is printed by the command line's own printers (`cli/text.py`). Anything else, and
`$GITSTATE_CHECK_JSON` (the typed models check the output), goes the whole way through the
command line, which then says what is wrong in its usual words; so does any error (but one
not gitstate's own, a bug here, is raised under $GITSTATE_FAST_LOUD, as the tests set). The data
is the command line's own: the same functions, called with the same parameters
(tests/cli/test_fast_reads.py parses every form both ways).
"""

from __future__ import annotations

import os
import sys

from gitstate.cli.declared import DECLARED, fast_form

# command: (fewest, most AGENT arguments, {option taking a value: its parameter},
#           {flag: its parameter}), made from the views' declarations (cli/declared.py);
# `--json` is the parameter `as_json`.
FORMS = {c.name: fast_form(c) for c in DECLARED.values() if c.fast is not None}
LOUD = "GITSTATE_FAST_LOUD"   # set (by the tests): a fallback on a bug is an error, not silent


def run(args: list[str]) -> int | None:
    """The exit code if this answered, else None (then the command line runs as usual)."""
    parsed = parse(args)
    if parsed is None or os.environ.get("GITSTATE_CHECK_JSON"):
        return None
    directory, command, params = parsed
    from gitstate.history import progress
    if not params["as_json"] and sys.stderr.isatty():
        progress.enable(sys.stderr)
    try:
        answer = _answer_whole(directory, command, params)
    except Exception as exc:   # noqa: BLE001 - the whole command line says what went wrong
        said = _said(exc, params["as_json"])
        if said is None:
            _fell_back(exc)
        return said
    finally:
        progress.done()
    try:
        _write(answer)
    except BrokenPipeError:
        return 0
    noted(command, params["at"], params["as_json"], directory)
    return 0


def _said(exc: Exception, as_json: bool) -> int | None:
    """The exit code of gitstate's own error (an unknown agent, a `show` of an agent without
    a freeze-state), said as the command line says it (`cli/app.py` `report_error`): as JSON
    on stdout for a program, else on stderr; None for any other error (the command line
    answers it)."""
    from gitstate.errors import GitstateError
    if not isinstance(exc, GitstateError) or "\033" in str(exc):   # click strips colours
        return None
    try:
        if as_json:
            from gitstate.cli.text import json_text
            sys.stdout.write(json_text(exc.to_dict()))
            sys.stdout.flush()
        else:
            sys.stderr.write(f"gitstate: {exc}\n")
            sys.stderr.flush()
    except BrokenPipeError:
        return 0
    return exc.exit_code


def _fell_back(exc: Exception) -> None:
    """The command line answers instead, in its own words. An error that is not gitstate's
    own is a bug of this path: with $GITSTATE_FAST_LOUD (the tests) it is raised."""
    from gitstate.errors import GitstateError
    if os.environ.get(LOUD) and not isinstance(exc, GitstateError):
        raise RuntimeError("the fast read path fell back on an error") from exc


def _answer_whole(directory: str | None, command: str, params: dict) -> str | list[bytes]:
    """The whole answer, as text or (the whole log kept as printed) as its parts."""
    if _plain_log(command, params):
        parts = _whole_log(directory, params)
        if parts is not None:
            return parts
    from gitstate.cli.shown import keepable
    if keepable(command, params):
        shown = _shown(directory, command, params)
        if shown is not None:
            return shown
    repo, data = _answer(directory, command, params)
    return _rendered(command, params, repo, data)


def _rendered(command: str, params: dict, repo, data) -> str:
    from gitstate.cli.text import json_text
    return json_text(data) if params["as_json"] else _text(command, params, repo, data)


def _shown(directory: str | None, command: str, params: dict) -> str | None:
    """A view of every agent, from its print kept at the tip (`cli/shown.py`)."""
    from gitstate.cli.declared import view_data
    from gitstate.cli.shown import kept_view
    from gitstate.git.repo import open_managed
    repo = open_managed(directory, bare_ok=True)
    mode = "text" if not params["as_json"] else "json-tty" if sys.stdout.isatty() else "json"
    return kept_view(repo, command, params, lambda: view_data(DECLARED[command], repo, params),
                     lambda data: _rendered(command, params, repo, data), mode)


def _write(answer: str | list[bytes]) -> None:
    if isinstance(answer, str):
        sys.stdout.write(answer)
    else:
        sys.stdout.flush()
        for part in answer:
            sys.stdout.buffer.write(part)
    sys.stdout.flush()


NOTED = ("status", "roster", "vacancies", "log", "board", "inbox")   # the views that say it


def noted(command: str, at: str | None, as_json: bool, directory: str | None) -> None:
    """After a view of the branch (not `--at`) for a person: whether the branch differs from
    its upstream (on stderr; `--json` is left as it is)."""
    if command in NOTED and at is None and not as_json:
        note_upstream(directory)


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

    from gitstate.cli.declared import print_view
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_view(DECLARED[command], data, params, repo)
    return out.getvalue()


def parse(args: list[str]) -> tuple[str | None, str, dict] | None:
    """(-C DIR, command, the parameters click would give the command), or None for a form not
    taken here."""
    split = directory_and_rest(args)
    if split is None or not split[1] or split[1][0] not in FORMS:
        return None
    directory, rest = split
    params = _params(rest[0], rest[1:])
    return None if params is None else (directory, rest[0], params)


def directory_and_rest(args: list[str]) -> tuple[str | None, list[str]] | None:
    """A leading `-C DIR` (None when absent) and the words after it, or None when DIR is no
    folder (click says so)."""
    if args[:1] == ["-C"] and len(args) > 1:
        return (args[1], list(args[2:])) if os.path.isdir(args[1]) else None
    return None, list(args)


def _params(command: str, words: list[str]) -> dict | None:
    """The parameters of `command` given `words`, as click gives them, or None."""
    fewest, most, valued, flags = FORMS[command]
    declared = {p.name: p for p in DECLARED[command].params}
    params: dict = {p: declared[p].default for p in (*valued.values(), *flags.values())}
    switches = {**flags, "--json": "as_json"}
    params["as_json"], agents, i = False, [], 0
    while i < len(words):
        word, value = _split(words[i])
        if word in valued:
            taken = _value(words, i, value, declared[valued[word]].kind)
            if taken is None:
                return None
            params[valued[word]], i = taken[0], i + taken[1]
        elif value is not None or (word.startswith("-") and word not in switches):
            return None
        elif word in switches:
            params[switches[word]] = True
        else:
            agents.append(word)
        i += 1
    if not fewest <= len(agents) <= most:
        return None
    if most:
        params["agent"] = agents[0] if agents else None
    return params


def _split(word: str) -> tuple[str, str | None]:
    """`--opt=value` as (--opt, value); any other word as (word, None)."""
    if word.startswith("--") and "=" in word:
        name, value = word.split("=", 1)
        return name, value
    return word, None


def _value(words: list[str], i: int, value: str | None, kind: type) -> tuple | None:
    """(an option's value, how many more words it took), or None where click would differ."""
    more = 0
    if value is None:
        if i + 1 >= len(words) or words[i + 1].startswith("-"):
            return None
        value, more = words[i + 1], 1
    if kind is int:
        return (int(value), more) if value.isascii() and value.isdigit() else None
    return value, more


def _answer(directory: str | None, command: str, params: dict):
    """(the repository, the command's data), from the functions the command line calls."""
    from gitstate.cli.declared import view_data
    from gitstate.git.repo import open_managed
    repo = open_managed(directory, bare_ok=True)   # a hub is read as well: its HEAD
    return repo, view_data(DECLARED[command], repo, params)
