"""The command line: parse, call the core, render (text for people, `--json` for agents).

Errors of any command become one message and an exit code (0 done, 1 rejected, 2 usage);
nothing ever prompts.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

import click

from gitstate import __version__
from gitstate.errors import EXIT_REJECTED, EXIT_USAGE, GitstateError

HELP = """gitstate: a git-native lifecycle state machine for AI agents.

Each agent's state is a committed file, agent/<id>/_state.md; every change of state is one
commit tagged [STATE:x]; git hooks refuse illegal moves. Try it:

\b
  gitstate demo                      a scripted multi-agent story in a throwaway repo
  gitstate init                      manage this repository (lifecycle 'haak')
  gitstate spawn alice --role architect
  gitstate transition alice inbox -m "restored"
  gitstate status                    who is where, and what they may do next
"""


def _json_out(data: Any) -> None:
    # Pretty for a person at a terminal; compact (and several times faster) for programs.
    if sys.stdout.isatty():
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        click.echo(json.dumps(data, separators=(",", ":"), default=str))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


@click.group(help=HELP, invoke_without_command=True, context_settings={"max_content_width": 100})
@click.version_option(__version__, prog_name="gitstate")
@click.option("-C", "directory", default=None, metavar="PATH",
              help="Run as if started in PATH.")
@click.pass_context
def cli(ctx: click.Context, directory: str | None) -> None:
    ctx.obj = {"dir": directory}
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def _repo(ctx: click.Context):
    from gitstate.git.repo import open_managed
    return open_managed(ctx.obj.get("dir"))


# ---------------------------------------------------------------------------------------
# Setting up


@cli.command()
@click.option("--lifecycle", "lifecycle", metavar="PRESET|FILE", default=None,
              help="A shipped preset (see `gitstate presets`) or a lifecycle.yaml file. "
                   "Default: keep the repository's, or 'haak'.")
@click.option("--force", is_flag=True, help="Replace an existing lifecycle and protocol docs.")
@click.option("--no-commit", is_flag=True, help="Write the files but do not commit them.")
@click.option("--server", is_flag=True, help="Install the pre-receive hook in a bare hub.")
@json_option
@click.pass_context
def init(ctx, lifecycle, force, no_commit, server, as_json):
    """Make this repository managed (idempotent)."""
    if server:
        from gitstate.doors.hub import init_server
        report = init_server(ctx.obj.get("dir"), lifecycle)
    else:
        from gitstate.doors.install import init as do_init
        report = do_init(ctx.obj.get("dir"), lifecycle, force=force, commit=not no_commit)
    if as_json:
        _json_out(report.__dict__)
        return
    for line in report.actions:
        click.echo(f"  {line}")
    click.echo(f"managed with lifecycle '{report.lifecycle}'; hooks in {report.hooks_dir}"
               + ("" if report.actions else " (nothing to change)"))


@cli.command()
@json_option
def presets(as_json):
    """List the shipped lifecycles."""
    from gitstate.law.lifecycle import load_lifecycle
    from gitstate.resources import preset_dir, presets as names

    rows = []
    for name in names():
        lc = load_lifecycle((preset_dir(name) / "lifecycle.yaml").read_text(encoding="utf-8"),
                            f"{name}/lifecycle.yaml")
        rows.append({"name": name, "description": lc.description, "initial": lc.initial,
                     "states": list(lc.states), "default": name == "haak"})
    if as_json:
        _json_out(rows)
        return
    for r in rows:
        mark = " (default)" if r["default"] else ""
        click.echo(f"{r['name']}{mark}: {r['description']}")
        click.echo(f"    states: {', '.join(r['states'])}")


@cli.command()
@click.option("--mermaid", is_flag=True, help="Draw it as a Mermaid state diagram.")
@click.option("--preset", default=None, help="Show a shipped preset instead of this repo's.")
@json_option
@click.pass_context
def lifecycle(ctx, mermaid, preset, as_json):
    """Show (or draw) this repository's lifecycle."""
    from gitstate.law.lifecycle import load_lifecycle
    from gitstate.law.diagram import describe, to_mermaid

    if preset:
        from gitstate.resources import preset_dir
        lc = load_lifecycle((preset_dir(preset) / "lifecycle.yaml").read_text(encoding="utf-8"),
                            f"{preset}/lifecycle.yaml")
    else:
        lc = _repo(ctx).lifecycle()
    if as_json:
        _json_out(lc.to_dict())
    else:
        click.echo(to_mermaid(lc) if mermaid else describe(lc), nl=False)


# ---------------------------------------------------------------------------------------
# Moving agents


def _print_move(result, as_json: bool) -> None:
    info = result.plan.info
    if as_json:
        _json_out({"commit": result.sha, "agent": info["agent"], "from": info["from"],
                   "to": info["to"], "path": info["path"],
                   "subject": result.plan.message.split("\n", 1)[0]})
    else:
        frm = f"{info['from']} -> " if info["from"] else ""
        click.echo(f"{info['agent']}: {frm}{info['to']}  ({result.sha[:10]})")


@cli.command()
@click.argument("agent")
@click.option("--role", default=None, help="The role this agent holds.")
@click.option("--model", default=None, help="The model behind the agent.")
@click.option("--parent", "parent", default=None, help="The agent that spawned this one.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Set a front-matter key.")
@click.option("-m", "--message", "text", default=None, help="Text of the commit subject.")
@json_option
@click.pass_context
def spawn(ctx, agent, role, model, parent, sets, text, as_json):
    """Register AGENT in the initial state (one commit)."""
    from gitstate.moves.agent import parse_sets, spawn as do_spawn
    result = do_spawn(_repo(ctx), agent, role=role, model=model, parent_agent=parent,
                      sets=parse_sets(sets), text=text)
    _print_move(result, as_json)


@cli.command()
@click.argument("agent")
@click.argument("state")
@click.option("-m", "--message", "text", default=None, help="Text of the commit subject.")
@click.option("--body", default="", help="A longer commit body (may @mention agents).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Set a front-matter key.")
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="Add 'Approved-by: HUMAN' for moves that need approval.")
@click.option("--push", is_flag=True, help="Also push to the hub (not yet available).")
@json_option
@click.pass_context
def transition(ctx, agent, state, text, body, sets, approved_by, push, as_json):
    """Move AGENT to STATE: one atomic commit of its state file and whatever is staged."""
    from gitstate.moves.agent import parse_sets, transition as do_transition
    if push:
        raise GitstateError("--push is not available yet", hint="commit, then `git push`")
    result = do_transition(_repo(ctx), agent, state, text=text, sets=parse_sets(sets),
                           approved_by=approved_by, body=body)
    _print_move(result, as_json)


@cli.command()
@click.argument("agent")
@click.option("-m", "--message", "text", default=None, help="Text of the commit subject.")
@click.option("--situation", default=None, help="primary_situation for a new freeze-state.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Set a front-matter key.")
@json_option
@click.pass_context
def freeze(ctx, agent, text, situation, sets, as_json):
    """Freeze AGENT: write (or check) data/freeze-states/AGENT.md and freeze, in one commit.

    If the file exists it must have all its sections; if not, the template is written with
    the agent's role and thread filled in (edit it and commit it as a progress update later).
    """
    from gitstate.moves.agent import freeze as do_freeze, parse_sets
    _print_move(do_freeze(_repo(ctx), agent, text=text, situation=situation,
                          sets=parse_sets(sets)), as_json)


@cli.command()
@click.argument("agent")
@click.option("--approved-by", required=True, metavar="HUMAN",
              help="The human (one of the lifecycle's `humans`) who decided to wake it.")
@click.option("--state", default=None, help="Where to wake it to (default: the first living "
                                              "state the lifecycle allows).")
@click.option("-m", "--message", "text", default=None, help="Text of the commit subject.")
@json_option
@click.pass_context
def wake(ctx, agent, approved_by, state, text, as_json):
    """Resume a frozen AGENT; a human's decision (Approved-by)."""
    from gitstate.moves.agent import wake as do_wake
    _print_move(do_wake(_repo(ctx), agent, approved_by, text=text, state=state), as_json)


@cli.command()
@click.argument("agent")
@click.option("--summary", required=True, help="The final summary (required to die).")
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="Needed when the move is gated (e.g. burying a frozen agent in haak).")
@click.option("--transfer-role-to", "transfer_to", default=None, metavar="ID2",
              help="Hand the role to ID2 in the same commit (no vacancy, never two holders).")
@click.option("-m", "--message", "text", default=None, help="Text of the commit subject.")
@json_option
@click.pass_context
def bury(ctx, agent, summary, approved_by, transfer_to, text, as_json):
    """AGENT dies with a final summary; says so when its role falls vacant."""
    from gitstate.history.fold import vacancy_notice
    from gitstate.moves.agent import bury as do_bury
    from gitstate.history.views import vacant_roles
    repo = _repo(ctx)
    result = do_bury(repo, agent, summary, text=text, approved_by=approved_by,
                     transfer_to=transfer_to)
    who = result.plan.info["agent"]
    notices = [vacancy_notice(v) for v in vacant_roles(repo)["vacancies"]
               if v.get("last_holder") == who]
    if as_json:
        info = result.plan.info
        _json_out({"commit": result.sha, "agent": who, "from": info["from"], "to": info["to"],
                   "vacancies": notices})
        return
    _print_move(result, False)
    for n in notices:
        click.echo(n)


@cli.command()
@click.argument("agent")
@json_option
@click.pass_context
def show(ctx, agent, as_json):
    """Print a frozen AGENT's freeze-state: ask it without waking it."""
    from gitstate.law import statefile
    from gitstate.moves.agent import current_state, freeze_state_path
    repo = _repo(ctx)
    _lc, state, front = current_state(repo, agent)
    rel = statefile.as_text(front.get("freeze_state")) or freeze_state_path(agent.lower())
    data = repo.git.cat_files([f"HEAD:{rel}"])[0]
    if data is None:
        raise GitstateError(f"{agent} has no freeze-state committed at {rel} (it is in {state})")
    text = statefile.decode(data, rel)
    if as_json:
        import re
        doc = statefile.parse(text, rel) if text.startswith("---") else None
        parts = re.split(r"^##[ \t]+(.+?)[ \t]*$", doc.body if doc else text, flags=re.M)
        sections = {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
        _json_out({"agent": agent.lower(), "state": state, "path": rel,
                   "front": doc.front if doc else {}, "sections": sections})
    else:
        click.echo(text, nl=False)


@cli.command("await")
@click.argument("agents", nargs=-1, required=True)
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Give up after this long (exit 124).")
@click.pass_context
def await_cmd(ctx, agents, timeout):
    """Block until every AGENT reaches a terminal state, printing each change as it lands.
    Exit 0 when all succeeded, 1 if any failed, 124 on timeout."""
    from gitstate.moves.operations import await_agents
    sys.exit(await_agents(_repo(ctx), list(agents), timeout,
                          lambda line: click.echo(line, nl=True)))


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only list the timed transitions that are due.")
@json_option
@click.pass_context
def sweep(ctx, dry_run, as_json):
    """Commit every timed transition that is due (e.g. idle -> suspended after 30m), as the
    system. The hooks accept such a move only once it is due."""
    from gitstate.moves.operations import due_timeouts, sweep as do_sweep
    repo = _repo(ctx)
    if dry_run or as_json:
        due = due_timeouts(repo)
        if not dry_run:
            do_sweep(repo, lambda line: None)
        if as_json:
            _json_out({"due": due, "committed": not dry_run})
        else:
            for d in due:
                click.echo(f"{d['agent']}: {d['from']} -> {d['to']} is due (after {d['after']})")
        return
    if not do_sweep(repo, click.echo):
        click.echo("nothing is due")


@cli.command()
@click.option("--host", default=None, help="Which host's agents to check (default: this one).")
@click.pass_context
def reap(ctx, host):
    """Mark every living agent of this host whose process (pid) is gone as failed."""
    from gitstate.moves.operations import reap as do_reap
    if not do_reap(_repo(ctx), click.echo, host):
        click.echo("no agent has lost its process")


@cli.command()
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="For agents whose way to rest passes a gated move.")
@click.pass_context
def shutdown(ctx, approved_by):
    """Move every living agent to a frozen or terminal state, children before parents."""
    from gitstate.moves.operations import shutdown as do_shutdown
    skipped = do_shutdown(_repo(ctx), click.echo, approved_by)
    if skipped:
        sys.exit(EXIT_REJECTED)


# ---------------------------------------------------------------------------------------
# Reading


@cli.command()
@click.argument("agent", required=False)
@json_option
@click.pass_context
def status(ctx, agent, as_json):
    """Current state, mortality phase and legal next states (of AGENT, or of everyone)."""
    from gitstate.law.grammar import canonical_id
    from gitstate.cli.models import agent_status

    repo = _repo(ctx)
    head = repo.git.head()
    lc = repo.lifecycle(head)
    if agent:
        agent = canonical_id(agent)
        path = lc.state_path(agent)
        data = repo.git.cat_files([f"{head}:{path}"])[0] if head else None
        if data is None:
            raise GitstateError(f"unknown agent '{agent}': {path} is not committed",
                                hint=f"spawn it with `gitstate spawn {agent}`")
        rows = [agent_status(agent, path, data, lc)]
    else:
        rows = [agent_status(a, lc.state_path(a), d, lc)
                for a, d in sorted(repo.agents_at(lc, head).items())]
    if as_json:
        _json_out([r.as_json() for r in rows] if not agent else rows[0].as_json())
        return
    if not rows:
        click.echo("no agents yet: `gitstate spawn <id>` registers one")
        return
    for r in rows:
        _print_status(r, detailed=bool(agent))


def _print_status(r, detailed: bool) -> None:
    if r.problem and r.state is None:
        click.echo(f"{r.agent}: unreadable state file: {r.problem}")
        return
    bits = [f"{r.agent}: {r.state} ({r.roster})"]
    if r.role:
        bits.append(f"role {r.role}")
    if r.context_pct is not None:
        bits.append(f"context {r.context_pct:g}% {r.phase}")
    click.echo("  ".join(bits))
    if detailed:
        if r.thread:
            click.echo(f"  thread: {r.thread}")
        if r.summary:
            click.echo(f"  summary: {r.summary}")
        click.echo(f"  next: {', '.join(r.next) if r.next else 'nothing (terminal)'}")
        if r.advice:
            click.echo(f"  {r.advice}")
    if r.problem:
        click.echo(f"  problem: {r.problem}")


def _ago(seconds: int | None) -> str:
    if seconds is None:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            rest = seconds % size // {"d": 3600, "h": 60, "m": 1}[unit]
            small = {"d": "h", "h": "m", "m": "s"}[unit]
            return f"{seconds // size}{unit}{rest}{small}" if rest else f"{seconds // size}{unit}"
    return f"{seconds}s"


def _when(ts: int) -> str:
    import datetime
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")


at_option = click.option("--at", default=None, metavar="REV|DATE",
                         help="As it was at a commit, or at a date (time travel).")


@cli.command()
@at_option
@json_option
@click.pass_context
def roster(ctx, at, as_json):
    """Living, freezer and cemetery, derived from git history."""
    from gitstate.history.views import roster as build
    view = build(_repo(ctx), at)
    if as_json:
        _json_out(view)
        return
    groups = [("living", "living"), ("freezer", "freezer"), ("cemetery", "cemetery"),
              ("unknown", "unreadable")]
    everyone = [r for key, _ in groups for r in view.get(key) or []]
    width = max((len(r["agent"]) for r in everyone), default=0)
    for key, title in groups:
        rows = view.get(key) or []
        if not rows:
            continue
        click.echo(f"{title} ({len(rows)})")
        for r in rows:
            bits = [f"  {r['agent']:<{width}}  {r['state'] or '?':<10}"]
            if r.get("role"):
                bits.append(f"{r['role']} #{r.get('instance', 1)}")
            if r.get("context_pct") is not None:
                bits.append(f"{r['context_pct']:g}% {r['phase']}")
            if key == "living" and r.get("thread"):
                bits.append(f"thread {r['thread']}")
            if r.get("seconds_in_state") is not None:
                bits.append(f"{_ago(r['seconds_in_state'])} in state")
            if r.get("freeze_state"):
                bits.append(f"freeze-state {r['freeze_state']}")
            if r.get("final_summary"):
                bits.append(f"\"{r['final_summary']}\"")
            if r.get("problem"):
                bits.append(f"problem: {r['problem']}")
            click.echo("  ".join(bits))
    if not everyone:
        click.echo("no agents yet: `gitstate spawn <id>` registers one")


@cli.command()
@at_option
@json_option
@click.pass_context
def vacancies(ctx, at, as_json):
    """Roles whose holders froze or died, and roles never filled."""
    from gitstate.history.fold import vacancy_notice
    from gitstate.history.views import vacant_roles
    view = vacant_roles(_repo(ctx), at)
    if as_json:
        _json_out(view)
        return
    if not view["vacancies"]:
        click.echo("no vacant roles")
    for v in view["vacancies"]:
        click.echo(vacancy_notice(v))


@cli.command("log")
@click.argument("agent", required=False)
@json_option
@click.pass_context
def log_cmd(ctx, agent, as_json):
    """Transition history (of AGENT, or of everyone), oldest first."""
    from gitstate.history.views import transitions
    rows = transitions(_repo(ctx), agent)
    if as_json:
        _json_out(rows)
        return
    for r in rows:
        move = f"{r['from']} -> {r['to']}" if r["from"] else f"born in {r['to']}"
        click.echo(f"{_when(r['time'])}  {r['commit'][:10]}  {r['agent']}: {move}"
                   + (f"  {r['text']}" if r["text"] else "") + f"  ({r['author']})")
    if not rows:
        click.echo("no state commits yet")


@cli.command()
@click.argument("agent")
@click.option("--mark-read", is_flag=True,
              help="Move the agent's last_read_commit to HEAD (a state commit).")
@json_option
@click.pass_context
def inbox(ctx, agent, mark_read, as_json):
    """Messages to AGENT (@AGENT or @ALL) since its last_read_commit."""
    from gitstate.history.views import inbox as build
    repo = _repo(ctx)
    view = build(repo, agent)
    if mark_read and view["head"] != view["since"]:
        from gitstate.moves.agent import mark_read as do_mark
        result = do_mark(repo, view["agent"], view["head"], len(view["messages"]))
        view["marked_read"] = {"commit": result.sha, "last_read_commit": view["head"]}
    if as_json:
        _json_out(view)
        return
    since = f"since {view['since'][:10]}" if view["since"] else "from the beginning"
    click.echo(f"{view['agent']}: {len(view['messages'])} message"
               f"{'s' if len(view['messages']) != 1 else ''} {since}")
    for m in view["messages"]:
        click.echo(f"  {m['commit'][:10]}  {_when(m['time'])}  {m['subject']}")
        for line in m["body"].splitlines():
            if "@" in line:  # the lines that speak to someone
                click.echo(f"      {line.strip()}")
    if view.get("marked_read"):
        click.echo(f"last_read_commit -> {view['head'][:10]} "
                   f"({view['marked_read']['commit'][:10]})")


@cli.command()
@click.option("--sqlite", "sqlite_path", default=None, metavar="PATH",
              help="Also upsert the graph into this SQLite file (default: data/entities.db).")
@click.option("--no-sqlite", is_flag=True, help="Only print the graph.")
@json_option
@click.pass_context
def situations(ctx, sqlite_path, no_sqlite, as_json):
    """The entity graph of agent sessions, from history; written to SQLite too."""
    from gitstate.history.entities import graph, write_sqlite
    repo = _repo(ctx)
    data = graph(repo)
    if not no_sqlite:
        path = sqlite_path or str(repo.top / "data" / "entities.db")
        data["sqlite"] = {"path": path, **write_sqlite(data, path)}
    if as_json:
        _json_out(data)
        return
    sessions = [e for e in data["entities"] if e["id"].startswith("situation:session-")]
    for e in sessions:
        links = [b for b in data["belongings"] if b["owner"] == e["id"]]
        bits = [f"{b['quality']} {b['member']}" for b in links if b["quality"] != "description"]
        click.echo(f"{e['id']}  [{e['quality'] or '?'}]  {e['started_at'] or '?'} .. "
                   f"{e['ended_at'] or '?'}" + (f"  ({', '.join(bits)})" if bits else ""))
    if "sqlite" in data:
        s = data["sqlite"]
        click.echo(f"wrote {s['path']}: {s['entities']} entities, {s['belongings']} belongings")


@cli.command()
@click.argument("revs", nargs=-1, metavar="[RANGE]")
@json_option
@click.pass_context
def verify(ctx, revs, as_json):
    """Replay history (default: all of HEAD's) through the hooks' rules; flag every commit
    that broke them, e.g. one made with `git commit --no-verify`."""
    from gitstate.history.verify import describe_problem, verify as run
    repo = _repo(ctx)
    head = repo.git.head()
    if head is None:
        problems, judged = [], 0
    elif revs:
        problems, judged = run(repo.git, list(revs), repo.cache_dir)
    else:
        problems, judged = run(repo.git, [head], repo.cache_dir, remember=True)
    if as_json:
        _json_out({"ok": not problems, "problems": problems, "judged": judged})
    else:
        for p in problems:
            click.echo(describe_problem(p))
        bad = len({p["commit"] for p in problems})
        click.echo(f"{bad} commit{'s' if bad != 1 else ''} broke the rules" if problems
                   else "ok: every commit follows the lifecycle")
    if problems:
        sys.exit(EXIT_REJECTED)


@cli.command()
@json_option
@click.pass_context
def check(ctx, as_json):
    """Validate the lifecycle and every _state.md in the work tree."""
    from gitstate.doors.check import check_worktree
    problems = check_worktree(_repo(ctx))
    if as_json:
        _json_out({"ok": not problems, "problems": [p.as_json() for p in problems]})
    else:
        for p in problems:
            where = f"{p.file}:{p.line}" if p.line else p.file
            click.echo(f"[{p.rule}] {where}: {p.message}")
        click.echo("ok: lifecycle and state files are valid" if not problems
                   else f"{len(problems)} problem{'s' if len(problems) != 1 else ''}")
    if problems:
        sys.exit(EXIT_REJECTED)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name")
@click.option("--agent", default=None, help="For runtime hooks: which agent (or $GITSTATE_AGENT).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def hook(ctx, name, agent, args):
    """Entry points for git hooks (pre-commit, commit-msg, pre-receive) and agent runtimes
    (session-start)."""
    import os
    if name in ("pre-commit", "commit-msg", "pre-receive"):
        from gitstate.doors.hooks import run_hook
        sys.exit(run_hook(name, list(args)))
    if name == "session-start":
        # What an agent needs first: where it stands, which roles are vacant, what awaits it.
        from gitstate.history.fold import vacancy_notice
        from gitstate.history.views import inbox as build_inbox, vacant_roles
        agent = agent or os.environ.get("GITSTATE_AGENT")
        if not agent:
            click.echo("gitstate: no agent given (--agent ID or $GITSTATE_AGENT); "
                       "showing everyone", err=True)
        ctx.invoke(status, agent=agent or None, as_json=False)
        repo = _repo(ctx)
        notices = [vacancy_notice(v) for v in vacant_roles(repo)["vacancies"]]
        if notices:
            click.echo("Vacant roles (register with --role to take one):")
            for n in notices:
                click.echo(f"  {n}")
        if agent:
            waiting = build_inbox(repo, agent)["messages"]
            click.echo(f"Inbox: {len(waiting)} message{'s' if len(waiting) != 1 else ''} "
                       f"waiting (`gitstate inbox {agent}`)")
        return
    raise GitstateError(f"unknown hook '{name}'", hint="known: pre-commit, commit-msg, "
                        "pre-receive, session-start")


@cli.command()
@click.option("--dir", "directory", default=None, type=click.Path(file_okay=False),
              help="Where to make the throwaway repository (default: a new temp folder).")
@click.option("--preset", default=None, help="Tell the story of this preset (default: haak).")
def demo(directory, preset):
    """Run a scripted multi-agent story in a throwaway repository and show the result."""
    from gitstate.cli.demo import run_demo
    if preset is not None:
        from gitstate.resources import preset_dir
        preset_dir(preset)   # a clear error for an unknown name
    sys.exit(run_demo(directory, preset))


# ---------------------------------------------------------------------------------------


def main(args: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if args is None else args)
    as_json = "--json" in args
    try:
        rv = cli.main(args=args, prog_name="gitstate", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except click.Abort:
        return EXIT_REJECTED
    except GitstateError as exc:
        if as_json:
            _json_out(exc.to_dict())
        click.echo(f"gitstate: {exc}", err=True)
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug of ours: say so plainly; the traceback is opt-in
        import os
        if os.environ.get("GITSTATE_DEBUG"):
            raise
        click.echo(f"gitstate: internal error: {type(exc).__name__}: {exc}\n"
                   "  (set GITSTATE_DEBUG=1 to see the traceback; please report it)", err=True)
        return EXIT_REJECTED
