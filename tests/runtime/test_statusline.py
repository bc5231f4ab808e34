"""`gitstate statusline`: Claude Code's `statusLine` command, run as `init --runtime
claude-code` writes it (in a shell, without CLAUDE_PROJECT_DIR), fed the JSON Claude Code
documents for it (https://code.claude.com/docs/en/statusline): one line with the agent, its
state, its mortality phase and its context; the context recorded at a phase crossing only, in
step with the context hook; no git process while the refs stay where they were; and a status
line of the user's own never replaced."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import git, gitstate, walk
from test_claude_code import claude_repo, post_tool, said, start, transcript  # noqa: F401

COMMAND = '"${CLAUDE_PROJECT_DIR:-$(git rev-parse --show-toplevel)}"/.claude/hooks/gitstate ' \
          'statusline'


def payload(repo: Path, session: str, pct, *, cwd: Path | None = None) -> dict:
    """What Claude Code sends its status line after an assistant message."""
    window = 200_000
    used = None if pct is None else int(window * pct / 100)
    return {"hook_event_name": "Status", "session_id": session,
            "transcript_path": str(repo / "none.jsonl"), "cwd": str(cwd or repo),
            "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
            "workspace": {"current_dir": str(cwd or repo), "project_dir": str(repo)},
            "version": "2.1.90", "output_style": {"name": "default"},
            "cost": {"total_cost_usd": 0.01, "total_duration_ms": 1000},
            "context_window": {
                "total_input_tokens": 15_234, "total_output_tokens": 4_521,
                "context_window_size": window, "used_percentage": pct,
                "remaining_percentage": None if pct is None else 100 - pct,
                "current_usage": None if used is None else {
                    "input_tokens": 8, "output_tokens": 1_200,
                    "cache_creation_input_tokens": 2_000,
                    "cache_read_input_tokens": used - 2_008}},
            "exceeds_200k_tokens": False}


def status(repo: Path, event: dict, env: dict | None = None) -> str:
    """The status line as Claude Code shows it: the command of `.claude/settings.local.json`
    in a shell, the JSON on stdin; its first line."""
    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert local["statusLine"] == {"type": "command", "command": COMMAND, "padding": 0}
    full = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    res = subprocess.run(["sh", "-c", COMMAND], cwd=event["cwd"], input=json.dumps(event),
                         capture_output=True, text=True, env={**full, **(env or {})})
    assert res.returncode == 0 and res.stderr == "", res.stderr
    return res.stdout.split("\n", 1)[0]


def subjects(repo: Path, n: int = 1) -> list[str]:
    return git(repo, "log", f"-{n}", "--format=%an|%s").stdout.splitlines()


def bound(repo: Path, agent: str, session: str) -> None:
    assert gitstate(repo, "spawn", agent, "--session", session).returncode == 0
    said(start(repo, session))


def test_one_line_with_agent_state_phase_and_context(claude_repo):
    repo = claude_repo
    bound(repo, "dora", "s1")
    tip = git(repo, "rev-parse", "HEAD").stdout
    assert status(repo, payload(repo, "s1", None)) == \
        "gitstate dora: bootstrap · fresh · context 0%"        # before the first answer
    assert status(repo, payload(repo, "s1", 12.4)) == \
        "gitstate dora: bootstrap · fresh · context 12%"
    walk(repo, "dora", "inbox")
    sub = repo / "docs"
    sub.mkdir()
    assert status(repo, payload(repo, "s1", 30, cwd=sub)) == \
        "gitstate dora: inbox · fresh · context 30%"           # the move is seen; a subfolder
    assert git(repo, "rev-parse", "HEAD~1").stdout == tip      # no commit of its own
    assert status(repo, payload(repo, "stranger", 40)) == \
        "gitstate: no agent bound to this session (stranger)"
    assert status(repo, payload(repo, "nobody", 40), env={"GITSTATE_AGENT": "dora"}) == \
        "gitstate dora: inbox · fresh · context 40%"           # bound by the environment
    outside = repo.parent / "elsewhere"
    outside.mkdir()
    res = subprocess.run([sys.executable, "-m", "gitstate", "statusline"], cwd=outside,
                         input=json.dumps(payload(repo, "s1", 5, cwd=outside)),
                         capture_output=True, text=True)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")   # no repository: blank
    res = subprocess.run([sys.executable, "-m", "gitstate", "statusline"], cwd=repo,
                         input="{not json", capture_output=True, text=True)
    assert res.returncode == 0 and "Traceback" not in res.stderr


def test_the_context_is_recorded_at_phase_crossings_only(claude_repo):
    repo = claude_repo
    bound(repo, "erin", "s2")
    before = git(repo, "rev-list", "--count", "HEAD").stdout
    for pct in (20, 49.9, 20):
        assert "context" in status(repo, payload(repo, "s2", pct))
    assert git(repo, "rev-list", "--count", "HEAD").stdout == before   # no commit per message
    assert status(repo, payload(repo, "s2", 55)) == \
        "gitstate erin: bootstrap · midlife · context 55% (recorded)"
    assert subjects(repo) == ["gitstate|@erin: [STATE:bootstrap] context 55% (110,000 of "
                              "200,000 tokens): midlife"]
    front = json.loads(gitstate(repo, "status", "erin", "--json").stdout)
    assert front["context_pct"] == 55
    assert status(repo, payload(repo, "s2", 60)).endswith("midlife · context 60%")
    assert "(recorded)" in status(repo, payload(repo, "s2", 80))                # legacy
    assert subjects(repo)[0].endswith("context 80% (160,000 of 200,000 tokens): legacy")
    count = git(repo, "rev-list", "--count", "HEAD").stdout
    assert status(repo, payload(repo, "s2", 10)).endswith("fresh · context 10%")  # compacted
    assert git(repo, "rev-list", "--count", "HEAD").stdout == count
    assert "(recorded)" in status(repo, payload(repo, "s2", 51))      # midlife again, anew


def test_the_context_hook_and_the_status_line_record_a_crossing_once(claude_repo, tmp_path):
    repo = claude_repo
    bound(repo, "finn", "s3")
    assert "(recorded)" in status(repo, payload(repo, "s3", 56))
    count = git(repo, "rev-list", "--count", "HEAD").stdout
    tr = transcript(tmp_path / "t.jsonl", 120_000)                 # 60 %, by the transcript
    assert said(post_tool(repo, "s3", tr)) == ""                   # midlife was recorded
    assert git(repo, "rev-list", "--count", "HEAD").stdout == count
    # while another process records a crossing, the status line records none
    from gitstate.runtime.memory import Recording
    with Recording(str(repo / ".git"), "finn") as mine:
        assert mine
        assert status(repo, payload(repo, "s3", 77)).endswith("legacy · context 77%")
        assert git(repo, "rev-list", "--count", "HEAD").stdout == count
    assert "(recorded)" in status(repo, payload(repo, "s3", 78))   # the lock is free again


def test_no_git_process_nor_heavy_import_while_the_refs_stay(claude_repo, tmp_path):
    """After every assistant message: the state kept from the last call while HEAD, the
    line's ref, packed-refs and the config are as they were (speed: bench/statusline.py)."""
    repo = claude_repo
    bound(repo, "gail", "s4")
    assert status(repo, payload(repo, "s4", 10)).startswith("gitstate gail: bootstrap")
    spy = tmp_path / "bin"
    spy.mkdir()
    calls = tmp_path / "git-calls"
    (spy / "git").write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\n"
                             f"exec {shutil.which('git')} \"$@\"\n")
    (spy / "git").chmod(0o755)
    probe = ("import sys, json, io\n"
             "sys.stdin = io.StringIO(sys.argv[1])\n"
             "from gitstate.__main__ import main\n"
             "rc = main(['statusline'])\n"
             "heavy = [m for m in ('click', 'pydantic', 'git', 'yaml', 'subprocess') "
             "if m in sys.modules]\n"
             "print(json.dumps({'rc': rc, 'heavy': heavy}))\n")
    env = dict(os.environ, PATH=f"{spy}{os.pathsep}{os.environ['PATH']}")
    res = subprocess.run([sys.executable, "-c", probe, json.dumps(payload(repo, "s4", 20))],
                         cwd=repo, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    line, report = res.stdout.strip().splitlines()
    assert line == "gitstate gail: bootstrap · fresh · context 20%"
    assert json.loads(report) == {"rc": 0, "heavy": []}
    assert not calls.exists()
    walk(repo, "gail", "inbox")                                    # the line moved: read again
    res = subprocess.run([sys.executable, "-c", probe, json.dumps(payload(repo, "s4", 21))],
                         cwd=repo, env=env, capture_output=True, text=True)
    assert res.stdout.startswith("gitstate gail: inbox · fresh · context 21%")
    assert calls.exists()


def test_init_adds_the_status_line_only_where_the_user_has_none(empty_repo):
    repo = empty_repo
    home = Path(os.environ["HOME"])
    local = repo / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}))
    res = gitstate(repo, "init", "--runtime", "claude-code", "--json")
    assert res.returncode == 0, res.stderr
    entry = json.loads(res.stdout)["integrations"][2]
    assert (entry["path"], entry["changed"], entry["added"]) == (
        ".claude/settings.local.json", True, ["statusLine"])
    got = json.loads(local.read_text())
    assert got["permissions"] == {"allow": ["Bash(ls)"]}          # the person's own, kept
    assert got["statusLine"]["command"] == COMMAND
    assert "statusLine" not in json.loads((repo / ".claude" / "settings.json").read_text())
    assert git(repo, "status", "--porcelain", "--", ".claude/settings.local.json").stdout == ""
    again = json.loads(gitstate(repo, "init", "--runtime", "claude-code", "--json").stdout)
    assert again["integrations"][2]["changed"] is False
    # a status line of the user's own (here in ~/.claude/settings.json) is never replaced
    other = repo.parent / "other"
    shutil.copytree(repo, other)
    (other / ".claude" / "settings.local.json").unlink()
    mine = home / ".claude" / "settings.json"
    mine.parent.mkdir(exist_ok=True)
    mine.write_text(json.dumps({"statusLine": {"type": "command", "command": "~/bin/line"}}))
    out = gitstate(other, "init", "--runtime", "claude-code").stdout
    assert not (other / ".claude" / "settings.local.json").exists()
    assert "kept statusLine (~/.claude/settings.json)" in out
    chain = out.split("set its command to: ", 1)[1].splitlines()[0]
    assert chain == ('input=$(cat); echo "$(printf \'%s\' "$input" | ~/bin/line) | '
                     f'$(printf \'%s\' "$input" | {COMMAND})"')
    assert json.loads(mine.read_text())["statusLine"]["command"] == "~/bin/line"
