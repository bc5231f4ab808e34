"""Setting up and looking after a repository: init, presets, lifecycle, check, hook."""

from __future__ import annotations

import os

import click

from gitstate.cli.app import cli, directory_of, json_option, json_out, open_repo
from gitstate.errors import EXIT_REJECTED, GitstateError


def _preset_lifecycle(name: str):
    from gitstate.law.load import load_lifecycle
    from gitstate.resources import preset_dir
    return load_lifecycle((preset_dir(name) / "lifecycle.yaml").read_text(encoding="utf-8"),
                          f"{name}/lifecycle.yaml")


def run_init(directory: str | None, lifecycle: str | None = None, *, force: bool = False,
             no_commit: bool = False, server: bool = False, approved_by: str | None = None,
             humans: tuple[str, ...] = (), as_json: bool = False) -> int:
    if server:
        from gitstate.doors.hub import init_server
        report = init_server(directory, lifecycle)
    else:
        from gitstate.doors.install import init as do_init
        report = do_init(directory, lifecycle, force=force, commit=not no_commit,
                         approved_by=approved_by, humans=tuple(humans))
    if as_json:
        json_out(report.__dict__)
        return 0
    for line in report.actions:
        click.echo(f"  {line}")
    click.echo(f"managed with lifecycle '{report.lifecycle}'; hooks in {report.hooks_dir}"
               + ("" if report.actions else " (nothing to change)"))
    return 0


@cli.command()
@click.option("--lifecycle", "lifecycle", metavar="PRESET|FILE", default=None,
              help="A shipped preset (see `gitstate presets`) or a lifecycle.yaml file. "
                   "Default: keep the repository's, or 'haak'.")
@click.option("--force", is_flag=True, help="Replace an existing lifecycle and protocol docs.")
@click.option("--no-commit", is_flag=True, help="Write the files but do not commit them.")
@click.option("--server", is_flag=True, help="Install the pre-receive hook in a bare hub.")
@click.option("--human", "humans", multiple=True, metavar="NAME",
              help="Who may approve gated moves (policies.humans of a new lifecycle).")
@click.option("--approved-by", default=None, metavar="HUMAN",
              help="Approve a change of the law (lifecycle, shims) in a managed repository.")
@json_option
@click.pass_context
def init(ctx, lifecycle, force, no_commit, server, humans, approved_by, as_json):
    """Make this repository managed (idempotent)."""
    return run_init(directory_of(ctx), lifecycle, force=force, no_commit=no_commit,
                    server=server, approved_by=approved_by, humans=humans, as_json=as_json)


@cli.command()
@json_option
def presets(as_json):
    """List the shipped lifecycles."""
    from gitstate.resources import presets as names

    rows = []
    for name in names():
        lc = _preset_lifecycle(name)
        rows.append({"name": name, "description": lc.description, "initial": lc.initial,
                     "states": list(lc.states), "default": name == "haak"})
    if as_json:
        json_out(rows)
        return 0
    for r in rows:
        mark = " (default)" if r["default"] else ""
        click.echo(f"{r['name']}{mark}: {r['description']}")
        click.echo(f"    states: {', '.join(r['states'])}")
    return 0


def run_lifecycle(directory: str | None, *, mermaid: bool = False, preset: str | None = None,
                  as_json: bool = False) -> int:
    from gitstate.law.diagram import describe, to_mermaid

    lc = _preset_lifecycle(preset) if preset else open_repo(directory).lifecycle()
    if as_json:
        json_out(lc.to_dict())
    else:
        click.echo(to_mermaid(lc) if mermaid else describe(lc), nl=False)
    return 0


@cli.command()
@click.option("--mermaid", is_flag=True, help="Draw it as a Mermaid state diagram.")
@click.option("--preset", default=None, help="Show a shipped preset instead of this repo's.")
@json_option
@click.pass_context
def lifecycle(ctx, mermaid, preset, as_json):
    """Show (or draw) this repository's lifecycle."""
    return run_lifecycle(directory_of(ctx), mermaid=mermaid, preset=preset, as_json=as_json)


@cli.command()
@json_option
@click.pass_context
def check(ctx, as_json):
    """Validate the lifecycle and every _state.md in the work tree."""
    from gitstate.cli.models import Problem
    from gitstate.doors.check import check_worktree
    problems = [Problem.from_violation(v) for v in check_worktree(open_repo(directory_of(ctx)))]
    if as_json:
        json_out({"ok": not problems, "problems": [p.as_json() for p in problems]})
    else:
        for p in problems:
            where = f"{p.file}:{p.line}" if p.line else p.file
            click.echo(f"[{p.rule}] {where}: {p.message}")
        click.echo("ok: lifecycle and state files are valid" if not problems
                   else f"{len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return EXIT_REJECTED if problems else 0


def run_session_start(directory: str | None, agent: str | None) -> int:
    """What an agent needs first: where it stands, which roles are vacant, what awaits it."""
    from gitstate.cli.views import run_status
    from gitstate.history.fold import vacancy_notice
    from gitstate.history.views import inbox as build_inbox, vacant_roles

    agent = agent or os.environ.get("GITSTATE_AGENT")
    if not agent:
        click.echo("gitstate: no agent given (--agent ID or $GITSTATE_AGENT); "
                   "showing everyone", err=True)
    run_status(directory, agent or None)
    repo = open_repo(directory)
    notices = [vacancy_notice(v) for v in vacant_roles(repo)["vacancies"]]
    if notices:
        click.echo("Vacant roles (register with --role to take one):")
        for n in notices:
            click.echo(f"  {n}")
    if agent:
        waiting = build_inbox(repo, agent)["messages"]
        click.echo(f"Inbox: {len(waiting)} message{'s' if len(waiting) != 1 else ''} "
                   f"waiting (`gitstate inbox {agent}`)")
    return 0


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name")
@click.option("--agent", default=None, help="For runtime hooks: which agent (or $GITSTATE_AGENT).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def hook(ctx, name, agent, args):
    """Entry points for git hooks (pre-commit, commit-msg, pre-receive) and agent runtimes
    (session-start)."""
    if name in ("pre-commit", "commit-msg", "pre-receive", "post-receive",
                "reference-transaction"):
        from gitstate.doors.hooks import run_hook
        return run_hook(name, list(args))
    if name == "session-start":
        return run_session_start(directory_of(ctx), agent)
    raise GitstateError(f"unknown hook '{name}'", hint="known: pre-commit, commit-msg, "
                        "pre-receive, session-start")


def run_doctor(directory: str | None, *, as_json: bool = False) -> int:
    from gitstate.doors.doctor import diagnose
    findings = diagnose(open_repo(directory))
    failed = any(f["status"] == "fail" for f in findings)
    if as_json:
        json_out({"ok": not failed, "findings": findings})
    else:
        for f in findings:
            click.echo(f"{f['status']:<4}  {f['check']:<9}  {f['detail']}")
            if f["fix"] and f["status"] != "ok":
                click.echo(f"{'':17}-> {f['fix']}")
        click.echo("this clone's doors hold" if not failed else
                   "a door is open: see the lines marked fail")
    return EXIT_REJECTED if failed else 0


@cli.command()
@json_option
@click.pass_context
def doctor(ctx, as_json):
    """Is this clone protected? Hooks active and unmodified, gitstate found, caches sane,
    approvals authenticated, hub and CI."""
    return run_doctor(directory_of(ctx), as_json=as_json)
