"""The runtime moves the state: each preset's `runtime:` table, driven through the hooks
`init --runtime claude-code` installs, with the payloads Claude Code sends (the real binary
drives them in test_claude_code_e2e.py). A move an event makes is judged like any move; one
the law refuses is not made and is said on stderr; the runtime is never stopped."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from conftest import from_template, git, gitstate, make_repo, state_path
from test_claude_code import EVENTS, base, hook, start

EVENTS.update({"prompt": "UserPromptSubmit", "stop": "Stop", "pre-compact": "PreCompact",
               "session-end": "SessionEnd", "subagent-stop": "SubagentStop",
               "stop-failure": "StopFailure"})


def _repo(root: Path, preset: str) -> None:
    repo = make_repo(root / "repo")
    res = gitstate(repo, "init", "--lifecycle", preset, "--runtime", "claude-code")
    assert res.returncode == 0, res.stderr


def repo_of(tmp_path: Path, preset: str) -> Path:
    return from_template(tmp_path, ("runtime-events", preset), lambda r: _repo(r, preset)) \
        / "repo"


def state(repo: Path, agent: str) -> str:
    text = git(repo, "show", f"HEAD:{state_path(repo, agent).relative_to(repo)}").stdout
    return next(line.split(":", 1)[1].strip() for line in text.splitlines()
                if line.startswith("state:"))


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").stdout)


def bound(repo: Path, agent: str, *spawn_args: str) -> str:
    session = str(uuid.uuid4())
    res = gitstate(repo, "spawn", agent, "--session", session, *spawn_args)
    assert res.returncode == 0, res.stderr
    assert start(repo, session).returncode == 0
    return session


def decided(repo: Path) -> list[dict]:
    """The events log: a line for each event decided (the detached ones included)."""
    gdir = Path(git(repo, "rev-parse", "--absolute-git-dir").stdout.strip())   # a worktree's own
    log = gdir / "gitstate" / "runtime" / "events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def settle(repo: Path, before: int) -> None:
    """Wait for the events log to have more than `before` lines (a detached event decided)."""
    import time
    deadline = time.monotonic() + 60
    while len(decided(repo)) <= before:
        assert time.monotonic() < deadline, "the event was never decided"
        time.sleep(0.05)


def event(repo: Path, name: str, session: str, **fields) -> str:
    """The hook for `name` as Claude Code runs it, and, once the event is decided (a prompt,
    a turn's end and a session's end are decided in a process of their own: waited for by the
    line it adds to the events log), what was said of it (the hook always exits 0)."""
    import time
    before = len(decided(repo))
    res = hook(repo, name, {**base(repo, session, EVENTS[name]), **fields})
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    deadline = time.monotonic() + 60
    while len(decided(repo)) == before:
        assert time.monotonic() < deadline, f"{name} was never decided: {res.stderr}"
        time.sleep(0.05)
    return decided(repo)[-1]["said"]


def transcript(path: Path, *entries: dict) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


USER = {"type": "user", "message": {"role": "user", "content": "go"}}
SAID = {"type": "assistant", "message": {"role": "assistant",
                                         "content": [{"type": "text", "text": "all done"}]}}
API_ERROR = {"type": "assistant", "isApiErrorMessage": True, "error": "invalid_request",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "API Error"}]}}
INTERRUPTED = {"type": "user", "message": {"role": "user", "content": [
    {"type": "text", "text": "[Request interrupted by user]"}]}}


def test_squad_a_prompt_makes_the_session_active_and_the_turns_end_idle(tmp_path):
    repo = repo_of(tmp_path, "squad")
    session = bound(repo, "sam", "--role", "specialist")
    assert state(repo, "sam") == "spawning"
    event(repo, "prompt", session, prompt="fix the parser")
    assert state(repo, "sam") == "active"
    event(repo, "stop", session, stop_hook_active=False, last_assistant_message="fixed")
    assert state(repo, "sam") == "idle"
    subject = git(repo, "log", "-1", "--format=%an|%s").stdout.strip()
    assert subject == "gitstate|@sam: [STATE:idle] runtime: stop", subject
    made = commits(repo)
    event(repo, "stop", session, stop_hook_active=False)    # idle already: no rule applies
    assert commits(repo) == made
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_squad_session_end_cleans_up_a_cleared_session_with_its_last_message(tmp_path):
    repo = repo_of(tmp_path, "squad")
    session = bound(repo, "sam", "--role", "specialist")
    event(repo, "prompt", session, prompt="go")
    event(repo, "stop", session, stop_hook_active=False)
    tr = transcript(tmp_path / "t.jsonl", USER, SAID)
    event(repo, "session-end", session, reason="clear", transcript_path=str(tr))
    assert state(repo, "sam") == "cleanup"
    front = git(repo, "show", "HEAD:agent/sam/_state.md").stdout
    assert "final_summary: all done" in front


def test_squad_a_session_that_ends_resumable_stays_idle_for_its_timeout(tmp_path):
    """prompt_input_exit (the user quit; `claude --resume` brings it back): no rule, so no
    commit; its idle timeout suspends it, as any idle session's."""
    repo = repo_of(tmp_path, "squad")
    sam = bound(repo, "sam", "--role", "specialist")
    event(repo, "stop", sam, stop_hook_active=False)
    made = commits(repo)
    assert event(repo, "session-end", sam, reason="prompt_input_exit") == ""
    assert state(repo, "sam") == "idle" and commits(repo) == made


def own_law(tmp_path: Path, runtime: str, extra: str = "") -> Path:
    """A repository managed by a lifecycle of the test's own (working, resting, done)."""
    repo = make_repo(tmp_path / "repo")
    law = tmp_path / "lifecycle.yaml"
    law.write_text("initial: working\nstates:\n  working: {}\n  resting: {}\n"
                   "  gone: {roster: dead, terminal: true, requires: [final_summary]}\n"
                   "transitions:\n  working: [resting, gone]\n  resting: [working]\n"
                   f"policies:\n  humans: [zach]\n  approval: [{extra}law]\n"
                   f"runtime:\n{runtime}")
    res = gitstate(repo, "init", "--lifecycle", str(law), "--runtime", "claude-code")
    assert res.returncode == 0, res.stderr
    return repo


def test_a_move_the_law_refuses_is_not_made_and_is_said(tmp_path):
    """`gone` requires a final summary the rule does not write: the stop is not made into a
    move, and what the law said is said (exit 0: the runtime goes on)."""
    repo = own_law(tmp_path, "  stop: [{moves: ['working -> gone']}]\n")
    sam = bound(repo, "sam")
    made = commits(repo)
    said = event(repo, "stop", sam, stop_hook_active=False)
    assert state(repo, "sam") == "working" and commits(repo) == made
    assert "sam stays working" in said and "final_summary" in said, said


def test_squad_a_cleared_session_without_a_last_message_is_cleaned_up_all_the_same(tmp_path):
    """SessionEnd carries no last message: a session whose last turn wrote none is cleaned up
    with what happened as its summary."""
    repo = repo_of(tmp_path, "squad")
    sam = bound(repo, "sam", "--role", "specialist")
    event(repo, "stop", sam, stop_hook_active=False)
    event(repo, "session-end", sam, reason="clear",
          transcript_path=str(transcript(tmp_path / "t.jsonl", USER)))
    assert state(repo, "sam") == "cleanup"
    assert "final_summary: 'runtime: session end (clear)'" in git(
        repo, "show", "HEAD:agent/sam/_state.md").stdout


def test_an_agents_bash_cannot_report_another_sessions_events(tmp_path):
    """The events of a session are its runtime's to report: `gitstate hook prompt` run from
    another process with sam's session id (read from his state file) moves nothing."""
    import subprocess
    import sys
    repo = repo_of(tmp_path, "squad")
    sam = bound(repo, "sam", "--role", "specialist")
    made = commits(repo)
    forged = json.dumps({**base(repo, sam, "UserPromptSubmit"), "prompt": "x"})
    res = subprocess.run([sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run("
                          "[sys.executable, '-m', 'gitstate', 'hook', 'prompt'], "
                          "input=sys.argv[1], text=True).returncode)", forged],
                         cwd=repo, capture_output=True, text=True)
    assert res.returncode == 0
    assert commits(repo) == made and state(repo, "sam") == "spawning"
    assert "reported by its runtime" in decided(repo)[-1]["said"]


def test_squad_a_turn_that_ended_on_an_api_error_puts_the_session_in_error(tmp_path):
    repo = repo_of(tmp_path, "squad")
    session = bound(repo, "sam", "--role", "specialist")
    event(repo, "prompt", session, prompt="go")
    event(repo, "stop-failure", session, error="server_error",
          last_assistant_message="API Error: 500")
    assert state(repo, "sam") == "error"


def test_a_later_event_decided_first_is_not_undone_by_an_earlier_one(tmp_path):
    """Async hooks may run out of order: the turn's end (sent first) must not make idle a
    session whose next prompt (sent after it) was decided already."""
    repo = repo_of(tmp_path, "squad")
    session = bound(repo, "sam", "--role", "specialist")
    event(repo, "prompt", session, prompt="one")
    assert state(repo, "sam") == "active"
    from gitstate.runtime import memory
    gdir = str(repo / ".git")
    import time
    sent_first = time.time_ns()
    with memory.EventOrder(gdir, session, time.time_ns()) as in_order:   # the later prompt
        assert in_order
    with memory.EventOrder(gdir, session, sent_first) as in_order:       # the earlier stop
        assert not in_order


def test_maos_the_session_runs_from_its_start_and_ends_complete_or_failed(tmp_path):
    repo = repo_of(tmp_path, "maos")
    session = bound(repo, "ann", "--role", "engineer")
    assert state(repo, "ann") == "running"    # SessionStart: pending -> running, with its pid
    assert "pid:" in git(repo, "show", "HEAD:agent/ann/_state.md").stdout
    tr = transcript(tmp_path / "ok.jsonl", USER, SAID)
    event(repo, "session-end", session, reason="other", transcript_path=str(tr))
    assert state(repo, "ann") == "complete"

    session = bound(repo, "bob", "--role", "engineer")
    tr = transcript(tmp_path / "bad.jsonl", USER, API_ERROR)
    event(repo, "session-end", session, reason="other", transcript_path=str(tr))
    assert state(repo, "bob") == "failed"


def test_a_registry_child_is_given_the_update_instruction_and_its_depth(tmp_path):
    """Seed 001: a child's instructions are its "Full prompt with [UPDATE] instruction
    appended", and its depth is in its environment: "`CLAUDE_AGENT_DEPTH`: Current depth + 1
    for child". A sub-agent is told the instruction its state file's instructions end with,
    and its depth; a session's Bash is given its agent's depth, and a runtime started from
    that Bash (a child process) the parent's depth plus one."""
    repo = repo_of(tmp_path, "registry")
    lead_env = tmp_path / "lead.env"
    lead_env.write_text("")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "lead", "--role", "general", "--session", session) \
        .returncode == 0
    assert start(repo, session, env={"CLAUDE_ENV_FILE": str(lead_env)}).returncode == 0
    assert "export CLAUDE_AGENT_DEPTH=0" in lead_env.read_text().splitlines()
    tool = {**base(repo, session, "PreToolUse"), "tool_name": "Agent", "tool_use_id": "t1",
            "tool_input": {"description": "find the bug", "prompt": "read the parser",
                           "subagent_type": "researcher"}}
    assert hook(repo, "spawn-guard", tool).returncode == 0
    res = hook(repo, "subagent-start", {**base(repo, session, "SubagentStart"),
                                        "agent_id": "a1b2c3d4e5", "agent_type": "researcher"})
    told = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    update = ("[UPDATE] Report progress as you go: `gitstate transition researcher-a1b2c3d4e5 "
              "in-progress -m \"<what is done>\"` (GITSTATE_AGENT=researcher-a1b2c3d4e5).")
    assert told.endswith(update), told
    assert "at depth 1" in told and "CLAUDE_AGENT_DEPTH=1" in told
    front = git(repo, "show", "HEAD:agent/researcher-a1b2c3d4e5/_state.md").stdout
    assert "read the parser" in front and "depth: 1" in front
    # the instructions as recorded: the prompt, then the same [UPDATE] line
    assert re.search(r"read the parser\s+\[UPDATE\] Report progress", front), front
    # a runtime started from lead's Bash inherits its environment: its SessionStart sees a
    # session that is not lead's, so it is lead's child, one deeper
    child_env = tmp_path / "child.env"
    child_env.write_text("")
    briefed = start(repo, "s-child", env={"CLAUDE_ENV_FILE": str(child_env),
                                          "GITSTATE_AGENT": "lead", "GITSTATE_SESSION": session,
                                          "CLAUDE_AGENT_DEPTH": "0"})
    assert "started by lead, so you are at depth 1" in briefed.stdout
    assert "export CLAUDE_AGENT_DEPTH=1" in child_env.read_text().splitlines()


def test_registry_sub_agents_are_registered_at_start_and_ended_done_or_failed(tmp_path):
    repo = repo_of(tmp_path, "registry")
    session = bound(repo, "lead", "--role", "general")
    tool = {**base(repo, session, "PreToolUse"), "tool_name": "Agent", "tool_use_id": "t1",
            "tool_input": {"description": "find the bug", "prompt": "read the parser",
                           "subagent_type": "researcher"}}
    assert hook(repo, "spawn-guard", tool).returncode == 0
    res = hook(repo, "subagent-start", {**base(repo, session, "SubagentStart"),
                                        "agent_id": "a1b2c3d4e5", "agent_type": "researcher"})
    assert res.returncode == 0, res.stderr
    told = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "registered as researcher-a1b2c3d4e5" in told, told
    child = "researcher-a1b2c3d4e5"
    assert state(repo, child) == "in-progress"
    front = git(repo, "show", f"HEAD:agent/{child}/_state.md").stdout
    assert "parent: lead" in front and "depth: 1" in front
    # the seed's log: its task, and its instructions with the [UPDATE] instruction appended
    assert "find the bug" in front and "read the parser" in front, front
    assert "[UPDATE] Report progress as you go" in front, front
    tr = transcript(tmp_path / "sub.jsonl", USER, SAID)
    event(repo, "subagent-stop", session, agent_id="a1b2c3d4e5", agent_type="researcher",
          agent_transcript_path=str(tr), last_assistant_message="found it", stop_hook_active=False)
    assert state(repo, child) == "done"
    assert "summary: found it" in git(repo, "show", f"HEAD:agent/{child}/_state.md").stdout

    assert hook(repo, "spawn-guard", tool).returncode == 0
    hook(repo, "subagent-start", {**base(repo, session, "SubagentStart"),
                                  "agent_id": "ffff0000aa", "agent_type": "researcher"})
    tr = transcript(tmp_path / "sub2.jsonl", USER, SAID, INTERRUPTED)
    event(repo, "subagent-stop", session, agent_id="ffff0000aa", agent_type="researcher",
          agent_transcript_path=str(tr), stop_hook_active=False)
    assert state(repo, "researcher-ffff0000aa") == "failed"     # interrupted

    assert hook(repo, "spawn-guard", tool).returncode == 0
    hook(repo, "subagent-start", {**base(repo, session, "SubagentStart"),
                                  "agent_id": "eeee1111bb", "agent_type": "researcher"})
    event(repo, "stop-failure", session, agent_id="eeee1111bb", agent_type="researcher",
          error="unknown", last_assistant_message="API Error: 400")
    assert state(repo, "researcher-eeee1111bb") == "failed"     # its turn ended on an API error
    assert "summary: 'API Error: 400'" in git(
        repo, "show", "HEAD:agent/researcher-eeee1111bb/_state.md").stdout
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_haak_records_the_compaction_where_the_agent_stands_and_never_blocks_it(tmp_path):
    repo = repo_of(tmp_path, "haak")
    session = bound(repo, "ada")
    made, before = commits(repo), len(decided(repo))
    res = hook(repo, "pre-compact", {**base(repo, session, "PreCompact"), "trigger": "auto",
                                     "custom_instructions": None})
    assert res.returncode == 0 and '"decision"' not in res.stdout    # never a block
    settle(repo, before)
    assert commits(repo) == made + 1 and state(repo, "ada") == "bootstrap"
    assert "runtime: pre compact (auto)" in git(repo, "log", "-1", "--format=%s").stdout


def test_an_event_without_a_rule_starts_no_git_and_changes_nothing(tmp_path):
    """registry gives the prompt no rule: its hook reads the binding and ends, no git run
    (a git that cannot start would say so)."""
    repo = repo_of(tmp_path, "registry")
    session = bound(repo, "lead", "--role", "general")
    made = commits(repo)
    res = hook(repo, "prompt", {**base(repo, session, "UserPromptSubmit"), "prompt": "hi"},
               env={"GIT_EXEC_PATH": "/nonexistent", "PATH": "/nonexistent:" +
                    __import__("os").environ["PATH"]})
    assert res.returncode == 0 and res.stderr == "" and commits(repo) == made


@pytest.mark.parametrize("payload", ["", "not json", "[1, 2]", '{"session_id": 5}',
                                     '{"cwd": "/nonexistent", "session_id": "x"}'])
def test_a_malformed_event_is_ignored_never_a_traceback(tmp_path, payload):
    import subprocess
    import sys
    repo = repo_of(tmp_path, "squad")
    res = subprocess.run([sys.executable, "-m", "gitstate", "hook", "stop"], input=payload,
                         cwd=repo, capture_output=True, text=True)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr


def test_the_lifecycle_shows_the_runtime_table_from_its_declaration(tmp_path):
    repo = repo_of(tmp_path, "squad")
    shown = json.loads(gitstate(repo, "lifecycle", "--json").stdout)["runtime"]
    assert shown["prompt"] == [{"moves": ["spawning -> active", "idle -> active",
                                          "suspended -> active", "error -> active"],
                                "when": [], "spawn": False,
                                "record": False, "summary": None}]
    assert [rule["when"] for rule in shown["stop"]] == [["failure"], []]
    text = gitstate(repo, "lifecycle").stdout
    assert "session_end" in text and "idle -> cleanup" in text and "clear, logout" in text


@pytest.mark.parametrize("runtime, words", [
    ({"nap": [{"moves": ["a -> b"]}]}, "unknown event 'nap'"),
    ({"stop": [{"moves": ["b -> a"]}]}, "no transition makes"),
    ({"stop": [{"moves": ["a -> zz"]}]}, "not a state"),
    ({"session_end": [{"when": ["crash"], "moves": ["a -> b"]}]}, "'crash' is not a kind"),
    ({"stop": [{"spawn": True}]}, "only subagent_start"),
    ({"stop": [{}]}, "a rule needs moves"),
])
def test_a_runtime_table_that_cannot_be_followed_is_refused_with_its_line(runtime, words):
    import yaml

    from gitstate.law.load import LifecycleInvalid, load_lifecycle
    text = yaml.safe_dump({"initial": "a", "states": {"a": {}, "b": {"terminal": True}},
                           "transitions": {"a": ["b"]}, "runtime": runtime})
    with pytest.raises(LifecycleInvalid) as err:
        load_lifecycle(text)
    assert words in str(err.value), str(err.value)
    assert "protocols/lifecycle.yaml:" in str(err.value)     # with the line it is on


def test_the_documented_runtime_tables_are_the_lifecycles_own_lines():
    """The documentation's table of each preset (docs/how-to/claude-code.md) comes from its
    declaration."""
    from gitstate.law.runtime_table import describe
    from gitstate.law.load import load_lifecycle
    from gitstate.resources import shipped
    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "claude-code.md"
    readme = page.read_text()
    shown = readme.split("<!-- gen: runtime-tables -->\n```text\n", 1)[1].split("```", 1)[0]
    made = "".join(
        f"{name}\n" + "".join(line + "\n" for line in describe(load_lifecycle(
            shipped("protocols", name, "lifecycle.yaml").read_text()).runtime))
        for name in ("registry", "squad", "maos", "haak", "era"))
    assert shown == made


def test_an_event_that_would_make_a_gated_move_makes_none_and_says_why(tmp_path):
    """A human's approval is a signature no agent's session can give: the event is not made
    into a move, and the reason is said."""
    repo = own_law(tmp_path, "  stop: [{moves: ['working -> resting']}]\n",
                   "'working -> resting', ")
    session = bound(repo, "sam")
    made = commits(repo)
    said = event(repo, "stop", session, stop_hook_active=False)
    assert state(repo, "sam") == "working" and commits(repo) == made
    assert "needs a human's approval" in said, said


def test_an_agent_in_its_own_worktree_moves_the_team_line(tmp_path):
    """The lead's setup: `gitstate worktree add`, Claude Code started there; its events move
    the team line (main), which the lead's roster reads, not the worktree's branch."""
    repo = repo_of(tmp_path, "squad")
    git(repo, "add", ".claude", ".mcp.json")
    git(repo, "commit", "-q", "-m", "Claude Code runs gitstate")
    res = gitstate(repo, "worktree", "add", "sam", "--role", "specialist", "--json")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    where, session = Path(record["path"]), record["session"]
    assert start(where, session).returncode == 0
    event(where, "prompt", session, prompt="go")
    assert state(repo, "sam") == "active"            # main, as the lead sees it
    event(where, "stop", session, stop_hook_active=False)
    assert state(repo, "sam") == "idle"
    assert git(repo, "log", "-1", "--format=%s", "main").stdout.strip() == \
        "@sam: [STATE:idle] runtime: stop"


def test_a_prompt_answers_the_session_that_waited_for_its_person(tmp_path, monkeypatch):
    """(A notice clears at the agent's next state commit, from the notice's second on: the
    setup's commits are dated a minute back, so the notice comes after them.)"""
    import time
    repo = repo_of(tmp_path, "registry")    # no rule for a prompt: it moves nothing
    with monkeypatch.context() as m:
        for role in ("AUTHOR", "COMMITTER"):
            m.setenv(f"GIT_{role}_DATE", f"@{int(time.time()) - 60} +0000")
        session = bound(repo, "sam", "--role", "general")
    EVENTS["notification"] = "Notification"
    res = hook(repo, "notification", {**base(repo, session, "Notification"),
                                      "notification_type": "idle_prompt",
                                      "message": "Claude is waiting for your input"})
    assert res.returncode == 0, res.stderr
    waiting = json.loads(gitstate(repo, "attention", "--json").stdout)["waiting"]
    assert [w["agent"] for w in waiting] == ["sam"]
    made = commits(repo)
    res = hook(repo, "prompt", {**base(repo, session, "UserPromptSubmit"), "prompt": "here"})
    assert res.returncode == 0 and commits(repo) == made
    assert json.loads(gitstate(repo, "attention", "--json").stdout)["waiting"] == []


@pytest.mark.parametrize("kind, agent_id", [("../../etc/passwd", "x/../y"), ("ünï", "∆∆∆"),
                                            ("", "a" * 500), ("A" * 300, "ok123456")])
def test_a_hostile_sub_agent_kind_or_id_is_registered_under_a_safe_id_or_not_at_all(
        tmp_path, kind, agent_id):
    repo = repo_of(tmp_path, "registry")
    session = bound(repo, "lead", "--role", "general")
    res = hook(repo, "subagent-start", {**base(repo, session, "SubagentStart"),
                                        "agent_id": agent_id, "agent_type": kind})
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    made = [p for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "agent/").stdout.split()
            if p.endswith("/_state.md") and p != "agent/lead/_state.md"]
    assert len(made) == 1 and made[0].count("/") == 2 and ".." not in made[0], made
    child = made[0].split("/")[1]
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*[a-z0-9]", child), child
    assert not (tmp_path / "etc").exists()


def test_a_refused_session_start_move_still_records_what_the_runtime_knows(tmp_path):
    repo = own_law(tmp_path, "  session_start: [{moves: ['working -> resting']}]\n",
                   "'working -> resting', ")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "sam", "--session", session).returncode == 0
    res = start(repo, session)
    assert res.returncode == 0
    front = git(repo, "show", "HEAD:agent/sam/_state.md").stdout
    assert "state: working" in front and "\npid: " in front, front


def test_what_an_agent_could_plant_is_read_safely(tmp_path):
    """A damaged notice, a transcript that is a pipe, a huge session id, a .git file that
    points elsewhere: no traceback, no hang, no write outside, every log line whole."""
    import os
    import subprocess
    import sys
    repo = repo_of(tmp_path, "registry")
    session = bound(repo, "lead", "--role", "general")
    notices = repo / ".git" / "gitstate" / "runtime" / "attention"
    notices.mkdir(parents=True, exist_ok=True)
    for i, at in enumerate(("1e300", "NaN", "-5", '"soon"')):
        (notices / f"bad{i}.json").write_text(
            '{"agent": "lead", "session": "x", "kind": "permission_prompt", "at": ' + at + "}")
    res = gitstate(repo, "attention", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["waiting"] == [], res.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    hook(repo, "spawn-guard", {**base(repo, session, "PreToolUse"), "tool_name": "Agent",
                               "tool_use_id": "t", "tool_input": {"subagent_type": "researcher"}})
    hook(repo, "subagent-start", {**base(repo, session, "SubagentStart"),
                                  "agent_id": "c0ffee00", "agent_type": "researcher"})
    before = len(decided(repo))
    res = subprocess.run(["sh", "-c", '"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate '
                          "subagent-stop"], input=json.dumps({
                              **base(repo, session, "SubagentStop"), "agent_id": "c0ffee00",
                              "agent_transcript_path": str(fifo)}), text=True, cwd=repo,
                         env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo)},
                         capture_output=True, timeout=60)     # a read of the pipe would hang
    settle(repo, before)
    assert res.returncode == 0 and state(repo, "researcher-c0ffee00") == "done"
    big = "B" * 20000
    subprocess.run([sys.executable, "-m", "gitstate", "hook", "pre-compact"], cwd=repo,
                   input=json.dumps({**base(repo, big, "PreCompact"), "trigger": big}),
                   text=True, capture_output=True, env={**os.environ, "GITSTATE_AGENT": "lead"})
    assert all(isinstance(e, dict) for e in decided(repo))     # every line one whole object
    elsewhere = tmp_path / "elsewhere"
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / ".git").write_text(f"gitdir: {elsewhere}/deep\n")
    subprocess.run([sys.executable, "-m", "gitstate", "hook", "prompt"], cwd=evil,
                   input=json.dumps({**base(evil, "s", "UserPromptSubmit")}), text=True,
                   capture_output=True)
    assert not elsewhere.exists()


@pytest.mark.parametrize("key", ["state", "session", "agent", "pid"])
def test_a_rule_may_not_write_the_last_message_into_gitstates_own_keys(key):
    import yaml

    from gitstate.law.load import LifecycleInvalid, load_lifecycle
    text = yaml.safe_dump({"initial": "a", "states": {"a": {}, "b": {"terminal": True}},
                           "transitions": {"a": ["b"]},
                           "runtime": {"stop": [{"moves": ["a -> b"], "summary": key}]}})
    with pytest.raises(LifecycleInvalid) as err:
        load_lifecycle(text)
    assert "not one of gitstate's" in str(err.value)


def test_an_agent_that_writes_anothers_session_into_its_file_binds_neither(tmp_path):
    """ana records sam's session as hers: the session is then bound to nobody (not to the
    first name), so neither sam's events nor his Bash are hers."""
    repo = repo_of(tmp_path, "squad")
    sam = bound(repo, "sam", "--role", "specialist")
    res = gitstate(repo, "spawn", "ana", "--role", "specialist", "--session", sam)
    assert res.returncode == 0, res.stderr
    said = json.loads(start(repo, sam, source="compact").stdout)["hookSpecificOutput"][
        "additionalContext"]
    assert "recorded by more than one agent (ana, sam)" in said, said
    made = commits(repo)
    res = hook(repo, "prompt", {**base(repo, sam, "UserPromptSubmit"), "prompt": "x"})
    assert res.returncode == 0 and commits(repo) == made
    assert state(repo, "ana") == "spawning" and state(repo, "sam") == "spawning"


def test_squad_a_resumed_session_reads_the_teams_newest_decisions(tmp_path):
    """Seed 002: on resume the session re-reads decisions.md (`policies.decisions`)."""
    repo = repo_of(tmp_path, "squad")
    session = bound(repo, "sam", "--role", "specialist")
    (repo / "decisions.md").write_text("# Decisions\n" + "".join(
        f"- {n}: decision {n}\n" for n in range(1, 13)))
    git(repo, "add", "decisions.md")
    git(repo, "commit", "-q", "-m", "decisions")
    said = json.loads(start(repo, session, source="resume").stdout)["hookSpecificOutput"][
        "additionalContext"]
    assert "The team's decisions (decisions.md, newest 8 lines of 13):" in said, said
    assert "- 12: decision 12" in said and "- 4: decision 4" not in said
