"""Reading: status, roster, vacancies, log, board, inbox, show, situations, verify, attention. Each
has `--json`: the record of a function of gitstate/history/ (which the MCP tools call too;
for attention, of gitstate/runtime/attention.py), here printed; the views declared in
cli/declared.py are made from their declaration."""

from __future__ import annotations

import sys
from typing import Any

import click

from gitstate.cli.app import cli, declared, directory, emit, example, json_option, output, repo
from gitstate.cli.declared import DECLARED, print_view, view_data
from gitstate.cli.fast import noted
from gitstate.cli.text import plural, print_roster
from gitstate.errors import EXIT_REJECTED, UsageError
from gitstate.history import views as history
from gitstate.history.problems import describe_lines


def _view(name: str) -> None:
    """The view declared as `name`, as a click command: its data, printed."""
    command = DECLARED[name]

    @declared(name)
    def view(as_json: bool, **params: Any) -> None:
        here = repo(bare_ok=True)
        output(name, view_data(command, here, params), as_json,
               lambda data: print_view(command, data, params, here))
        noted(name, params["at"], as_json, directory())


for _name in ("status", "vacancies", "log", "board", "show", "situations"):
    _view(_name)


@declared("roster")
def roster(at, watch, count, no_follow, as_json):
    if watch:
        if at is not None:
            raise UsageError("--watch follows the team line as it moves; --at is a moment "
                             "past", hint="`gitstate roster --at REV` for that moment")
        from gitstate.cli.roster_watch import watch as watching
        return watching(repo(bare_ok=True), as_json=as_json, count=count,
                        follow=not no_follow)
    if count is not None or no_follow:
        raise UsageError(f"{'--count' if count is not None else '--no-follow'} goes with "
                         "--watch", hint="gitstate roster --watch --count N")
    output("roster", history.roster(repo(bare_ok=True), at), as_json, print_roster)
    noted("roster", at, as_json, directory())


@declared("inbox")
def inbox(agent, mark_read, push, at, as_json):
    """Read (a view), or marked read with a move: made and said as without click
    (cli/fast_moves.py)."""
    from gitstate.cli.fast_moves import made, said_moved
    here = repo(bare_ok=not (mark_read or push))
    params = {"agent": agent, "mark_read": mark_read, "at": at}
    view = made("inbox", here, params, push)
    return said_moved("inbox", here, view, params, push, as_json, emit, directory=directory())


@example('gitstate attention', 'gitstate attention --json')
@cli.command()
@json_option
def attention(as_json):
    """Who waits for a person now: agents whose Claude Code session asked for permission or
    input, or said it is done, and that have not moved since (the `notification` hook)."""
    from gitstate.runtime.attention import waiting, words
    output("attention", waiting(repo()), as_json, lambda data: click.echo(
        "\n".join(words(w) for w in data["waiting"]) or "Nobody waits for a person."))


def _say_progress(count: int) -> None:
    """A line on the terminal (stderr only; never when piped or under --json)."""
    sys.stderr.write(f"\rverify: {count:,} commits judged ...")
    sys.stderr.flush()


@declared("verify")
def verify(revs, no_cache, as_json):
    progress = None if as_json or not sys.stderr.isatty() else _say_progress
    try:
        report = history.verified(repo(bare_ok=True), revs, no_cache=no_cache, progress=progress)
    finally:
        if progress is not None:
            sys.stderr.write("\r\033[K")   # the progress line goes when the answer comes
    output("verify", report, as_json, print_verified)
    return 0 if report["ok"] else EXIT_REJECTED


def _print_line(report: dict) -> None:
    """Where the line rule begins, and what it left unjudged."""
    merges = report.get("merges_not_judged", 0)
    if not report["lifecycle_committed"]:
        return
    if report.get("line") is None:
        click.echo("note: the law declares no team line, so merges are read, not judged (the "
                   "line rule is not in force); add `line: BRANCH` to protocols/lifecycle.yaml "
                   "with an approved change of the law")
    elif merges:
        start = report.get("line_from")
        click.echo(f"the line rule is in force from {start[:10] if start else 'the law'}; "
                   f"{plural(merges, 'merge')} before it read as history, not judged")


def print_verified(report: dict) -> None:
    _print_problems(report)
    _print_line(report)
    if report["problems"]:
        click.echo(f"{plural(len({p['commit'] for p in report['problems']}), 'commit')} broke "
                   "the rules")
    if report.get("unjudged"):
        _print_unjudged(report)
    if not (report["problems"] or report.get("unjudged")):
        _print_verdict(report)


def _print_problems(report: dict) -> None:
    """Each rule broken, and the commits older than the law that were judged by tag alone."""
    for line in describe_lines(report["problems"]):
        click.echo(line)
    if report["judged_by_tag"]:
        click.echo(f"{plural(len(report['judged_by_tag']), 'tagged commit')} older than "
                   "protocols/lifecycle.yaml judged by their tags alone (moves, births and "
                   "ends; not their state files, which that history keeps its own way)")


def _print_unjudged(report: dict) -> None:
    """The commits a shallow clone could not judge, and how to judge them."""
    from gitstate.history.shallow import FIX
    shas = report["unjudged"]
    named = ", ".join(sha[:10] for sha in shas[:3]) + (", ..." if len(shas) > 3 else "")
    click.echo(f"not ok: {plural(len(shas), 'commit')} could not be judged ({named}): "
               "this clone is shallow, and has neither "
               f"{'its' if len(shas) == 1 else 'their'} parents nor anything before "
               f"them ({plural(report['judged'], 'commit')} judged)")
    click.echo(f"  {FIX}")


def _print_verdict(report: dict) -> None:
    """A history without problems: ok, or what could not be judged without a lifecycle."""
    if not report["lifecycle_committed"]:
        tags = len(report["judged_by_tag"])
        click.echo("no lifecycle is committed yet (protocols/lifecycle.yaml is not in "
                   f"{'HEAD' if report['commit'] else 'any commit'}): "
                   + (f"only the tags of {plural(tags, 'commit')} could be judged; "
                      if tags else "no commit was judged by it; ")
                   + "commit it (`git add protocols && git commit -m 'law: lifecycle'`) and "
                     "verify judges every state commit by it")
    elif report["judged"]:
        click.echo(f"ok: every commit follows the lifecycle "
                   f"({plural(report['judged'], 'commit')} judged)")
    else:
        click.echo("ok: every commit follows the lifecycle (as verify found at this commit "
                   "before; --no-cache judges again)")
