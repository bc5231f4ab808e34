"""`--push` on a branch that holds commits the hub has not got (a measurement the runtime's
hook committed, a move made without `--push`, one that gave up): they land first, one by one,
as `gitstate sync` lands them, then the new move; when one of them cannot land, the move stops
there and says what landed and what is kept where. Real git, real hooks, real hubs."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from conftest import git, gitstate
from hubs import hub_and_clones, hub_subjects, pushed

from gitstate.cli.text import print_landing


def rev(repo: Path, what: str) -> str:
    return git(repo, "rev-parse", what).stdout.strip()


def side_branches(clone: Path) -> list[str]:
    return git(clone, "branch", "--list", "--format=%(refname:short)",
               "gitstate/unlanded/*").stdout.split()


def local_move(clone: Path, *args: str) -> str:
    res = gitstate(clone, *args)
    assert res.returncode == 0, res.stderr
    return rev(clone, "HEAD")


@pytest.mark.parametrize("kind", ["queue", "retry"])
def test_a_local_move_and_the_new_one_land_in_order(tmp_path, kind):
    hub, (a, b) = hub_and_clones(tmp_path, queue=kind == "queue")
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "spawn", "bob")[0] == 0                   # the hub moved on meanwhile
    earlier = local_move(b, "transition", "alice", "inbox", "-m", "reading")
    (b / "notes.txt").write_text("alice's plan\n")
    git(b, "add", "notes.txt")
    code, out = pushed(b, "transition", "alice", "distill", "-m", "planning")
    assert code == 0 and out["outcome"] == "landed", out
    [e] = out["earlier"]
    assert (e["commit"], e["outcome"], e["agent"]) == (earlier, "landed", "alice"), e
    assert hub_subjects(hub)[:3] == ["@alice: [STATE:distill] planning",
                                     "@alice: [STATE:inbox] reading",
                                     "@bob: [STATE:bootstrap] spawned"]
    assert rev(hub, "main~1") == e["new"]
    assert rev(b, "HEAD") == rev(hub, "main") == out["commit"] == out["move"]["commit"]
    files = git(hub, "show", "--name-only", "--format=", "main").stdout.split()
    assert sorted(files) == ["agent/alice/_state.md", "notes.txt"]   # the work with its move
    assert out["move"]["from"] == "inbox" and out["move"]["to"] == "distill"
    assert git(b, "status", "--porcelain").stdout == "" and side_branches(b) == []
    assert gitstate(hub, "verify", "--no-cache").returncode == 0


def test_the_text_says_what_landed_first(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(b, "spawn", "alice")[0] == 0
    local_move(b, "transition", "alice", "inbox", "-m", "reading")
    res = gitstate(b, "transition", "alice", "distill", "--push")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("landed first on origin/main: @alice: [STATE:inbox] reading")
    assert lines[1].startswith("alice: inbox -> distill") and lines[-1] == "landed on origin/main"
    assert rev(b, "HEAD") == rev(hub, "main")


def test_a_chain_whose_earlier_move_became_illegal_stops_and_keeps_everything(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    earlier = local_move(b, "transition", "alice", "inbox", "-m", "reading")
    assert pushed(a, "bury", "alice", "--summary", "ended by the lead")[0] == 0
    tip = rev(hub, "main")
    (b / "notes.txt").write_text("alice's plan\n")
    git(b, "add", "notes.txt")
    res = gitstate(b, "transition", "alice", "distill", "-m", "planning", "--push", "--json")
    assert res.returncode == 1, res.stderr
    record = json.loads(res.stdout)
    out = record["push"]
    [e] = out["earlier"]
    assert (e["commit"], e["outcome"], e["rule"]) == (earlier, "illegal", "terminal"), e
    assert e["kept"] == "gitstate/unlanded/alice-1"
    assert out["outcome"] == "illegal" and out["kept"] == "gitstate/unlanded/alice-2", out
    assert out["staged"] == ["notes.txt"] and out["commit"] is None
    # nothing landed; the branch is the hub's; every commit is on a side branch
    assert rev(hub, "main") == tip == rev(b, "HEAD")
    assert side_branches(b) == ["gitstate/unlanded/alice-1", "gitstate/unlanded/alice-2"]
    assert git(b, "log", "-1", "--format=%s", "gitstate/unlanded/alice-2").stdout.strip() \
        == "@alice: [STATE:distill] planning"
    assert rev(b, "gitstate/unlanded/alice-1") == earlier
    assert "notes.txt" in git(b, "show", "--name-only", "gitstate/unlanded/alice-2").stdout
    # the move's work is staged again, as a move that did not land leaves it
    assert git(b, "status", "--porcelain").stdout == "A  notes.txt\n"
    assert (b / "notes.txt").read_text() == "alice's plan\n"
    # the text says what did not land, and where each is kept
    said = io.StringIO()
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
        print_landing(record)
    text = said.getvalue()
    assert "did not land (illegal): @alice: [STATE:inbox] reading" in text
    assert "kept on branch gitstate/unlanded/alice-1" in text
    assert "kept on branch gitstate/unlanded/alice-2" in text


def test_work_commits_stay_here_on_top_of_the_landed_moves(tmp_path):
    """A commit that moves no agent is replayed after the moves and left for `git push`, as
    `gitstate sync` leaves it: the hub's queue lands moves."""
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(b, "spawn", "alice")[0] == 0
    (b / "src.py").write_text("print('work')\n")
    git(b, "add", "src.py")
    git(b, "commit", "-q", "-m", "plain work")
    work = rev(b, "HEAD")
    code, out = pushed(b, "transition", "alice", "inbox")
    assert code == 0 and out["outcome"] == "landed", out
    [e] = out["earlier"]
    assert (e["commit"], e["outcome"], e["agent"]) == (work, "replayed", None), e
    assert "not pushed" in e["reason"]
    assert hub_subjects(hub)[0] == "@alice: [STATE:inbox] bootstrap -> inbox"
    assert rev(b, "HEAD~1") == rev(hub, "main") == out["commit"]
    assert git(b, "log", "-1", "--format=%s").stdout.strip() == "plain work"
    assert rev(b, "HEAD") == e["new"] and (b / "src.py").is_file()
    assert git(b, "status", "--porcelain").stdout == ""


def test_once_an_earlier_move_does_not_land_the_rest_is_only_committed_here(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    earlier = local_move(b, "transition", "alice", "inbox")
    assert pushed(a, "bury", "alice", "--summary", "ended by the lead")[0] == 0
    tip = rev(hub, "main")
    code, out = pushed(b, "spawn", "carol")            # legal on the hub, but not tried
    assert code == 1 and out["outcome"] == "gave-up", out
    [e] = out["earlier"]
    assert (e["commit"], e["outcome"], e["kept"]) == (earlier, "illegal",
                                                      "gitstate/unlanded/alice-1"), e
    assert out["reason"].startswith(f"not landed, since {earlier[:10]}")
    assert out["commit"] == rev(b, "HEAD") == out["move"]["commit"]
    assert rev(b, "HEAD~1") == rev(hub, "main") == tip
    assert git(b, "log", "-1", "--format=%s").stdout.strip() == "@carol: [STATE:bootstrap] spawned"
    # `gitstate sync` lands it, and keeps alice's move aside while it is illegal
    res = gitstate(b, "sync", "--json")
    moves = json.loads(res.stdout)["moves"]
    assert [(m["subject"], m["outcome"]) for m in moves] == [
        ("@carol: [STATE:bootstrap] spawned", "landed"),
        ("@alice: [STATE:inbox] bootstrap -> inbox", "illegal")], moves
    assert hub_subjects(hub)[0] == "@carol: [STATE:bootstrap] spawned"


def test_the_new_move_is_decided_again_where_its_agent_moved_on_the_hub(tmp_path):
    """The new move is made again by its own command once what came before it landed, from
    its agent's state on the hub: any move, not only a transition (here one with a trailer,
    which a replay could not decide again)."""
    hub, (a, b) = hub_and_clones(tmp_path)
    for args in (("spawn", "alice"), ("spawn", "arch1", "--role", "architect"),
                 ("bury", "arch1", "--summary", "handing on")):
        assert pushed(a, *args)[0] == 0                          # the architect is vacant
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "transition", "alice", "inbox")[0] == 0     # moved on the hub
    local_move(b, "spawn", "carol")
    code, out = pushed(b, "assume", "alice", "architect")
    assert code == 0 and out["outcome"] == "landed", out
    assert [e["outcome"] for e in out["earlier"]] == ["landed"]
    assert out["move"]["from"] == "inbox" == out["move"]["to"]    # the hub's state
    assert hub_subjects(hub)[1] == "@carol: [STATE:bootstrap] spawned"
    assert "Assumes-role: architect" in git(hub, "log", "-1", "--format=%B", "main").stdout
    assert rev(b, "HEAD") == rev(hub, "main") == out["commit"]
    assert gitstate(hub, "verify", "--no-cache").returncode == 0


def test_a_chain_asks_the_hub_once_whether_it_keeps_a_landing_queue(tmp_path, monkeypatch):
    """Two moves landed by one `--push` (the one made here before, then the new one): the
    hub is asked whether it keeps a landing queue once, not once per move (a clone that
    remembers its answer, as after its first push, does not ask at all)."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (a / ".git" / "gitstate" / "queueing-hubs").unlink()     # forgotten: asked again
    local_move(a, "transition", "alice", "inbox", "-m", "reading")
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    code, out = pushed(a, "transition", "alice", "distill", "-m", "planning")
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert code == 0 and out["outcome"] == "landed" and len(out["earlier"]) == 1, out
    asked = [e for e in map(json.loads, trace.read_text().splitlines())
             if e["event"] == "start" and "ls-remote" in e["argv"]]
    assert len(asked) == 1, asked
    assert hub_subjects(hub)[:2] == ["@alice: [STATE:distill] planning",
                                     "@alice: [STATE:inbox] reading"]
