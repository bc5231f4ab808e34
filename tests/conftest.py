"""Fixtures: real git in temporary repositories, never the user's HOME or config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Keep the user's git configuration and environment out of every test.
_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                 "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GITSTATE_PYTHON",
                 "GITSTATE_AGENT", "GITSTATE_DEBUG")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for key in _GIT_ENV_DROP:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test Person")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.invalid")
    # The hooks must find this very interpreter (and the gitstate it imports).
    bindir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))
    yield


# A clone without gitstate's hooks (none of them run): how an illegal commit reaches a hub or
# a history that `verify` audits. `--no-verify` alone no longer does: the ref guard still runs.
UNHOOKED = ("-c", "core.hooksPath=/dev/null")


def git(repo: Path, *args: str, check: bool = True, input: str | None = None):
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, input=input,
                          errors="surrogateescape")
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def gitstate(repo: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """Run the real command line in a fresh process, as a user would."""
    return subprocess.run([sys.executable, "-m", "gitstate", *args], cwd=repo,
                          capture_output=True, text=True, input=input, stdin=None if input else
                          subprocess.DEVNULL)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.cleanup", "verbatim")
    git(path, "config", "commit.gpgsign", "false")
    return path


@pytest.fixture
def empty_repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def repo(empty_repo) -> Path:
    """A managed repository (preset haak) with one ordinary commit."""
    (empty_repo / "README").write_text("hello\n")
    git(empty_repo, "add", "README")
    git(empty_repo, "commit", "-q", "-m", "first")
    res = gitstate(empty_repo, "init")
    assert res.returncode == 0, res.stderr
    return empty_repo


def state_path(repo: Path, agent: str) -> Path:
    return repo / "agent" / agent / "_state.md"


def set_state_line(repo: Path, agent: str, key: str, value: str) -> None:
    """Edit one front-matter line by hand, as a user with an editor would."""
    path = state_path(repo, agent)
    lines = path.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(f"{key}:"):
            lines[i] = f"{key}: {value}\n"
            break
    else:
        lines.insert(1, f"{key}: {value}\n")
    path.write_text("".join(lines))


def snapshot(repo: Path) -> tuple:
    """Everything a rejected commit must leave untouched: HEAD, index, work tree status."""
    return (git(repo, "rev-parse", "HEAD", check=False).stdout,
            git(repo, "ls-files", "-s").stdout,
            git(repo, "status", "--porcelain", "--untracked-files=all").stdout,
            git(repo, "diff").stdout, git(repo, "diff", "--cached").stdout)


def walk(repo: Path, agent: str, *states: str) -> None:
    for s in states:
        res = gitstate(repo, "transition", agent, s, "-m", f"to {s}")
        assert res.returncode == 0, res.stderr


def fill_freeze_state(path: Path) -> None:
    """Write something real under every section of a freeze-state template."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join("- written by hand\n" if ln.strip().startswith(("(", "- ("))
                            else ln for ln in lines))


def on_a_terminal(repo: Path, script: str) -> tuple[subprocess.CompletedProcess, bytes]:
    """Run a Python `script` in `repo` with its stderr on a pseudo-terminal, as a person at a
    terminal sees it: (the process, with stdout piped; what the terminal showed)."""
    import pty
    main, child = pty.openpty()
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, stdout=subprocess.PIPE,
                          stderr=child, stdin=subprocess.DEVNULL)
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:      # the terminal's other end is closed: all is read
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    return proc, seen
