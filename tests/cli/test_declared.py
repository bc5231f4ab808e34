"""Each command with more than one face is declared once (gitstate/cli/declared.py): its click
command is made from that declaration, with the same parameters and help."""

from __future__ import annotations

from gitstate.cli.declared import DECLARED


def test_each_click_command_is_its_declaration():
    from gitstate.cli import main
    from gitstate.cli.app import cli
    for module in main.FAMILIES:
        __import__(f"gitstate.cli.{module}")
    for name, command in DECLARED.items():
        if "cli" not in command.faces:
            continue
        made = cli.commands[name]
        assert made.help == command.help, name
        assert [p.name for p in made.params] == [p.name for p in command.of("cli")] + [
            "as_json"], name
        helps = {p.name: p.help for p in made.params if getattr(p, "help", None)}
        assert all(helps[p.name] == p.help for p in command.of("cli") if p.flags), name


def test_a_parameter_is_described_one_way_on_every_face():
    wake = {p.name: p for p in DECLARED["wake"].params}
    assert set(wake["state"].faces) == {"cli", "tool"} and wake["state"].help
    for command in DECLARED.values():
        assert command.help and all(p.help for p in command.params), command.name
