"""The console examples of the README and of the documentation site (docs/**/*.md) are run and
compared with what the commands really print, so they cannot drift from the product.

Every ```console block of README.md and of each page is preceded by a marker:

    <!-- example: SESSION -->            run its `$ ` commands in SESSION, in the page's order
    <!-- example: SESSION file PATH -->  (before any block) PATH's content in SESSION now
    <!-- example: skip REASON -->        not run, and why

A session belongs to its page: each page's sessions start afresh. Commands of one session share
a folder (shown as /home/zach) and the folder they `cd` into.
Compared after normalising what changes from run to run: commit ids, dates, durations, runs
of spaces. A line `...` in a block stands for any number of lines.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The README, then every page of the site (the reference pages docs/gen.py writes included).
DOCUMENTS = [README] + sorted((ROOT / "docs").rglob("*.md"))
SHOWN_ROOT = "/home/zach"

# Hidden set-up of a session, run before its first block.
SETUPS = {
    "views": "gitstate demo --dir story > /dev/null && cd story",
}

_MARKED = re.compile(r"<!-- example: (?P<spec>[^\n]*?) -->\n```(?P<lang>[a-z]*)\n(?P<body>.*?)```",
                     re.S)
_NORMAL = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "<sha>"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?Z?)?"), "<time>"),
    (re.compile(r"'<time>'"), "<time>"),
    (re.compile(r"\b(?:\d+[dhms])+\b"), "<dur>"),
    (re.compile(r" +"), " "),
)


def _name(doc: Path) -> str:
    return doc.relative_to(ROOT).as_posix()


def _blocks(doc: Path = README) -> list[dict]:
    text = doc.read_text(encoding="utf-8")
    found = []
    for m in _MARKED.finditer(text):
        kind, _, rest = m["spec"].partition(" ")
        found.append({"line": text.count("\n", 0, m.start()) + 2, "session": kind,
                      "rest": rest.strip(), "lang": m["lang"], "body": m["body"]})
    return found


@pytest.mark.parametrize("doc", DOCUMENTS, ids=_name)
def test_every_console_block_is_marked(doc):
    text = doc.read_text(encoding="utf-8")
    marked = {b["line"] for b in _blocks(doc)}
    unmarked = [text.count("\n", 0, m.start()) + 1
                for m in re.finditer(r"^```console\n", text, re.M)
                if text.count("\n", 0, m.start()) + 1 not in marked]
    assert not unmarked, (f"{_name(doc)} lines {unmarked}: a console block needs a marker "
                          "'<!-- example: SESSION -->' (or 'skip REASON') before it")
    assert all(b["rest"] for b in _blocks(doc) if b["session"] == "skip"), "a skip says why"


def test_the_site_has_examples_that_run():
    """The harness reads the site: the pages that moved out of the README keep their examples."""
    assert len(_sessions()) > 4, _sessions()


def normal(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        for rx, sub in _NORMAL:
            line = rx.sub(sub, line)
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def matches(expected: list[str], actual: list[str]) -> bool:
    """`expected` equals `actual`, a line '...' matching any number of lines."""
    if not expected:
        return not actual
    if expected[0].strip() == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def _commands(body: str) -> list[tuple[str, str]]:
    """(command, the output the README shows for it) for each `$ ` line of a block."""
    out: list[tuple[str, str]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], ""))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + line + "\n")
    return out


class Session:
    def __init__(self, root: Path):
        self.root = root
        self.cwd = root

    def run(self, command: str) -> str:
        where = self.root / ".cwd"
        proc = subprocess.run(["bash", "-c", 'cd "$0" && eval "$1"; pwd > "$2"',
                               str(self.cwd), command, str(where)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True, errors="replace")
        self.cwd = Path(where.read_text().strip())
        return proc.stdout.replace(str(self.root), SHOWN_ROOT)


@pytest.fixture
def zach(monkeypatch):
    """zach's machine: his name in his global git config (a repository's own wins, as the
    demo's does), nothing of the test run's identity in the environment."""
    as_zach(monkeypatch)


def as_zach(monkeypatch) -> None:
    """What the `zach` fixture sets up (the packaging test's tour needs it too)."""
    for role in ("AUTHOR", "COMMITTER"):
        for part in ("NAME", "EMAIL"):
            monkeypatch.delenv(f"GIT_{role}_{part}", raising=False)
    Path(os.environ["GIT_CONFIG_GLOBAL"]).write_text(
        "[user]\n\tname = zach\n\temail = zach@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    monkeypatch.delenv("GITSTATE_CHECK_JSON", raising=False)


def _sessions() -> list[str]:
    """Each session as `PAGE:SESSION`, the pages in the order of DOCUMENTS."""
    return list(dict.fromkeys(f"{_name(doc)}:{b['session']}" for doc in DOCUMENTS
                              for b in _blocks(doc) if b["session"] != "skip"))


@pytest.mark.parametrize("name", _sessions())
def test_readme_examples_are_what_the_commands_print(name, tmp_path, zach):
    page, _, name = name.rpartition(":")
    session = Session(tmp_path)
    if name in SETUPS:
        session.run(SETUPS[name])
    problems, skipped = [], []
    for block in (b for b in _blocks(ROOT / page) if b["session"] == name):
        where = f"{page}:{block['line']}"
        if block["rest"].startswith("file "):
            path = session.cwd / block["rest"][5:]
            if not matches(normal(block["body"]), normal(path.read_text(encoding="utf-8"))):
                problems.append(f"{where}: {block['rest'][5:]} now reads:\n"
                                f"{path.read_text(encoding='utf-8')}")
            continue
        for command, shown in _commands(block["body"]):
            tool = command.split()[0]
            if shutil.which(tool) is None and tool not in ("cd", "sed", "echo"):
                skipped.append(f"{where}: {tool} is not installed")
                continue
            got = session.run(command)
            if not matches(normal(shown), normal(got)):
                problems.append(f"{where}: $ {command}\n--- {page} shows:\n{shown}"
                                f"--- the command printed:\n{got}")
    assert not problems, "\n\n".join(problems)
    if skipped:
        pytest.skip("; ".join(skipped) + " (apt-get install -y sqlite3 runs them)")
