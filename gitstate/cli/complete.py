"""Shell completion of the names a command takes: agent ids, states and roles, read from the
repository as committed (one `git ls-tree`, the lifecycle from its cache). Enabled by the shell
line of click's completion (docs/reference/commands-at-a-glance.md); a failure completes nothing."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem


def _names(ctx: click.Context, kind: str) -> list[str]:
    from gitstate.git.repo import open_managed
    root = ctx.find_root()
    repo = open_managed(root.params.get("directory"))
    head = repo.head()
    lc = repo.lifecycle(head)
    if kind == "agent":
        return sorted(repo.agent_ids(lc, head))
    return list(lc.states if kind == "state" else lc.roles)


def _completer(kind: str):
    def complete(ctx: click.Context, param, incomplete: str) -> list[CompletionItem]:
        try:
            names = _names(ctx, kind)
        except Exception:   # noqa: BLE001 - a shell's completion must never print a traceback
            return []
        return [CompletionItem(n) for n in names if n.startswith(incomplete)]
    return complete


agent = _completer("agent")
state = _completer("state")
role = _completer("role")
