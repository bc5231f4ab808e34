"""Moving one agent: spawn, transition, freeze, wake, bury, handover, logout, and show (a frozen
agent's freeze-state, asked without waking it); say (a message) and sync. Each move's record
comes from gitstate/moves/commands.py (a message's from gitstate/moves/say.py), which the MCP
tools call too."""

from __future__ import annotations

import click

from gitstate.cli import complete
from gitstate.cli.app import (
    at_option,
    cli,
    example,
    json_option,
    message_option,
    output,
    push_option,
    repo,
    set_option,
)
from gitstate.cli.text import print_freeze_state, print_landing, print_move, print_said
from gitstate.errors import EXIT_REJECTED
from gitstate.history.views import freeze_state
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


@example('gitstate spawn alice --role architect --model opus-4-6',
         "gitstate spawn bob --parent alice --task 'index the docs' --json")
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--role", default=None, shell_complete=complete.role,
              help="The role this agent holds.")
@click.option("--new-role", is_flag=True,
              help="The role is a new one, not declared by the lifecycle (where custom roles "
                   "are allowed): trailer `New-role: ROLE`. Without it a role the lifecycle "
                   "does not declare is refused, so a typo never becomes a role.")
@click.option("--model", default=None, help="The model behind the agent.")
@click.option("--parent", "parent", default=None, help="The agent that spawned this one.")
@click.option("--session", default=None, metavar="ID",
              help="The agent runtime's session id (recorded as `session:`; the runtime's "
                   "hooks bind that session to this agent).")
@click.option("--task", default=None, help="What the agent is for (kept as `task:`).")
@click.option("--instructions", default=None, help="Its full instructions (`instructions:`).")
@click.option("--wait", default=None, type=click.FloatRange(min=0), metavar="SECONDS",
              help="If the pool is full (max_living), wait up to SECONDS for a free slot.")
@click.option("--key", default=None, is_flag=False, flag_value="new", metavar="PUBKEY",
              help="Give the agent a key: its moves must then be signed (bare `--key`: make "
                   "one, kept in ~/.config/gitstate/keys; or an SSH public key or .pub file).")
@set_option
@message_option
@push_option
@json_option
def spawn(agent, role, new_role, model, parent, session, task, instructions, wait, key, sets,
          text, push, as_json):
    """Register AGENT in the initial state (one commit)."""
    record = commands.spawn(repo(), agent, role=role, model=model, parent=parent, sets=sets,
                            text=text, session=session, task=task, instructions=instructions,
                            wait=wait, push=push, key=key, new_role=new_role)
    return moved("spawn", record, as_json, push=push)


@example("gitstate transition alice inbox -m 'restored from a cold start'",
         "gitstate transition alice deep_work --set context_pct=40 --body '@bob review please'")
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.argument("state", shell_complete=complete.state)
@message_option
@click.option("--body", default="", help="A longer commit body (may @mention agents).")
@set_option
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="Add 'Approved-by: HUMAN' for moves that need approval.")
@push_option
@json_option
def transition(agent, state, text, body, sets, approved_by, push, as_json):
    """Move AGENT to STATE: one atomic commit of its state file and whatever is staged."""
    record = commands.transition(repo(), agent, state, text=text, body=body, sets=sets,
                                 approved_by=approved_by, push=push)
    return moved("transition", record, as_json, push=push)


@example('gitstate freeze alice       # writes data/freeze-states/alice.md to fill in first',
         "gitstate freeze alice -m 'paused for the night'")
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@message_option
@click.option("--situation", default=None, help="primary_situation for a new freeze-state.")
@set_option
@push_option
@json_option
def freeze(agent, text, situation, sets, push, as_json):
    """Freeze AGENT: write (or check) data/freeze-states/AGENT.md and freeze, in one commit.

    If the file exists it must have all its sections; if not, the template is written with
    the agent's role and thread filled in (edit it and commit it as a progress update later).
    """
    record = commands.freeze(repo(), agent, text=text, situation=situation, sets=sets,
                             push=push)
    return moved("freeze", record, as_json, push=push)


@example('gitstate wake alice --approved-by zach')
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--approved-by", required=True, metavar="HUMAN",
              help="The human (one of the lifecycle's `humans`) who decided to wake it.")
@click.option("--state", default=None, help="Where to wake it to (default: the first living "
                                              "state the lifecycle allows).")
@message_option
@push_option
@json_option
def wake(agent, approved_by, state, text, push, as_json):
    """Resume a frozen AGENT; a human's decision (Approved-by)."""
    record = commands.wake(repo(), agent, approved_by, state=state, text=text, push=push)
    return moved("wake", record, as_json, push=push)


@example("gitstate bury bob --summary 'indexed the docs' --approved-by zach")
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--summary", required=True, help="The final summary (required to die).")
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="Needed when the move is gated (e.g. burying a frozen agent in haak).")
@click.option("--transfer-role-to", "transfer_to", default=None, metavar="ID2",
              help="Hand the role to ID2 in the same commit (no vacancy, never two holders).")
@message_option
@push_option
@json_option
def bury(agent, summary, approved_by, transfer_to, text, push, as_json):
    """AGENT dies with a final summary; says so when its role falls vacant."""
    record = commands.bury(repo(), agent, summary, approved_by=approved_by,
                           transfer_to=transfer_to, text=text, push=push)
    code = moved("bury", record, as_json, push=push)
    if not as_json and code == 0:
        for notice in record["vacancies"]:
            click.echo(notice)
    return code


@example('gitstate show carol', 'gitstate show carol --at HEAD~5 --json')
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@at_option
@json_option
def show(agent, at, as_json):
    """Print a frozen AGENT's freeze-state: ask it without waking it."""
    here = repo(bare_ok=True)
    output("show", freeze_state(here, agent, at), as_json,
           lambda view: print_freeze_state(here.git, view))


@example("gitstate handover architect --to dave -m 'going on leave'")
@cli.command()
@click.argument("role", shell_complete=complete.role)
@click.option("--to", "to", required=True, metavar="ID", shell_complete=complete.agent,
              help="The agent that takes the role.")
@click.option("--from", "giver", default=None, metavar="ID", shell_complete=complete.agent,
              help="The holder that gives it (default: the one living holder).")
@message_option
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="Needed when the giver or the taker is frozen (haak): every change to a "
                   "frozen agent is a human's decision.")
@push_option
@json_option
def handover(role, to, giver, text, approved_by, push, as_json):
    """A holder of ROLE hands it to another agent in one commit and keeps working without it
    (trailer `Role-transfer: ROLE -> ID`): the role is never vacant nor held twice."""
    record = commands.handover(repo(), role, to, giver=giver, text=text,
                               approved_by=approved_by, push=push)
    return moved("handover", record, as_json, push=push, says=f"hands {role} to {to}")


@example("gitstate assume dave architect -m 'the architect role was vacant'")
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.argument("role", shell_complete=complete.role)
@message_option
@push_option
@json_option
def assume(agent, role, text, push, as_json):
    """AGENT, living and without a role, takes the vacant ROLE in one commit (trailer
    `Assumes-role: ROLE`); refused while another living agent holds it."""
    record = commands.assume(repo(), agent, role, text=text, push=push)
    return moved("assume", record, as_json, push=push, says=f"assumes {role}")


@example("gitstate logout era-1 --note 'parser half done; read docs/parser.md'")
@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--note", required=True, help="One line for the shared log: where you stopped.")
@set_option
@message_option
@push_option
@json_option
def logout(agent, note, sets, text, push, as_json):
    """Log AGENT out: append its note to the lifecycle's log (era: logout.log) and move to
    the logout state, in one commit."""
    here = repo()
    record = commands.logout(here, agent, note, text=text, sets=sets, push=push)
    code = moved("logout", record, as_json, push=push)
    if code:
        return code
    if not as_json:
        log = here.lifecycle().states[record["to"]].log
        click.echo(f"{log}, last entries:")
        for line in log_tail(here, log):
            click.echo(f"  {line}")


@example("gitstate say ana 'please rebase on main'",
         "gitstate say ALL 'the hub moves to a new host at noon' --push",
         "gitstate say ana bob - < notes.txt      # the first line is the subject")
@cli.command()
@click.argument("to", nargs=-1, required=True, metavar="TARGET...",
                shell_complete=complete.agent)
@click.argument("message", metavar="MESSAGE")
@push_option
@json_option
def say(to, message, push, as_json):
    """Send MESSAGE to each TARGET (an agent's id, several, or ALL) in one commit that changes
    no file: `to @ana: MESSAGE`, read by `gitstate inbox ana`. From an agent's session
    (GITSTATE_AGENT) it says who speaks: `@bob: to @ana: MESSAGE`. MESSAGE `-` is read from
    stdin; its first line is the subject, the rest the body. Nothing staged is taken."""
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


@example('gitstate sync', 'gitstate sync --no-push --json')
@cli.command()
@click.option("--push/--no-push", default=True,
              help="Land each replayed move on the hub (default), or only replay them here.")
@json_option
def sync(push, as_json):
    """Get back in step with the hub: replay this branch's unlanded moves (and those kept on
    gitstate/unlanded/* branches) onto the upstream tip, deciding each again from the new
    state, and land them. A rebase or merge left waiting is aborted first."""
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
        where = f"  [from {m['source']}]" if m["source"] != r["branch"] else ""
        head = f"{m['commit'][:10]} {m['subject']}{where}"
        if m["outcome"] in ("landed", "replayed"):
            how = {"already": f"already on {r['upstream']}",
                   "re-decided": "decided again from the new state"}.get(m["how"] or "",
                                                                        m["how"] or "")
            new = f" as {m['new'][:10]}" if m["new"] else ""
            place = f" on {r['upstream']}" if m["outcome"] == "landed" else " here"
            click.echo(f"{m['outcome']}{new}{place} ({how}): {head}")
            if m["reason"] and m["how"] != "already":
                click.echo(f"  {m['reason']}")
        else:
            kept = f"; kept on branch {m['kept']}" if m["kept"] else ""
            click.echo(f"gitstate: {m['outcome']}: {head}\n  {m['reason']}{kept}", err=True)
    if r["skipped_merges"]:
        click.echo(f"merges not replayed (their parents were): "
                   f"{', '.join(s[:10] for s in r['skipped_merges'])}")
