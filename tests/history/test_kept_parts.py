"""The moves and messages kept under .git/gitstate as folders of parts (`git/cache.py`):
the sealed index holds where each agent's part lies and the keyed hash of
its bytes; a part that is torn, edited or missing is never believed (the folder is read again
from nothing); new commits write only the parts they touch, into one new pack; a pack an
index stops naming stays for one more write, so that a reader holding that index still finds
it; packs never hold much more than their index names."""

from __future__ import annotations

import json
import marshal
from pathlib import Path

import pytest

from conftest import UNHOOKED, git, gitstate, repo_with, walk
from gitstate.git import cache

STRAY = "0" * 24 + ".pack"   # a pack no index names (a write that did not finish)


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


def index(repo: Path, name: str) -> dict:
    """The index of kept folder `name` (its seal is the code's to check)."""
    raw = (folder(repo, name) / "index").read_bytes()
    return marshal.loads(raw.partition(b"\n")[2])


def parts(repo: Path, name: str) -> dict:
    return index(repo, name)["parts"]


def files(repo: Path, name: str) -> set[str]:
    return {p.name for p in folder(repo, name).iterdir()} - {"index"}


def each_part_reads_back(repo: Path, name: str) -> bool:
    cache._KEY = None
    return all(cache._read_part(str(repo / ".git" / "gitstate"), name, where) is not None
               for where in parts(repo, name).values())


@pytest.mark.parametrize("name,key", [("moves", "bob"), ("moves", 0), ("mentions", "bob"),
                                      ("mentions", "all")])
@pytest.mark.parametrize("damage", ["truncated", "edited", "missing", "index"])
def test_a_damaged_part_is_not_believed_and_is_written_again(team, name, key, damage):
    before = answers(team)
    pack, at, size, _digest = parts(team, name)[key]
    path = folder(team, name) / pack
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        path.write_bytes(data[:at + size - 3])
    elif damage == "edited":       # bob's moves or messages rewritten, the part's place kept
        mine = data[at:at + size]
        if b"bob" in mine:
            data[at:at + size] = mine.replace(b"bob", b"bib")
        else:
            data[at + size // 2] ^= 1
        path.write_bytes(bytes(data))
    elif damage == "missing":      # as a writer two tips on would have left it
        path.unlink()
    else:
        index = folder(team, name) / "index"
        index.write_bytes(index.read_bytes()[:-10])
    assert answers(team) == before
    assert each_part_reads_back(team, name)


def test_new_commits_write_only_the_parts_they_touch_and_old_packs_go_one_write_later(team):
    answers(team)
    (folder(team, "moves") / STRAY).write_bytes(b"left by a write that did not finish")
    writes = [parts(team, "moves")]
    for step in ("inbox", "distill", "deep_work"):
        walk(team, "bob", step)
        answers(team)
        writes.append(parts(team, "moves"))
        assert {k for k in writes[-1] if writes[-1][k] != writes[-2].get(k)} == {"bob", 0}
    packs = [{where[0] for where in w.values()} for w in writes]
    assert len(packs[1] - packs[0]) == 1          # bob's moves and the order's last part,
    left = files(team, "moves")                   # in one new pack
    assert packs[2] <= left and packs[3] <= left  # the pack the last write stopped naming is
    assert not (packs[1] - packs[2]) & left        # still there; the one before is gone
    assert STRAY in left
    old = team / ".git" / "gitstate" / "moves.bin"
    old.write_bytes(b"the moves as one file, as they were kept before")
    git(team, "reset", "-q", "--hard", "HEAD~2")  # rewritten: the folder is written anew
    answers(team)
    assert files(team, "moves") == {where[0] for where in parts(team, "moves").values()}
    assert not old.exists()


def test_packs_hold_at_most_twice_what_their_index_names(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "SLACK", 0)
    cache._KEY = None
    where, identity = str(tmp_path), ["a test"]
    kept = None

    def write(changed: dict) -> dict:
        nonlocal kept
        cache._store_parts(where, "kept", identity, {"tip": "x"}, changed, kept)
        kept = cache._saved(where, "kept", identity, lambda _: True, True)
        assert kept is not None
        held, named = sum(kept["packs"].values()), sum(w[2] for w in kept["parts"].values())
        assert held <= 2 * named
        return kept

    write({"big": b"x" * 1000, "small": b"y" * 10})
    assert len(write({"big": b"z" * 1000})["packs"]) == 2    # the old bytes stay beside small
    first = write({"big": None})                            # twice what is named: one pack
    assert list(first["packs"].values()) == [10]
    assert cache._read_part(where, "kept", first["parts"]["small"]) == b"y" * 10
    assert len(list((tmp_path / "kept").glob("*.pack"))) == 3  # the others go one write later
    write({"small": b"w" * 10})
    assert {p.name for p in (tmp_path / "kept").glob("*.pack")} == \
        set(first["packs"]) | set(kept["packs"])


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


@pytest.mark.parametrize("merged", [False, True])
def test_a_read_from_nothing_held_marshalled_as_it_goes_equals_a_read_of_history(team,
                                                                                 monkeypatch,
                                                                                 merged):
    from gitstate.git.cache import Grouped
    if merged:                   # a merge: the moves are held whole, for their own lines
        git(team, "branch", "side")
        walk(team, "bob", "inbox")
        git(team, "switch", "-q", "side")
        walk(team, "carol", "inbox")
        git(team, "switch", "-q", "main")
        git(team, *UNHOOKED, "merge", "-q", "--no-edit", "side")
    monkeypatch.setattr(Grouped, "BATCH", 2)
    whole = answers(team)
    monkeypatch.setattr(Grouped, "BATCH", 1 << 16)
    import shutil
    shutil.rmtree(team / ".git" / "gitstate")
    assert answers(team) == whole


def test_two_writers_from_one_index_leave_answers_right(team):
    """A writer that read the index before another's write landed writes its own over it:
    the parts each index names are still there, and what is named answers right."""
    answers(team)
    first = (folder(team, "moves") / "index").read_bytes()
    walk(team, "bob", "inbox")
    answers(team)                                   # one writer: from the first index
    (folder(team, "moves") / "index").write_bytes(first)
    walk(team, "carol", "inbox")
    answers(team)                                   # the other, from the same first index
    walk(team, "alice", "distill")
    answers(team)
    assert each_part_reads_back(team, "moves")


def test_the_order_in_many_parts_reads_as_one(team, monkeypatch):
    from gitstate.history import movelog
    monkeypatch.setattr(movelog, "CHUNK", 3)        # 65,536 agent numbers to a part, else
    for agent, state in (("bob", "inbox"), ("carol", "inbox"), ("bob", "distill"), ("", "")):
        answers(team)
        for n in ("4", "7"):
            kept = gitstate(team, "log", "-n", n, "--json")
            read = gitstate(team, "log", "-n", n, "--at", "HEAD", "--json")
            assert json.loads(kept.stdout) == json.loads(read.stdout), n
        if agent:
            walk(team, agent, state)
    assert sorted(k for k in parts(team, "moves") if isinstance(k, int)) == [0, 1, 2]  # 7 moves


@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_the_whole_log_laid_out_a_window_at_a_time_equals_a_read_of_history(team, monkeypatch,
                                                                             size):
    """The whole log is laid out from the kept moves `CHUNK` at a time, each window's moves
    unpacked alone: in the same order, with the same "from", as the history says."""
    import shutil

    from gitstate.cli import printed
    from gitstate.history import movelog
    walk(team, "bob", "inbox")
    walk(team, "alice", "distill")
    answers(team)                                   # the moves kept; now lay the log out
    monkeypatch.setattr(printed, "CHUNK", size)
    for face in ([], ["--json"]):
        for kept in folder(team, "").glob("log-*"):
            shutil.rmtree(kept)
        laid = gitstate(team, "log", *face)
        read = gitstate(team, "log", "--at", "HEAD", *face)
        assert laid.returncode == read.returncode == 0 and laid.stdout == read.stdout != ""
    head = git(team, "rev-parse", "HEAD").stdout.strip()
    from gitstate.git.repo import open_managed
    repo = open_managed(str(team))
    lc = repo.lifecycle(head)
    windows = list(movelog.moves_in_parts(repo.git, lc, head, repo.cache_dir, size))
    whole = movelog.all_moves(repo.git, lc, head, repo.cache_dir)
    assert [row for w in windows for row in w] == whole and len(whole) == 6
    assert all(len(w) == size for w in windows[:-1])
