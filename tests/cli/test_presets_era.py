"""era (seed 004): a working agent's unprefixed work commit is refused when its runtime names
it (GITSTATE_AGENT); logout appends to the shared logout.log in the logout commit; idle goes
back to inbox at the check interval (`sweep`). Round three: the seed's own commits and what
an era agent writes instead, a seed-layout repository moved over, deep_work's token limit,
idle_since, and no mortality advice: era declares no mortality clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from conftest import UNHOOKED, git, gitstate, make_repo, set_state_line, state_path, walk
from test_presets import managed, ok, refused_commit, roster


def as_agent(repo, agent: str, *cmd: str) -> subprocess.CompletedProcess:
    """A command run by an agent's runtime, which names the agent in the environment."""
    return subprocess.run(list(cmd), cwd=repo, env=dict(os.environ, GITSTATE_AGENT=agent),
                          capture_output=True, text=True)


def test_a_working_agents_bare_work_commit_is_refused(tmp_path):
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    walk(repo, "era-1", "inbox", "distill", "deep_work")
    (repo / "mywork.py").write_text("x = 1\n")
    git(repo, "add", "mywork.py")
    res = as_agent(repo, "ERA-1", "git", "commit", "-qm", "Updated feature")   # the seed's BAD
    assert res.returncode == 1 and "[atomic]" in res.stderr
    assert "GITSTATE_AGENT says this commit is era-1's" in res.stderr
    assert "'@era-1: [STATE:deep_work] <text>'" in res.stderr
    # the seed's GOOD: work and state in one commit
    set_state_line(repo, "era-1", "summary", "feature")
    git(repo, "add", "-A")
    res = as_agent(repo, "era-1", "git", "commit", "-qm", "@era-1: [STATE:deep_work] Feature: X")
    assert res.returncode == 0, res.stderr
    # through the CLI, the same agent's move carries its work
    (repo / "more.py").write_text("y = 2\n")
    git(repo, "add", "more.py")
    res = as_agent(repo, "era-1", sys.executable, "-m", "gitstate", "transition", "era-1",
                   "deep_work", "-m", "Feature: Y")
    assert res.returncode == 0, res.stderr
    # whose work is unknown, or the agent is not working: an ordinary commit
    (repo / "notes.md").write_text("by a human\n")
    git(repo, "add", "notes.md")
    git(repo, "commit", "-qm", "notes")
    walk(repo, "era-1", "inbox", "distill")
    ok(repo, "logout", "era-1", "--note", "done for today")
    (repo / "notes.md").write_text("later\n")
    git(repo, "add", "notes.md")
    assert as_agent(repo, "era-1", "git", "commit", "-qm", "after logout").returncode == 0
    assert ok(repo, "verify").returncode == 0


def test_logout_appends_to_the_shared_log_in_the_logout_commit(tmp_path):
    repo = managed(tmp_path, "era")
    for agent in ("era-1", "era-2"):
        ok(repo, "spawn", agent)
        walk(repo, agent, "inbox", "distill")
    # the context is the system's (policies.fourth_wall): measured, here set by the human
    ok(repo, "transition", "era-1", "distill", "--set", "context_pct=62", "--approved-by", "zach")
    out = ok(repo, "logout", "era-1", "--note", "parser half done").stdout
    assert "era-1: distill -> logout" in out
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@era-1: [STATE:logout] Context: 62%, see logout.log"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == [
        "agent/era-1/_state.md", "logout.log"]
    out = ok(repo, "logout", "era-2", "--note", "read era-1's note").stdout
    assert "parser half done" in out                     # the last entries, to read first
    lines = (repo / "logout.log").read_text().splitlines()
    assert len(lines) == 2 and "era-1  context 62%  parser half done" in lines[0]
    # by hand: logging out without the log, or rewriting it, is refused
    walk(repo, "era-1", "bootstrap", "inbox", "distill")
    set_state_line(repo, "era-1", "state", "logout")
    err = refused_commit(repo, "@era-1: [STATE:logout] bye", "log")
    assert "appends an entry to logout.log" in err and "unchanged" in err
    (repo / "logout.log").write_text("history rewritten\n")
    err = refused_commit(repo, "@era-1: [STATE:logout] bye", "log")
    assert "rewritten, not appended to" in err
    (repo / "logout.log").write_text("\n".join(lines) + "\nera-1 by hand: bye\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "@era-1: [STATE:logout] bye")
    res = gitstate(repo, "logout", "era-1", "--note", "again")
    assert res.returncode == 1 and "no state with a log is one move away" in res.stderr
    # a clone without hooks: verify names a logout without its log entry
    walk(repo, "era-2", "bootstrap", "inbox", "distill")
    set_state_line(repo, "era-2", "state", "logout")
    git(repo, *UNHOOKED, "commit", "-qam", "@era-2: [STATE:logout] quietly")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[log]" in res.stdout


def test_idle_goes_back_to_inbox_at_the_check_interval(tmp_path):
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    ok(repo, "spawn", "era-2")
    walk(repo, "era-1", "inbox", "distill")
    walk(repo, "era-2", "inbox", "distill", "idle")
    when = f"@{int(time.time()) - 3600} +0000"
    env = dict(os.environ, GIT_COMMITTER_DATE=when, GIT_AUTHOR_DATE=when)
    res = subprocess.run([sys.executable, "-m", "gitstate", "transition", "era-1", "idle"],
                         cwd=repo, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = ok(repo, "sweep").stdout
    assert "era-1: idle -> inbox" in out and "era-2" not in out
    assert git(repo, "log", "-1", "--format=%an").stdout.strip() == "gitstate"
    # a message may bring an idle agent back sooner, by hand or through the CLI
    set_state_line(repo, "era-2", "state", "inbox")
    git(repo, "commit", "-qam", "@era-2: [STATE:inbox] a message arrived")
    states = {r["agent"]: r["state"] for r in roster(repo)["living"]}
    assert states == {"era-1": "inbox", "era-2": "inbox"}
    assert ok(repo, "verify").returncode == 0


def test_era_declares_no_mortality_clock_so_its_agents_get_no_advice(tmp_path):
    """Seed 004 has the agent read its context (`context_pct`) and decide; it has no phases
    that ask anything (haak's "legacy: consolidate ..." is seed 000's)."""
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    res = json.loads(ok(repo, "transition", "era-1", "inbox", "--set", "context_pct=92",
                        "--approved-by", "zach", "--json").stdout)
    assert "advice" not in res
    status = json.loads(ok(repo, "status", "era-1", "--json").stdout)
    assert status["context_pct"] == 92 and status["advice"] is None
    assert "mortality:" not in ok(repo, "status", "era-1").stdout
    for doc in (repo / "protocols").glob("*.md"):      # its protocol says the seed's words
        assert "legacy" not in doc.read_text() and "mortality" not in doc.read_text(), doc


SEED_COMMITS = [   # (the seed's subject, the state its _state.md names, refused by)
    ("@era-1: [STATE:bootstrap] Restored from abc123", "inbox", "tag-mismatch"),
    ("@era-1: [STATE:inbox] Processed 2 messages, 1 queued", "inbox", None),
    ("@era-1: [STATE:distill] Thread: parser, next: deep_work", "deep_work", "tag-mismatch"),
    ("@era-1: [STATE:deep_work] parser: tokenizer done", "deep_work", None),
]


def test_the_seeds_commits_and_what_an_era_agent_writes_instead(tmp_path):
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    # bootstrap: the seed tags the step just finished; gitstate the state entered
    set_state_line(repo, "era-1", "state", "inbox")
    err = refused_commit(repo, "@era-1: [STATE:bootstrap] Restored from abc123", "tag-mismatch")
    assert "the subject says [STATE:bootstrap] but agent/era-1/_state.md writes 'state: " \
        "inbox'" in err
    git(repo, "commit", "-qam", "@era-1: [STATE:inbox] Restored from abc123")
    # inbox: the seed's progress commit is accepted as it is
    set_state_line(repo, "era-1", "summary", "2 messages")
    git(repo, "commit", "-qam", "@era-1: [STATE:inbox] Processed 2 messages, 1 queued")
    walk(repo, "era-1", "distill")
    set_state_line(repo, "era-1", "state", "deep_work")
    set_state_line(repo, "era-1", "thread", "parser")     # chosen in distill, as it leaves
    refused_commit(repo, "@era-1: [STATE:distill] Thread: parser, next: deep_work",
                   "tag-mismatch")
    git(repo, "commit", "-qam", "@era-1: [STATE:deep_work] thread: parser")
    set_state_line(repo, "era-1", "summary", "tokenizer")
    git(repo, "commit", "-qam", "@era-1: [STATE:deep_work] parser: tokenizer done")
    walk(repo, "era-1", "inbox", "distill", "idle")
    assert "idle_since:" in state_path(repo, "era-1").read_text()     # stamped on entry
    walk(repo, "era-1", "inbox", "distill")
    # logout: the seed writes `state: offline`
    set_state_line(repo, "era-1", "state", "offline")
    (repo / "logout.log").write_text("era-1: bye\n")
    err = refused_commit(repo, "@era-1: [STATE:logout] Context: 62%, see logout.log",
                         "unknown-state")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")
    ok(repo, "transition", "era-1", "distill", "--set", "context_pct=62", "--approved-by", "zach")
    ok(repo, "logout", "era-1", "--note", "bye")
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@era-1: [STATE:logout] Context: 62%, see logout.log"
    assert ok(repo, "verify").returncode == 0


def test_a_history_written_the_seeds_way_moves_over_and_is_read_by_its_tags(tmp_path):
    repo = make_repo(tmp_path / "seed")
    (repo / "agent").mkdir()
    subjects = [s.replace("era-1", "ERA-1") for s, _, _ in SEED_COMMITS] + [
        "@ERA-1: [STATE:inbox] back to inbox",
        "@ERA-1: [STATE:distill] Thread: parser, next: logout",
        "@ERA-1: [STATE:logout] Context: 62%, see logout.log"]
    states = [st for _, st, _ in SEED_COMMITS] + ["inbox", "logout", "offline"]
    for n, (subject, state) in enumerate(zip(subjects, states)):   # one agent/_state.md
        (repo / "agent" / "_state.md").write_text(
            f"---\nstate: {state}\nthread: parser\ncontext_pct: {n}\n---\nnotes\n")
        if state == "offline":
            (repo / "logout.log").write_text("era-1: bye\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", subject)
    # moving over (README "era"): one directory per agent, named by its id
    (repo / "agent" / "era-1").mkdir()
    git(repo, "mv", "agent/_state.md", "agent/era-1/_state.md")
    f = repo / "agent" / "era-1" / "_state.md"
    f.write_text(f.read_text().replace("state: offline", "agent: era-1\nstate: logout"))
    git(repo, "commit", "-qam", "era-1's state file in gitstate's layout")
    ok(repo, "init", "--lifecycle", "era")
    out = ok(repo, "verify").stdout
    assert "7 tagged commits older than protocols/lifecycle.yaml judged by their tags alone" \
        in out and "ok" in out
    moves = [(m["from"], m["to"]) for m in json.loads(ok(repo, "log", "era-1", "--json").stdout)[
        "moves"]]
    assert moves[:3] == [(None, "bootstrap"), ("bootstrap", "inbox"), ("inbox", "distill")]
    assert moves[-1] == ("distill", "logout")
    assert {r["agent"]: r["state"] for r in roster(repo)["freezer"]} == {"era-1": "logout"}
    walk(repo, "era-1", "bootstrap", "inbox")                    # the next cold start
    assert ok(repo, "verify").returncode == 0


def test_deep_work_ends_at_the_token_limit(tmp_path):
    repo = managed(tmp_path, "era")
    ok(repo, "spawn", "era-1")
    walk(repo, "era-1", "inbox", "distill")
    ok(repo, "transition", "era-1", "deep_work", "--set", "thread=parser",    # the human's
       "--set", "max_tokens=50000", "--set", "tokens=1000", "--approved-by", "zach")
    res = gitstate(repo, "transition", "era-1", "deep_work", "--set", "tokens=50000",
                   "--approved-by", "zach")
    assert res.returncode == 1 and "[token-limit]" in res.stderr
    assert "deep_work ends at the token limit; go to inbox" in res.stderr
    set_state_line(repo, "era-1", "tokens", "61000")
    refused_commit(repo, "@era-1: [STATE:deep_work] more", "token-limit")
    git(repo, *UNHOOKED, "commit", "-qam", "@era-1: [STATE:deep_work] no hooks")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[token-limit]" in res.stdout
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    ok(repo, "transition", "era-1", "inbox", "--set", "tokens=50000", "-m", "budget spent",
       "--approved-by", "zach")
    assert ok(repo, "verify").returncode == 0
