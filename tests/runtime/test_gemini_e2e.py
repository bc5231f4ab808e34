"""The real Gemini CLI (npm @google/gemini-cli, pinned in .ci/npm/package.json) in a git
repository, against a scripted Gemini API on 127.0.0.1 (tests/runtime/scripted_gemini.py),
run by tests/runtime/gemini_harness.py: a shell call's output reaches the model's next
request."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, make_repo
from gemini_harness import run, trust, write_home
from npm_tools import gemini
from scripted_gemini import ScriptedGemini, Turn, outputs, shell, text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def model():
    """One scripted model for the module (each test routes by its own token); without Gemini
    CLI installed, the tests skip before starting anything."""
    gemini()
    server = ScriptedGemini()
    yield server
    server.close()


@pytest.fixture
def home(tmp_path) -> Path:
    path = tmp_path.resolve() / "home"
    write_home(path)
    return path


@pytest.fixture
def repo(tmp_path, home) -> Path:
    path = make_repo(tmp_path.resolve() / "repo")
    (path / "README").write_text("hi\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    trust(home, path)
    return path


def test_a_shell_call_runs_and_its_output_reaches_the_next_request(repo, home, model):
    """The harness itself: the model's call of Gemini CLI's shell tool runs in the repository,
    and what it printed comes back. A command substitution (`$(...)`, even `$((...))`) is
    refused by the tool before it runs: the model reads why."""
    token = model.script("gemini-echo", Turn(shell("echo hi; expr 6 '*' 7 > sum.txt")),
                         Turn(text("saw it")))
    before = list(model.other)
    res = run(gemini(), home, model.url, repo, f"say hi {token}")
    said = model.requests("gemini-echo")
    assert len(said) == 2
    assert not outputs(said[0])
    output = outputs(said[1])["run_shell_command#0"]
    assert "Output: hi\n" in output and "42" not in output
    assert (repo / "sum.txt").read_text() == "42\n"
    assert "saw it" in res.stdout
    assert model.other == before      # nothing but the model's own calls reached the server

    token = model.script("gemini-substitution", Turn(shell("echo $((6*7)) > sub.txt")),
                         Turn(text("refused")))
    run(gemini(), home, model.url, repo, f"compute {token}")
    refused = outputs(model.requests("gemini-substitution")[1])["run_shell_command#0"]
    assert "Command injection detected: command substitution" in refused
    assert not (repo / "sub.txt").exists()


def test_an_untrusted_folder_is_refused_in_a_non_interactive_run(tmp_path, home, model):
    path = make_repo(tmp_path.resolve() / "untrusted")
    token = model.script("gemini-untrusted", Turn(text("hello")))
    res = run(gemini(), home, model.url, path, f"hi {token}", check=False)
    assert res.returncode != 0
    assert "not running in a trusted directory" in res.stderr
    assert model.requests("gemini-untrusted") == []
