"""Reading: status, roster, vacancies, log, inbox, situations, verify. Each has `--json`: the
record of a function of gitstate/history/ (which the MCP tools call too), here printed."""

from __future__ import annotations

import sys

import click

from gitstate.cli import complete
from gitstate.cli.app import at_option, cli, directory_of, json_option, open_repo, output, \
    push_option
from gitstate.cli.text import plural, print_roster, print_status
from gitstate.errors import EXIT_REJECTED
from gitstate.law.times import when


def run_status(directory: str | None, agent: str | None = None, *, as_json: bool = False) -> int:
    from gitstate.history.status import status as status_of

    def print_rows(data) -> None:
        rows = [data] if agent else data
        if not rows:
            click.echo("no agents yet: `gitstate spawn <id>` registers one")
        for r in rows:
            print_status(r, detailed=bool(agent))
    output("status", status_of(open_repo(directory), agent), as_json, print_rows)
    return 0


@cli.command()
@click.argument("agent", required=False, shell_complete=complete.agent)
@json_option
@click.pass_context
def status(ctx, agent, as_json):
    """Current state, mortality phase and legal next states (of AGENT, or of everyone)."""
    return run_status(directory_of(ctx), agent, as_json=as_json)


def run_roster(directory: str | None, at: str | None = None, *, as_json: bool = False) -> int:
    from gitstate.history.views import roster as roster_of
    output("roster", roster_of(open_repo(directory), at), as_json, print_roster)
    return 0


@cli.command()
@at_option
@json_option
@click.pass_context
def roster(ctx, at, as_json):
    """Living, freezer and cemetery, derived from git history."""
    return run_roster(directory_of(ctx), at, as_json=as_json)


def run_vacancies(directory: str | None, at: str | None = None, *,
                  as_json: bool = False) -> int:
    from gitstate.history.fold import vacancy_notice
    from gitstate.history.views import vacant_roles

    def print_notices(view: dict) -> None:
        for v in view["vacancies"]:
            click.echo(vacancy_notice(v))
        if not view["vacancies"]:
            click.echo("no vacant roles")
    output("vacancies", vacant_roles(open_repo(directory), at), as_json, print_notices)
    return 0


@cli.command()
@at_option
@json_option
@click.pass_context
def vacancies(ctx, at, as_json):
    """Roles whose holders froze or died, and roles never filled."""
    return run_vacancies(directory_of(ctx), at, as_json=as_json)


def run_log(directory: str | None, agent: str | None = None, *, as_json: bool = False,
            limit: int | None = None, since: str | None = None,
            newest_first: bool = False) -> int:
    from gitstate.history.views import log_rows

    def print_moves(rows: list[dict]) -> None:
        for r in rows:
            move = f"{r['from']} -> {r['to']}" if r["from"] else f"born in {r['to']}"
            click.echo(f"{when(r['time'])}  {r['commit'][:10]}  {r['agent']}: {move}"
                       + (f"  {r['text']}" if r["text"] else "") + f"  ({r['author']})")
        if not rows:
            click.echo(f"no moves since {since}" if since is not None else
                       "no moves asked for (--limit 0)" if limit == 0 else "no state commits yet")
    output("log", log_rows(open_repo(directory), agent, limit=limit, since=since,
                           newest_first=newest_first), as_json, print_moves)
    return 0


@cli.command("log")
@click.argument("agent", required=False, shell_complete=complete.agent)
@click.option("--limit", "-n", type=click.IntRange(min=0), default=None, metavar="N",
              help="Only the N newest moves.")
@click.option("--since", default=None, metavar="DATE",
              help="Only moves committed since DATE (2026-11-01, '2 days ago', yesterday).")
@click.option("--newest-first", "--reverse", "newest_first", is_flag=True,
              help="Newest first (the default is oldest first, the order they happened in).")
@json_option
@click.pass_context
def log_cmd(ctx, agent, limit, since, newest_first, as_json):
    """Transition history (of AGENT, or of everyone), oldest first."""
    return run_log(directory_of(ctx), agent, as_json=as_json, limit=limit, since=since,
                   newest_first=newest_first)


def run_inbox(directory: str | None, agent: str, *, mark_read: bool = False,
              push: bool = False, as_json: bool = False) -> int:
    from gitstate.moves.commands import inbox as read
    view = read(open_repo(directory), agent, mark_read=mark_read, push=push)
    pushed = view.get("push")
    output("inbox", view, as_json, print_inbox)
    return 0 if pushed is None or pushed["outcome"] == "landed" else EXIT_REJECTED


def print_inbox(view: dict) -> None:
    pushed = view.get("push")
    if pushed and pushed["outcome"] != "landed":
        click.echo(f"gitstate: the checkpoint did not land ({pushed['outcome']}): "
                   f"{pushed['reason']}" + (f"; kept on branch {pushed['kept']}"
                                            if pushed["kept"] else ""), err=True)
    since = f"since {view['since'][:10]}" if view["since"] else "from the beginning"
    click.echo(f"{view['agent']}: {plural(len(view['messages']), 'message')} {since}")
    for m in view["messages"]:
        click.echo(f"  {m['commit'][:10]}  {when(m['time'])}  {m['subject']}")
        for line in m["body"].splitlines():
            if "@" in line:  # the lines that speak to someone
                click.echo(f"      {line.strip()}")
    if view.get("marked_read"):
        click.echo(f"last_read_commit -> {view['head'][:10]} "
                   f"({view['marked_read']['commit'][:10]})")


@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--mark-read", is_flag=True,
              help="Move the agent's last_read_commit to HEAD (a state commit).")
@push_option
@json_option
@click.pass_context
def inbox(ctx, agent, mark_read, push, as_json):
    """Messages to AGENT (@AGENT or @ALL) since its last_read_commit."""
    return run_inbox(directory_of(ctx), agent, mark_read=mark_read, push=push,
                     as_json=as_json)


@cli.command()
@click.option("--sqlite", "sqlite_path", default=None, metavar="PATH",
              help="Also upsert the graph into this SQLite file (default: "
                   "entities.db in the clone's .git/gitstate, outside the work tree).")
@click.option("--no-sqlite", is_flag=True, help="Only print the graph.")
@json_option
@click.pass_context
def situations(ctx, sqlite_path, no_sqlite, as_json):
    """The entity graph of agent sessions, from history; written to SQLite too."""
    return run_situations(directory_of(ctx), sqlite_path=sqlite_path, no_sqlite=no_sqlite,
                          as_json=as_json)


def run_situations(directory: str | None, *, sqlite_path: str | None = None,
                   no_sqlite: bool = False, as_json: bool = False) -> int:
    from gitstate.history.entities import situations as graph
    output("situations", graph(open_repo(directory), sqlite_path=sqlite_path,
                               no_sqlite=no_sqlite), as_json, print_situations)
    return 0


def print_situations(data: dict) -> None:
    sessions = [e for e in data["entities"] if e["id"].startswith("situation:session-")]
    for e in sessions:
        links = [b for b in data["belongings"] if b["owner"] == e["id"]]
        bits = [f"{b['quality']} {b['member']}" for b in links if b["quality"] != "description"]
        click.echo(f"{e['id']}  [{e['quality'] or '?'}]  {e['started_at'] or '?'} .. "
                   f"{e['ended_at'] or '?'}" + (f"  ({', '.join(bits)})" if bits else ""))
    if "sqlite" in data:
        s = data["sqlite"]
        click.echo(f"wrote {s['path']}: {s['entities']} entities, {s['belongings']} belongings")


def _say_progress(count: int) -> None:
    """A line on the terminal (stderr only; never when piped or under --json)."""
    sys.stderr.write(f"\rverify: {count:,} commits judged ...")
    sys.stderr.flush()


def run_verify(directory: str | None, revs=(), *, no_cache: bool = False,
               as_json: bool = False) -> int:
    from gitstate.history.views import verified
    progress = None if as_json or not sys.stderr.isatty() else _say_progress
    try:
        report = verified(open_repo(directory, bare_ok=True), revs, no_cache=no_cache,
                          progress=progress)
    finally:
        if progress is not None:
            sys.stderr.write("\r\033[K")   # the progress line goes when the answer comes
    output("verify", report, as_json, print_verified)
    return 0 if report["ok"] else EXIT_REJECTED


def print_verified(report: dict) -> None:
    from gitstate.history.problems import describe_problem
    for p in report["problems"]:
        click.echo(describe_problem(p))
    if report["judged_by_tag"]:
        click.echo(f"{plural(len(report['judged_by_tag']), 'tagged commit')} older than "
                   "protocols/lifecycle.yaml judged by their tags alone (moves, births and "
                   "ends; not their state files, which that history keeps its own way)")
    bad = len({p["commit"] for p in report["problems"]})
    click.echo(f"{plural(bad, 'commit')} broke the rules" if report["problems"]
               else "ok: every commit follows the lifecycle")


@cli.command()
@click.argument("revs", nargs=-1, metavar="[RANGE]")
@click.option("--no-cache", is_flag=True,
              help="Read nothing from .git/gitstate and write nothing there (for CI, audits).")
@json_option
@click.pass_context
def verify(ctx, revs, no_cache, as_json):
    """Replay history (default: all of HEAD's) through the hooks' rules; flag every commit
    that broke them, e.g. one made by a clone without gitstate's hooks."""
    return run_verify(directory_of(ctx), revs, no_cache=no_cache, as_json=as_json)
