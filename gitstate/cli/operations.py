"""Operating the fleet: await, sweep, reap, shutdown, team load."""

from __future__ import annotations

import re
import time

import click

from gitstate.cli import complete
from gitstate.cli.app import cli, json_option, output, push_option, repo
from gitstate.errors import EXIT_REJECTED, UsageError
from gitstate.moves.commands import sweep as swept
from gitstate.moves.landing import committer
from gitstate.moves.operations import (
    await_agents,
    reap as reap_once,
    shutdown as shut_down,
    sweep as commit_due,
)
from gitstate.moves.team import team_load


@cli.command("await")
@click.argument("agents", nargs=-1, required=True, shell_complete=complete.agent)
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Give up after this long (exit 124).")
def await_cmd(agents, timeout):
    """Block until every AGENT reaches a terminal state, printing each change as it lands.
    Exit 0 when all succeeded, 1 if any failed, 124 on timeout."""
    return await_agents(repo(), list(agents), timeout, click.echo)


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only list the timed transitions that are due.")
@push_option
@json_option
def sweep(dry_run, push, as_json):
    """Commit every timed transition that is due (e.g. idle -> suspended after 30m), as the
    system. The hooks accept such a move only once it is due."""
    here = repo()
    if dry_run or as_json:
        output("sweep", swept(here, dry_run=dry_run, push=push), as_json, print_due)
    elif not commit_due(here, click.echo, committer(here, push)):   # each move as it lands
        click.echo("nothing is due")


def print_due(data: dict) -> None:
    for d in data["due"]:
        click.echo(f"{d['agent']}: {d['from']} -> {d['to']} is due (after {d['after']})")
    if not data["due"]:
        click.echo("nothing is due")


def _period(text: str) -> float:
    """`5s`, `0.5s`, `2m` or a bare number of seconds."""
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
def reap(host, every, count, push):
    """Mark as failed every living agent of this host whose process (pid) is gone, and every
    agent without a pid whose last state commit is older than `policies.heartbeat`."""
    if count is not None and every is None:
        raise UsageError("--count counts the rounds of --every; give --every too")
    period = _period(every) if every else None
    rounds = 0
    while True:
        here = repo()
        if not reap_once(here, click.echo, host, commit=committer(here, push)) \
                and period is None:
            click.echo("no agent has lost its process or its heartbeat")
        rounds += 1
        if period is None or (count is not None and rounds >= count):
            return 0
        time.sleep(period)


@cli.command()
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="For agents whose way to rest passes a gated move.")
@click.option("--grace", default=10.0, type=click.FloatRange(min=0), metavar="SECONDS",
              show_default=True,
              help="How long a process sent SIGTERM has to end before SIGKILL.")
@push_option
def shutdown(approved_by, grace, push):
    """Move every living agent to a frozen or terminal state, children before parents; an
    agent's recorded process on this host is stopped first (SIGTERM, then SIGKILL)."""
    here = repo()
    return EXIT_REJECTED if shut_down(here, click.echo, approved_by, committer(here, push),
                                      grace=grace) else 0


@cli.group()
def team():
    """The team's persistent sessions (squad's core agents)."""


@team.command("load")
@click.argument("agents", nargs=-1, required=True, metavar="ID...")
@click.option("--role", default=None, shell_complete=complete.role,
              help="The role to load them as (default: the one role whose lifecycle entry "
                   "says `load:`; squad: core).")
@push_option
def load(agents, role, push):
    """Create each ID as a holder of the role and bring it to the state the role is loaded
    into (squad: core sessions, idle at once). An ID that exists is left as it is."""
    here = repo()
    return EXIT_REJECTED if team_load(here, list(agents), click.echo, role,
                                      committer(here, push)) else 0
