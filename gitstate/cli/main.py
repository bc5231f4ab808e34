"""`gitstate` on the command line: every command family registered on the click group, and
errors turned into a message and an exit code."""

from __future__ import annotations

import sys

import click

from gitstate.cli.app import cli, json_out, report_error
from gitstate.errors import EXIT_REJECTED, EXIT_USAGE, GitstateError

# Which module registers each command: a command's run imports just its own module (a read
# such as `roster` never loads the modules of moves, the demo or the viewer); help, completion
# and a mistyped name import them all. tests/cli/test_cli.py keeps this in step.
COMMANDS = {
    **dict.fromkeys(("spawn", "transition", "freeze", "wake", "bury", "handover", "assume",
                     "logout", "say", "sync"), "moving"),
    **dict.fromkeys(("await", "sweep", "reap", "watch", "shutdown", "team"), "operating"),
    **dict.fromkeys(("init", "presets", "lifecycle", "check", "hook", "doctor", "schema",
                     "hub"),
                    "setup"),
    **dict.fromkeys(("status", "roster", "vacancies", "log", "board", "inbox", "show",
                     "situations", "verify", "attention"), "reading"),
    "demo": "demo", "mcp": "runtimes", "serve": "web", "site": "web", "worktree": "worktree",
}
FAMILIES = ("demo", "moving", "operating", "runtimes", "setup", "reading", "web", "worktree")


def register(args: list[str]) -> None:
    """Import the command modules `args` need (they register themselves on the group)."""
    import importlib
    import os
    name = _command_name(args)
    family = COMMANDS.get(name) if name and "_GITSTATE_COMPLETE" not in os.environ else None
    for module in (family,) if family else FAMILIES:
        importlib.import_module(f"gitstate.cli.{module}")


def _command_name(args: list[str]) -> str | None:
    """The command `args` run: the first word that is neither an option nor `-C`'s path."""
    i = 0
    while i < len(args):
        if args[i] == "-C":
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return args[i]
    return None


def main(args: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if args is None else args)
    register(args)
    as_json = "--json" in args
    from gitstate.history import progress
    if not as_json and sys.stderr.isatty():
        progress.enable(sys.stderr)
    try:
        return _run(args, as_json)
    finally:
        progress.done()


def _run(args: list[str], as_json: bool) -> int:
    try:
        rv = cli.main(args=args, prog_name="gitstate", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        return _usage_error(exc, as_json)
    except click.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):   # Ctrl-C, as click reports it
            click.echo("gitstate: interrupted (what was committed before stays as it is)",
                       err=True)
            return 130
        return EXIT_REJECTED
    except GitstateError as exc:
        return report_error(exc, as_json)
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


def _usage_error(exc: click.ClickException, as_json: bool) -> int:
    if as_json:   # a program asked for JSON: it gets JSON, whatever went wrong
        json_out({"error": "UsageError", "message": exc.format_message(), "where": None,
                  "hint": "see `gitstate --help`"})
    else:
        exc.show()
    return EXIT_USAGE
