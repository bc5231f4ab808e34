"""`gitstate` on the command line: every command family registered on the click group, and
errors turned into a message and an exit code."""

from __future__ import annotations

import sys

import click

from gitstate.cli.app import cli, json_out, report_error
from gitstate.errors import EXIT_REJECTED, EXIT_USAGE, GitstateError


def main(args: list[str] | None = None) -> int:
    from gitstate.cli import (demo, moves, operations, runtimes, setup,  # noqa: F401
                              views, web)                            # (they register)

    args = list(sys.argv[1:] if args is None else args)
    as_json = "--json" in args
    try:
        rv = cli.main(args=args, prog_name="gitstate", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        if as_json:   # a program asked for JSON: it gets JSON, whatever went wrong
            json_out({"error": "UsageError", "message": exc.format_message(), "where": None,
                      "hint": "see `gitstate --help`"})
        else:
            exc.show()
        return EXIT_USAGE
    except click.Abort:
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
