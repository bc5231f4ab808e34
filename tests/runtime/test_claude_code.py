"""Claude Code's hooks, fed the JSON the runtime sends (shapes of
https://code.claude.com/docs/en/hooks) with a real transcript file, in a repository set up by
`gitstate init --runtime claude-code`. Each test asserts what the runtime would read on stdout
and the commits made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import from_template, git, gitstate, make_repo, walk


EVENTS = {"session-start": "SessionStart", "context": "PostToolUse",
          "spawn-guard": "PreToolUse", "subagent-start": "SubagentStart"}


def hook(repo: Path, name: str, event: dict, env: dict | None = None):
    """The hook as Claude Code runs it: the command that `.claude/settings.json` names for the
    event, in a shell, with the event's JSON on stdin."""
    import os
    full = dict(os.environ, **(env or {}))
    groups = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"][
        EVENTS[name]]
    commands = [h["command"] for g in groups for h in g["hooks"]
                if h["command"] == f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate {name}']
    assert len(commands) == 1, groups
    full.setdefault("CLAUDE_PROJECT_DIR", str(repo))
    return subprocess.run(["sh", "-c", commands[0]], cwd=repo, input=json.dumps(event),
                          capture_output=True, text=True, env=full)


def said(res) -> str:
    """What the model reads: hookSpecificOutput.additionalContext ('' when silent)."""
    assert res.returncode == 0, res.stderr
    if not res.stdout.strip():
        return ""
    return json.loads(res.stdout)["hookSpecificOutput"].get("additionalContext", "")


def base(repo: Path, session: str, event: str, transcript: Path | None = None) -> dict:
    return {"session_id": session, "transcript_path": str(transcript or repo / "none.jsonl"),
            "cwd": str(repo), "permission_mode": "default", "hook_event_name": event}


def start(repo, session, source="startup", env=None):
    event = {**base(repo, session, "SessionStart"), "source": source,
             "model": "claude-opus-4-6"}
    return hook(repo, "session-start", event, env)


def transcript(path: Path, *turns: int, model: str = "claude-opus-4-6") -> Path:
    """A session transcript: a user line, then per turn an assistant line with its usage (the
    prompt split over fresh, cached and cache-writing tokens), and a sub-agent's line last."""
    lines = [{"type": "user", "sessionId": "s", "message": {"role": "user", "content": "go"}}]
    for prompt in turns:
        lines.append({"type": "assistant", "sessionId": "s", "isSidechain": False,
                      "message": {"model": model, "role": "assistant",
                                  "content": [{"type": "tool_use", "id": "toolu_2",
                                               "name": "Bash", "input": {}}],
                                  "usage": {"input_tokens": 10,
                                            "cache_read_input_tokens": prompt - 110,
                                            "cache_creation_input_tokens": 100,
                                            "output_tokens": 321}}})
        lines.append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}]}})
    lines.append({"type": "assistant", "isSidechain": True, "message": {
        "model": model, "usage": {"input_tokens": 199_000, "output_tokens": 1}}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def post_tool(repo, session, tr):
    event = {**base(repo, session, "PostToolUse", tr), "tool_name": "Bash",
             "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""},
             "tool_use_id": "toolu_2"}
    return hook(repo, "context", event)


def agent_tool(repo, session, kind="general-purpose", tool="Agent"):
    event = {**base(repo, session, "PreToolUse"), "tool_name": tool, "tool_use_id": "toolu_9",
             "tool_input": {"description": "look around", "prompt": "find the bug",
                            "subagent_type": kind}}
    return hook(repo, "spawn-guard", event)


def _claude_repo(root: Path) -> None:
    repo = make_repo(root / "repo")
    (repo / "README").write_text("hi\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    res = gitstate(repo, "init", "--runtime", "claude-code")
    assert res.returncode == 0, res.stderr


@pytest.fixture
def claude_repo(tmp_path) -> Path:
    """`gitstate init --runtime claude-code` in a repository with one commit (a copy of one
    built once per session)."""
    return from_template(tmp_path, "claude-repo", _claude_repo) / "repo"


def head(repo):
    return git(repo, "rev-parse", "HEAD").stdout.strip()


# -- init --runtime claude-code ---------------------------------------------------------------


def test_init_merges_hooks_keeping_the_users_own(empty_repo):
    settings = empty_repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "./check-bash.sh"}]}],
                "SessionStart": [{"hooks": [
                    {"type": "command",
                     "command": "gitstate hook session-start --agent \"$GITSTATE_AGENT\""}]},
                    {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    settings.write_text(json.dumps(mine, indent=4))
    doctor = json.loads(gitstate(empty_repo, "doctor", "--json").stdout)["findings"]
    assert [f["status"] for f in doctor if f["check"] == "runtime"] == []   # not managed yet
    res = gitstate(empty_repo, "init", "--runtime", "claude-code", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)["integrations"][0]
    assert report["changed"] and set(report["added"]) == {
        "SessionStart", "PostToolUse", "PreToolUse", "SubagentStart", "UserPromptSubmit", "Stop",
        "PreCompact", "SessionEnd", "SubagentStop", "StopFailure", "Notification"}
    got = json.loads(settings.read_text())
    assert got["permissions"] == mine["permissions"]
    assert got["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]    # the user's first, untouched
    assert got["hooks"]["Stop"][1]["hooks"][0]["command"].endswith("gitstate stop")
    pre = got["hooks"]["PreToolUse"]
    assert pre[0] == mine["hooks"]["PreToolUse"][0]          # the user's first, untouched
    assert pre[1]["matcher"] == "Agent|Task"
    shim = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate'
    assert pre[1]["hooks"][0]["command"] == f"{shim} spawn-guard"
    start_groups = got["hooks"]["SessionStart"]               # the old snippet updated in place
    assert start_groups[0]["hooks"][0]["command"] == f"{shim} session-start"
    assert start_groups[0]["matcher"] == "startup|resume|clear|compact"
    assert start_groups[1] == mine["hooks"]["SessionStart"][1]
    assert got["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == f"{shim} context"
    assert str(empty_repo) not in settings.read_text()        # nothing of this machine's
    assert "gitstate.python" in (empty_repo / ".claude" / "hooks" / "gitstate").read_text()
    doctor = json.loads(gitstate(empty_repo, "doctor", "--json").stdout)["findings"]
    assert {"check": "runtime", "status": "ok"}.items() <= next(
        f for f in doctor if f["check"] == "runtime").items()
    before = settings.read_bytes()
    again = json.loads(gitstate(empty_repo, "init", "--runtime", "claude-code",
                                "--json").stdout)["integrations"][0]
    assert again["changed"] is False and again["added"] == [] and settings.read_bytes() == before


def test_init_refuses_settings_that_are_not_json(empty_repo):
    (empty_repo / ".claude").mkdir()
    (empty_repo / ".claude" / "settings.json").write_text('{"hooks": \n  oops}')
    res = gitstate(empty_repo, "init", "--runtime", "claude-code")
    assert res.returncode == 1 and ".claude/settings.json:2" in res.stderr
    assert (empty_repo / ".claude" / "settings.json").read_text() == '{"hooks": \n  oops}'


# -- SessionStart -----------------------------------------------------------------------------


def test_session_start_briefs_the_agent_bound_at_spawn(claude_repo, tmp_path):
    repo = claude_repo
    assert gitstate(repo, "spawn", "alice", "--role", "architect", "--session",
                    "sess-a").returncode == 0
    walk(repo, "alice", "inbox")
    git(repo, "commit", "-q", "--allow-empty", "-m", "review the fold, @alice")
    env_file = tmp_path / "claude.env"
    env_file.write_text("")
    text = said(start(repo, "sess-a", env={"CLAUDE_ENV_FILE": str(env_file)}))
    assert "alice: inbox (living); next: distill, frozen, dead, inbox" in text
    assert "What inbox asks (protocols/inbox.md)" in text
    assert "Inbox: 1 message waiting" in text and "review the fold, @alice" in text
    assert "Role 'steward' has never been filled" in text
    assert "Roster: 1 living: alice (you): inbox (architect) (`gitstate roster`)." in text
    assert "export GITSTATE_AGENT=alice" in env_file.read_text()

    resumed = said(start(repo, "sess-a", "resume"))
    assert "(resumed) alice: inbox" in resumed
    assert resumed.index("Inbox: 1 message") < resumed.index("What inbox asks")

    compacted = said(start(repo, "sess-a", "compact"))
    assert "(after compaction) alice: inbox" in compacted and "role: architect" in compacted
    assert "has never been filled" not in compacted     # the essentials only


def test_session_start_binds_gitstate_agent_or_says_how_to_register(claude_repo):
    repo = claude_repo
    text = said(start(repo, "sess-x"))
    assert "no agent is bound" in text and "gitstate spawn <your-id> --session sess-x" in text
    assert "new session" not in text and "Roster: 0 living" in text
    gitstate(repo, "spawn", "bob")
    text = said(start(repo, "sess-b", env={"GITSTATE_AGENT": "bob"}))
    assert "bob: bootstrap" in text
    # a session started from bob's (its environment says so) is bob's child, not bob
    text = said(start(repo, "sess-c", env={"GITSTATE_AGENT": "bob",
                                           "GITSTATE_SESSION": "sess-b"}))
    assert "started by bob, so you are at depth 1" in text
    assert "--parent bob --session sess-c" in text


# -- measured context -------------------------------------------------------------------------


def test_context_is_measured_and_recorded_only_when_a_phase_is_crossed(claude_repo, tmp_path):
    repo = claude_repo
    gitstate(repo, "spawn", "alice", "--session", "s1")
    walk(repo, "alice", "inbox", "distill", "deep_work")
    said(start(repo, "s1"))
    tr = tmp_path / "s1.jsonl"
    (repo / "work.txt").write_text("half done\n")
    git(repo, "add", "work.txt")                          # the agent's staged work

    tip = head(repo)
    assert said(post_tool(repo, "s1", transcript(tr, 20_000, 60_000))) == ""   # 30 %: fresh
    assert head(repo) == tip

    told = said(post_tool(repo, "s1", transcript(tr, 60_000, 110_000)))       # 55 %
    assert "context 55% (110,000 of 200,000 tokens), mortality phase midlife" in told
    log = git(repo, "log", "-1", "--format=%an|%s").stdout.strip()
    assert log == "gitstate|@alice: [STATE:deep_work] context 55% (110,000 of 200,000 " \
                  "tokens): midlife"
    assert "context_pct: 55" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    assert git(repo, "show", "--stat", "--format=", "HEAD").stdout.count("|") == 1
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["work.txt"]

    tip = head(repo)
    assert said(post_tool(repo, "s1", transcript(tr, 120_000))) == ""           # 60 %: same
    assert head(repo) == tip
    told = said(post_tool(repo, "s1", transcript(tr, 152_000)))                 # 76 %
    assert "legacy" in told and "freeze-state" in told
    told = said(post_tool(repo, "s1", transcript(tr, 185_000)))                 # 92.5 %
    assert "urgent" in told and "freeze or die (`gitstate freeze alice`" in told
    assert [s for s in git(repo, "log", "--format=%s", f"{tip}..HEAD").stdout.splitlines()] == [
        "@alice: [STATE:deep_work] context 92.5% (185,000 of 200,000 tokens): urgent",
        "@alice: [STATE:deep_work] context 76% (152,000 of 200,000 tokens): legacy"]
    assert gitstate(repo, "verify", "--no-cache").returncode == 0

    # after a compaction the clock starts again; the next crossing is recorded anew
    said(start(repo, "s1", "compact"))
    tip = head(repo)
    assert said(post_tool(repo, "s1", transcript(tr, 30_000))) == ""
    assert "midlife" in said(post_tool(repo, "s1", transcript(tr, 101_000)))
    assert head(repo) != tip


def test_context_hook_is_silent_without_a_bound_session_or_a_transcript(claude_repo, tmp_path):
    repo = claude_repo
    tr = transcript(tmp_path / "t.jsonl", 150_000)
    tip = head(repo)
    assert said(post_tool(repo, "unknown", tr)) == ""
    gitstate(repo, "spawn", "carol", "--session", "s3")
    said(start(repo, "s3"))
    assert said(post_tool(repo, "s3", tmp_path / "missing.jsonl")) == ""
    (tmp_path / "junk.jsonl").write_text("not json\n{\"type\": \"assistant\"}\n")
    assert said(post_tool(repo, "s3", tmp_path / "junk.jsonl")) == ""
    assert head(repo) != tip   # only carol's spawn
    assert git(repo, "log", "-1", "--format=%s").stdout.startswith("@carol: [STATE:bootstrap]")


def test_context_hook_reads_only_a_regular_transcript_and_never_blocks(claude_repo, tmp_path):
    """The event's transcript_path is anyone's to write: a FIFO (an open for reading would
    wait for a writer forever), /dev/zero (never ends), a directory. The hook says nothing
    and returns at once for each; a real transcript still counts after them."""
    import os
    repo = claude_repo
    gitstate(repo, "spawn", "dora", "--session", "s4")
    said(start(repo, "s4"))
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for hostile in (fifo, Path("/dev/zero"), tmp_path):
        event = {**base(repo, "s4", "PostToolUse", hostile), "tool_name": "Bash",
                 "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""},
                 "tool_use_id": "toolu_2"}
        res = subprocess.run(["sh", "-c", "gitstate hook context"], cwd=repo,
                             input=json.dumps(event), capture_output=True, text=True,
                             timeout=60)
        assert said(res) == "", hostile
    assert "midlife" in said(post_tool(repo, "s4", transcript(tmp_path / "t.jsonl", 101_000)))


# -- the spawn guard --------------------------------------------------------------------------


def test_an_over_deep_spawn_is_refused_before_the_sub_agent_exists(claude_repo):
    repo = claude_repo
    gitstate(repo, "spawn", "root", "--session", "s-root")
    for parent, child in (("root", "c1"), ("c1", "c2"), ("c2", "c3")):
        assert gitstate(repo, "spawn", child, "--parent", parent).returncode == 0
    gitstate(repo, "transition", "c3", "inbox", "--set", "session=s-deep")
    said(start(repo, "s-deep"))
    tip = head(repo)
    res = agent_tool(repo, "s-deep")
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert res.returncode == 0 and out["permissionDecision"] == "deny"
    assert "[max-depth]" in out["permissionDecisionReason"]
    assert "depth 4; this lifecycle allows depths up to 3" in out["permissionDecisionReason"]
    assert head(repo) == tip

    said(start(repo, "s-root"))                          # the root may spawn: depth 1
    res = agent_tool(repo, "s-root", "Explore", tool="Task")
    assert res.returncode == 0 and res.stdout.strip() == ""
    event = {**base(repo, "s-root", "SubagentStart"), "agent_id": "a-1", "agent_type": "Explore"}
    told = said(hook(repo, "subagent-start", event))
    assert "sub-agent (Explore) of root, at depth 1" in told
    assert "gitstate spawn <your-id> --parent root --role Explore" in told
    assert said(hook(repo, "subagent-start", event)) == ""   # told once


def test_a_forbidden_kind_is_refused(tmp_path):
    repo = make_repo(tmp_path / "reg")
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    assert gitstate(repo, "init", "--lifecycle", "registry", "--runtime",
                    "claude-code").returncode == 0
    gitstate(repo, "spawn", "rev", "--role", "reviewer", "--session", "s-rev")
    said(start(repo, "s-rev"))
    reason = json.loads(agent_tool(repo, "s-rev", "programmer").stdout)[
        "hookSpecificOutput"]["permissionDecisionReason"]
    assert "[self-spawn] A reviewer may not spawn a programmer; it may spawn: " in reason
    assert agent_tool(repo, "s-rev", "researcher").stdout.strip() == ""
    gitstate(repo, "spawn", "prog", "--role", "programmer", "--session", "s-prog")
    said(start(repo, "s-prog"))
    reason = json.loads(agent_tool(repo, "s-prog", "programmer").stdout)[
        "hookSpecificOutput"]["permissionDecisionReason"]
    assert "[self-spawn] A programmer may not spawn another programmer; only roles with " \
        "'self_spawn: true' may." in reason
    assert "prog-sub" not in reason and "handover" not in reason


def test_a_spawn_beyond_the_pool_cap_is_refused(tmp_path):
    repo = make_repo(tmp_path / "pool")
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    assert gitstate(repo, "init", "--lifecycle", "squad", "--runtime",
                    "claude-code").returncode == 0
    for i in range(8):
        assert gitstate(repo, "spawn", f"s{i}").returncode == 0
    gitstate(repo, "transition", "s0", "active", "--set", "session=s-0")
    said(start(repo, "s-0"))
    reason = json.loads(agent_tool(repo, "s-0").stdout)["hookSpecificOutput"][
        "permissionDecisionReason"]
    assert "[max-living] At most 8 agents may be living at once; this spawn would make 9." \
        in reason


def test_a_hook_never_stops_the_runtime(tmp_path, claude_repo):
    bare = tmp_path / "nowhere"
    bare.mkdir()
    for name in ("session-start", "context", "spawn-guard", "subagent-start"):
        res = subprocess.run([sys.executable, "-m", "gitstate", "hook", name], cwd=bare,
                             input="{not json", capture_output=True, text=True)
        assert res.returncode == 0 and "Traceback" not in res.stderr
    res = hook(claude_repo, "spawn-guard", {**base(claude_repo, "s", "PreToolUse"),
                                             "tool_name": "Bash", "tool_input": {}})
    assert res.returncode == 0 and res.stdout == ""


def test_the_context_hook_starts_no_git_and_imports_little_when_no_phase_is_crossed(
        claude_repo, tmp_path):
    """The per-tool-call path: no git process, no click, pydantic or GitPython (speed is in
    bench/runtime.py)."""
    import os
    import shutil as sh
    repo = claude_repo
    gitstate(repo, "spawn", "dora", "--session", "s9")
    said(start(repo, "s9"))
    spy = tmp_path / "bin"
    spy.mkdir()
    calls = tmp_path / "git-calls"
    (spy / "git").write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\nexec {sh.which('git')} \"$@\"\n")
    (spy / "git").chmod(0o755)
    event = {**base(repo, "s9", "PostToolUse", transcript(tmp_path / "t.jsonl", 30_000)),
             "tool_name": "Read", "tool_input": {"file_path": "README"}}
    probe = ("import sys, json, io\n"
             "sys.stdin = io.StringIO(sys.argv[1])\n"
             "from gitstate.__main__ import main\n"
             "rc = main(['hook', 'context'])\n"
             "heavy = [m for m in ('click', 'pydantic', 'git', 'yaml', 'subprocess') "
             "if m in sys.modules]\n"
             "print(json.dumps({'rc': rc, 'heavy': heavy}))\n")
    env = dict(os.environ, PATH=f"{spy}{os.pathsep}{os.environ['PATH']}")
    res = subprocess.run([sys.executable, "-c", probe, json.dumps(event)], cwd=repo, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1]) == {"rc": 0, "heavy": []}
    assert not calls.exists()


def test_a_crossing_that_cannot_be_recorded_is_tried_again(claude_repo, tmp_path):
    repo = claude_repo
    gitstate(repo, "spawn", "erin", "--session", "s5")
    said(start(repo, "s5"))
    tr = transcript(tmp_path / "t.jsonl", 120_000)                  # 60 %: midlife
    merge_head = repo / ".git" / "MERGE_HEAD"
    merge_head.write_text(head(repo) + "\n")                         # an unfinished merge
    tip = head(repo)
    res = post_tool(repo, "s5", tr)
    assert res.returncode == 0 and res.stdout == "" and "merge" in res.stderr
    assert head(repo) == tip
    merge_head.unlink()
    assert "midlife" in said(post_tool(repo, "s5", tr))
    assert head(repo) != tip


def test_an_architect_spawning_an_architect_is_told_one_sentence_per_rule(claude_repo):
    """haak's architect: at most one living, and no self-spawn. Each rule is one sentence
    about the sub-agent, with the article right and no way out meant for `gitstate spawn`."""
    repo = claude_repo
    gitstate(repo, "spawn", "ada", "--role", "architect", "--session", "s-ada")
    said(start(repo, "s-ada"))
    reason = json.loads(agent_tool(repo, "s-ada", "architect").stdout)[
        "hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == (
        "gitstate refuses this sub-agent: [role-max] Role 'architect' may have 1 living "
        "holder; with this commit it would have 2 (ada, the sub-agent). [self-spawn] An "
        "architect may not spawn another architect; only roles with 'self_spawn: true' may.")
    assert "handover" not in reason and "ada-sub" not in reason and "a architect" not in reason


def test_the_spawn_guard_judges_from_the_state_files_session_without_a_session_start(
        claude_repo):
    repo = claude_repo
    gitstate(repo, "spawn", "root")
    for parent, child in (("root", "c1"), ("c1", "c2"), ("c2", "c3")):
        assert gitstate(repo, "spawn", child, "--parent", parent).returncode == 0
    gitstate(repo, "transition", "c3", "inbox", "--set", "session=s-unstarted")
    out = json.loads(agent_tool(repo, "s-unstarted").stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "[max-depth]" in out["permissionDecisionReason"]


def test_a_session_binds_itself_with_a_command_and_is_briefed_at_once(claude_repo, tmp_path):
    """The unbound briefing's advice binds this very session: the context hook, after the
    Bash call that ran it, finds the binding in the state file and briefs the agent."""
    repo = claude_repo
    assert gitstate(repo, "spawn", "late", "--session", "s-late").returncode == 0
    tr = transcript(tmp_path / "t.jsonl", 20_000)
    event = {**base(repo, "s-late", "PostToolUse", tr), "tool_name": "Bash",
             "tool_input": {"command": "gitstate spawn late --session s-late"},
             "tool_response": {"stdout": ""}, "tool_use_id": "toolu_2"}
    told = said(hook(repo, "context", event))
    assert "gitstate briefing (started) late: bootstrap" in told
    assert "Roster: 1 living: late (you): bootstrap" in told
    assert said(post_tool(repo, "s-late", transcript(tr, 110_000))).startswith(
        "gitstate: late: context 55%")


def test_every_twentieth_tool_call_reminds_of_the_mortality_clock(claude_repo, tmp_path):
    repo = claude_repo
    gitstate(repo, "spawn", "rem", "--session", "s-rem")
    said(start(repo, "s-rem"))
    tr = transcript(tmp_path / "t.jsonl", 40_000)
    tip = head(repo)
    told = [said(post_tool(repo, "s-rem", tr)) for _ in range(40)]
    assert [i + 1 for i, t in enumerate(told) if t] == [20, 40]
    assert told[19] == ("gitstate: rem, 20 tool calls this session: context 20% (40,000 of "
                        "200,000 tokens), mortality phase fresh; midlife at 50%. Is what you "
                        "know written down?")
    assert head(repo) == tip


def test_the_hooks_find_gitstate_without_it_on_path_and_doctor_says_when_they_cannot(
        claude_repo, tmp_path):
    """The README's venv install puts no `gitstate` on PATH: the committed shim finds it
    through this clone's `gitstate.python`, as the git hooks do; doctor fails when a hook
    command cannot run."""
    import os
    repo = claude_repo
    gitstate(repo, "spawn", "pat", "--session", "s-pat")
    bare_path = {"PATH": "/usr/bin:/bin"}
    assert "briefing (started) pat" in said(start(repo, "s-pat", env=bare_path))

    def runtime_finding():
        found = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
        return next(f for f in found if f["check"] == "runtime")

    assert runtime_finding()["status"] == "ok"
    git(repo, "config", "--unset", "gitstate.python")
    res = start(repo, "s-pat", env=bare_path)
    assert res.returncode == 1 and "cannot run: gitstate is not found" in res.stderr
    os.environ["PATH"] = "/usr/bin:/bin"     # restored by the isolation after the test
    assert runtime_finding()["status"] == "fail"
    assert "finds no gitstate" in runtime_finding()["detail"]
    settings = repo / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace(
        '\\"$CLAUDE_PROJECT_DIR\\"/.claude/hooks/gitstate ', "gitstate hook "))
    assert "by bare name" in runtime_finding()["detail"]


def test_a_transcript_that_never_names_its_tool_calls_is_measured_by_its_latest_turn(
        claude_repo, tmp_path):
    """The hook waits for the turn that made the call only while the transcript shows the
    session's calls: one that never does is measured by its latest turn, and waited on once."""
    repo = claude_repo
    gitstate(repo, "spawn", "nid", "--session", "s-nid")
    said(start(repo, "s-nid"))
    tr = transcript(tmp_path / "t.jsonl", 110_000)
    tr.write_text(tr.read_text().replace('"toolu_2"', '"toolu_other"'))
    assert "midlife" in said(post_tool(repo, "s-nid", tr))
    binding = json.loads((repo / ".git" / "gitstate" / "runtime" / "sessions" /
                          "s-nid.json").read_text())
    assert binding["no_ids"] is True and binding["agent"] == "nid"


def test_era_deep_work_ends_when_a_measured_phase_finds_the_budget_spent(tmp_path):
    repo = make_repo(tmp_path / "era")
    assert gitstate(repo, "init", "--lifecycle", "era", "--runtime", "claude-code") \
        .returncode == 0
    gitstate(repo, "spawn", "era-1", "--session", "s1")
    walk(repo, "era-1", "inbox", "distill")
    assert gitstate(repo, "transition", "era-1", "deep_work", "--set", "max_tokens=100000",
                    "--approved-by", "zach") \
        .returncode == 0
    said(start(repo, "s1"))
    tr = tmp_path / "s1.jsonl"
    told = said(post_tool(repo, "s1", transcript(tr, 60_000, 110_000)))     # 55 %: midlife
    assert "max_tokens (100,000) is spent: you are in inbox now" in told
    assert git(repo, "log", "-1", "--format=%s").stdout.startswith("@era-1: [STATE:inbox]")
    front = git(repo, "show", "HEAD:agent/era-1/_state.md").stdout
    assert "tokens: 110000" in front and "state: inbox" in front
    # the system's measurement, across era's fourth wall: the runtime's commit says so
    assert "Moved-by: gitstate runtime" in git(repo, "log", "-1", "--format=%B").stdout
    assert gitstate(repo, "verify").returncode == 0


def test_an_era_agent_in_bootstrap_is_told_to_load_agent_claude_and_system_md_first(tmp_path):
    """Seed 004's bootstrap: "Load @AGENT.md, CLAUDE.md, SYSTEM.md", then its state file."""
    repo = make_repo(tmp_path / "era")
    assert gitstate(repo, "init", "--lifecycle", "era", "--runtime", "claude-code") \
        .returncode == 0
    gitstate(repo, "spawn", "era-1", "--session", "s1")
    told = said(start(repo, "s1"))
    assert "What bootstrap asks (protocols/bootstrap.md):" in told
    at = [told.index(name) for name in ("`AGENT.md`", "`CLAUDE.md`", "`SYSTEM.md`",
                                        "Read `agent/<you>/_state.md`")]
    assert at == sorted(at)


def test_a_squad_session_crossing_context_phases_gets_no_mortality_advice(tmp_path):
    """squad declares no mortality clock (seed 002 compacts; it asks nothing at 50/75/90%):
    its crossings are recorded with the measured context, and nothing of haak's advice is
    said, in the hook's reply, the briefing or the reminder."""
    repo = make_repo(tmp_path / "squad")
    assert gitstate(repo, "init", "--lifecycle", "squad", "--runtime", "claude-code") \
        .returncode == 0
    gitstate(repo, "spawn", "sq-1", "--session", "s1")
    assert gitstate(repo, "transition", "sq-1", "active").returncode == 0
    said(start(repo, "s1"))
    tr = tmp_path / "s1.jsonl"
    told = [said(post_tool(repo, "s1", transcript(tr, pct * 2_000))) for pct in (55, 76, 92)]
    assert told[0].startswith("gitstate: sq-1: context 55% (110,000 of 200,000 tokens), "
                              "mortality phase midlife. Recorded as ")
    assert "context 92%" in told[2]
    haak = ("midlife:", "Midlife:", "consolidate", "Consolidate", "written down", "freeze",
            "urgent:", "Urgent:", "externalize", "no new work")
    assert not [w for t in told for w in haak if w in t], told
    assert [s for s in git(repo, "log", "--format=%s", "-3").stdout.splitlines()] == [
        f"@sq-1: [STATE:active] context {p}% ({p * 2_000:,} of 200,000 tokens): {ph}"
        for p, ph in ((92, "urgent"), (76, "legacy"), (55, "midlife"))]
    status = json.loads(gitstate(repo, "status", "sq-1", "--json").stdout)
    assert status["phase"] == "urgent" and status["advice"] is None
    briefed = said(start(repo, "s1", "resume"))
    assert "Last recorded context: 92%" in briefed
    assert not [w for w in haak if w in briefed], briefed
    reminders = [said(post_tool(repo, "s1", transcript(tr, 184_000))) for _ in range(20)]
    assert reminders == [""] * 20          # no reminder of a mortality clock squad lacks


def test_a_haak_agent_crossing_a_phase_is_still_told_what_it_asks(claude_repo, tmp_path):
    repo = claude_repo
    gitstate(repo, "spawn", "hk", "--session", "s-hk")
    said(start(repo, "s-hk"))
    told = said(post_tool(repo, "s-hk", transcript(tmp_path / "t.jsonl", 110_000)))
    assert told.endswith("Midlife: make sure key decisions are written down.")
    assert json.loads(gitstate(repo, "status", "hk", "--json").stdout)["advice"] == \
        "midlife: make sure key decisions are written down"


# -- the agents' Bash -------------------------------------------------------------------------


def agent_bash(repo: Path, env_file: Path, command: str) -> subprocess.CompletedProcess:
    """A Bash call of the session as Claude Code makes it: the environment file sourced
    first, with a PATH that has no gitstate on it."""
    import os
    env = dict(os.environ, PATH="/usr/bin:/bin", CLAUDE_CODE_SESSION_ID="s-bash")
    return subprocess.run(["bash", "-c", f'. "$1" && {command}', "bash", str(env_file)],
                          cwd=repo, env=env, capture_output=True, text=True)


def test_session_start_gives_the_sessions_bash_the_gitstate_the_hooks_run(claude_repo,
                                                                          tmp_path):
    """The briefing says `gitstate ...`; Claude Code's Bash has the user's PATH, which need not
    hold it. SessionStart puts on it a folder holding only the hooks' gitstate, keeping the
    lines already in the environment file, and writes no line twice."""
    repo = claude_repo
    bare_path = {"PATH": "/usr/bin:/bin"}
    env_file = tmp_path / "session-env.sh"
    env_file.write_text("export FROM_ANOTHER_HOOK=1\n# a note\nexport LAST_WITHOUT_NEWLINE=2")
    text = said(start(repo, "s-new", env={"CLAUDE_ENV_FILE": str(env_file), **bare_path}))
    assert "`gitstate spawn <your-id> --session s-new`" in text     # unbound: told to run it
    lines = env_file.read_text().splitlines()
    assert lines[:3] == ["export FROM_ANOTHER_HOOK=1", "# a note",
                         "export LAST_WITHOUT_NEWLINE=2"]
    folder = repo / ".git" / "gitstate" / "bin"
    assert lines[3:] == [f'export PATH={folder}:"$PATH"']
    assert sorted(p.name for p in folder.iterdir()) == ["gitstate"]   # python stays the user's
    ran = agent_bash(repo, env_file, "gitstate spawn newbie --session s-new && "
                     "command -v gitstate && command -v python3")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-2:] == [str(folder / "gitstate"), "/usr/bin/python3"]
    assert "session: s-new" in git(repo, "show", "HEAD:agent/newbie/_state.md").stdout

    said(start(repo, "s-new", "resume", env={"CLAUDE_ENV_FILE": str(env_file), **bare_path}))
    assert env_file.read_text().splitlines()[3:] == [
        f'export PATH={folder}:"$PATH"', "export GITSTATE_AGENT=newbie",
        "export GITSTATE_SESSION=s-new", "export CLAUDE_AGENT_DEPTH=0"]   # haak's max_depth
    said(start(repo, "s-new", "compact", env={"CLAUDE_ENV_FILE": str(env_file)}))
    assert len(env_file.read_text().splitlines()) == 7          # nothing written twice
    ran = agent_bash(repo, env_file, 'gitstate transition "$GITSTATE_AGENT" inbox -m ready')
    assert ran.returncode == 0, ran.stderr
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@newbie: [STATE:inbox] ready"


def test_doctor_fails_when_an_agents_bash_cannot_run_what_its_briefing_says(claude_repo,
                                                                            tmp_path):
    """Simulated as Claude Code runs it: the SessionStart hook with an environment file of its
    own, then a Bash with PATH /usr/bin:/bin that sources it and runs `gitstate --version`."""
    import os
    import sys
    repo = claude_repo
    os.environ["PATH"] = "/usr/bin:/bin"      # no gitstate (restored after the test)

    def runtime_finding():
        found = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
        return next(f for f in found if f["check"] == "runtime")

    ok = runtime_finding()
    assert ok["status"] == "ok", ok
    assert "an agent's Bash runs the briefing's `gitstate` (" in ok["detail"]
    # hooks that run a gitstate which exports nothing for the session's Bash (as before)
    older = tmp_path / "older-python"
    older.write_text(f"#!/bin/sh\nunset CLAUDE_ENV_FILE\nexec {sys.executable} \"$@\"\n")
    older.chmod(0o755)
    git(repo, "config", "gitstate.python", str(older))
    assert "no agent is bound to this session" in said(start(repo, "s-x"))  # hooks still run
    bad = runtime_finding()
    assert bad["status"] == "fail", bad
    assert bad["detail"].startswith("an agent's Bash cannot run the commands its briefing "
                                    "gives: `gitstate` fails (")
    assert "command not found" in bad["detail"]
    assert "exported nothing for it through $CLAUDE_ENV_FILE" in bad["detail"]
    assert "gitstate init --runtime claude-code" in bad["fix"]
    res = gitstate(repo, "doctor")
    assert res.returncode == 1 and "fail  runtime    an agent's Bash cannot run" in res.stdout
    assert gitstate(repo, "init", "--runtime", "claude-code").returncode == 0   # the fix
    assert runtime_finding()["status"] == "ok"


# -- the MCP server in .mcp.json --------------------------------------------------------------


SERVER = {"command": "sh",
          "args": ["-c", 'exec "$(git rev-parse --show-toplevel)/.claude/hooks/gitstate" mcp']}


def test_init_registers_the_mcp_server_once_keeping_the_users_own(empty_repo):
    repo = empty_repo
    mine = {"mcpServers": {"docs": {"command": "npx", "args": ["docs-server"]},
                           "gitstate": {"type": "stdio", "command": "gitstate",
                                        "args": ["mcp"], "env": {"GITSTATE_DEBUG": "1"}}},
            "note": "the user's"}
    (repo / ".mcp.json").write_text(json.dumps(mine, indent=4))
    res = gitstate(repo, "init", "--runtime", "claude-code", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)["integrations"]
    assert [(r["path"], r["added"], r["kept"]) for r in report][1] == (
        ".mcp.json", ["gitstate"], ["docs"])
    got = json.loads((repo / ".mcp.json").read_text())
    assert got["note"] == "the user's" and got["mcpServers"]["docs"] == mine["mcpServers"]["docs"]
    assert got["mcpServers"]["gitstate"] == {"type": "stdio", **SERVER,
                                             "env": {"GITSTATE_DEBUG": "1"}}   # in place
    before = (repo / ".mcp.json").read_bytes()
    again = json.loads(gitstate(repo, "init", "--runtime", "claude-code", "--json").stdout)
    assert again["integrations"][1]["changed"] is False
    assert (repo / ".mcp.json").read_bytes() == before
    assert str(repo) not in before.decode()                   # nothing of this machine's

    # under a name of the user's: updated there, never added a second time
    renamed = {"mcpServers": {"state": {"command": "/opt/venv/bin/python",
                                        "args": ["-m", "gitstate", "mcp"]}}}
    (repo / ".mcp.json").write_text(json.dumps(renamed))
    gitstate(repo, "init", "--runtime", "claude-code")
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"state": SERVER}}

    # a server of someone else's named gitstate: refused, and neither file is written
    (repo / ".mcp.json").write_text('{"mcpServers": {"gitstate": {"command": "other"}}}')
    settings = repo / ".claude" / "settings.json"
    settings.unlink()
    res = gitstate(repo, "init", "--runtime", "claude-code")
    assert res.returncode == 1 and "the server 'gitstate' is not gitstate's" in res.stderr
    assert not settings.exists()


def test_the_registered_server_says_why_it_cannot_run(claude_repo):
    """The command .mcp.json names runs the hook script, which runs `gitstate mcp` (answering
    an MCP client: tests/mcp/test_mcp_server.py); when it finds no gitstate, it says so on
    stderr, which Claude Code keeps in its MCP log."""
    import os
    repo = claude_repo
    server = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["gitstate"]
    assert server == SERVER
    git(repo, "config", "--unset", "gitstate.python")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    res = subprocess.run([server["command"], *server["args"]], cwd=repo, input="",
                         env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert res.returncode == 1
    assert "gitstate's MCP server (.mcp.json) cannot run: gitstate is not found" in res.stderr


def mcp_finding(repo: Path) -> dict:
    found = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
    return next(f for f in found if f["check"] == "mcp")


def test_doctor_says_whether_claude_code_may_start_the_mcp_server(claude_repo):
    """As Claude Code 2.1.331 decides (tests/runtime/test_claude_code_e2e.py asks the binary
    the same): approved in the user's settings, or in .claude/settings.local.json of a folder
    the user trusted; rejected by disabledMcpjsonServers; a local-scope server of the same
    name takes the project's place."""
    import os
    repo = claude_repo
    home = Path(os.environ["HOME"])
    pending = mcp_finding(repo)
    assert pending["status"] == "warn" and "waits for your approval" in pending["detail"]
    assert "run `claude` in" in pending["fix"] and "Use this MCP server" in pending["fix"]
    assert '"enabledMcpjsonServers": ["gitstate"] to ~/.claude/settings.json' in pending["fix"]

    local = repo / ".claude" / "settings.local.json"
    local.write_text('{"enabledMcpjsonServers": ["gitstate"]}')
    untrusted = mcp_finding(repo)
    assert untrusted["status"] == "warn"
    assert "approved in .claude/settings.local.json, which Claude Code reads only once the " \
        "folder is trusted" in untrusted["detail"]
    config = home / ".claude.json"
    config.write_text(json.dumps({"projects": {str(repo): {"hasTrustDialogAccepted": True}}}))
    assert mcp_finding(repo) == {
        "status": "ok", "check": "mcp", "fix": None,
        "detail": "Claude Code starts gitstate's MCP server (.mcp.json 'gitstate'): approved "
                  "in .claude/settings.local.json"}

    local.write_text('{"enableAllProjectMcpServers": true, '
                     '"disabledMcpjsonServers": ["gitstate"]}')
    rejected = mcp_finding(repo)
    assert rejected["status"] == "warn" and "was rejected" in rejected["detail"]
    assert "claude mcp reset-project-choices" in rejected["fix"]

    local.unlink()
    config.write_text("{}")
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text('{"enabledMcpjsonServers": ["gitstate"]}')
    assert mcp_finding(repo)["status"] == "ok"

    config.write_text(json.dumps({"projects": {str(repo): {"mcpServers": {"gitstate": {
        "type": "stdio", "command": "gitstate", "args": ["mcp"], "env": {}}}}}}))
    shadowed = mcp_finding(repo)
    assert shadowed["status"] == "warn" and "takes the place of .mcp.json's" in \
        shadowed["detail"]
    assert shadowed["fix"] == "`claude mcp remove gitstate -s local`"

    config.write_text("{}")
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"gitstate": {
        "command": "gitstate", "args": ["mcp"]}}}))
    os.environ["PATH"] = "/usr/bin:/bin"      # restored after the test
    bare = mcp_finding(repo)
    assert bare["status"] == "fail" and "`gitstate` is not found" in bare["detail"]
    assert bare["fix"].startswith("`gitstate init --runtime claude-code`")


def test_every_runtime_hook_is_dispatched_before_click_is_imported():
    """A hook runs on every prompt or tool call: none of them may pay for the command line's
    imports (about 60 ms)."""
    from gitstate.__main__ import _runtime_hooks
    from gitstate.runtime.claude_code import NAMES
    assert set(NAMES) <= _runtime_hooks()


def test_the_documented_table_of_runtime_hooks_is_made_from_the_registry():
    """A column per runtime, a row per gitstate hook: the reference page (filled in by
    docs/gen.py) shows the declaration."""
    from gitstate.runtime.registry import hooks_table
    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "runtime-hooks.md")
    shown = page.read_text().split("<!-- gen: runtime-hooks -->\n", 1)[1].split(
        "\n<!-- /gen: runtime-hooks -->", 1)[0]
    assert shown.splitlines() == hooks_table()


def test_a_resumed_squad_session_rereads_the_teams_newest_decisions(tmp_path):
    """Seed 002: "`onSessionStart` re-reads decisions.md on resume", so a persistent session
    does not answer from outdated decisions: the briefing of a resumed session names the
    lifecycle's decisions file (`policies.decisions`) and its newest entries, those committed
    while it was away included."""
    repo = make_repo(tmp_path / "squad")
    assert gitstate(repo, "init", "--lifecycle", "squad", "--runtime", "claude-code") \
        .returncode == 0
    gitstate(repo, "spawn", "keaton", "--session", "s-k")
    assert "decisions.md): none committed yet" in said(start(repo, "s-k"))
    decided = [f"- 2026-01-0{i}: decision {i}" for i in range(1, 10)]
    (repo / "decisions.md").write_text("\n".join(decided[:3]) + "\n")
    git(repo, "add", "decisions.md")
    git(repo, "commit", "-qm", "decisions: the first three")
    resumed = said(start(repo, "s-k", "resume"))
    assert "The team's decisions (decisions.md, newest 3 lines of 3):" in resumed
    assert all(d in resumed for d in decided[:3])
    (repo / "decisions.md").write_text("\n".join(decided) + "\n")   # decided while away
    git(repo, "commit", "-qam", "decisions: six more")
    resumed = said(start(repo, "s-k", "resume"))
    assert "(resumed) keaton:" in resumed
    assert "The team's decisions (decisions.md, newest 8 lines of 9):" in resumed
    assert decided[-1] in resumed and decided[0] not in resumed
