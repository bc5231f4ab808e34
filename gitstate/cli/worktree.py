"""`gitstate worktree add|remove`: an agent in its own worktree, in one step (the data comes
from gitstate/moves/worktrees.py)."""

from __future__ import annotations

import click

from gitstate.cli import complete
from gitstate.cli.app import cli, example, json_option, output, push_option, repo
from gitstate.cli.text import print_move
from gitstate.errors import EXIT_REJECTED
from gitstate.runtime.registry import RUNTIMES


@example("gitstate worktree add ana --role architect --runtime claude-code",
         "gitstate worktree remove ana --summary 'feature merged'")
@cli.group()
def worktree():
    """An agent in its own worktree: made, spawned and bound in one step; ended and removed
    in one."""


@example("gitstate worktree add ana --runtime claude-code",
         "gitstate worktree add bo --role reviewer --path ../bo --json")
@worktree.command("add")
@click.argument("agent")
@click.option("--role", default=None, shell_complete=complete.role,
              help="The role the agent holds.")
@click.option("--task", default=None, help="What the agent is for (kept as `task:`).")
@click.option("--runtime", type=click.Choice(list(RUNTIMES)), default=None,
              help="The runtime that will run the agent: the command printed starts it, "
                   "bound to the agent.")
@click.option("--path", default=None, metavar="DIR",
              help="Where to make the worktree (default: next to this one, "
                   "REPOSITORY-AGENT).")
@push_option
@json_option
def add(agent, role, task, runtime, path, push, as_json):
    """Spawn AGENT on the team line, bound to a new session id, make its worktree on a branch
    of its name that tracks the team line, and print the command that starts it there."""
    from gitstate.moves.worktrees import Starter, add as make
    chosen = RUNTIMES[runtime] if runtime else None
    starter = Starter(chosen.name, chosen.title, chosen.start, chosen.settings) \
        if chosen else None
    record = make(repo(), agent, role=role, runtime=starter, path=path, task=task, push=push)

    def show(r: dict) -> None:
        print_move(r["move"])
        if r["path"] is None:
            click.echo(f"gitstate: the spawn did not land: {r['move']['push']['reason']}",
                       err=True)
            return
        click.echo(f"worktree {r['path']} on branch {r['branch']}"
                   + (f" (tracks {r['upstream']})" if r["upstream"] else ""))
        click.echo(f"start it: {r['start']}")
        if r["note"]:
            click.echo(f"gitstate: note: {r['note']}", err=True)
    output("worktree-add", record, as_json, show)
    return 0 if record["path"] else EXIT_REJECTED


@example("gitstate worktree remove ana --summary 'feature merged'")
@worktree.command("remove")
@click.argument("agent", shell_complete=complete.agent)
@click.option("--summary", default=None,
              help="The agent's final summary (default: that its worktree was removed).")
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="A human's approval, where the lifecycle gates an agent's death.")
@push_option
@json_option
def remove(agent, summary, approved_by, push, as_json):
    """End AGENT as the lifecycle ends one (bury), then remove its worktree; refused, with
    nothing done, while the worktree holds uncommitted work. The branch stays."""
    from gitstate.moves.worktrees import remove as end
    record = end(repo(), agent, summary=summary, approved_by=approved_by, push=push)

    def show(r: dict) -> None:
        if r["move"]:
            print_move(r["move"])
        if not r["removed"]:
            click.echo(f"gitstate: the burial did not land, so {r['path']} stays: "
                       f"{r['move']['push']['reason']}", err=True)
            return
        click.echo(f"removed {r['path']}; branch {r['agent']} kept"
                   + (f" ({r['unmerged']} commits the team line has not got: merge it, or "
                      f"`git branch -D {r['agent']}`)" if r["unmerged"] else
                      f" (merged: `git branch -d {r['agent']}`)"))
    output("worktree-remove", record, as_json, show)
    return 0 if record["removed"] else EXIT_REJECTED
