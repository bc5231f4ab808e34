"""Entry point. `gitstate hook ...` and `gitstate statusline` are dispatched before click is
imported: git runs hooks on every commit, Claude Code its status line after every message, and
each must cost almost nothing."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["hook", "proc-receive"]:    # a pusher of a burst: most only wait for a pass
        from gitstate.doors.queue import proc_receive
        return proc_receive(sys.stdin.buffer, sys.stdout.buffer)
    if args[:1] == ["hook"] and len(args) > 1 and args[1] in _light_hooks():
        from gitstate.doors.hooks import run_hook
        return run_hook(args[1], args[2:])
    if args[:1] == ["statusline"] or args[:2] == ["hook", "statusline"]:
        from gitstate.runtime.claude_code.statusline import (
            run as status,  # after every message: light
        )
        return status(args[1 if args[0] == "statusline" else 2:])
    if args[:1] == ["hook"] and len(args) > 1 and args[1] in _runtime_hooks():
        return _runtime_hook(args[1], args[2:])    # an agent runtime's hook: no click either
    # a view (in text or JSON), or a move: answered without click when it can be
    from gitstate.cli.fast import run as fast
    code = fast(args)
    if code is None:
        from gitstate.cli.fast_moves import run as move
        code = move(args)
    if code is not None:
        return code
    from gitstate.cli.main import main as cli_main
    return cli_main(args)


def _light_hooks() -> frozenset[str]:
    return frozenset({"pre-commit", "commit-msg", "pre-receive", "proc-receive",
                      "post-receive", "reference-transaction", "recover"})


def _runtime_hooks() -> frozenset[str]:
    from gitstate.runtime.registry import hook_names
    return hook_names()


def _runtime_hook(name: str, args: list[str]) -> int:
    """`gitstate hook NAME [--runtime RUNTIME]`: answered by the runtime's own module."""
    from importlib import import_module

    from gitstate.runtime.registry import runtime_of
    return import_module(runtime_of(args).entry).run(name, args)


if __name__ == "__main__":
    sys.exit(main())
