"""Write the documentation's reference pages from the declarations they describe, before the
site is built (`python docs/gen.py`; `--check` writes nothing and exits 1 naming each page that
is not what the declarations make, which the suite runs).

- `reference/commands.md`: every command's `--help`, as `gitstate CMD --help` prints it: the
  commands of `gitstate/cli/declared.py` are made from that one declaration, the others from
  their click declaration;
- `reference/rules.md`: the rule ids and what each refuses, from `gitstate/law/rule_ids.py`;
- `reference/state-file.md`: the state file's known keys, from `gitstate/law/statekeys.py`;
- `reference/json-schemas.md`: every `--json` output's JSON Schema, as `gitstate schema`
  prints it;
- in `reference/runtime-hooks.md`, between `<!-- gen: runtime-hooks -->` and
  `<!-- /gen: runtime-hooks -->`: which event of each agent runtime runs which gitstate hook,
  from `gitstate/runtime/registry.py`;
- in `how-to/claude-code.md`, between `<!-- gen: runtime-tables -->` and its end: each
  preset's `runtime:` table, from the shipped lifecycles (`gitstate/law/runtime_table.py` says it).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent
WIDTH = 78   # the width `--help` is shown at on the page: what a terminal 80 columns wide shows
HEAD = "<!-- Made by docs/gen.py from {source}: edit that, not this page. -->\n\n"


def commands() -> str:
    import click

    from gitstate.cli.app import cli
    from gitstate.cli.declared import DECLARED
    from gitstate.cli.main import register
    register([])
    top = cli.make_context("gitstate", [], resilient_parsing=True, terminal_width=WIDTH)
    out = [HEAD.format(source="gitstate/cli/declared.py and the click commands"),
           "# Commands\n\n",
           "Each command's `--help`, made from the same declaration as the command: the "
           "commands with more than one face (the command line, the MCP tool, the fast path) "
           "are declared once in `gitstate/cli/declared.py`, the others by their click "
           "command. [Commands at a glance](commands-at-a-glance.md) says what each is for "
           "in a line, with exit codes and shell completion.\n\n",
           "## gitstate\n\n", _help(cli, top)]

    def walk(group: click.Group, ctx: click.Context, level: int) -> None:
        for name in sorted(group.list_commands(ctx)):
            cmd = group.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            sub = cmd.make_context(name, [], parent=ctx, resilient_parsing=True,
                                   terminal_width=WIDTH)
            path = sub.command_path
            out.append(f"{'#' * level} {path}\n\n")
            if level == 2 and name in DECLARED:
                out.append("Declared in `gitstate/cli/declared.py`.\n\n")
            out.append(_help(cmd, sub))
            if isinstance(cmd, click.Group):
                walk(cmd, sub, level + 1)

    walk(cli, top, 2)
    return "".join(out)


def _help(cmd, ctx) -> str:
    return "```text\n" + cmd.get_help(ctx).rstrip() + "\n```\n\n"


def rules() -> str:
    from gitstate.law.rule_ids import Rule
    rows = "".join(f"| `{r.value}` | {_cell(r.description)} |\n" for r in Rule)
    return (HEAD.format(source="gitstate/law/rule_ids.py") + "# Rules\n\n"
            "Every refusal names its rule: as `[id]` in each message, as `\"rule\": id` under "
            "`--json`. All problems of a commit are reported at once. The rules and what they "
            "refuse, in the order they are declared; [The rules in detail](../explanation/"
            "rules.md) says where each applies and how.\n\n"
            "| rule | refuses |\n|---|---|\n" + rows)


def state_keys() -> str:
    from gitstate.law.statekeys import KEYS
    rows = "".join(f"| `{k.name}` | {k.type or 'any'} | {', '.join(f'`{b}`' for b in k.by)} | "
                   f"{'yes' if k.measured else ''} | {_cell(k.refused or '')} |\n" for k in KEYS)
    return (HEAD.format(source="gitstate/law/statekeys.py") + "# State-file keys\n\n"
            "The keys of `agent/<id>/_state.md`'s front matter that gitstate knows: what each "
            "value must be, and who may set it (`spawn`: gitstate when the agent is born; "
            "`move`: gitstate at every move; `--set`: whoever moves the agent, with `--set "
            "KEY=VALUE`; `defaults`: the lifecycle's `defaults:` for a newborn). A key the system "
            "measures is, under `policies.fourth_wall`, changed only by the runtime's hooks or "
            "a human ([the fourth wall](../explanation/movers.md#the-fourth-wall)). A key not "
            "listed is the team's own: any value, set by anyone, kept byte for byte.\n\n"
            "| key | value | set by | measured | why `--set` may not set it |\n"
            "|---|---|---|---|---|\n" + rows)


def schemas() -> str:
    from gitstate.schema.models import COMMANDS, json_schema
    out = [HEAD.format(source="gitstate schema"), "# JSON schemas\n\n",
           "The JSON Schema of each command's `--json` output, as `gitstate schema COMMAND` "
           "prints it (`error`: a refusal's shape). [Typed JSON](schemas.md) says what all "
           "of them have in common.\n\n"]
    for name in COMMANDS:
        out.append(f"## {name}\n\n```json\n{json.dumps(json_schema(name), indent=2)}\n```\n\n")
    return "".join(out)


def runtime_hooks() -> str:
    from gitstate.runtime.registry import hooks_table
    return "\n".join(hooks_table()) + "\n"


def runtime_tables() -> str:
    """Each preset's `runtime:` table, as `describe` says it (the presets in the order the page
    introduces them)."""
    from gitstate.law.runtime_table import describe
    from gitstate.law.load import load_lifecycle
    from gitstate.resources import shipped
    lines = []
    for name in ("registry", "squad", "maos", "haak", "era"):
        law = load_lifecycle(shipped("protocols", name, "lifecycle.yaml").read_text())
        lines += [name, *describe(law.runtime)]
    return "```text\n" + "".join(line + "\n" for line in lines) + "```\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


PAGES: dict[str, Callable[[], str]] = {
    "reference/commands.md": commands,
    "reference/rules.md": rules,
    "reference/state-file.md": state_keys,
    "reference/json-schemas.md": schemas,
}
PARTS: dict[tuple[str, str], Callable[[], str]] = {
    ("reference/runtime-hooks.md", "runtime-hooks"): runtime_hooks,
    ("how-to/claude-code.md", "runtime-tables"): runtime_tables,
}


def made() -> dict[str, str]:
    """Each generated page's path (under docs/) and the text it should have."""
    pages = {path: make() for path, make in PAGES.items()}
    for (path, name), make in PARTS.items():
        text = pages.get(path) or (DOCS / path).read_text(encoding="utf-8")
        part = re.compile(rf"(<!-- gen: {name} -->\n).*?(<!-- /gen: {name} -->)", re.S)
        if not part.search(text):
            raise SystemExit(f"docs/{path}: no '<!-- gen: {name} -->' ... "
                             f"'<!-- /gen: {name} -->' to fill")
        filled = make()
        pages[path] = part.sub(lambda m, filled=filled: m[1] + filled + m[2], text)
    return pages


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for path, text in made().items():
        target = DOCS / path
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    if check and stale:
        print("not what the declarations make (run python docs/gen.py): "
              + ", ".join(f"docs/{p}" for p in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
