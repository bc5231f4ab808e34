"""The documentation: a README read in minutes, a site whose reference pages are made from the
declarations they describe (docs/gen.py), built in strict mode (mkdocs.yml), every page in its
navigation. The examples of the README and of every page are run by tests/test_readme.py."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _gen():
    spec = importlib.util.spec_from_file_location("docs_gen", DOCS / "gen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_the_readme_keeps_the_two_commands_for_a_fresh_machine():
    """`.ci/run` runs the second, exactly as the README writes it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    demo = ("python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/gitstate demo")
    suite = ("python3 -m venv .venv && .venv/bin/pip install -q '.[test]' && "
             ".venv/bin/python -m pytest -q")
    assert f"```sh\n{demo}\n```" in readme and f"```sh\n{suite}\n```" in readme
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".venv/bin/python -m pytest -q" in run


def test_the_readmes_links_reach_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", readme)
    assert links and [link for link in links if not (ROOT / link).exists()] == []


def test_the_generated_pages_are_what_the_declarations_make():
    """docs/gen.py --check: the commands, rules, state-file keys, JSON schemas and runtime
    hooks on the site are the code's (run `python docs/gen.py` after changing one)."""
    gen = _gen()
    stale = [path for path, text in gen.made().items()
             if (DOCS / path).read_text(encoding="utf-8") != text]
    assert stale == [], f"run python docs/gen.py: {stale}"


def test_the_commands_page_is_each_commands_help():
    """The reference says what `gitstate CMD --help` says in a terminal 80 columns wide: both
    are made from one declaration."""
    page = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
    env = {**os.environ, "COLUMNS": "80"}
    for argv in (["--help"], ["roster", "--help"], ["worktree", "add", "--help"]):
        shown = subprocess.run([sys.executable, "-m", "gitstate", *argv], capture_output=True,
                               text=True, env=env).stdout.rstrip()
        assert f"```text\n{shown}\n```" in page, argv


def test_every_command_on_the_commands_page_is_its_help(monkeypatch, capsys):
    """Every command and subcommand, through the command line's own entry point."""
    from gitstate.cli.main import main
    monkeypatch.setenv("COLUMNS", "80")
    page = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
    shown = dict(re.findall(r"(?m)^#{2,3} gitstate ?([^\n]*)\n\n(?:[^\n]*\n\n)?```text\n(.*?)\n```",
                            page, re.S))
    assert len(shown) > 30 and {"", "roster", "worktree add", "hook"} <= set(shown)
    wrong = []
    for command, text in shown.items():
        try:
            code = main([*command.split(), "--help"])
        except SystemExit as done:
            code = done.code
        printed = capsys.readouterr().out.rstrip()
        if code not in (0, None) or printed != text:
            wrong.append(command or "gitstate")
    assert wrong == []


def test_the_rules_page_lists_every_rule_with_its_description():
    from gitstate.law.rule_ids import Rule
    page = (DOCS / "reference" / "rules.md").read_text(encoding="utf-8")
    for rule in Rule:
        assert f"| `{rule.value}` | {rule.description.replace('|', chr(92) + '|')} |" in page


def test_every_page_is_in_the_navigation():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def pages(entries):
        for entry in entries:
            for value in (entry.values() if isinstance(entry, dict) else [entry]):
                yield from pages(value) if isinstance(value, list) else [value]

    listed = set(pages(nav))
    written = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert written == listed


def test_the_glossary_defines_the_words_a_newcomer_meets():
    glossary = (DOCS / "glossary.md").read_text(encoding="utf-8")
    for word in ("Preset", "Seed", "Law", "Hub", "Team line", "Mover", "Ref guard",
                 "Mortality phases", "Board"):
        assert f"\n## {word}\n" in glossary, word


def test_the_site_builds_in_strict_mode(tmp_path):
    """`mkdocs build --strict`, as .ci/run builds it: a broken link, a missing page or a page
    left out of the navigation fails."""
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists() or importlib.util.find_spec("material") is None:
        pytest.skip("the site's generator is not installed: pip install '.[docs]' (or "
                    "'.[test]', which includes it)")
    assert subprocess.run([sys.executable, str(DOCS / "gen.py"), "--check"], cwd=ROOT,
                          capture_output=True, text=True).returncode == 0, "run docs/gen.py"
    res = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").exists()

