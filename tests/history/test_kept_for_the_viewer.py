"""What the viewer keeps under .git/gitstate besides the index: every agent's context at each
change of its state file, and every hand-over of a role. Read on from the saved tip, each
equals a read from nothing, and a rewritten history is read again."""

from __future__ import annotations

import shutil

from conftest import git, gitstate, repo_with, walk
from gitstate.git.repo import open_managed
from gitstate.history.contexts import context_of, contexts
from gitstate.history.handovers import handovers


def _team(repo):
    assert gitstate(repo, "spawn", "alice", "--role", "architect",
                    "--set", "context_pct=10").returncode == 0
    assert gitstate(repo, "spawn", "bob").returncode == 0


def read(repo):
    managed = open_managed(str(repo))
    head = managed.git.head()
    lc = managed.lifecycle(head)
    return (contexts(managed.git, lc, head, managed.cache_dir),
            handovers(managed.git, lc, head, managed.cache_dir))


def test_contexts_and_handovers_read_on_equal_a_read_from_nothing(tmp_path):
    repo = repo_with(tmp_path, "kept-viewer", _team)
    first, hands = read(repo)
    assert [c[2] for c in first["alice"]] == [10.0] and hands == []
    assert (repo / ".git" / "gitstate" / "contexts.json").is_file()
    assert gitstate(repo, "transition", "alice", "inbox", "--set",
                    "context_pct=42.5").returncode == 0
    walk(repo, "alice", "distill")                   # the file changes, its context does not
    res = gitstate(repo, "handover", "architect", "--to", "bob")
    assert res.returncode == 0, res.stderr
    warm = read(repo)
    shutil.rmtree(repo / ".git" / "gitstate")
    cold = read(repo)
    assert warm == cold
    ctx, hands = cold
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert [c[2] for c in ctx["alice"]] == [10.0, 42.5, 42.5, 42.5]
    assert [(h["role"], h["from"], h["to"], h["commit"]) for h in hands] == \
        [("architect", "alice", "bob", head)]
    git(repo, "reset", "-q", "--hard", "HEAD~2")                  # history rewritten
    ctx, hands = read(repo)
    assert hands == [] and [c[2] for c in ctx["alice"]] == [10.0, 42.5]
    assert ctx["alice"][-1][0] == git(repo, "rev-parse", "HEAD").stdout.strip()


def test_context_is_read_only_from_the_front_matter():
    assert context_of(b"---\nagent: a\ncontext_pct: 40\n---\n") == 40.0
    assert context_of(b"---\ncontext_pct: 91.5\n---\n") == 91.5
    assert context_of(b"---\nstate: x\n---\ncontext_pct: 9\n") is None
    assert context_of(b"---\ncontext_pct: '40'\n---\n") is None
    assert context_of(b"---\ncontext_pct: true\n---\n") is None
    assert context_of(b"no front matter") is None and context_of(None) is None
