"""The moves and messages kept under .git/gitstate as folders of parts (`git/cache.py`,
`history/kept.py`): each agent's part is named by the keyed hash of its bytes; a part that is
torn, edited, forged or missing is never believed (the folder is read again from nothing);
new commits write only the parts they touch; a part an index stops naming stays for one more
write, so that a reader holding that index still finds it."""

from __future__ import annotations

import json
import marshal
from pathlib import Path

import pytest

from conftest import UNHOOKED, git, gitstate, repo_with, walk
from gitstate.git import cache

STRAY = "f" * 64          # a file no index names: only a folder written anew removes it


def _team(repo):
    for agent in ("alice", "bob", "carol"):
        assert gitstate(repo, "spawn", agent).returncode == 0
    walk(repo, "alice", "inbox")
    git(repo, *UNHOOKED, "commit", "-q", "--allow-empty", "-m", "review please @bob, cc @ALL")
    git(repo, *UNHOOKED, "commit", "-q", "--allow-empty", "-m", "@carol: ping @alice")


@pytest.fixture
def team(tmp_path):
    return repo_with(tmp_path, "kept-parts-team", _team)


def answers(repo: Path) -> list:
    """What the kept folders answer, beside what a read of the history (`--at HEAD`) says."""
    out = []
    for args in (["log"], ["log", "bob"], ["log", "-n", "2"], ["inbox", "bob"],
                 ["inbox", "alice"]):
        kept = gitstate(repo, *args, "--json")
        read = gitstate(repo, *args, "--at", "HEAD", "--json")
        assert kept.returncode == read.returncode == 0, kept.stderr + read.stderr
        assert json.loads(kept.stdout) == json.loads(read.stdout), args
        out.append(json.loads(kept.stdout))
    return out


def folder(repo: Path, name: str) -> Path:
    return repo / ".git" / "gitstate" / name


def parts(repo: Path, name: str) -> dict:
    """The parts the index of kept folder `name` names (its seal is the code's to check)."""
    raw = (folder(repo, name) / "index").read_bytes()
    return marshal.loads(raw.partition(b"\n")[2])["parts"]


def files(repo: Path, name: str) -> set[str]:
    return {p.name for p in folder(repo, name).iterdir()} - {"index"}


def each_part_reads_back(repo: Path, name: str) -> bool:
    cache._KEY = None
    return all(cache.part(str(repo / ".git" / "gitstate"), name, file) is not None
               for file in parts(repo, name).values())


@pytest.mark.parametrize("name,key", [("moves", "bob"), ("moves", 0), ("mentions", "bob"),
                                      ("mentions", "all")])
@pytest.mark.parametrize("damage", ["truncated", "edited", "missing", "another's", "index"])
def test_a_damaged_part_is_not_believed_and_is_written_again(team, name, key, damage):
    before = answers(team)
    path = folder(team, name) / parts(team, name)[key]
    other = next(f for k, f in parts(team, name).items() if f != path.name)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:-3])
    elif damage == "edited":       # bob's moves or messages rewritten, the file's name kept
        data = bytearray(path.read_bytes())
        if b"bob" in data:
            data = data.replace(b"bob", b"bib")
        else:
            data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
    elif damage == "missing":      # as a writer two tips on would have left it
        path.unlink()
    elif damage == "another's":    # well-formed, sealed, but not what the index names here
        path.write_bytes((folder(team, name) / other).read_bytes())
    else:
        index = folder(team, name) / "index"
        index.write_bytes(index.read_bytes()[:-10])
    assert answers(team) == before
    assert each_part_reads_back(team, name)


def test_new_commits_write_only_the_parts_they_touch_and_old_parts_go_one_write_later(team):
    answers(team)
    (folder(team, "moves") / STRAY).write_bytes(b"left by a write that did not finish")
    first, first_files = parts(team, "moves"), files(team, "moves")
    walk(team, "bob", "inbox")
    answers(team)
    second = parts(team, "moves")
    changed = {k for k in second if second[k] != first.get(k)}
    assert changed == {"bob", 0}                  # bob's moves and the order's last part
    assert first_files <= files(team, "moves")    # a reader holding the old index finds its
    walk(team, "carol", "inbox")                  # parts until the write after
    answers(team)
    third = parts(team, "moves")
    assert {k for k in third if third[k] != second.get(k)} == {"carol", 0}
    left = files(team, "moves")
    assert first["bob"] not in left and second["bob"] in left and STRAY in left
    git(team, "reset", "-q", "--hard", "HEAD~2")  # rewritten: the folder is written anew
    answers(team)
    assert files(team, "moves") == set(parts(team, "moves").values())


def test_messages_to_one_agent_are_its_part_and_alls(team):
    answers(team)
    assert set(parts(team, "mentions")) == {"bob", "alice", "all"}
    for text, touched, last in (("one more @bob", {"bob"}, "one more @bob"),
                                ("@alice: to @ALL again", {"all"}, "@alice: to @ALL again"),
                                ("@bob: to himself @bob", {"bob"}, "@alice: to @ALL again"),
                                ("to @dan and @bob", {"dan", "bob"}, "to @dan and @bob")):
        git(team, *UNHOOKED, "commit", "-q", "--allow-empty", "-m", text)
        before = parts(team, "mentions")
        inbox = answers(team)[3]
        assert inbox["messages"][-1]["subject"] == last
        after = parts(team, "mentions")
        assert {k for k in after if after[k] != before.get(k)} == touched, text
