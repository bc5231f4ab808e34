"""The real Claude Code drives each preset's `runtime:` table against the scripted model: the
moves its events make (a prompt, a turn's end, a compaction, a session's start and end, a
sub-agent's start and stop) are commits on the team line, judged like any move."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from conftest import from_template, git, gitstate, make_repo
from scripted_model import Turn, everything, text, tool
from test_claude_code_e2e import bash, model, run  # noqa: F401  (the scripted model fixture)

pytestmark = pytest.mark.e2e


def _repo(root: Path, preset: str) -> None:
    repo = make_repo(root / "repo")
    (repo / "README").write_text("hi\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    res = gitstate(repo, "init", "--lifecycle", preset, "--runtime", "claude-code")
    assert res.returncode == 0, res.stderr


def repo_of(tmp_path: Path, preset: str) -> Path:
    return from_template(tmp_path, ("claude-events", preset), lambda r: _repo(r, preset)) \
        / "repo"


def moves(repo: Path, since: str) -> list[str]:
    return git(repo, "log", "--reverse", "--format=%an|%s", f"{since}..HEAD").stdout.splitlines()


def decisions(repo: Path) -> list[dict]:
    """The events log: a line per runtime event decided."""
    import json
    log = repo / ".git" / "gitstate" / "runtime" / "events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def settled(repo: Path, session: str, event: str, before: int = 0,
            timeout: float = 60) -> None:
    """Wait until the session's `event` was decided since the events log had `before` lines (a
    prompt, a turn's end and a session's end are decided in a process of their own, after
    `claude -p` may have ended): the line it adds to the events log."""
    import time
    deadline = time.monotonic() + timeout
    while not any(e["session"] == session and e["event"] == event
                  for e in decisions(repo)[before:]):
        assert time.monotonic() < deadline, f"{event} of {session} was never decided"
        time.sleep(0.05)


def tip(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def test_squad_a_prompt_makes_the_session_active_and_its_turns_end_idle(tmp_path, model):
    repo = repo_of(tmp_path, "squad")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "sam", "--role", "specialist", "--session",
                    session).returncode == 0
    since = tip(repo)
    token = model.script("squad-turn", Turn(bash("true")), Turn(text("fixed")))
    run(repo, model, f"fix it {token}", session)
    settled(repo, session, "stop")
    log = moves(repo, since)
    assert "gitstate|@sam: [STATE:active] runtime: prompt" in log, log
    assert log[-1] == "gitstate|@sam: [STATE:idle] runtime: stop", log
    # the user clears the conversation: the session ends (reason clear) and is cleaned up
    since, before = tip(repo), len(decisions(repo))
    run(repo, model, "/clear", session, resume=True)
    settled(repo, session, "session_end", before)
    assert moves(repo, since)[-1] == \
        "gitstate|@sam: [STATE:cleanup] runtime: session end (clear)", moves(repo, since)
    assert "final_summary: fixed" in git(repo, "show", "HEAD:agent/sam/_state.md").stdout
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_maos_the_process_runs_from_its_session_start_and_completes_at_its_end(
        tmp_path, model):
    repo = repo_of(tmp_path, "maos")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "eve", "--role", "engineer", "--session",
                    session).returncode == 0
    since = tip(repo)
    token = model.script("maos-run", Turn(text("shipped it")))
    res = run(repo, model, f"build {token}", session)
    settled(repo, session, "session_end")
    log = moves(repo, since)
    assert log[0].startswith(f"gitstate|@eve: [STATE:running] runtime: pid {res.pid}"), log
    assert log[-1] == "gitstate|@eve: [STATE:complete] runtime: session end (other)", log
    assert "summary: shipped it" in git(repo, "show", "HEAD:agent/eve/_state.md").stdout


def test_registry_a_sub_agent_is_registered_when_it_starts_and_ended_when_it_stops(
        tmp_path, model):
    repo = repo_of(tmp_path, "registry")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "lead", "--role", "general", "--session",
                    session).returncode == 0
    since = tip(repo)
    token = model.script(
        "registry-ok",
        Turn(tool("Agent", {"description": "look", "subagent_type": "general-purpose",
                            "prompt": "find the bug [script:registry-ok-child]"})),
        Turn(text("thanks")))
    model.script("registry-ok-child", Turn(text("the parser drops a byte")))
    before = len(decisions(repo))
    run(repo, model, f"delegate {token}", session, tools="Bash,Agent")
    settled(repo, session, "subagent_stop", before)
    child_said = everything(model.requests("registry-ok-child")[0])
    assert "registered as general-purpose-" in child_said, child_said
    # seed 001: the sub-agent's model is told the [UPDATE] instruction and its depth
    assert "[UPDATE] Report progress as you go: `gitstate transition general-purpose-" \
        in child_said and "at depth 1" in child_said, child_said
    log = moves(repo, since)
    born = next(line for line in log if "runtime: sub-agent" in line)
    child = born.split("@", 1)[1].split(":", 1)[0]
    assert child.startswith("general-purpose-")
    front = git(repo, "show", f"HEAD:agent/{child}/_state.md").stdout
    assert "state: done" in front and "parent: lead" in front and "depth: 1" in front
    assert "summary: the parser drops a byte" in front

    # a sub-agent whose model fails ends on an API error: failed (another lead's session: a
    # resumed one replays its earlier turns, which the scripted model would answer again)
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "lead2", "--role", "general", "--session",
                    session).returncode == 0
    token = model.script(
        "registry-bad",
        Turn(tool("Agent", {"description": "dig", "subagent_type": "general-purpose",
                            "prompt": "dig [script:registry-bad-child]"})),
        Turn(text("it failed")))
    model.script("registry-bad-child", Turn(error=400))
    since, before = tip(repo), len(decisions(repo))
    run(repo, model, f"delegate {token}", session, tools="Bash,Agent")
    settled(repo, session, "subagent_stop", before)
    failed = [line for line in moves(repo, since) if "[STATE:failed]" in line]
    assert len(failed) == 1, moves(repo, since)
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_haak_records_a_compaction_where_the_agent_stands(tmp_path, model):
    repo = repo_of(tmp_path, "haak")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "ada", "--session", session).returncode == 0
    token = model.script("haak-first", Turn(text("hello")))
    run(repo, model, f"start {token}", session)
    since, before = tip(repo), len(decisions(repo))
    run(repo, model, "/compact", session, resume=True)
    settled(repo, session, "pre_compact", before)
    log = moves(repo, since)
    assert "gitstate|@ada: [STATE:bootstrap] runtime: pre compact (manual)" in log, log


def test_era_a_compaction_ends_deep_work_and_a_session_ending_after_distill_logs_out(
        tmp_path, model):
    repo = repo_of(tmp_path, "era")
    session = str(uuid.uuid4())
    assert gitstate(repo, "spawn", "eli", "--session", session).returncode == 0
    for state in ("inbox", "distill", "deep_work"):
        res = gitstate(repo, "transition", "eli", state)
        assert res.returncode == 0, res.stderr
    token = model.script("era-first", Turn(text("working")))
    before = len(decisions(repo))
    run(repo, model, f"work {token}", session)
    settled(repo, session, "session_end", before)       # decided after `claude -p` ends
    since, before = tip(repo), len(decisions(repo))
    run(repo, model, "/compact", session, resume=True)
    settled(repo, session, "pre_compact", before)
    # this session's end is decided in a process of its own: before eli moves on, so that it
    # is decided where eli stood when the session ended (inbox), not in distill
    settled(repo, session, "session_end", before)
    log = moves(repo, since)
    assert "gitstate|@eli: [STATE:inbox] runtime: pre compact (manual)" in log, log

    res = gitstate(repo, "transition", "eli", "distill")
    assert res.returncode == 0, res.stderr
    since, before = tip(repo), len(decisions(repo))
    token = model.script("era-last", Turn(text("signing off")))
    run(repo, model, f"wrap up {token}", session, resume=True)
    settled(repo, session, "session_end", before)
    assert moves(repo, since)[-1] == \
        "gitstate|@eli: [STATE:logout] runtime: session end (other)", moves(repo, since)
    logged = git(repo, "show", "HEAD:logout.log").stdout    # its note, in the same commit
    assert logged.rstrip().endswith("  eli  context 0%  signing off"), logged
    assert gitstate(repo, "verify", "--no-cache").returncode == 0
