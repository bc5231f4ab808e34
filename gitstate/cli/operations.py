"""Operating the fleet: await, sweep, reap, shutdown."""

from __future__ import annotations

import click

from gitstate.cli import complete
from gitstate.cli.app import cli, directory_of, json_option, open_repo, output, push_option
from gitstate.errors import EXIT_REJECTED, UsageError


def run_await(directory: str | None, agents: list[str], timeout: float | None = None,
              *, as_json: bool = False) -> int:
    from gitstate.moves.operations import await_agents
    return await_agents(open_repo(directory), list(agents), timeout,
                        lambda line: click.echo(line, nl=True))


@cli.command("await")
@click.argument("agents", nargs=-1, required=True, shell_complete=complete.agent)
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Give up after this long (exit 124).")
@click.pass_context
def await_cmd(ctx, agents, timeout):
    """Block until every AGENT reaches a terminal state, printing each change as it lands.
    Exit 0 when all succeeded, 1 if any failed, 124 on timeout."""
    return run_await(directory_of(ctx), list(agents), timeout)


def run_sweep(directory: str | None, *, dry_run: bool = False, push: bool = False,
              as_json: bool = False) -> int:
    from gitstate.moves.commands import sweep
    from gitstate.moves.landing import committer
    from gitstate.moves.operations import sweep as commit_due
    repo = open_repo(directory)
    if dry_run or as_json:
        output("sweep", sweep(repo, dry_run=dry_run, push=push), as_json, print_due)
    elif not commit_due(repo, click.echo, committer(repo, push)):   # each move as it lands
        click.echo("nothing is due")
    return 0


def print_due(data: dict) -> None:
    for d in data["due"]:
        click.echo(f"{d['agent']}: {d['from']} -> {d['to']} is due (after {d['after']})")
    if not data["due"]:
        click.echo("nothing is due")


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only list the timed transitions that are due.")
@push_option
@json_option
@click.pass_context
def sweep(ctx, dry_run, push, as_json):
    """Commit every timed transition that is due (e.g. idle -> suspended after 30m), as the
    system. The hooks accept such a move only once it is due."""
    return run_sweep(directory_of(ctx), dry_run=dry_run, push=push, as_json=as_json)


def run_reap(directory: str | None, host: str | None = None, *, every: str | None = None,
             count: int | None = None, push: bool = False, as_json: bool = False) -> int:
    import time

    from gitstate.moves.landing import committer
    from gitstate.moves.operations import reap
    period = _period(every) if every else None
    rounds = 0
    while True:
        repo = open_repo(directory)
        if not reap(repo, click.echo, host, commit=committer(repo, push)) and period is None:
            click.echo("no agent has lost its process or its heartbeat")
        rounds += 1
        if period is None or (count is not None and rounds >= count):
            return 0
        time.sleep(period)


def _period(text: str) -> float:
    """`5s`, `0.5s`, `2m` or a bare number of seconds."""
    import re
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*", text)
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"--every takes a duration such as 5s or 1m, not {text!r}")
    return float(m.group(1)) * {"s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]


@cli.command()
@click.option("--host", default=None, help="Which host's agents to check (default: this one).")
@click.option("--every", default=None, metavar="DURATION",
              help="Keep checking, every DURATION (e.g. 5s): a health monitor.")
@click.option("--count", default=None, type=click.IntRange(min=1),
              help="With --every: stop after this many rounds.")
@push_option
@click.pass_context
def reap(ctx, host, every, count, push):
    """Mark as failed every living agent of this host whose process (pid) is gone, and every
    agent without a pid whose last state commit is older than `policies.heartbeat`."""
    if count is not None and every is None:
        raise UsageError("--count counts the rounds of --every; give --every too")
    return run_reap(directory_of(ctx), host, every=every, count=count, push=push)


def run_shutdown(directory: str | None, approved_by: str | None = None, *, push: bool = False,
                 as_json: bool = False) -> int:
    from gitstate.moves.landing import committer
    from gitstate.moves.operations import shutdown
    repo = open_repo(directory)
    skipped = shutdown(repo, click.echo, approved_by, committer(repo, push))
    return EXIT_REJECTED if skipped else 0


@cli.command()
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="For agents whose way to rest passes a gated move.")
@push_option
@click.pass_context
def shutdown(ctx, approved_by, push):
    """Move every living agent to a frozen or terminal state, children before parents."""
    return run_shutdown(directory_of(ctx), approved_by, push=push)
