"""`gitstate sync`: a clone whose moves did not land (or whose `git pull --rebase` stopped on a
`_state.md`) replays them onto the hub's tip, decides each again from the new state, lands
them, and says what it could not do; nothing is lost, every commit's content is on the hub or
on a side branch. Real git, real hooks, a hub made by `gitstate init --server`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, gitstate
from hubs import hub_and_clones, hub_subjects, pushed


def synced(clone: Path, *args: str) -> tuple[int, dict]:
    res = gitstate(clone, "sync", *args, "--json")
    return res.returncode, json.loads(res.stdout)


def rev(repo: Path, what: str) -> str:
    return git(repo, "rev-parse", what).stdout.strip()


def local_moves(clone: Path, *moves: tuple[str, ...]) -> list[str]:
    """Commit each move here, without landing it; their commits."""
    out = []
    for args in moves:
        res = gitstate(clone, *args)
        assert res.returncode == 0, res.stderr
        out.append(rev(clone, "HEAD"))
    return out


def nothing_lost(hub: Path, clone: Path, commits: list[str]) -> None:
    """Each commit is on the hub (as itself, or made again with its subject) or kept on a
    side branch of the clone."""
    on_hub = set(git(hub, "rev-list", "main").stdout.split())
    subjects = hub_subjects(hub)
    sides = git(clone, "for-each-ref", "--format=%(objectname)",
                "refs/heads/gitstate/unlanded/").stdout.split()
    for sha in commits:
        subject = git(clone, "log", "-1", "--format=%s", sha).stdout.strip()
        kept = any(git(clone, "merge-base", "--is-ancestor", sha, s, check=False).returncode
                   == 0 for s in sides)
        assert sha in on_hub or subject in subjects or kept, (sha, subject)


def test_unlanded_moves_are_replayed_and_landed(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (b / "notes.txt").write_text("bob's work\n")
    git(b, "add", "notes.txt")
    mine = local_moves(b, ("spawn", "bob"), ("transition", "bob", "inbox", "-m", "ready"))
    code, out = synced(b)
    assert code == 0 and out["ok"], out
    assert [m["outcome"] for m in out["moves"]] == ["landed", "landed"]
    assert [m["how"] for m in out["moves"]] == ["applied", "applied"]
    assert out["aborted"] is None and out["pushed"] is True and out["upstream"] == "origin/main"
    assert hub_subjects(hub)[:2] == ["@bob: [STATE:inbox] ready", "@bob: [STATE:bootstrap] spawned"]
    assert rev(b, "HEAD") == rev(hub, "main") == out["head"]
    files = git(hub, "show", "--name-only", "--format=", "main~1").stdout.split()
    assert sorted(files) == ["agent/bob/_state.md", "notes.txt"]     # the work came along
    author = git(hub, "log", "-1", "--format=%an %ad", "main").stdout
    assert author == git(b, "log", "-1", "--format=%an %ad", mine[1]).stdout
    nothing_lost(hub, b, mine)
    assert gitstate(a, "verify", "--no-cache").returncode == 0
    # in step now: nothing to do, and the text says so
    res = gitstate(b, "sync")
    assert res.returncode == 0 and "main is in step with origin/main: nothing to replay" \
        in res.stdout, res.stdout
    # behind its hub: sync moves the branch there, and says so
    before = rev(a, "HEAD")
    res = gitstate(a, "sync")
    assert res.returncode == 0 and rev(a, "HEAD") == rev(hub, "main") != before
    assert f"main moved to origin/main ({before[:10]} -> {rev(hub, 'main')[:10]}): nothing " \
        "to replay" in res.stdout, res.stdout


def test_no_push_replays_here_only(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    mine = local_moves(b, ("spawn", "bob"))
    tip = rev(hub, "main")
    code, out = synced(b, "--no-push")
    assert code == 0 and [m["outcome"] for m in out["moves"]] == ["replayed"], out
    assert rev(hub, "main") == tip and rev(b, "HEAD~1") == tip
    assert git(b, "log", "-1", "--format=%s").stdout.strip() == "@bob: [STATE:bootstrap] spawned"
    code, out = synced(b)      # and later lands them
    assert code == 0 and out["moves"][0]["outcome"] == "landed"
    nothing_lost(hub, b, mine)


def test_a_rebase_stopped_on_a_state_file_is_aborted_and_the_moves_decided_again(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "transition", "alice", "inbox", "--set", "context_pct=10")[0] == 0
    mine = local_moves(b, ("transition", "alice", "inbox", "--set", "context_pct=20"),
                       ("transition", "alice", "distill", "-m", "planning"))
    res = git(b, "pull", "-q", "--rebase", check=False)
    assert res.returncode != 0 and (b / ".git" / "rebase-merge").is_dir()   # stopped
    code, out = synced(b)
    assert code == 0 and out["aborted"] == "a rebase", out
    first, second = out["moves"]
    assert (first["outcome"], first["how"]) == ("landed", "re-decided")
    # the next one applies on the re-decided one, unless their stamps collide: decided again
    assert second["outcome"] == "landed" and second["how"] in ("applied", "re-decided")
    assert not (b / ".git" / "rebase-merge").exists()
    assert hub_subjects(hub)[:2] == ["@alice: [STATE:distill] planning",
                                     "@alice: [STATE:inbox] bootstrap -> inbox"]
    status = json.loads(gitstate(b, "status", "alice", "--json").stdout)
    assert status["state"] == "distill" and status["context_pct"] == 20   # its --set kept
    assert rev(b, "HEAD") == rev(hub, "main")
    assert git(b, "status", "--porcelain").stdout == ""
    nothing_lost(hub, b, mine)
    assert gitstate(a, "verify", "--no-cache").returncode == 0


def test_a_move_now_illegal_is_kept_on_a_side_branch_with_its_rule(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "bury", "alice", "--summary", "gone")[0] == 0    # buried on the hub
    (b / "draft.md").write_text("alice's draft\n")
    git(b, "add", "draft.md")
    mine = local_moves(b, ("transition", "alice", "inbox"))
    code, out = synced(b)
    assert code == 1 and not out["ok"]
    [m] = out["moves"]
    assert m["outcome"] == "illegal" and m["rule"] == "terminal", m
    assert m["kept"] == "gitstate/unlanded/alice-1" and "dead" in m["reason"]
    assert rev(b, "gitstate/unlanded/alice-1") == mine[0]
    assert rev(b, "HEAD") == rev(hub, "main")                 # in step; nothing staged
    assert git(b, "status", "--porcelain").stdout == ""
    nothing_lost(hub, b, mine)
    res = gitstate(b, "sync")                                 # the text says it too
    assert res.returncode == 1 and "[terminal]" in res.stderr
    assert "kept on branch gitstate/unlanded/alice-1" in res.stderr
    assert "took gitstate/unlanded/alice-1" in res.stdout


def test_a_side_branch_left_by_push_is_taken_and_deleted_once_landed(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "arch1", "--role", "architect")[0] == 0
    code, out = pushed(b, "spawn", "arch2", "--role", "architect")       # max: 1
    assert code == 1 and out["kept"] == "gitstate/unlanded/arch2-1"
    kept = rev(b, "gitstate/unlanded/arch2-1")
    git(b, "reset", "-q", "--hard")                 # its work is on the side branch
    assert pushed(a, "bury", "arch1", "--summary", "handing on")[0] == 0
    code, out = synced(b)
    assert code == 0 and out["side_branches"] == ["gitstate/unlanded/arch2-1"], out
    [m] = out["moves"]
    assert m["source"] == "gitstate/unlanded/arch2-1" and m["outcome"] == "landed"
    assert git(b, "branch", "--list", "gitstate/unlanded/*").stdout == ""
    assert hub_subjects(hub)[0].startswith("@arch2: [STATE:bootstrap]")
    nothing_lost(hub, b, [kept])


def test_a_move_that_landed_already_is_said_so(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    mine = local_moves(b, ("spawn", "bob"))
    git(b, "push", "-q", "origin", "HEAD:main")      # it got there, the clone did not learn it
    git(b, "update-ref", "refs/remotes/origin/main", "HEAD~1")
    assert pushed(a, "spawn", "alice")[0] == 0
    code, out = synced(b)
    assert code == 0 and out["moves"] == [] and rev(b, "HEAD") == rev(hub, "main"), out
    nothing_lost(hub, b, mine)


def test_uncommitted_changes_in_the_touched_files_stop_it_before_anything(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (b / "notes.txt").write_text("v1\n")
    git(b, "add", "notes.txt")
    local_moves(b, ("spawn", "bob"))
    (b / "notes.txt").write_text("v2, not committed\n")
    before = rev(b, "HEAD")
    res = gitstate(b, "sync")
    assert res.returncode == 1 and "uncommitted changes in notes.txt" in res.stderr
    assert rev(b, "HEAD") == before and (b / "notes.txt").read_text() == "v2, not committed\n"
    (b / "elsewhere.txt").write_text("untouched by the replay\n")      # this one is fine
    git(b, "checkout", "notes.txt")
    code, out = synced(b)
    assert code == 0 and (b / "elsewhere.txt").is_file()


def test_a_kept_move_is_taken_alone_later_its_landed_parent_is_not_made_twice(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "transition", "alice", "inbox", "--set", "context_pct=10")[0] == 0
    assert pushed(a, "spawn", "arch1", "--role", "architect")[0] == 0
    mine = local_moves(b, ("transition", "alice", "inbox", "--set", "context_pct=20"),
                       ("spawn", "arch2", "--role", "architect"))
    code, out = synced(b)
    assert code == 1 and [(m["outcome"], m["rule"]) for m in out["moves"]] == [
        ("landed", None), ("illegal", "role-max")], out
    assert out["moves"][1]["kept"] == "gitstate/unlanded/arch2-1"
    code, out = synced(b)                                   # still illegal; alice's alone
    assert [m["commit"] for m in out["moves"]] == [mine[1]], out
    assert pushed(a, "bury", "arch1", "--summary", "handing on")[0] == 0
    code, out = synced(b)
    assert code == 0 and [m["outcome"] for m in out["moves"]] == ["landed"], out
    # a's move and b's, decided again once (its text kept): not twice
    assert len([s for s in hub_subjects(hub) if s.startswith("@alice: [STATE:inbox]")]) == 2
    assert git(b, "branch", "--list", "gitstate/unlanded/*").stdout == ""
    nothing_lost(hub, b, mine)


def side_branches(clone: Path) -> list[str]:
    return git(clone, "branch", "--list", "--format=%(refname:short)",
               "gitstate/unlanded/*").stdout.split()


def state_file(repo: Path, agent: str, rev: str = "HEAD") -> str:
    return git(repo, "show", f"{rev}:agent/{agent}/_state.md").stdout


@pytest.mark.parametrize("kind", ["queue", "retry"])
def test_following_what_an_illegal_push_says_lands_it_with_no_git_by_hand(tmp_path, kind):
    """The user's path: `--push` refused as illegal says `gitstate sync` lands it; sync takes
    the side branch and the work --push left staged as its own, keeps them as they were while
    the move is still illegal, and lands them once it is legal; nothing to stash."""
    hub, (a, b) = hub_and_clones(tmp_path, queue=kind == "queue")
    assert pushed(a, "spawn", "arch1", "--role", "architect")[0] == 0
    (b / "design.md").write_text("arch2's design\n")
    (b / "README").write_text("hello, with arch2's changes\n")
    git(b, "add", "design.md", "README")
    res = gitstate(b, "spawn", "arch2", "--role", "architect", "--push")
    assert res.returncode == 1 and "[role-max]" in res.stderr
    assert "`gitstate sync` lands it" in res.stderr
    assert side_branches(b) == ["gitstate/unlanded/arch2-1"]
    left = git(b, "status", "--porcelain").stdout
    assert sorted(left.splitlines()) == ["A  design.md", "M  README"]
    # followed at once: still illegal, kept; what --push left is left as it was
    res = gitstate(b, "sync")
    assert res.returncode == 1 and "[role-max]" in res.stderr, res.stderr
    assert "kept on branch gitstate/unlanded/arch2-1" in res.stderr
    assert side_branches(b) == ["gitstate/unlanded/arch2-1"]
    assert git(b, "status", "--porcelain").stdout == left
    assert (b / "design.md").read_text() == "arch2's design\n"
    # once the role is free, the same command lands the move with its work
    assert pushed(a, "bury", "arch1", "--summary", "handing on")[0] == 0
    code, out = synced(b)
    assert code == 0 and out["ok"], out["moves"]
    [m] = out["moves"]
    assert m["outcome"] == "landed" and m["source"] == "gitstate/unlanded/arch2-1", m
    assert sorted(out["work_found"]) == ["README", "design.md"]
    assert hub_subjects(hub)[0] == "@arch2: [STATE:bootstrap] spawned as architect"
    files = git(hub, "show", "--name-only", "--format=", "main").stdout.split()
    assert sorted(files) == ["README", "agent/arch2/_state.md", "design.md"]
    assert rev(b, "HEAD") == rev(hub, "main")
    assert git(b, "status", "--porcelain").stdout == "" and side_branches(b) == []
    assert git(b, "stash", "list").stdout == ""
    assert gitstate(a, "verify", "--no-cache").returncode == 0


def test_the_work_push_left_is_known_unstaged_or_untracked_too(tmp_path):
    """Unstaged as the earlier hint said (`git restore --staged`): the files in the work tree
    are still the kept move's work, byte for byte, and go with it."""
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "arch1", "--role", "architect")[0] == 0
    (b / "design.md").write_text("arch2's design\n")
    (b / "README").write_text("hello, with arch2's changes\n")
    git(b, "add", "design.md", "README")
    assert pushed(b, "spawn", "arch2", "--role", "architect")[0] == 1
    git(b, "restore", "--staged", "design.md", "README")
    left = git(b, "status", "--porcelain").stdout
    assert sorted(left.splitlines()) == [" M README", "?? design.md"]
    code, out = synced(b)                               # still illegal: left as it was
    assert code == 1 and out["moves"][0]["rule"] == "role-max", out
    assert git(b, "status", "--porcelain").stdout == left
    assert pushed(a, "bury", "arch1", "--summary", "handing on")[0] == 0
    code, out = synced(b)
    assert code == 0 and [m["outcome"] for m in out["moves"]] == ["landed"], out
    files = git(hub, "show", "--name-only", "--format=", "main").stdout.split()
    assert sorted(files) == ["README", "agent/arch2/_state.md", "design.md"]
    assert git(b, "status", "--porcelain").stdout == "" and side_branches(b) == []


def test_work_that_is_not_the_kept_moves_is_still_never_touched(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "arch1", "--role", "architect")[0] == 0
    (b / "design.md").write_text("arch2's design\n")
    git(b, "add", "design.md")
    assert pushed(b, "spawn", "arch2", "--role", "architect")[0] == 1
    assert pushed(a, "bury", "arch1", "--summary", "handing on")[0] == 0
    # edited since: the replay would write over it
    (b / "design.md").write_text("arch2's design, edited since\n")
    before = rev(b, "HEAD")
    res = gitstate(b, "sync")
    assert res.returncode == 1 and "uncommitted changes in design.md" in res.stderr
    assert rev(b, "HEAD") == before and side_branches(b) == ["gitstate/unlanded/arch2-1"]
    assert (b / "design.md").read_text() == "arch2's design, edited since\n"
    assert git(b, "status", "--porcelain").stdout == "AM design.md\n"
    # something else staged would ride along with a replayed commit
    (b / "design.md").write_text("arch2's design\n")
    (b / "other.txt").write_text("mine\n")
    git(b, "add", "other.txt")
    res = gitstate(b, "sync")
    assert res.returncode == 1 and "1 file(s) are staged (other.txt)" in res.stderr
    assert rev(b, "HEAD") == before
    assert sorted(git(b, "status", "--porcelain").stdout.splitlines()) == ["A  design.md",
                                                                         "A  other.txt"]
    git(b, "restore", "--staged", "other.txt")          # untouched by the replay: fine
    code, out = synced(b)
    assert code == 0 and out["work_found"] == ["design.md"], out
    assert git(b, "status", "--porcelain").stdout == "?? other.txt\n"


def test_after_a_push_that_gave_up_sync_lands_the_move(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (b / "notes.txt").write_text("bob's work\n")
    git(b, "add", "notes.txt")
    away = tmp_path / "hub-away.git"
    hub.rename(away)                                  # the hub cannot be reached
    try:
        res = gitstate(b, "spawn", "bob", "--push")
    finally:
        away.rename(hub)
    assert res.returncode == 1 and "land it with `gitstate sync`" in res.stderr, res.stderr
    assert git(b, "status", "--porcelain").stdout == ""
    code, out = synced(b)
    assert code == 0 and [m["outcome"] for m in out["moves"]] == ["landed"], out
    assert hub_subjects(hub)[0] == "@bob: [STATE:bootstrap] spawned"
    assert sorted(git(hub, "show", "--name-only", "--format=", "main").stdout.split()) == [
        "agent/bob/_state.md", "notes.txt"]
    assert rev(b, "HEAD") == rev(hub, "main") and git(b, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize("work", [True, False])
def test_a_move_stamped_in_the_same_second_as_the_upstreams_is_decided_again(tmp_path, work):
    """The hub's move left alice's state file exactly as this clone's move would (the same
    state, the same `updated:` second): the replay merges to no change, so it is decided
    again from the hub's state, with a stamp of its own, and lands as this clone's move."""
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    if work:
        (b / "notes.txt").write_text("b's work\n")
        git(b, "add", "notes.txt")
    mine = local_moves(b, ("transition", "alice", "inbox", "-m", "from b"))
    # a moves alice in the same second: its state file is byte for byte b's
    git(a, "pull", "-q", "--ff-only")
    (a / "agent" / "alice" / "_state.md").write_text(state_file(b, "alice"))
    git(a, "add", "agent/alice/_state.md")
    git(a, "commit", "-q", "-m", "@alice: [STATE:inbox] from a")
    git(a, "push", "-q", "origin", "main")
    theirs = state_file(hub, "alice", "main")
    assert theirs == state_file(b, "alice")
    code, out = synced(b)
    assert code == 0 and out["ok"], out["moves"]
    [m] = out["moves"]
    assert (m["outcome"], m["how"]) == ("landed", "re-decided"), m
    assert hub_subjects(hub)[:2] == ["@alice: [STATE:inbox] from b",
                                     "@alice: [STATE:inbox] from a"]
    ours = state_file(hub, "alice", "main")
    assert ours != theirs and "state: inbox" in ours        # its own stamp
    files = git(hub, "show", "--name-only", "--format=", "main").stdout.split()
    assert sorted(files) == (["agent/alice/_state.md", "notes.txt"] if work
                             else ["agent/alice/_state.md"])
    assert rev(b, "HEAD") == rev(hub, "main") and git(b, "status", "--porcelain").stdout == ""
    nothing_lost(hub, b, mine)
    assert gitstate(a, "verify", "--no-cache").returncode == 0


def test_sync_lands_again_what_a_rewound_hub_lost(tmp_path):
    """A hub's branch rewound behind gitstate's back (the move gone from it) loses nothing a
    clone holds: sync finds the move unlanded and lands it again, judged at the hub."""
    from hubs import hub_and_clones
    hub, (a, b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "ana", "--push").returncode == 0
    assert gitstate(a, "transition", "ana", "inbox", "--push").returncode == 0
    git(b, "pull", "-q")
    git(hub, "update-ref", "refs/heads/main", "main~1")           # the rewind, at the hub
    assert "[STATE:inbox]" not in git(hub, "log", "-1", "--format=%s", "main").stdout
    res = gitstate(b, "sync")
    assert res.returncode == 0 and "landed as" in res.stdout, res.stdout + res.stderr
    assert git(hub, "log", "-1", "--format=%s", "main").stdout.startswith("@ana: [STATE:inbox]")
    assert git(b, "rev-parse", "main").stdout == git(hub, "rev-parse", "main").stdout
    assert gitstate(hub, "verify", "--no-cache").returncode == 0
