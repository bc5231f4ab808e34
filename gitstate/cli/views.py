"""Reading: status, roster, vacancies, log, inbox, situations, verify, attention. Each has
`--json`: the record of a function of gitstate/history/ (which the MCP tools call too; for
attention, of gitstate/runtime/attention.py), here printed."""

from __future__ import annotations

import sys

import click

from gitstate.cli import complete
from gitstate.cli.app import (
    at_option,
    cli,
    directory,
    example,
    json_option,
    output,
    push_option,
    repo,
)
from gitstate.cli.text import (
    plural,
    print_inbox,
    print_log,
    print_roster,
    print_situations,
    print_status_view,
    print_vacancies,
)
from gitstate.errors import EXIT_REJECTED, UsageError
from gitstate.history import views as history
from gitstate.history.entities import situations as graph
from gitstate.history.problems import describe_lines
from gitstate.history.status import status as status_of
from gitstate.moves.commands import inbox as read


@example('gitstate status', 'gitstate status alice --json', 'gitstate status --at HEAD~10')
@cli.command()
@click.argument("agent", required=False, shell_complete=complete.agent)
@at_option
@json_option
def status(agent, at, as_json):
    """Current state, mortality phase and legal next states (of AGENT, or of everyone)."""
    output("status", status_of(repo(bare_ok=True), agent, at), as_json,
           lambda data: print_status_view(data, agent))
    _note_upstream(at, as_json)


def _note_upstream(at: str | None, as_json: bool) -> None:
    """A view of the branch (not `--at`), for a person: whether it differs from its upstream
    (on stderr; `--json` is left as it is)."""
    if at is None and not as_json:
        from gitstate.cli.fast import note_upstream
        note_upstream(directory())


def _as_of(name: str, data, printer, help: str) -> None:
    """A view of the history as of a moment (`--at`): `data(repo, at)`, printed by `printer`."""
    @example(f"gitstate {name}", f"gitstate {name} --json", f"gitstate {name} --at 2026-11-01")
    @cli.command(name, help=help)
    @at_option
    @json_option
    def view(at, as_json):
        output(name, data(repo(bare_ok=True), at), as_json, printer)
        _note_upstream(at, as_json)


@example("gitstate roster", "gitstate roster --json", "gitstate roster --at 2026-11-01",
         "gitstate roster --watch", "gitstate roster --watch --json")
@cli.command("roster")
@at_option
@click.option("--watch", is_flag=True,
              help="Redraw whenever the team line moves, trouble first (Ctrl-C stops); with "
                   "--json, a line of JSON per redraw.")
@click.option("--count", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --watch: stop after N redraws (for scripts).")
@click.option("--no-follow", is_flag=True,
              help="With --watch in a clone that tracks a hub: watch this clone's branch (by "
                   "default the hub's, fetched every 2 s).")
@json_option
def roster(at, watch, count, no_follow, as_json):
    """Living, freezer and cemetery, derived from git history."""
    if watch:
        if at is not None:
            raise UsageError("--watch follows the team line as it moves; --at is a moment "
                             "past", hint="`gitstate roster --at REV` for that moment")
        from gitstate.cli.watch import watch as watching
        return watching(repo(bare_ok=True), as_json=as_json, count=count,
                        follow=not no_follow)
    if count is not None or no_follow:
        raise UsageError(f"{'--count' if count is not None else '--no-follow'} goes with "
                         "--watch", hint="gitstate roster --watch --count N")
    output("roster", history.roster(repo(bare_ok=True), at), as_json, print_roster)
    _note_upstream(at, as_json)


_as_of("vacancies", history.vacant_roles, print_vacancies,
       "Roles whose holders froze or died, and roles never filled.")


@example('gitstate log alice',
         'gitstate log -n 20 --newest-first',
         'gitstate log --since yesterday --json',
         'gitstate log --at v1.0')
@cli.command("log")
@click.argument("agent", required=False, shell_complete=complete.agent)
@click.option("--limit", "-n", type=click.IntRange(min=0), default=None, metavar="N",
              help="Only the N newest moves.")
@click.option("--since", default=None, metavar="DATE",
              help="Only moves committed since DATE (2026-11-01, '2 days ago', yesterday).")
@click.option("--newest-first", "--reverse", "newest_first", is_flag=True,
              help="Newest first (the default is oldest first, the order they happened in).")
@at_option
@json_option
def log_cmd(agent, limit, since, newest_first, at, as_json):
    """Transition history (of AGENT, or of everyone), oldest first."""
    rows = history.log_rows(repo(bare_ok=True), agent, limit=limit, since=since,
                            newest_first=newest_first, at=at)
    output("log", rows, as_json, lambda data: print_log(data, since, limit))
    _note_upstream(at, as_json)


@example('gitstate inbox bob',
         'gitstate inbox bob --mark-read',
         'gitstate inbox bob --at HEAD~3 --json')
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--mark-read", is_flag=True,
              help="Move the agent's last_read_commit to HEAD (a state commit).")
@push_option
@at_option
@json_option
def inbox(agent, mark_read, push, at, as_json):
    """Messages to AGENT (@AGENT or @ALL) since its last_read_commit."""
    view = read(repo(bare_ok=not (mark_read or push)), agent, mark_read=mark_read, push=push,
                at=at)
    output("inbox", view, as_json, print_inbox)
    _note_upstream(at, as_json)
    pushed = view.get("push")
    return 0 if pushed is None or pushed["outcome"] == "landed" else EXIT_REJECTED


@example('gitstate situations --no-sqlite', 'gitstate situations --sqlite graph.db --json')
@cli.command()
@click.option("--sqlite", "sqlite_path", default=None, metavar="PATH",
              help="Also upsert the graph into this SQLite file (default: "
                   "entities.db in the clone's .git/gitstate, outside the work tree).")
@click.option("--no-sqlite", is_flag=True, help="Only print the graph.")
@at_option
@json_option
def situations(sqlite_path, no_sqlite, at, as_json):
    """The entity graph of agent sessions, from history; written to SQLite too."""
    output("situations", graph(repo(bare_ok=True), sqlite_path=sqlite_path,
                               no_sqlite=no_sqlite, at=at), as_json, print_situations)


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


@example('gitstate verify', 'gitstate verify --no-cache origin/main..HEAD')
@cli.command()
@click.argument("revs", nargs=-1, metavar="[RANGE]")
@click.option("--no-cache", is_flag=True,
              help="Read nothing from .git/gitstate and write nothing there (for CI, audits).")
@json_option
def verify(revs, no_cache, as_json):
    """Replay history (default: all of HEAD's) through the hooks' rules; flag every commit
    that broke them, e.g. one made by a clone without gitstate's hooks."""
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
    for line in describe_lines(report["problems"]):
        click.echo(line)
    if report["judged_by_tag"]:
        click.echo(f"{plural(len(report['judged_by_tag']), 'tagged commit')} older than "
                   "protocols/lifecycle.yaml judged by their tags alone (moves, births and "
                   "ends; not their state files, which that history keeps its own way)")
    _print_line(report)
    bad = len({p["commit"] for p in report["problems"]})
    if report["problems"]:
        click.echo(f"{plural(bad, 'commit')} broke the rules")
    if report.get("unjudged"):
        from gitstate.history.shallow import FIX
        shas = report["unjudged"]
        named = ", ".join(sha[:10] for sha in shas[:3]) + (", ..." if len(shas) > 3 else "")
        click.echo(f"not ok: {plural(len(shas), 'commit')} could not be judged ({named}): "
                   "this clone is shallow, and has neither "
                   f"{'its' if len(shas) == 1 else 'their'} parents nor anything before "
                   f"them ({plural(report['judged'], 'commit')} judged)")
        click.echo(f"  {FIX}")
    if report["problems"] or report.get("unjudged"):
        return
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
