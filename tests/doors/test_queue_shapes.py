"""The landing queue's replay of a move onto a newer tip on hostile tree shapes: the tree
it lands is what git's three-way merge makes of it, or the move is refused as git's merge
refuses it; never a change of the hub's silently undone."""

from __future__ import annotations

from pathlib import Path

from conftest import git
from hubs import hub_and_clones, pushed
from test_queue import UNHOOKED, hub_tip, queued_push, state_edit


def _gitlink(clone: Path, path: str, commit: str, subject: str) -> None:
    git(clone, "update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")
    git(clone, *UNHOOKED, "commit", "-q", "-m", subject)


def _landed_by_a(a: Path, subject: str, b: Path | None = None) -> None:
    """a commits what it staged (hooks off), pushes it to the hub; b, if given, pulls it."""
    git(a, *UNHOOKED, "commit", "-q", "-m", subject)
    git(a, "push", "-q", "origin", "main")
    if b is not None:
        git(b, "pull", "-q", "--ff-only")


def test_a_queued_move_cannot_undo_the_hubs_change_of_a_submodule_it_also_changes(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    _gitlink(a, "sub", "1" * 40, "a submodule")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--ff-only")
    # b moves alice and points the submodule elsewhere; the hub meanwhile moved it too
    git(b, "update-index", "--cacheinfo", f"160000,{'2' * 40},sub")
    state_edit(b, "alice", "inbox")
    _gitlink(a, "sub", "3" * 40, "the submodule moved on")
    git(a, "push", "-q", "origin", "main")
    code, lines = queued_push(b)
    landed = git(hub, "ls-tree", "main", "sub").stdout.split()[2]
    # git's merge conflicts here: the hub's commit is never silently dropped
    assert landed == "3" * 40, lines
    assert code != 0 and "(gitstate:queue-conflict " in lines[0], lines
    assert hub_tip(hub) == git(a, "rev-parse", "HEAD").stdout.strip()


def test_a_queued_move_editing_a_file_the_hub_made_a_symlink_is_merged_as_git_merges(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (a / "f").write_text("x")
    git(a, "add", "f")
    _landed_by_a(a, "a file", b)
    (b / "f").write_text("../../outside")
    git(b, "add", "f")
    state_edit(b, "alice", "inbox")
    # the hub's side: the same bytes, now a symlink
    blob = git(a, "rev-parse", "HEAD:f").stdout.strip()
    git(a, "update-index", "--cacheinfo", f"120000,{blob},f")
    _landed_by_a(a, "f is a link")
    code, lines = queued_push(b)
    # git's merge: distinct types on each side, a conflict; never a symlink to b's bytes
    assert code != 0 and "(gitstate:queue-conflict " in lines[0], lines
    assert git(hub, "ls-tree", "main", "f").stdout.split()[:3] == ["120000", "blob", blob]


def test_a_queued_move_cannot_undo_the_hubs_change_of_a_file_whose_name_has_a_newline(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (a / "odd\nname").write_text("one\n")
    git(a, "add", "-A")
    _landed_by_a(a, "an odd name", b)
    (b / "odd\nname").write_text("the move's\n")
    git(b, "add", "-A")
    state_edit(b, "alice", "inbox")
    (a / "odd\nname").write_text("the hub's\n")
    git(a, "add", "-A")
    _landed_by_a(a, "the hub's side")
    code, lines = queued_push(b)
    assert git(hub, "show", "main:odd\nname").stdout == "the hub's\n", lines
    assert code != 0 and "(gitstate:queue-conflict " in lines[0], lines
