"""verify reads a line's commits as `git log --reverse --first-parent --raw` gives them, but
named to git a batch at a time (`history/commits.py`): the same commits, parents and changes,
merges included, whatever the batch."""

from __future__ import annotations

import pytest

from conftest import UNHOOKED, git, make_repo


def _history(repo):
    """A line with an empty root, files added and changed, and a merge of a side branch."""
    git(repo, *UNHOOKED, "commit", "-q", "--allow-empty", "-m", "root")
    for name in ("a", "b"):
        (repo / name).write_text(name)
        git(repo, "add", name)
        git(repo, *UNHOOKED, "commit", "-q", "-m", f"add {name}")
    git(repo, "switch", "-q", "-c", "side")
    (repo / "c").write_text("c")
    git(repo, "add", "c")
    git(repo, *UNHOOKED, "commit", "-q", "-m", "side c")
    git(repo, "switch", "-q", "-")
    (repo / "a").write_text("a2")
    git(repo, *UNHOOKED, "commit", "-q", "-am", "change a")
    git(repo, *UNHOOKED, "merge", "-q", "--no-edit", "side")
    git(repo, "rm", "-q", "b")
    git(repo, *UNHOOKED, "commit", "-q", "-m", "remove b")


@pytest.mark.parametrize("shown", [1, 41 * 2, 41 * 3, 800_000])
def test_a_lines_commits_named_a_batch_at_a_time_read_as_git_log_reads_them(tmp_path,
                                                                            monkeypatch,
                                                                            shown):
    from gitstate.git.runner import Git
    from gitstate.history import commits
    repo = make_repo(tmp_path / "r")
    _history(repo)
    g = Git(str(repo))
    raw = ["-z", "--raw", "--no-abbrev", "--no-renames", "--diff-merges=first-parent",
           "--format=%H %P"]
    logged = [(c.sha, c.parents, c.changes) for c in commits._commits(commits._drained(
        g.stream_batches("log", "--reverse", "--topo-order", *raw, "--first-parent", "HEAD",
                         "--", sep=b"\0")))]
    monkeypatch.setattr(commits, "SHOWN", shown)
    read = [(c.sha, c.parents, c.changes) for c in commits.read_commits(g, ["HEAD"],
                                                                       first_parent=True)]
    assert read == logged and len(read) == 6
    assert [len(p) for _s, p, _c in read] == [0, 1, 1, 1, 2, 1]          # the merge: 2 parents
    assert read[4][2] == [("c", None, read[4][2][0][2], "100644")]        # against its first
    assert read[5][2][0][0] == "b" and read[5][2][0][2] is None           # a removal
    since = [c.sha for c in commits.read_commits(g, [read[5][0], "--not", read[3][0]],
                                                 first_parent=True)]
    assert since == [read[4][0], read[5][0]]
