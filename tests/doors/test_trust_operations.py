"""`gitstate transition` in the middle of an unfinished git operation
refuses and touches nothing; on a detached HEAD it commits and warns; two legal updates in
the same second both land."""

from __future__ import annotations

import re

import pytest

from conftest import git, gitstate, snapshot
from trusthelp import gs, out, sha, subjects


def _commit_file(repo, name, text, message):
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)


def _fork(repo):
    """c.txt differs on `side` and on main (main checked out)."""
    git(repo, "checkout", "-q", "-b", "side")
    _commit_file(repo, "c.txt", "side\n", "work: side")
    git(repo, "checkout", "-q", "main")
    _commit_file(repo, "c.txt", "main\n", "work: main")


def _merge(repo, tmp_path):
    git(repo, "checkout", "-q", "-b", "side")
    _commit_file(repo, "s.txt", "side\n", "work: side")
    git(repo, "checkout", "-q", "main")
    _commit_file(repo, "m.txt", "main\n", "work: main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")


def _merge_conflict(repo, tmp_path):
    _fork(repo)
    assert git(repo, "merge", "-q", "side", check=False).returncode != 0


def _rebase(repo, tmp_path):
    _fork(repo)
    git(repo, "checkout", "-q", "side")
    assert git(repo, "rebase", "main", check=False).returncode != 0


def _cherry_pick(repo, tmp_path):
    _fork(repo)
    assert git(repo, "cherry-pick", "side", check=False).returncode != 0


def _revert(repo, tmp_path):
    _commit_file(repo, "c.txt", "one\n", "work: one")
    first = sha(repo)
    _commit_file(repo, "c.txt", "two\n", "work: two")
    assert git(repo, "revert", "--no-edit", first, check=False).returncode != 0


def _am(repo, tmp_path):
    _fork(repo)
    patch = tmp_path / "side.patch"
    patch.write_text(git(repo, "format-patch", "-1", "--stdout", "side").stdout)
    assert git(repo, "am", str(patch), check=False).returncode != 0


OPERATIONS = {
    # name: (make it, word that names it, what git keeps while it is unfinished)
    "merge": (_merge, "merge", "MERGE_HEAD"),
    "merge-conflict": (_merge_conflict, "merge", "MERGE_HEAD"),
    "rebase": (_rebase, "rebase", "rebase-merge"),
    "cherry-pick": (_cherry_pick, "cherry-pick", "CHERRY_PICK_HEAD"),
    "revert": (_revert, "revert", "REVERT_HEAD"),
    "am": (_am, "am", "rebase-apply"),
}


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_trust_transition_refuses_during_an_unfinished_operation(repo, tmp_path, op):
    make, word, kept = OPERATIONS[op]
    gs(repo, "spawn", "alice")
    make(repo, tmp_path)
    assert (repo / ".git" / kept).exists(), f"setup: no {op} under way"
    before = snapshot(repo)
    res = gitstate(repo, "transition", "alice", "inbox", "-m", "in the middle")
    text = out(res)
    assert res.returncode == 1, \
        f"transition during an unfinished {op} exited {res.returncode}:\n{text}"
    assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.I), text
    assert re.search(r"abort|continue|finish", text, re.I), \
        f"the refusal does not say how to finish or abort the {op}:\n{text}"
    assert "Traceback" not in text
    assert snapshot(repo) == before, "transition touched HEAD, the index or the work tree"
    assert (repo / ".git" / kept).exists(), f"the unfinished {op} was disturbed"


def test_trust_transition_on_a_detached_head_lands_on_the_team_line(repo):
    """A move made on a detached HEAD is on no branch to be lost with: it lands on the team
    line, and HEAD stays where it was."""
    gs(repo, "spawn", "alice")
    main = sha(repo, "main")
    git(repo, "checkout", "-q", "--detach")
    res = gitstate(repo, "transition", "alice", "inbox", "-m", "detached")
    assert res.returncode == 0, out(res)
    assert "on main" in res.stdout, out(res)
    assert sha(repo, "main^") == main and subjects(repo, "main")[0] == \
        "@alice: [STATE:inbox] detached"
    assert sha(repo, "HEAD") == main


def test_trust_transition_on_a_detached_head_with_its_own_line_commits_and_warns(repo):
    """Where the team line is named elsewhere (a clone's own name for it, absent here), a move
    commits on the detached HEAD, and says it is on no branch."""
    gs(repo, "spawn", "alice")
    main = sha(repo, "main")
    git(repo, "checkout", "-q", "--detach")
    git(repo, "config", "gitstate.teamBranch", "not-here")
    res = gitstate(repo, "transition", "alice", "inbox", "-m", "detached")
    assert res.returncode == 0, out(res)
    assert "detached HEAD" in res.stderr, f"no warning about the detached HEAD:\n{out(res)}"
    assert sha(repo, "HEAD^") == main and subjects(repo)[0] == "@alice: [STATE:inbox] detached"
    assert sha(repo, "main") == main


def test_trust_two_progress_updates_in_the_same_second_both_land(repo):
    gs(repo, "spawn", "alice")
    runs = [gitstate(repo, "transition", "alice", "inbox"),
            gitstate(repo, "transition", "alice", "inbox", "-m", "one"),
            gitstate(repo, "transition", "alice", "inbox", "-m", "two")]
    for res in runs:
        assert res.returncode == 0, out(res)
    assert subjects(repo)[:2] == ["@alice: [STATE:inbox] two", "@alice: [STATE:inbox] one"]
