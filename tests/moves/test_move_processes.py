"""What a move costs in git processes (issue 39: a move is what an agent runs most), and that
asking git less changes nothing of what the move does: HEAD read once per command is decided
from again where it moved meanwhile, one `cat-file --batch` kept open reads the index as it
is now, and the staged files that ride along are the ones git puts in the commit."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, gitstate
from hubs import hub_and_clones, pushed

from gitstate.errors import GitstateError
from gitstate.git.repo import open_managed
from gitstate.git.runner import Git, locate_repo
from gitstate.moves import commands

LOCAL_MOVE_MAX = 10    # rev-parse, config, cat-file, diff-index, hash-object, update-index,
#                        write-tree, commit-tree, update-ref, update-index
PUSH_MOVE_MAX = 16     # and: the upstream, how far ahead, push (and its pack-objects), the
#                        remote-tracking ref


def client_git_processes(trace: Path) -> list[list[str]]:
    """The git processes of a command, from git's trace: a hub's (receive-pack and what it
    starts) left out."""
    starts = [e for e in map(json.loads, trace.read_text().splitlines())
              if e["event"] == "start"]
    hub = [e["sid"] for e in starts if any("receive-pack" in a or "upload-pack" in a
                                           for a in e["argv"][:3])]
    return [e["argv"][1:] for e in starts if not any(e["sid"].startswith(h) for h in hub)]


def traced(tmp_path: Path, monkeypatch, repo: Path, *args: str) -> list[list[str]]:
    trace = tmp_path / "trace.json"
    trace.unlink(missing_ok=True)
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    res = gitstate(repo, *args, process=True)
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert res.returncode == 0, res.stderr
    return client_git_processes(trace)


def test_a_local_move_starts_at_most_ten_git_processes(repo, tmp_path, monkeypatch):
    assert gitstate(repo, "spawn", "a1").returncode == 0
    started = traced(tmp_path, monkeypatch, repo, "transition", "a1", "inbox")
    assert len(started) <= LOCAL_MOVE_MAX, started
    assert sum("cat-file" in a for a in started) == 1, started   # one, kept open
    assert sum("rev-parse" in a for a in started) == 1, started  # top, git dir and HEAD
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "@a1: [STATE:inbox] " \
        "bootstrap -> inbox"


def test_a_push_move_starts_at_most_sixteen_git_processes(tmp_path, monkeypatch):
    _hub, (a, _b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    started = traced(tmp_path, monkeypatch, a, "transition", "alice", "inbox", "--push")
    assert len(started) <= PUSH_MOVE_MAX, "\n".join(" ".join(a[-6:]) for a in started)
    assert not any("symbolic-ref" in a for a in started), started   # HEAD's branch: known


def test_a_refusal_from_head_as_first_read_is_decided_again_from_head_now(repo):
    """HEAD read when the command began may be old once the move holds the lock: a move
    refused from it (the agent did not exist yet) is decided again from HEAD as it is."""
    here = open_managed(str(repo), command=True)
    assert here.git.head_read is not None
    assert gitstate(repo, "spawn", "late", process=True).returncode == 0   # meanwhile
    record = commands.transition(here, "late", "inbox")
    here.git.close()
    assert record["from"] == "bootstrap" and record["to"] == "inbox"
    assert git(repo, "rev-parse", "HEAD").stdout.strip() == record["commit"]
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""


def test_a_move_prepared_from_an_old_head_lands_on_head_as_it_is(repo):
    """A move decided from HEAD read when the command began, which another process moved:
    the compare-and-swap refuses it, and it is made again on top of the other's commit."""
    assert gitstate(repo, "spawn", "a1").returncode == 0
    here = open_managed(str(repo), command=True)
    assert gitstate(repo, "spawn", "a2", process=True).returncode == 0   # meanwhile
    theirs = git(repo, "rev-parse", "HEAD").stdout.strip()
    record = commands.transition(here, "a1", "inbox")
    here.git.close()
    assert git(repo, "rev-parse", f"{record['commit']}^").stdout.strip() == theirs
    assert git(repo, "ls-tree", "--name-only", "-r", "HEAD", "agent/a2").stdout.strip()
    assert git(repo, "status", "--porcelain").stdout == ""


def test_the_kept_cat_file_reads_the_index_and_names_as_they_are_now(repo):
    git_, _top, _gdir = locate_repo(repo, command=True)
    (repo / "f.txt").write_text("one\n")
    git(repo, "add", "f.txt")
    assert git_.cat_files([":f.txt", "HEAD:f.txt"]) == [b"one\n", None]
    (repo / "f.txt").write_text("two\n")
    git(repo, "add", "f.txt")                       # a new index, written by another git
    git(repo, "commit", "-q", "-m", "f")             # HEAD moves too
    assert git_.cat_files([":f.txt", "HEAD:f.txt"]) == [b"two\n", b"two\n"]
    blob = git(repo, "hash-object", "-w", "--stdin", input="three\n").stdout.strip()
    assert git_.cat_files([blob]) == [b"three\n"]   # an object written since it started
    git_.close()


def test_the_kept_cat_file_leaves_an_index_named_by_the_caller_to_a_process_of_its_own(
        repo, tmp_path, monkeypatch):
    other = tmp_path / "other-index"
    monkeypatch.setenv("GIT_INDEX_FILE", str(other))
    (repo / "g.txt").write_text("elsewhere\n")
    git(repo, "add", "g.txt")
    git_ = Git(repo)
    git_.command, git_.known_git_dir = True, str(repo / ".git")
    assert git_.cat_files([":g.txt"]) == [b"elsewhere\n"]
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert git_.cat_files([":g.txt"]) == [None]
    git_.close()


def test_what_was_staged_rides_along_and_is_said(repo):
    assert gitstate(repo, "spawn", "a1").returncode == 0
    (repo / "notes.txt").write_text("mine\n")
    git(repo, "add", "notes.txt")
    res = gitstate(repo, "transition", "a1", "inbox", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["also_committed"] == ["notes.txt"]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == [
        "agent/a1/_state.md", "notes.txt"]


def test_a_file_only_intended_to_be_added_does_not_ride_along(repo):
    """`git add -N`: in the index, but no part of a tree git writes; the move does not say it
    committed it (git's own diff of the commit is asked: such an index is not of version 2)."""
    assert gitstate(repo, "spawn", "a1").returncode == 0
    (repo / "later.txt").write_text("not yet\n")
    git(repo, "add", "-N", "later.txt")
    res = gitstate(repo, "transition", "a1", "inbox", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["also_committed"] == []
    assert "later.txt" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD").stdout
    assert git(repo, "ls-files", "later.txt").stdout.strip() == "later.txt"


def test_a_move_whose_branch_was_switched_since_the_command_began_commits_nothing(repo):
    """HEAD's branch read when the command began decides where the move lands (HEAD, or the
    team line from elsewhere): another process switching to a new branch at the same commit
    made the compare-and-swap pass, and the move landed on that branch, not the team line
    (started after the switch, it lands on the team line). Refused: nothing committed."""
    assert gitstate(repo, "spawn", "a1").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    here = open_managed(str(repo), command=True)
    git(repo, "switch", "-q", "-c", "side")                      # meanwhile
    try:
        commands.transition(here, "a1", "inbox")
    except GitstateError as exc:
        assert "side" in exc.message and "nothing was committed" in exc.message
    finally:
        here.git.close()
    assert git(repo, "rev-parse", "main", "side").stdout.split() == [tip, tip]
    assert git(repo, "status", "--porcelain").stdout == ""
    assert gitstate(repo, "transition", "a1", "inbox").returncode == 0   # again: on main
    assert git(repo, "rev-parse", "side").stdout.strip() == tip
    assert git(repo, "rev-parse", "main^").stdout.strip() == tip


def test_a_move_whose_head_was_detached_since_the_command_began_commits_nothing(repo):
    assert gitstate(repo, "spawn", "a1").returncode == 0
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()
    here = open_managed(str(repo), command=True)
    git(repo, "checkout", "-q", "--detach")                      # meanwhile
    try:
        commands.transition(here, "a1", "inbox")
    except GitstateError as exc:
        assert "detached" in exc.message
    finally:
        here.git.close()
    assert git(repo, "rev-parse", "HEAD", "main").stdout.split() == [tip, tip]


def test_a_move_lands_where_head_names_a_branch_through_a_symbolic_ref(repo):
    """HEAD -> refs/heads/alias -> refs/heads/main: git names HEAD's branch `main`, its
    HEAD file `alias`; the move is not taken for one whose HEAD was switched."""
    assert gitstate(repo, "spawn", "a1").returncode == 0
    git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/alias")
    res = gitstate(repo, "transition", "a1", "inbox", process=True)
    assert res.returncode == 0, res.stderr
    assert git(repo, "log", "-1", "--format=%s", "main").stdout.startswith("@a1: [STATE:inbox]")


def test_a_push_move_whose_branch_was_switched_since_it_began_lands_nothing(tmp_path):
    """`--push` takes the upstream of the branch HEAD named when the command began: switched
    meanwhile to a new branch at the same commit, the move was committed there and pushed to
    the hub's main, the local main left behind. Refused: nothing committed, nothing pushed."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    tip = git(a, "rev-parse", "HEAD").stdout.strip()
    here = open_managed(str(a), command=True)
    git(a, "switch", "-q", "-c", "side")                         # meanwhile
    try:
        commands.transition(here, "alice", "inbox", push=True)
    except GitstateError as exc:
        assert "side" in exc.message
    finally:
        here.git.close()
    assert git(a, "rev-parse", "main", "side").stdout.split() == [tip, tip]
    assert git(hub, "rev-parse", "main").stdout.strip() == tip
