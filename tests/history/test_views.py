"""Roster, vacancies, log, inbox, situations and verify on real repositories."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import (
    UNHOOKED,
    fill_freeze_state,
    git,
    gitstate,
    make_repo,
    moves_on_this_branch,
    repo_with,
    set_state_line,
    state_path,
    walk,
)

from gitstate.git.repo import open_managed
from gitstate.history.views import roster


def js(repo: Path, *args: str):
    res = gitstate(repo, *args, "--json")
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def moves_of(repo: Path, *args: str) -> list:
    """The moves `log --json` lists (in the object that says which commit it read)."""
    return js(repo, *args)["moves"]


def stable(view: dict) -> dict:
    """A roster without what depends on the wall clock or the cache."""
    out = {}
    for group in ("living", "freezer", "cemetery", "unknown"):
        out[group] = [{k: v for k, v in r.items() if k != "seconds_in_state"}
                      for r in view.get(group, [])]
    return out


def _spawn_team(repo: Path) -> None:
    for agent, role in (("alice", "architect"), ("bob", "librarian"), ("carol", "steward")):
        assert gitstate(repo, "spawn", agent, "--role", role).returncode == 0


@pytest.fixture
def team(tmp_path):
    """The `repo` fixture's repository with alice (architect), bob (librarian) and carol
    (steward) spawned."""
    return repo_with(tmp_path, "views-team", _spawn_team)


def test_roster_groups_and_details(team):
    walk(team, "alice", "inbox", "distill")
    assert gitstate(team, "transition", "alice", "dead", "--set", "final_summary=done").returncode == 0
    walk(team, "carol", "inbox", "distill")
    assert gitstate(team, "freeze", "carol").returncode == 1        # writes the template
    fill_freeze_state(team / "data" / "freeze-states" / "carol.md")
    assert gitstate(team, "freeze", "carol").returncode == 0
    view = js(team, "roster")
    assert [r["agent"] for r in view["living"]] == ["bob"]
    assert view["freezer"][0]["freeze_state"] == "data/freeze-states/carol.md"
    dead = view["cemetery"][0]
    assert dead["agent"] == "alice" and dead["final_summary"] == "done"
    head = git(team, "rev-parse", "HEAD~3").stdout.strip()
    assert dead["in_state_since_commit"] == git(team, "rev-parse", "HEAD~3").stdout.strip() \
        or dead["last_commit"] == head
    first = git(team, "log", "--reverse", "--format=%H", "--grep=@alice:").stdout.split()[0]
    assert dead["first_commit"] == first
    epoch = int(git(team, "log", "-1", "--format=%ct", first).stdout)
    assert dead["first_commit_at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    text = gitstate(team, "roster").stdout
    assert "living (1)" in text and "freezer (1)" in text and "cemetery (1)" in text


def test_vacancies_and_succession(team):
    walk(team, "alice", "inbox", "distill")
    assert gitstate(team, "transition", "alice", "dead", "--set", "final_summary=x").returncode == 0
    found = {v["role"]: v for v in js(team, "vacancies")["vacancies"]}
    assert found["architect"]["status"] == "vacant" and found["architect"]["last_holder"] == "alice"
    assert found["architect"]["mandate"] == "patterns/methods/23-architect-mandate.md"
    assert found["strategist"]["status"] == "unfilled"
    assert "librarian" not in found
    assert "Role 'architect' is vacant. Last held by alice" in gitstate(team, "vacancies").stdout
    # a role is fixed at birth: a successor is spawned into the vacant role
    assert gitstate(team, "transition", "bob", "inbox", "--set", "role=architect").returncode == 1
    assert gitstate(team, "spawn", "dave", "--role", "architect").returncode == 0
    found = {v["role"] for v in js(team, "vacancies")["vacancies"]}
    assert "architect" not in found and "librarian" not in found


def test_log_lists_transitions(team):
    walk(team, "alice", "inbox", "distill")
    rows = moves_of(team, "log", "alice")
    assert [(r["from"], r["to"]) for r in rows] == [(None, "bootstrap"), ("bootstrap", "inbox"),
                                                    ("inbox", "distill")]
    assert rows[1]["author"] == "Test Person" and rows[1]["text"] == "to inbox"
    assert len(moves_of(team, "log")) == 5
    res = gitstate(team, "log", "nobody")
    assert res.returncode == 1 and "no history" in res.stderr


def test_inbox_and_mark_read(team):
    (team / "f.txt").write_text("x")
    git(team, "add", "f.txt")
    git(team, "commit", "-qm", "design ready\n\n@bob please review; @carol fyi")
    git(team, "commit", "-q", "--allow-empty", "-m", "standup @ALL")
    git(team, "commit", "-q", "--allow-empty", "-m", "email me at bob@example.com")
    view = js(team, "inbox", "bob")
    assert [m["subject"] for m in view["messages"]] == ["design ready", "standup @ALL"]
    assert view["messages"][1]["to_all"] is True
    marked = js(team, "inbox", "bob", "--mark-read")
    assert marked["marked_read"]["last_read_commit"] == marked["commit"]
    assert js(team, "inbox", "bob")["messages"] == []
    git(team, "commit", "-q", "--allow-empty", "-m", "one more for @bob")
    assert [m["subject"] for m in js(team, "inbox", "bob")["messages"]] == ["one more for @bob"]
    # the agent's own prefix is not a message to itself
    assert gitstate(team, "transition", "bob", "inbox", "-m", "note to @bob self").returncode == 0
    assert len(js(team, "inbox", "bob")["messages"]) == 1


def test_checkpoint_cannot_move_backwards_or_outside_history(team):
    first = git(team, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    git(team, "commit", "-q", "--allow-empty", "-m", "a note for @alice")
    assert gitstate(team, "inbox", "alice", "--mark-read").returncode == 0
    set_state_line(team, "alice", "last_read_commit", first)
    git(team, "add", "-A")
    res = git(team, "commit", "-qm", "@alice: [STATE:bootstrap] rewind", check=False)
    assert res.returncode == 1 and "[inbox-checkpoint]" in res.stderr and "forward" in res.stderr
    git(team, "reset", "-q", "--hard")
    git(team, "checkout", "-q", "-b", "side")
    git(team, "commit", "-q", "--allow-empty", "-m", "on a side branch")
    side = git(team, "rev-parse", "HEAD").stdout.strip()
    git(team, "checkout", "-q", "main")
    set_state_line(team, "alice", "last_read_commit", side)
    git(team, "add", "-A")
    res = git(team, "commit", "-qm", "@alice: [STATE:bootstrap] elsewhere", check=False)
    assert res.returncode == 1 and "not a commit in this history" in res.stderr


def test_index_is_incremental_and_a_pure_speed_up(team):
    walk(team, "alice", "inbox")
    before = js(team, "roster")
    cache = team / ".git" / "gitstate" / "tracks.bin"
    assert cache.is_file()
    walk(team, "alice", "distill")
    walk(team, "bob", "inbox")
    warm = js(team, "roster")
    shutil.rmtree(team / ".git" / "gitstate")
    cold = js(team, "roster")
    assert stable(warm) == stable(cold) != stable(before)
    assert cold["living"][0]["state"] == "distill"


def test_rewritten_history_is_rebuilt_not_trusted(team):
    walk(team, "alice", "inbox", "distill")
    js(team, "roster")                         # cache now at the tip
    git(team, "reset", "-q", "--hard", "HEAD~2")
    walk(team, "alice", "inbox")
    view = js(team, "roster")
    alice = next(r for r in view["living"] if r["agent"] == "alice")
    assert alice["state"] == "inbox"
    assert alice["last_commit"] == git(team, "rev-parse", "HEAD").stdout.strip()


def test_fetched_commits_show_up(team, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(team), str(clone))
    assert gitstate(clone, "init").returncode == 0     # hooks for this clone
    js(clone, "roster")
    walk(team, "alice", "inbox")
    git(clone, "fetch", "-q", "origin")
    assert js(clone, "roster", "--at", "origin/main")["living"][0]["state"] == "inbox"
    git(clone, "merge", "-q", "--ff-only", "origin/main")
    assert js(clone, "roster")["living"][0]["state"] == "inbox"


def test_branches_and_merges(team):
    """The line rule: the roster is the team line's; a branch's move is no move there until it
    lands by itself, and a merge of the branch carries its work. (Before, the merge carried
    alice's move.)"""
    git(team, "checkout", "-q", "-b", "side")
    with moves_on_this_branch(team, "side"):
        walk(team, "alice", "inbox")
    (team / "side.txt").write_text("side\n")
    git(team, "add", "side.txt")
    git(team, "commit", "-q", "-m", "side's work")
    git(team, "checkout", "-q", "main")
    js(team, "roster")
    walk(team, "bob", "inbox")
    git(team, "merge", "-q", "--no-commit", "side")
    git(team, "checkout", "HEAD", "--", "agent/alice/_state.md")     # the work, not the move
    git(team, "commit", "-q", "--no-edit")
    warm = js(team, "roster")
    states = {r["agent"]: r["state"] for r in warm["living"]}
    assert states == {"alice": "bootstrap", "bob": "inbox", "carol": "bootstrap"}
    walk(team, "alice", "inbox")                                      # landed on the line
    warm = js(team, "roster")
    states = {r["agent"]: r["state"] for r in warm["living"]}
    assert states == {"alice": "inbox", "bob": "inbox", "carol": "bootstrap"}
    shutil.rmtree(team / ".git" / "gitstate")
    assert stable(js(team, "roster")) == stable(warm)
    assert gitstate(team, "verify").returncode == 0


def test_time_travel_equals_a_clone_reset_there(team, tmp_path):
    rng = random.Random(4)
    moves = {"bootstrap": ["inbox"], "inbox": ["distill"], "distill": ["deep_work", "idle"],
             "deep_work": ["inbox"], "idle": ["inbox"]}
    current = {"alice": "bootstrap", "bob": "bootstrap", "carol": "bootstrap"}
    for _ in range(8):
        agent = rng.choice(sorted(current))
        target = rng.choice(moves[current[agent]])
        walk(team, agent, target)
        current[agent] = target
    commits = git(team, "rev-list", "HEAD", "--", "protocols/lifecycle.yaml", "agent").stdout.split()
    repo = open_managed(str(team))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(team), str(clone))
    for sha in commits[::2]:
        git(clone, "reset", "-q", "--hard", sha)
        there = roster(open_managed(str(clone)))
        assert stable(roster(repo, at=sha)) == stable(there), sha
    date = git(team, "log", "-1", "--format=%cI", commits[3]).stdout.strip()
    assert js(team, "roster", "--at", date)["commit"] in commits
    res = gitstate(team, "roster", "--at", "not-a-rev-or-date")
    assert res.returncode == 2


def test_verify_catches_what_bypassed_the_hooks(team):
    assert js(team, "verify")["ok"] is True
    set_state_line(team, "alice", "state", "deep_work")
    git(team, *UNHOOKED, "commit", "-q", "-am", "@alice: [STATE:deep_work] sneaky")
    set_state_line(team, "bob", "state", "inbox")
    git(team, *UNHOOKED, "commit", "-q", "-am", "bob moved without a tag")
    res = gitstate(team, "verify", "--json")
    assert res.returncode == 1
    found = {(p["subject"], p["rule"]) for p in json.loads(res.stdout)["problems"]}
    assert ("@alice: [STATE:deep_work] sneaky", "illegal-transition") in found
    assert ("bob moved without a tag", "change-without-tag") in found
    assert gitstate(team, "verify", "HEAD~1..HEAD").returncode == 1
    assert gitstate(team, "verify", "HEAD~5..HEAD~2").returncode == 0
    shutil.rmtree(team / ".git" / "gitstate")      # the cache changes nothing
    assert len(json.loads(gitstate(team, "verify", "--json").stdout)["problems"]) == 2


def test_two_unreadable_state_files_alike_each_name_their_own(team):
    """Two agents whose state files are the same unreadable bytes (here both empty: one
    blob) are each said to be unreadable at their own path, by a cold read and a warm one."""
    for agent in ("alice", "bob"):
        state_path(team, agent).write_bytes(b"")
    git(team, *UNHOOKED, "commit", "-q", "-am", "both emptied past the hooks")
    for _ in range(2):
        rows = json.loads(gitstate(team, "status", "--json").stdout)["agents"]
        problems = {r["agent"]: r["problem"] for r in rows if r.get("problem")}
        assert set(problems) == {"alice", "bob"}, rows
        for agent, problem in problems.items():
            assert f"agent/{agent}/_state.md:1:" in problem, problem
            assert all(f"agent/{o}/" not in problem for o in problems if o != agent), problem


def test_situations_graph_in_sqlite(team):
    gitstate(team, "transition", "alice", "inbox", "--set", "model=opus-4-6",
             "--set", "person=zach", "--set", "project=haak", "--set", "summary=designing")
    data = js(team, "situations")
    ids = {e["id"] for e in data["entities"]}
    assert {"situation:session-alice", "agent:opus-4-6", "person:zach", "role:architect",
            "situation:haak"} <= ids
    db = team / ".git" / "gitstate" / "entities.db"
    assert data["sqlite"]["path"] == str(db)
    assert git(team, "status", "--porcelain").stdout == ""    # a read leaves the tree clean
    con = sqlite3.connect(db)
    rows = con.execute("SELECT member, quality FROM belongings WHERE owner = "
                       "'situation:session-alice' ORDER BY member").fetchall()
    assert rows == [("agent:opus-4-6", "actor"), ("person:zach", "actor"),
                    ("role:architect", "method"), ("situation:haak", "domain"),
                    ("text:summary", "description")]
    assert con.execute("SELECT quality FROM entities WHERE id = 'situation:session-alice'"
                       ).fetchone() == ("live",)
    counts = con.execute("SELECT COUNT(*) FROM entities").fetchone()
    con.close()
    js(team, "situations")                                   # idempotent
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM entities").fetchone() == counts
    con.close()
    # history survives a state file being deleted later (here by force)
    git(team, "rm", "-q", "agent/carol/_state.md")
    git(team, *UNHOOKED, "commit", "-q", "-m", "remove carol")
    again = js(team, "situations", "--sqlite", str(team / "other.db"))
    assert "situation:session-carol" in {e["id"] for e in again["entities"]}
    con = sqlite3.connect(team / "other.db")
    assert con.execute("SELECT member FROM belongings WHERE owner = 'situation:session-carol' "
                       "AND quality = 'method'").fetchone() == ("role:steward",)
    con.close()


def test_grammar_accept_reads_older_subject_forms(empty_repo):
    life = (Path(__file__).resolve().parents[2] / "protocols" / "haak" / "lifecycle.yaml")
    text = life.read_text() + "grammar:\n  accept:\n    - '^@(?P<id>[\\w-]+)\\s*\\[(?P<state>\\w+)\\]:'\n"
    (empty_repo / "life.yaml").write_text(text)
    assert gitstate(empty_repo, "init", "--lifecycle", str(empty_repo / "life.yaml")).returncode == 0
    p = state_path(empty_repo, "old")
    p.parent.mkdir(parents=True)
    p.write_text("---\nagent: old\nstate: bootstrap\n---\n")
    git(empty_repo, "add", "-A")
    git(empty_repo, *UNHOOKED, "commit", "-q", "-m", "@old [bootstrap]: legacy form")
    rows = moves_of(empty_repo, "log", "old")
    assert [(r["to"], r["text"]) for r in rows] == [("bootstrap", "legacy form")]


def test_verify_sees_role_limits_across_branches(team):
    """The roles of every agent are followed through the line's merges when replaying (a
    merge of work from a branch)."""
    git(team, "checkout", "-q", "-b", "side")
    (team / "side.txt").write_text("side\n")
    git(team, "add", "side.txt")
    git(team, "commit", "-q", "-m", "side's work")
    git(team, "checkout", "-q", "main")
    p = state_path(team, "eve")
    p.parent.mkdir(parents=True)
    p.write_text("---\nagent: eve\nstate: bootstrap\nrole: architect\n---\n")
    git(team, "add", "-A")
    git(team, *UNHOOKED, "commit", "-q", "-m", "@eve: [STATE:bootstrap] second architect")
    git(team, "merge", "-q", "--no-edit", "side")
    res = gitstate(team, "verify", "--json")
    rules = [(p["subject"], p["rule"]) for p in json.loads(res.stdout)["problems"]]
    assert rules == [("@eve: [STATE:bootstrap] second architect", "role-max")]


def test_names_and_messages_with_control_characters_are_read_as_they_are(team, monkeypatch):
    """The views read commits unambiguously: a separator-like character in an author name or
    a message cuts nothing."""
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Eve\x1f\x1e\x1dMallory")
    res = gitstate(team, "transition", "alice", "inbox", "-m", "a\x1fb \x1e @bob hello")
    assert res.returncode == 0, res.stderr
    last = moves_of(team, "log", "alice")[-1]
    assert last["to"] == "inbox" and last["author"] == "Eve\x1f\x1e\x1dMallory"
    subject = git(team, "log", "-1", "--format=%s").stdout.rstrip("\n")
    assert last["text"] == subject.split("] ", 1)[1] and last["text"].endswith("@bob hello")
    msgs = js(team, "inbox", "bob")["messages"]
    assert msgs[-1]["author"] == "Eve\x1f\x1e\x1dMallory" and "@bob hello" in msgs[-1]["subject"]
    assert {r["agent"]: r["state"] for r in js(team, "roster")["living"]}["alice"] == "inbox"


def test_log_inbox_and_freeze_state_travel_in_time(team):
    from gitstate.history.views import freeze_state, inbox, transitions
    walk(team, "carol", "inbox")
    before = git(team, "rev-parse", "HEAD").stdout.strip()
    assert gitstate(team, "transition", "bob", "inbox", "--body", "@carol see the plan").returncode == 0
    walk(team, "carol", "distill")
    assert gitstate(team, "freeze", "carol").returncode == 1        # writes the template
    fill_freeze_state(team / "data" / "freeze-states" / "carol.md")
    assert gitstate(team, "freeze", "carol").returncode == 0
    repo = open_managed(str(team))
    assert [m["to"] for m in transitions(repo, "carol")][-1] == "frozen"
    assert [m["to"] for m in transitions(repo, "carol", at=before)] == ["bootstrap", "inbox"]
    assert len(inbox(repo, "carol")["messages"]) == 1
    assert inbox(repo, "carol", at=before)["messages"] == []
    shown = freeze_state(repo, "carol")
    assert shown["path"] == "data/freeze-states/carol.md" and "handoff_notes" in shown["sections"]
    assert js(team, "show", "carol") == shown
    with pytest.raises(Exception, match="no freeze-state"):
        freeze_state(repo, "carol", at=before)


def test_every_inbox_at_once_equals_each_inbox(team):
    from gitstate.history.views import inbox, inboxes
    assert gitstate(team, "transition", "bob", "inbox", "--body", "@carol @ALL hello").returncode == 0
    assert gitstate(team, "inbox", "carol", "--mark-read").returncode == 0
    assert gitstate(team, "transition", "alice", "inbox", "--body", "@carol again").returncode == 0
    repo = open_managed(str(team))
    every = inboxes(repo)
    assert set(every) == {"alice", "bob", "carol"}
    for agent in every:
        assert every[agent] == inbox(repo, agent)
    assert [m["from"] for m in every["carol"]["messages"]] == ["alice"]   # read up to bob's


def test_one_agents_log_and_inbox_equal_everyones_filtered(team):
    from gitstate.history.views import inbox, inboxes, transitions
    set_state_line(team, "bob", "state", "inbox")
    git(team, "commit", "-q", "-am", "@BOB: [STATE:inbox] shouting my id\n\n@Carol and @ALL: hi")
    assert gitstate(team, "transition", "alice", "inbox",
                    "--body", "@bobby is not @bob.").returncode == 0
    repo = open_managed(str(team))
    everyone = transitions(repo)
    for agent in ("alice", "bob", "carol"):
        assert transitions(repo, agent) == [m for m in everyone if m["agent"] == agent]
        assert inbox(repo, agent) == inboxes(repo)[agent]
    assert [m["to"] for m in transitions(repo, "bob")] == ["bootstrap", "inbox"]
    assert [m["from"] for m in inbox(repo, "carol")["messages"]] == ["bob"]
    assert [m["from"] for m in inbox(repo, "bob")["messages"]] == ["alice"]


def test_log_limit_since_and_newest_first(team):
    import os
    env_time = {"GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    git_env = dict(os.environ, **env_time)
    subprocess_run = __import__("subprocess").run
    every = [r["commit"] for r in moves_of(team, "log")]
    assert len(every) >= 3
    assert [r["commit"] for r in moves_of(team, "log", "--limit", "2")] == every[-2:]
    assert [r["commit"] for r in moves_of(team, "log", "-n", "2", "--newest-first")] \
        == every[-2:][::-1]
    assert [r["commit"] for r in moves_of(team, "log", "--reverse")] == every[::-1]
    assert moves_of(team, "log", "--limit", "0") == []
    # a move dated long ago is left out by --since; one of today is kept
    set_state_line(team, "alice", "summary", "an old progress note")
    git(team, "add", "-A")
    proc = subprocess_run(["git", "commit", "-qm", "@alice: [STATE:bootstrap] old note"],
                          cwd=team, env=git_env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    old = git(team, "rev-parse", "HEAD").stdout.strip()
    assert old in [r["commit"] for r in moves_of(team, "log")]
    recent = [r["commit"] for r in moves_of(team, "log", "--since", "2 days ago")]
    assert old not in recent and set(recent) == set(every)
    assert old in [r["commit"] for r in moves_of(team, "log", "--since", "2019-12-31")]
    res = gitstate(team, "log", "--since", "garbage")
    assert res.returncode == 2 and "is not a date" in res.stderr


def test_vacancies_name_the_last_holder_by_history_not_by_clock(repo, monkeypatch):
    for var in ("GIT_COMMITTER_DATE", "GIT_AUTHOR_DATE"):      # every commit in one second
        monkeypatch.setenv(var, "2026-11-22T10:00:00Z")
    assert gitstate(repo, "spawn", "aaron", "--role", "steward").returncode == 0
    walk(repo, "aaron", "inbox")
    assert gitstate(repo, "bury", "aaron", "--summary", "first").returncode == 0
    assert gitstate(repo, "spawn", "zed", "--role", "steward").returncode == 0
    walk(repo, "zed", "inbox")
    res = gitstate(repo, "bury", "zed", "--summary", "second")
    assert res.returncode == 0
    assert "Role 'steward' is vacant. Last held by zed" in res.stdout     # the notice
    vac = {v["role"]: v for v in js(repo, "vacancies")["vacancies"]}
    assert vac["steward"]["last_holder"] == "zed"
    assert vac["steward"]["since_commit"] == git(repo, "rev-parse", "HEAD").stdout.strip()
    # and so from a cold read (no index) as from the saved one
    import shutil
    shutil.rmtree(repo / ".git" / "gitstate")
    assert {v["role"]: v for v in js(repo, "vacancies")["vacancies"]}["steward"][
        "last_holder"] == "zed"


def test_log_reads_the_team_line_and_no_move_of_a_merged_branch(repo, monkeypatch):
    """The line rule: `log` reads the first-parent line, in its order; a move made on a branch
    merged with `-s ours` never happened on the line and is not shown. (Before, the merged
    lines' moves interleaved by time, each "from" taken on its own line.)"""
    def at(stamp):
        for var in ("GIT_COMMITTER_DATE", "GIT_AUTHOR_DATE"):
            monkeypatch.setenv(var, f"2026-11-22T10:{stamp}:00Z")
    at("00")
    assert gitstate(repo, "spawn", "alice").returncode == 0
    assert gitstate(repo, "spawn", "bob").returncode == 0
    walk(repo, "alice", "inbox", "distill")
    git(repo, "branch", "side")
    at("10")
    walk(repo, "alice", "deep_work")                       # main, at :10
    git(repo, "switch", "-q", "side")
    at("05")
    with moves_on_this_branch(repo, "side"):
        walk(repo, "bob", "inbox")                         # side, at :05
    at("15")
    set_state_line(repo, "alice", "state", "idle")         # side moves alice too
    git(repo, *UNHOOKED, "commit", "-qam", "@alice: [STATE:idle] meanwhile")
    git(repo, "switch", "-q", "main")
    at("20")
    git(repo, "merge", "-q", "-s", "ours", "--no-edit", "side")   # work: takes no state
    rows = moves_of(repo, "log")
    moves = [(r["agent"], r["from"], r["to"]) for r in rows]
    assert ("alice", "distill", "deep_work") in moves
    assert ("alice", "distill", "idle") not in moves and ("bob", "bootstrap", "inbox") \
        not in moves                                       # the side's moves are not the line's
    times = [r["time"] for r in rows]
    assert times == sorted(times)
    verdict = json.loads(gitstate(repo, "verify", "--json").stdout)
    assert verdict["ok"], verdict


def test_verify_shows_progress_on_a_terminal_only(repo):
    from conftest import on_a_terminal
    for i in range(3):
        git(repo, "commit", "-q", "--allow-empty", "-m", f"work {i}")
    script = ("import gitstate.history.verify as v; v.BATCH = 2\n"
              "from gitstate.cli.main import main; raise SystemExit(main(['verify']))")
    proc, seen = on_a_terminal(repo, script)
    assert proc.returncode == 0 and b"commits judged" in seen and b"\x1b[K" in seen
    piped = gitstate(repo, "verify", "--no-cache")
    assert "commits judged" not in piped.stderr and piped.stderr == ""
    as_json = gitstate(repo, "verify", "--json", "--no-cache")
    assert as_json.stderr == ""


def test_a_cold_read_of_a_long_history_shows_progress_on_a_terminal_only(repo):
    import shutil

    from conftest import on_a_terminal
    assert gitstate(repo, "spawn", "alice").returncode == 0
    for i in range(11):
        set_state_line(repo, "alice", "summary", f"step {i}")
        git(repo, "commit", "-q", "-am", f"@alice: [STATE:bootstrap] step {i}")
    shutil.rmtree(repo / ".git" / "gitstate")                # a cold read
    script = ("import gitstate.history.progress as p; p.EVERY = 5\n"
              "from gitstate.cli.main import main; raise SystemExit(main(['roster']))")
    proc, seen = on_a_terminal(repo, script)
    assert proc.returncode == 0 and b"reading history: 10 ..." in seen and b"\x1b[K" in seen
    assert b"alice" in proc.stdout and b"reading history" not in proc.stdout
    shutil.rmtree(repo / ".git" / "gitstate")
    piped = gitstate(repo, "roster")
    assert piped.returncode == 0 and piped.stderr == ""


def test_verify_judges_the_same_whatever_the_batches(repo):
    """Objects of the next batch are read while this one is judged: batches of 1, 2 and 3
    commits must find what one batch finds, law changes and merges included."""
    import subprocess
    import sys
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox")
    set_state_line(repo, "alice", "state", "deep_work")                # illegal
    git(repo, *UNHOOKED, "commit", "-qam", "@alice: [STATE:deep_work] skip")
    law = repo / "protocols" / "lifecycle.yaml"
    law.write_text(law.read_text().replace("max: 1", "max: 2", 1))
    git(repo, "commit", "-qam", "two architects", "-m", "Approved-by: zach")
    git(repo, "branch", "side")
    set_state_line(repo, "alice", "state", "bootstrap")                # illegal again
    git(repo, *UNHOOKED, "commit", "-qam", "@alice: [STATE:bootstrap] back")
    git(repo, "switch", "-q", "side")
    git(repo, "commit", "-q", "--allow-empty", "-m", "side work")
    git(repo, "switch", "-q", "main")
    git(repo, *UNHOOKED, "merge", "-q", "--no-edit", "side")
    whole = json.loads(gitstate(repo, "verify", "--json", "--no-cache").stdout)
    assert {p["rule"] for p in whole["problems"]} == {"illegal-transition"}
    assert len(whole["problems"]) == 2
    for size in (1, 2, 3):
        script = (f"import gitstate.history.verify as v; v.BATCH = {size}\n"
                  "from gitstate.cli.main import main\n"
                  "raise SystemExit(main(['verify', '--json', '--no-cache']))")
        res = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True,
                             text=True)
        assert json.loads(res.stdout) == whole, size


def test_log_says_when_nothing_matches_its_filters(team):
    assert gitstate(team, "log", "--since", "2099-01-01").stdout.strip() == \
        "no moves since 2099-01-01"
    assert gitstate(team, "log", "-n", "0").stdout.strip() == "no moves asked for (--limit 0)"


def test_verify_counts_role_holders_as_they_come_and_go_along_a_line(team):
    """verify keeps the living holders of each role as it walks a line of history: a role
    freed by a death may be taken, and taken once only; a commit made with the hooks off that
    takes it a second time is flagged, and only that one."""
    def unhooked_spawn(agent: str, subject: str) -> None:
        p = state_path(team, agent)
        p.parent.mkdir(parents=True)
        p.write_text(f"---\nagent: {agent}\nstate: bootstrap\nrole: architect\n---\n")
        git(team, "add", "-A")
        git(team, *UNHOOKED, "commit", "-q", "-m", subject)

    walk(team, "alice", "inbox", "distill")
    assert gitstate(team, "bury", "alice", "--summary", "done").returncode == 0
    unhooked_spawn("dave", "@dave: [STATE:bootstrap] the free architect role")
    unhooked_spawn("eve", "@eve: [STATE:bootstrap] a second architect")
    res = gitstate(team, "verify", "--json", "--no-cache")
    rules = [(p["subject"], p["rule"]) for p in json.loads(res.stdout)["problems"]]
    assert rules == [("@eve: [STATE:bootstrap] a second architect", "role-max")]
