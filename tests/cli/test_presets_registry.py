"""registry, round two (seed 001): a parent that ended spawns nobody; the log's task,
instructions, started and ended kept in the state file and the roster; `await` streams the
progress of the agents it waits for."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import UNHOOKED, git, gitstate, state_path
from test_presets import managed, new_state_file, ok, refused_commit, roster


def test_a_parent_that_ended_spawns_no_children(tmp_path):
    repo = managed(tmp_path, "registry")
    ok(repo, "spawn", "root", "--role", "general")
    ok(repo, "spawn", "lead", "--role", "general")
    ok(repo, "spawn", "p1", "--parent", "root", "--role", "programmer")   # while root works
    ok(repo, "transition", "root", "done")
    ok(repo, "transition", "lead", "failed")
    for parent in ("root", "lead"):
        res = gitstate(repo, "spawn", "late", "--parent", parent, "--role", "researcher")
        assert res.returncode == 1 and "[parent-ended]" in res.stderr
        assert f"parent '{parent}' has ended" in res.stderr
    # by hand, the hook says the same
    new_state_file(repo, "late", state="in-progress", parent="root", depth=1)
    refused_commit(repo, "@late: [STATE:in-progress] born", "parent-ended")
    # a clone without hooks: verify names it
    git(repo, *UNHOOKED, "commit", "-qm", "@late: [STATE:in-progress] born")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[parent-ended]" in res.stdout
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    ok(repo, "spawn", "late", "--parent", "p1", "--role", "researcher")   # p1 still works


def test_task_instructions_started_and_ended(tmp_path):
    repo = managed(tmp_path, "registry")
    ok(repo, "spawn", "p1", "--role", "programmer", "--task", "fix the parser",
       "--instructions", "Read grammar.py first. Report with [UPDATE] lines.")
    text = state_path(repo, "p1").read_text()
    assert "task: fix the parser" in text and "instructions: Read grammar.py" in text
    [row] = roster(repo)["living"]
    assert row["task"] == "fix the parser" and row["started"] and row["ended"] is None
    assert 'task "fix the parser"' in ok(repo, "roster").stdout
    ok(repo, "transition", "p1", "done")
    [row] = roster(repo)["cemetery"]
    assert row["ended"] and row["ended"] >= row["started"]
    # a state file written by hand keeps its log fields, as the roster shows
    new_state_file(repo, "p2", state="in-progress", task="'review it'",
                   started="'2026-01-01T00:00:00Z'")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "@p2: [STATE:in-progress] by hand")
    p2 = next(r for r in roster(repo)["living"] if r["agent"] == "p2")
    assert (p2["task"], p2["started"]) == ("review it", "2026-01-01T00:00:00Z")


def test_await_streams_progress_commits(tmp_path):
    repo = managed(tmp_path, "registry")
    ok(repo, "spawn", "a", "--task", "count")
    ok(repo, "spawn", "other")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    waiting = subprocess.Popen([sys.executable, "-m", "gitstate", "await", "a"], cwd=repo,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert waiting.stdout.readline().strip() == "a: in-progress"   # it has started watching
    ok(repo, "transition", "a", "in-progress", "-m", "counted to ten")
    ok(repo, "transition", "other", "in-progress", "-m", "not awaited")
    # progress by a plain git commit is streamed too
    p = state_path(repo, "a")
    p.write_text(p.read_text().replace("summary: null", "summary: twenty"))
    git(repo, "commit", "-qam", "@a: [STATE:in-progress] counted to twenty")
    ok(repo, "transition", "a", "done", "-m", "finished")
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    lines = [ln.split("  (")[0] for ln in out.splitlines()]
    assert lines == ["a: [in-progress]  counted to ten", "a: [in-progress]  counted to twenty",
                     "a: in-progress -> done  finished"]
    assert json.loads(ok(repo, "status", "a", "--json").stdout)["state"] == "done"
