"""Moving one agent: spawn, transition, freeze, wake, bury, and show (a frozen agent's
freeze-state, asked without waking it)."""

from __future__ import annotations

import click

from gitstate.cli import complete
from gitstate.cli.app import cli, directory_of, emit, json_option, message_option, \
    open_repo, push_option, set_option
from gitstate.cli.text import commit_move, print_move
from gitstate.errors import GitstateError


def run_spawn(directory: str | None, agent: str, *, role: str | None = None,
              model: str | None = None, parent: str | None = None, sets=(),
              text: str | None = None, session: str | None = None, task: str | None = None,
              instructions: str | None = None, wait: float | None = None, push: bool = False,
              as_json: bool = False) -> int:
    from gitstate.moves.agent import parse_sets, spawn
    from gitstate.moves.operations import spawn_when_free
    repo, values = open_repo(directory), parse_sets(sets)
    _note_near_role(repo, role)
    if session:
        values["session"] = session   # the runtime's session id: its hooks find the agent
    options = dict(role=role, model=model, parent_agent=parent, sets=values,
                   text=text, task=task, instructions=instructions)
    if wait:
        def move():
            return spawn_when_free(repo, agent, wait, lambda line: click.echo(line, err=True),
                                   **options)
    else:
        def move():
            return spawn(repo, agent, **options)
    return commit_move(repo, agent, move, push=push, as_json=as_json, command="spawn")


def _note_near_role(repo, role: str | None) -> None:
    """A custom role one typo away from a declared one is most likely that one: say so (the
    spawn goes ahead where custom roles are allowed; elsewhere the law refuses it)."""
    if not role:
        return
    from gitstate.law.suggest import closest
    try:
        lc = repo.lifecycle(repo.git.head())
    except GitstateError:
        return
    best = closest(role, lc.roles)
    if role not in lc.roles and best and lc.policies.custom_roles:
        click.echo(f"gitstate: note: '{role}' is not a declared role, so it is a custom one; "
                   f"did you mean '{best}'?", err=True)


@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--role", default=None, shell_complete=complete.role, help="The role this agent holds.")
@click.option("--model", default=None, help="The model behind the agent.")
@click.option("--parent", "parent", default=None, help="The agent that spawned this one.")
@click.option("--session", default=None, metavar="ID",
              help="The agent runtime's session id (recorded as `session:`; the runtime's "
                   "hooks bind that session to this agent).")
@click.option("--task", default=None, help="What the agent is for (kept as `task:`).")
@click.option("--instructions", default=None, help="Its full instructions (`instructions:`).")
@click.option("--wait", default=None, type=click.FloatRange(min=0), metavar="SECONDS",
              help="If the pool is full (max_living), wait up to SECONDS for a free slot.")
@set_option
@message_option
@push_option
@json_option
@click.pass_context
def spawn(ctx, agent, role, model, parent, session, task, instructions, wait, sets, text, push,
          as_json):
    """Register AGENT in the initial state (one commit)."""
    return run_spawn(directory_of(ctx), agent, role=role, model=model, parent=parent,
                     sets=sets, text=text, session=session, task=task,
                     instructions=instructions, wait=wait, push=push, as_json=as_json)


def run_transition(directory: str | None, agent: str, state: str, *, text: str | None = None,
                   body: str = "", sets=(), approved_by: str | None = None, push: bool = False,
                   as_json: bool = False) -> int:
    from gitstate.moves.agent import parse_sets, transition
    repo, values = open_repo(directory), parse_sets(sets)
    return commit_move(repo, agent, lambda: transition(repo, agent, state, text=text,
                                                       sets=values, approved_by=approved_by,
                                                       body=body),
                       push=push, as_json=as_json, command="transition")


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
@click.pass_context
def transition(ctx, agent, state, text, body, sets, approved_by, push, as_json):
    """Move AGENT to STATE: one atomic commit of its state file and whatever is staged."""
    return run_transition(directory_of(ctx), agent, state, text=text, body=body, sets=sets,
                          approved_by=approved_by, push=push, as_json=as_json)


def run_freeze(directory: str | None, agent: str, *, text: str | None = None,
               situation: str | None = None, sets=(), push: bool = False,
               as_json: bool = False) -> int:
    from gitstate.moves.agent import freeze, parse_sets
    repo, values = open_repo(directory), parse_sets(sets)
    return commit_move(repo, agent, lambda: freeze(repo, agent, text=text, situation=situation,
                                                   sets=values),
                       push=push, as_json=as_json, command="freeze")


@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@message_option
@click.option("--situation", default=None, help="primary_situation for a new freeze-state.")
@set_option
@push_option
@json_option
@click.pass_context
def freeze(ctx, agent, text, situation, sets, push, as_json):
    """Freeze AGENT: write (or check) data/freeze-states/AGENT.md and freeze, in one commit.

    If the file exists it must have all its sections; if not, the template is written with
    the agent's role and thread filled in (edit it and commit it as a progress update later).
    """
    return run_freeze(directory_of(ctx), agent, text=text, situation=situation, sets=sets,
                      push=push, as_json=as_json)


def run_wake(directory: str | None, agent: str, approved_by: str, *, state: str | None = None,
             text: str | None = None, push: bool = False, as_json: bool = False) -> int:
    from gitstate.moves.agent import wake
    repo = open_repo(directory)
    return commit_move(repo, agent, lambda: wake(repo, agent, approved_by, text=text,
                                                 state=state),
                       push=push, as_json=as_json, command="wake")


@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--approved-by", required=True, metavar="HUMAN",
              help="The human (one of the lifecycle's `humans`) who decided to wake it.")
@click.option("--state", default=None, help="Where to wake it to (default: the first living "
                                              "state the lifecycle allows).")
@message_option
@push_option
@json_option
@click.pass_context
def wake(ctx, agent, approved_by, state, text, push, as_json):
    """Resume a frozen AGENT; a human's decision (Approved-by)."""
    return run_wake(directory_of(ctx), agent, approved_by, state=state, text=text, push=push,
                    as_json=as_json)


def run_bury(directory: str | None, agent: str, summary: str, *, approved_by: str | None = None,
             transfer_to: str | None = None, text: str | None = None, push: bool = False,
             as_json: bool = False) -> int:
    from gitstate.history.fold import vacancy_notice
    from gitstate.history.views import vacant_roles
    from gitstate.law.grammar import canonical_id
    from gitstate.moves.agent import bury
    repo = open_repo(directory)
    who = canonical_id(agent)
    # the vacancy notice is told after the move, from the history it landed in
    notices: list[str] = []

    def move():
        result = bury(repo, agent, summary, text=text, approved_by=approved_by,
                      transfer_to=transfer_to)
        notices[:] = [vacancy_notice(v) for v in vacant_roles(repo)["vacancies"]
                      if v.get("last_holder") == who]
        return result
    code = commit_move(repo, agent, move, push=push, as_json=as_json,
                       extra={"vacancies": notices}, command="bury")
    if not as_json and code == 0:
        for n in notices:
            click.echo(n)
    return code


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
@click.pass_context
def bury(ctx, agent, summary, approved_by, transfer_to, text, push, as_json):
    """AGENT dies with a final summary; says so when its role falls vacant."""
    return run_bury(directory_of(ctx), agent, summary, approved_by=approved_by,
                    transfer_to=transfer_to, text=text, push=push, as_json=as_json)


def run_show(directory: str | None, agent: str, *, as_json: bool = False) -> int:
    from gitstate.history.views import freeze_state
    from gitstate.law import statefile
    repo = open_repo(directory)
    view = freeze_state(repo, agent)
    if as_json:
        emit("show", view)
    else:
        data = repo.git.cat_files([f"HEAD:{view['path']}"])[0]
        click.echo(statefile.decode(data, view["path"]), nl=False)
    return 0


@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@json_option
@click.pass_context
def show(ctx, agent, as_json):
    """Print a frozen AGENT's freeze-state: ask it without waking it."""
    return run_show(directory_of(ctx), agent, as_json=as_json)


def run_handover(directory: str | None, role: str, to: str, *, giver: str | None = None,
                 text: str | None = None, as_json: bool = False) -> int:
    from gitstate.moves.agent import handover
    print_move(handover(open_repo(directory), role, to, giver=giver, text=text), as_json,
               command="handover", says=f"hands {role} to {to}")
    return 0


@cli.command()
@click.argument("role", shell_complete=complete.role)
@click.option("--to", "to", required=True, metavar="ID", shell_complete=complete.agent,
              help="The agent that takes the role.")
@click.option("--from", "giver", default=None, metavar="ID", shell_complete=complete.agent,
              help="The holder that gives it (default: the one living holder).")
@message_option
@json_option
@click.pass_context
def handover(ctx, role, to, giver, text, as_json):
    """A holder of ROLE hands it to another agent in one commit and keeps working without it
    (trailer `Role-transfer: ROLE -> ID`): the role is never vacant nor held twice."""
    return run_handover(directory_of(ctx), role, to, giver=giver, text=text, as_json=as_json)


def run_logout(directory: str | None, agent: str, note: str, *, text: str | None = None,
               sets=(), as_json: bool = False) -> int:
    from gitstate.moves.agent import parse_sets
    from gitstate.moves.logbook import log_tail, logout
    repo = open_repo(directory)
    result, log = logout(repo, agent, note, text=text, sets=parse_sets(sets))
    print_move(result, as_json, command="logout")
    if not as_json:
        click.echo(f"{log}, last entries:")
        for line in log_tail(repo, log):
            click.echo(f"  {line}")
    return 0


@cli.command()
@click.argument("agent", shell_complete=complete.agent)
@click.option("--note", required=True, help="One line for the shared log: where you stopped.")
@set_option
@message_option
@json_option
@click.pass_context
def logout(ctx, agent, note, sets, text, as_json):
    """Log AGENT out: append its note to the lifecycle's log (era: logout.log) and move to
    the logout state, in one commit."""
    return run_logout(directory_of(ctx), agent, note, text=text, sets=sets, as_json=as_json)
