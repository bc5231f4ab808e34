"""Moving one agent: spawn, transition, freeze, wake, bury, handover, assume, logout; say (a
message) and sync. Each move's record comes from gitstate/moves/commands.py (a message's from
gitstate/moves/say.py), which the MCP tools call too, and is made and printed by the same
functions as without click (cli/fast_moves.py)."""

from __future__ import annotations

from typing import Any

import click

from gitstate.cli.app import declared, directory, emit, output, repo
from gitstate.cli.fast_moves import made, said_moved
from gitstate.errors import EXIT_REJECTED


def _move(name: str) -> None:
    """The move declared as `name`, as a click command: its record made and printed as the
    fast path makes and prints it (cli/fast_moves.py: its function of
    gitstate/moves/commands.py, the record printed; 1 when a `--push` did not land)."""
    @declared(name)
    def move(push: bool, as_json: bool, **args: Any) -> int:
        from gitstate.git.repo import open_managed
        here = open_managed(directory(), command=True)   # (its git: one command's)
        try:
            record = made(name, here, args, push)
            return said_moved(name, here, record, args, push, as_json, emit)
        finally:
            here.git.close()


for _name in ("spawn", "transition", "freeze", "wake", "handover", "assume", "bury", "logout"):
    _move(_name)


_move("say")


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
        moved = r.get("head") and r.get("before") and r["head"] != r["before"]
        click.echo(f"{r['branch']} moved to {r['upstream']} ({r['before'][:10]} -> "
                   f"{r['head'][:10]}): nothing to replay" if moved else
                   f"{r['branch']} is in step with {r['upstream']}: nothing to replay")
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
    new = f" as {m['new'][:10]}" if m["new"] else ""
    place = f" on {upstream}" if m["outcome"] == "landed" else " here"
    click.echo(f"{m['outcome']}{new}{place} ({_how(m['how'], upstream)}): {head}")
    if m["reason"] and m["how"] != "already":
        click.echo(f"  {m['reason']}")


def _how(how: str | None, upstream: str) -> str:
    """How a commit was replayed, in words."""
    return {"already": f"already on {upstream}",
            "re-decided": "decided again from the new state"}.get(how or "", how or "")
