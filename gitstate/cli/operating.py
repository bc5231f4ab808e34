"""Operating the fleet: await, sweep, reap, watch, shutdown, team load."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from collections.abc import Iterator

import click

from gitstate.cli import complete
from gitstate.cli.app import (
    cli,
    declared,
    directory,
    emit,
    emit_line,
    example,
    json_option,
    output,
    push_option,
    repo,
)
from gitstate.errors import EXIT_REJECTED, UsageError
from gitstate.moves.chain import committer
from gitstate.moves.commands import sweep as swept
from gitstate.moves.operations import (
    await_agents,
    move_record,
    reap as reap_once,
    shutdown as shut_down,
    sweep as commit_due,
)
from gitstate.moves.team import team_load
from gitstate.moves.watch import EVERY as WATCH_EVERY, watch_round


@declared("await")
def await_cmd(agents, timeout, as_json):
    report: dict = {}
    code = await_agents(repo(), list(agents), timeout,
                        (lambda line: None) if as_json else click.echo, report=report)
    if as_json:
        emit("await", report)
    return code


class Collected:
    """An operation's moves and lines, for `--json`: what `commit` committed, what `say`
    said of the agents it left as they were."""

    def __init__(self, commit):
        self.commit, self.moves, self.lines = commit, [], []

    def __call__(self, agent: str, move):
        result = self.commit(agent, move)
        self.moves.append(move_record(agent, result))
        return result

    def say(self, line: str) -> None:
        self.lines.append(line)

    def record(self, here, ok: bool = True) -> dict:
        moved = {m["agent"] for m in self.moves}
        return {"commit": here.git.head(), "moves": self.moves,
                "left": [line for line in self.lines if line.split(":", 1)[0] not in moved],
                "ok": ok}


@declared("sweep")
def sweep(dry_run, push, as_json):
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


@declared("reap")
def reap(host, every, count, push, as_json):
    if count is not None and every is None:
        raise UsageError("--count counts the rounds of --every; give --every too")
    if as_json:
        if every is not None:
            raise UsageError("--json answers one round; --every keeps reaping: give one")
        return _reap_json(host, push)
    return _reap_rounds(host, _period(every) if every else None, count, push)


def _reap_json(host, push: bool) -> int:
    here = repo()
    got = Collected(committer(here, push))
    reap_once(here, got.say, host, commit=got)
    emit("reap", got.record(here))
    return 0


def _reap_rounds(host, period: float | None, count: int | None, push: bool) -> int:
    """Reap once, or every `period` seconds (`count` times, or for ever)."""
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


@example('gitstate watch', 'gitstate watch --push --every 10s', 'gitstate watch --once --json',
         'gitstate watch --systemd --push')
@cli.command()
@click.option("--once", is_flag=True, help="One round, then exit (for cron or a systemd timer): "
                                           "exit 1 when it stopped on an error.")
@click.option("--every", default=None, metavar="DURATION",
              help="Time between two rounds (e.g. 10s, 1m; default 30s).")
@click.option("--systemd", is_flag=True,
              help="Write a systemd user service and timer that run `watch --once` in this "
                   "clone (with --push, --every), and say how to start them; run nothing.")
@push_option
@json_option
def watch(once, every, systemd, push, as_json):
    """Make what is due, as the system, round after round: every timed move (sweep), then
    every working agent whose recorded process is gone or whose heartbeat stopped failed
    (reap); with --push, each landed on the hub, after what this clone holds that the hub has
    not got (sync). One line per move made; --json: one JSON line per round. Ctrl-C (or
    SIGTERM, once the round ends) stops it."""
    period = _period(every) if every else None
    if systemd:
        return _systemd_units(once or as_json, period, push)
    if once and period is not None:
        raise UsageError("--once runs one round; --every is the time between rounds: give one")
    here = _watched()
    if not push and not as_json:
        _say_if_tracked(here)
    os.environ["GIT_TERMINAL_PROMPT"] = "0"   # a loop never waits for a password
    stop = threading.Event()
    with _stopped_by_sigterm(stop):
        return _rounds(here, push=push, once=once, period=period or WATCH_EVERY,
                       as_json=as_json, stop=stop)


@contextlib.contextmanager
def _stopped_by_sigterm(stop: threading.Event) -> Iterator[None]:
    """While inside, SIGTERM sets `stop` (in the main thread: signals go there only). It is
    set by a thread of its own: the handler runs in the main thread, which may be holding the
    lock `stop.wait` takes, and setting it there would wait for that lock for ever."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM)
    if main:
        signal.signal(signal.SIGTERM, lambda _signum, _frame: threading.Thread(
            target=stop.set, name="gitstate-sigterm", daemon=True).start())
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def _rounds(here, *, push: bool, once: bool, period: float, as_json: bool,
            stop: threading.Event) -> int:
    """`watch`'s rounds, until `once` is done, `stop` is set or Ctrl-C; an error is said
    when it is new (every time with `once`)."""
    refused: set = set()
    last_error, number = None, 0
    try:
        while True:
            number += 1
            record = watch_round(here, push=push, number=number, refused=refused,
                                 say=(lambda line: None) if as_json else click.echo)
            _said_round(record, as_json, once or record["error"] != last_error)
            last_error = record["error"]
            if once:
                return 0 if record["ok"] else EXIT_REJECTED
            if stop.wait(period):
                return 0
            here = _watched()
    except KeyboardInterrupt:
        return 0


def _said_round(record: dict, as_json: bool, new: bool) -> None:
    """A round as one line of JSON; else its error, when it is `new`."""
    if as_json:
        emit_line("watch", record)
    elif record["error"] and new:
        click.echo(f"gitstate: watch: {record['error']}", err=True)


def _watched():
    """The clone `watch` runs in: a hub is moved through a clone of it, never in place."""
    from gitstate.git.repo import open_managed
    here = open_managed(directory(), bare_ok=True)
    if here.top is None:
        raise UsageError("gitstate watch makes moves, and a hub is moved only through its "
                         "door (a push, judged by its hooks): run the watch in a clone of the "
                         "hub, with --push",
                         hint="git clone HUB watcher && gitstate -C watcher init && "
                              "gitstate -C watcher watch --push")
    return here


def _say_if_tracked(here) -> None:
    """Without --push, in a clone whose branch has an upstream: the moves stay here."""
    code, out, _ = here.git.call("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}")
    if code == 0 and out.strip():
        click.echo(f"gitstate: watch: the moves stay in this clone; {out.decode().strip()} "
                   "gets them with --push", err=True)


def _systemd_units(one_round: bool, period: float | None, push: bool) -> int:
    if one_round:
        raise UsageError("--systemd writes units that run `watch --once`; --once and "
                         "--json do not go with it")
    return _write_units(period or WATCH_EVERY, push)


def _write_units(every: float, push: bool) -> int:
    from gitstate.runtime.systemd import install
    entry = install(repo().work_tree, every, push)
    for name in entry["added"]:
        click.echo(f"wrote {os.path.join(os.path.dirname(entry['path']), name)}")
    if not entry["changed"]:
        click.echo(f"{entry['path']} and its service are up to date")
    click.echo(entry["then"])
    click.echo("keep it running while you are logged out: loginctl enable-linger \"$USER\"")
    return 0


@declared("shutdown")
def shutdown(approved_by, grace, push, as_json):
    here = repo()
    if as_json:
        got = Collected(committer(here, push))
        left = shut_down(here, got.say, approved_by, got, grace=grace)
        emit("shutdown", got.record(here, ok=not left))
        return EXIT_REJECTED if left else 0
    return EXIT_REJECTED if shut_down(here, click.echo, approved_by, committer(here, push),
                                      grace=grace) else 0


@example("gitstate team load lead reviewer --push")
@cli.group()
def team():
    """The team's persistent sessions (squad's core agents)."""


@example("gitstate team load lead reviewer", "gitstate team load qa --role core --push")
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
