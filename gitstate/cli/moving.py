"""Moving one agent: spawn, transition, freeze, wake, bury, handover, assume, logout; say (a
message) and sync. Each move's record
comes from gitstate/moves/commands.py (a message's from gitstate/moves/say.py), which the MCP
tools call too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from gitstate.cli.app import (
    declared,
    output,
    repo,
)
from gitstate.cli.declared import data_args
from gitstate.cli.text import print_landing, print_move, print_said
from gitstate.errors import EXIT_REJECTED
from gitstate.moves import commands
from gitstate.moves.logbook import log_tail


def moved(command: str, record: dict, as_json: bool, *, push: bool = False,
          says: str | None = None) -> int:
    """Print a move's record (with `push`, as the move landed, then how it landed); the exit
    code: 1 when it did not land."""
    if push:
        output(command, record, as_json, lambda r: print_landing(r, says))
        return 0 if record["push"]["outcome"] == "landed" else EXIT_REJECTED
    output(command, record, as_json, lambda r: print_move(r, says))
    return 0


def _move(name: str, says: Callable[[dict], str | None] = lambda args: None) -> None:
    """The move declared as `name`, as a click command: its function of
    gitstate/moves/commands.py, its record printed (`says`: what a move that keeps the state
    says instead of `from -> to`)."""
    @declared(name)
    def move(push: bool, as_json: bool, **args: Any) -> int:
        record = getattr(commands, name)(repo(), **data_args(args), push=push)
        return moved(name, record, as_json, push=push, says=says(args))


for _name in ("spawn", "transition", "freeze", "wake"):
    _move(_name)
_move("handover", lambda args: f"hands {args['role']} to {args['to']}")
_move("assume", lambda args: f"assumes {args['role']}")


@declared("bury")
def bury(agent, summary, approved_by, transfer_role_to, message, push, as_json):
    record = commands.bury(repo(), agent, summary, approved_by=approved_by,
                           transfer_to=transfer_role_to, text=message, push=push)
    code = moved("bury", record, as_json, push=push)
    if not as_json and code == 0:
        for notice in record["vacancies"]:
            click.echo(notice)
    return code


@declared("logout")
def logout(agent, note, sets, message, push, as_json):
    here = repo()
    record = commands.logout(here, agent, note, text=message, sets=sets, push=push)
    code = moved("logout", record, as_json, push=push)
    if code:
        return code
    if not as_json:
        log = here.lifecycle().states[record["to"]].log
        click.echo(f"{log}, last entries:")
        for line in log_tail(here, log):
            click.echo(f"  {line}")


@declared("say")
def say(to, message, push, as_json):
    from gitstate.moves.say import say as said
    if message == "-":
        message = _stdin_text()
    record = said(repo(), to, message, push=push)
    output("say", record, as_json, print_said)
    landing = record.get("push")
    return 0 if landing is None or landing["outcome"] == "landed" else EXIT_REJECTED


def _stdin_text() -> str:
    """The message on stdin, as text (bytes that are not UTF-8 kept as `surrogateescape`
    makes them, for the message's check to name)."""
    import sys
    return sys.stdin.buffer.read((64 << 10) + 1).decode("utf-8", "surrogateescape")


@declared("sync")
def sync(push, as_json):
    from gitstate.moves.sync import sync as replay
    record = replay(repo(), push=push)
    output("sync", record, as_json, print_sync)
    return 0 if record["ok"] else EXIT_REJECTED


def print_sync(r: dict) -> None:
    """One line per commit: on stdout what was done, on stderr what could not be."""
    if r["aborted"]:
        click.echo(f"aborted {r['aborted']} that was in progress")
    if r["side_branches"]:
        click.echo(f"took {', '.join(r['side_branches'])}")
    if r.get("work_found"):
        click.echo(f"took the uncommitted work of the kept moves: {', '.join(r['work_found'])}")
    if not r["moves"]:
        click.echo(f"{r['branch']} is in step with {r['upstream']}: nothing to replay")
    for m in r["moves"]:
        _print_synced(m, r["branch"], r["upstream"])
    if r["skipped_merges"]:
        click.echo(f"merges not replayed (their parents were): "
                   f"{', '.join(s[:10] for s in r['skipped_merges'])}")


def _print_synced(m: dict, branch: str, upstream: str) -> None:
    """A replayed commit: landed or replayed here, and how; else (on stderr) why not."""
    where = f"  [from {m['source']}]" if m["source"] != branch else ""
    head = f"{m['commit'][:10]} {m['subject']}{where}"
    if m["outcome"] not in ("landed", "replayed"):
        kept = f"; kept on branch {m['kept']}" if m["kept"] else ""
        click.echo(f"gitstate: {m['outcome']}: {head}\n  {m['reason']}{kept}", err=True)
        return
    how = {"already": f"already on {upstream}",
           "re-decided": "decided again from the new state"}.get(m["how"] or "", m["how"] or "")
    new = f" as {m['new'][:10]}" if m["new"] else ""
    place = f" on {upstream}" if m["outcome"] == "landed" else " here"
    click.echo(f"{m['outcome']}{new}{place} ({how}): {head}")
    if m["reason"] and m["how"] != "already":
        click.echo(f"  {m['reason']}")
