"""Operations commit as the system through their own git's environment, never this
process's: the MCP server runs many calls in one process, concurrently."""

from __future__ import annotations

import os

from conftest import git, walk
from gitstate.git.repo import open_managed
from gitstate.moves.agent import transition
from gitstate.moves.operations import SYSTEM, as_system


def test_as_system_commits_as_gitstate_and_leaves_the_process_environment_alone(repo):
    from conftest import gitstate
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox")
    before = dict(os.environ)
    managed = open_managed(str(repo))
    with as_system(managed) as system:
        assert dict(os.environ) == before
        transition(system, "alice", "distill", text="as the system")
        # a move made meanwhile through the person's own repository is the person's
        transition(managed, "alice", "distill", text="as the person", sets={"thread": "x"})
    assert dict(os.environ) == before
    authors = git(repo, "log", "-2", "--format=%an <%ae>|%cn <%ce>").stdout.splitlines()
    assert authors[1] == f"{SYSTEM[0]} <{SYSTEM[1]}>|{SYSTEM[0]} <{SYSTEM[1]}>"
    assert authors[0] == "Test Person <test@example.invalid>|Test Person <test@example.invalid>"
