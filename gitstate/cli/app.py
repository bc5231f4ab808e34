"""The click group, the options every command shares, and the one place where errors become a
message and an exit code (0 done, 1 rejected, 2 usage); nothing ever prompts.

Each command family lives in its own module (`setup`, `moves`, `operations`, `views`): a
command gets its data from a function below the faces (in gitstate/moves/, gitstate/history/,
gitstate/doors/: the one the MCP tools call too) and prints it, as JSON or as text, returning
its exit code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from gitstate import __version__
from gitstate.errors import GitstateError

HELP = """gitstate: a git-native lifecycle state machine for AI agents.

Each agent's state is a committed file, agent/<id>/_state.md; every change of state is one
commit tagged [STATE:x]; git hooks refuse illegal moves. Try it:

\b
  gitstate demo                      a scripted multi-agent story in a throwaway repo
  gitstate init                      manage this repository (lifecycle 'haak')
  gitstate spawn alice --role architect
  gitstate transition alice inbox -m "restored"
  gitstate status                    who is where, and what they may do next
  gitstate say alice "rebase on main, please"   a message to an agent (or ALL)
"""


def emit(command: str, data: Any) -> None:
    """Print `command`'s `--json` output. With `$GITSTATE_CHECK_JSON` (the tests) its model
    (gitstate.schema) checks it first: building the models costs a command line ~0.3 s, more
    than most views take."""
    import os
    if os.environ.get("GITSTATE_CHECK_JSON"):
        from gitstate.schema.models import validated
        data = validated(command, data)
    json_out(data)


def output(command: str, data: Any, as_json: bool, printer: Callable[[Any], None]) -> None:
    """A command's data: its JSON for programs, or `printer`'s text for people."""
    if as_json:
        emit(command, data)
    else:
        printer(data)


def emit_line(command: str, data: Any) -> None:
    """One compact JSON line of `command` (a round of a stream), checked as `emit` checks."""
    import json
    import os
    if os.environ.get("GITSTATE_CHECK_JSON"):
        from gitstate.schema.models import validated
        data = validated(command, data)
    click.echo(json.dumps(data, separators=(",", ":"), default=str))


def json_out(data: Any) -> None:
    from gitstate.cli.text import json_text
    click.echo(json_text(data), nl=False)


# -- options shared by several commands, declared once -----------------------------------


def example(*lines: str) -> Callable[[Any], Any]:
    """End a command's `--help` with examples (placed above `@cli.command()`; every command
    has some, tests/cli/test_cli.py checks)."""
    def attach(command: Any) -> Any:
        command.epilog = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
        return command
    return attach


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


def declared(name: str) -> Callable[[Callable[..., Any]], click.Command]:
    """The click command declared as `name` in cli/declared.py, run by the function it
    decorates (given its parameters by name, and `as_json`)."""
    from gitstate.cli.declared import DECLARED
    command = DECLARED[name]

    def make(fn: Callable[..., Any]) -> click.Command:
        fn = json_option(fn)
        for param in reversed(command.of("cli")):
            fn = _click_param(param)(fn)
        return example(*command.examples)(cli.command(name, help=command.help)(fn))
    return make


def _click_param(param: Any) -> Callable[[Any], Any]:
    """A declared parameter (cli/declared.py `Param`) as click takes it."""
    from gitstate.cli import complete
    settings: dict[str, Any] = dict(param.click)
    if param.complete:
        settings["shell_complete"] = getattr(complete, param.complete)
    if param.metavar:
        settings["metavar"] = param.metavar
    if not param.flags:
        return click.argument(param.name, required=param.required,
                              nargs=-1 if param.kind is list else 1, **settings)
    settings.update(help=param.help, required=param.required)
    if param.kind is list:
        settings["multiple"] = True
    else:
        settings["default"] = param.default
        settings.update(_click_type(param))
    return click.option(*param.flags, param.name, **settings)


def _click_type(param: Any) -> dict[str, Any]:
    if param.kind is bool:
        return {} if "/" in param.flags[0] else {"is_flag": True}
    if param.least is not None:
        ranged = click.IntRange if param.kind is int else click.FloatRange
        return {"type": ranged(min=param.least)}
    return {} if param.kind is str else {"type": param.kind}


def _shared_options() -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    from gitstate.cli.declared import AT, PUSH
    return _click_param(AT), _click_param(PUSH)


at_option, push_option = _shared_options()   # as the declared commands take them


@click.group(help=HELP, invoke_without_command=True,
             context_settings={"max_content_width": 100, "help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gitstate")
@click.option("-C", "directory", default=None, metavar="PATH",
              help="Run as if started in PATH.")
@click.pass_context
def cli(ctx: click.Context, directory: str | None) -> None:
    import os
    if directory is not None and not os.path.isdir(directory):
        from gitstate.errors import UsageError
        raise UsageError(f"-C {directory}: no such directory")
    ctx.obj = {"dir": directory}
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def directory() -> str | None:
    """Where the command runs: `-C PATH`, or None for here."""
    return click.get_current_context().obj["dir"]


def repo(*, bare_ok: bool = False):
    """The managed repository the command runs in (`bare_ok`: a hub or a mirror will do)."""
    from gitstate.git.repo import open_managed
    return open_managed(directory(), bare_ok=bare_ok)


# -- errors ----------------------------------------------------------------------------------


def report_error(exc: GitstateError, as_json: bool) -> int:
    """The error once: as a JSON object on stdout for a program, else as text on stderr."""
    if as_json:
        json_out(exc.to_dict())   # the model `error` in gitstate.schema
    else:
        click.echo(f"gitstate: {exc}", err=True)
    return exc.exit_code
