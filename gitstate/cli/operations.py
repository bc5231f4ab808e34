"""Operating the fleet: await, sweep, reap, shutdown."""

from __future__ import annotations

import click

from gitstate.cli.app import cli, directory_of, emit, json_option, open_repo
from gitstate.errors import EXIT_REJECTED


def run_await(directory: str | None, agents: list[str], timeout: float | None = None,
              *, as_json: bool = False) -> int:
    from gitstate.moves.operations import await_agents
    return await_agents(open_repo(directory), list(agents), timeout,
                        lambda line: click.echo(line, nl=True))


@cli.command("await")
@click.argument("agents", nargs=-1, required=True)
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Give up after this long (exit 124).")
@click.pass_context
def await_cmd(ctx, agents, timeout):
    """Block until every AGENT reaches a terminal state, printing each change as it lands.
    Exit 0 when all succeeded, 1 if any failed, 124 on timeout."""
    return run_await(directory_of(ctx), list(agents), timeout)


def run_sweep(directory: str | None, *, dry_run: bool = False, as_json: bool = False) -> int:
    from gitstate.moves.operations import due_timeouts, sweep
    repo = open_repo(directory)
    if dry_run or as_json:
        due = due_timeouts(repo)
        if not dry_run:
            sweep(repo, lambda line: None)
        if as_json:
            emit("sweep", {"due": due, "committed": not dry_run})
        else:
            for d in due:
                click.echo(f"{d['agent']}: {d['from']} -> {d['to']} is due (after {d['after']})")
        return 0
    if not sweep(repo, click.echo):
        click.echo("nothing is due")
    return 0


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only list the timed transitions that are due.")
@json_option
@click.pass_context
def sweep(ctx, dry_run, as_json):
    """Commit every timed transition that is due (e.g. idle -> suspended after 30m), as the
    system. The hooks accept such a move only once it is due."""
    return run_sweep(directory_of(ctx), dry_run=dry_run, as_json=as_json)


def run_reap(directory: str | None, host: str | None = None, *, as_json: bool = False) -> int:
    from gitstate.moves.operations import reap
    if not reap(open_repo(directory), click.echo, host):
        click.echo("no agent has lost its process")
    return 0


@cli.command()
@click.option("--host", default=None, help="Which host's agents to check (default: this one).")
@click.pass_context
def reap(ctx, host):
    """Mark every living agent of this host whose process (pid) is gone as failed."""
    return run_reap(directory_of(ctx), host)


def run_shutdown(directory: str | None, approved_by: str | None = None, *,
                 as_json: bool = False) -> int:
    from gitstate.moves.operations import shutdown
    skipped = shutdown(open_repo(directory), click.echo, approved_by)
    return EXIT_REJECTED if skipped else 0


@cli.command()
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="For agents whose way to rest passes a gated move.")
@click.pass_context
def shutdown(ctx, approved_by):
    """Move every living agent to a frozen or terminal state, children before parents."""
    return run_shutdown(directory_of(ctx), approved_by)
