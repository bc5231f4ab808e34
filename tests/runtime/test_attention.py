"""Who waits for a person: Claude Code's `Notification` event (the payload the pinned binary
sends: session_id, transcript_path, cwd, hook_event_name, message, notification_type) fed to
`gitstate hook notification` through the script `init --runtime claude-code` wrote, in a real
repository; then read by `gitstate attention`, the briefing and the viewer's static site."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import from_template, git, gitstate, make_repo

jsonschema = pytest.importorskip("jsonschema")

SHIM = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate'


def hook(repo: Path, name: str, payload: str | dict, cwd: Path | None = None):
    """The hook as Claude Code runs it: the command `.claude/settings.json` names, in a shell,
    with the payload on stdin."""
    settings = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    event = {"notification": "Notification", "session-start": "SessionStart"}[name]
    commands = [h["command"] for g in settings[event] for h in g["hooks"]
                if h["command"] == f"{SHIM} {name}"]
    assert len(commands) == 1, settings[event]
    return subprocess.run(["sh", "-c", commands[0]], cwd=cwd or repo, capture_output=True,
                          text=True, input=payload if isinstance(payload, str)
                          else json.dumps(payload),
                          env=dict(os.environ, CLAUDE_PROJECT_DIR=str(repo)))


def notification(repo: Path, session: str, kind: str | None = "permission_prompt",
                 message: str = "Claude needs your permission to use Bash",
                 cwd: Path | None = None):
    event = {"session_id": session, "transcript_path": str(repo / "none.jsonl"),
             "cwd": str(cwd or repo), "hook_event_name": "Notification", "message": message}
    if kind is not None:
        event["notification_type"] = kind
    return hook(repo, "notification", event, cwd)


def start(repo: Path, session: str, cwd: Path | None = None):
    res = hook(repo, "session-start", {
        "session_id": session, "transcript_path": str(repo / "none.jsonl"),
        "cwd": str(cwd or repo), "hook_event_name": "SessionStart", "source": "startup",
        "model": "claude-opus-4-6"}, cwd)
    assert res.returncode == 0, res.stderr
    return res


def attention(repo: Path) -> dict:
    res = gitstate(repo, "attention", "--json")
    assert res.returncode == 0, res.stderr
    from gitstate.schema.models import json_schema
    data = json.loads(res.stdout)
    jsonschema.validate(data, json_schema("attention"))
    return data


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "--all").stdout)


def _claude_repo(root: Path) -> None:
    repo = make_repo(root / "repo")
    (repo / "README").write_text("hi\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "first")
    res = gitstate(repo, "init", "--runtime", "claude-code")
    assert res.returncode == 0, res.stderr


@pytest.fixture
def team(tmp_path, monkeypatch) -> Path:
    """alice and bob, each bound to a session by SessionStart. Commit times have whole
    seconds and a state commit in a notice's second clears it, so these commits are dated a
    minute back: every notice of the test comes after them."""
    repo = from_template(tmp_path, "claude-repo", _claude_repo) / "repo"
    past = f"@{int(time.time()) - 60} +0000"
    monkeypatch.setenv("GIT_COMMITTER_DATE", past)
    monkeypatch.setenv("GIT_AUTHOR_DATE", past)
    for agent in ("alice", "bob"):
        assert gitstate(repo, "spawn", agent, "--session", f"s-{agent}").returncode == 0
        start(repo, f"s-{agent}")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    return repo


def test_a_notice_is_recorded_without_a_commit_and_cleared_by_the_agents_next_move(team):
    repo = team
    tip, count = git(repo, "rev-parse", "HEAD").stdout, commits(repo)
    status = git(repo, "status", "--porcelain", "--ignored").stdout
    assert attention(repo)["waiting"] == []
    res = notification(repo, "s-alice")
    assert res.returncode == 0 and res.stdout == "" and res.stderr == "", res
    assert commits(repo) == count and git(repo, "rev-parse", "HEAD").stdout == tip
    assert git(repo, "status", "--porcelain", "--ignored").stdout == status   # no file either
    data = attention(repo)
    assert data["commit"] == tip.strip()
    [waits] = data["waiting"]
    assert {k: waits[k] for k in ("agent", "state", "session", "kind", "message")} == {
        "agent": "alice", "state": "bootstrap", "session": "s-alice",
        "kind": "permission_prompt", "message": "Claude needs your permission to use Bash"}
    assert abs(time.time() - _epoch(waits["since"])) < 60
    text = gitstate(repo, "attention").stdout
    assert text.startswith("alice (bootstrap) waits for permission to use a tool, ")
    assert text.rstrip().endswith(": Claude needs your permission to use Bash")

    # a newer notice of the same session takes its place; bob's is his own
    assert notification(repo, "s-alice", "idle_prompt", "Claude is waiting for your input"
                        ).returncode == 0
    assert notification(repo, "s-bob", "agent_completed", "done").returncode == 0
    assert [(w["agent"], w["kind"]) for w in attention(repo)["waiting"]] == [
        ("alice", "idle_prompt"), ("bob", "agent_completed")]
    assert commits(repo) == count

    # alice moves on: one state commit of hers clears hers, and bob's still waits
    assert gitstate(repo, "transition", "alice", "inbox", "-m", "on it").returncode == 0
    assert [w["agent"] for w in attention(repo)["waiting"]] == ["bob"]
    # a dead agent waits for nobody
    assert gitstate(repo, "bury", "bob", "--summary", "done").returncode == 0
    assert attention(repo)["waiting"] == []
    assert gitstate(repo, "attention").stdout == "Nobody waits for a person.\n"


def _epoch(text: str) -> int:
    from gitstate.law.times import parse_iso
    return parse_iso(text)


def test_only_notices_that_want_a_person_are_recorded(team):
    repo = team
    folder = repo / ".git" / "gitstate" / "runtime" / "attention"
    for kind in ("auth_success", "some_future_type"):
        res = notification(repo, "s-alice", kind, "Logged in")
        assert res.returncode == 0 and res.stderr == "" and res.stdout == ""
    assert not folder.exists() or list(folder.iterdir()) == []
    # a session no agent is bound to: there is no agent to name
    res = notification(repo, "s-nobody")
    assert res.returncode == 0 and res.stderr == ""
    assert attention(repo)["waiting"] == []
    for kind in ("elicitation_dialog", "agent_needs_input"):
        assert notification(repo, "s-alice", kind, "which one?").returncode == 0
        assert [w["kind"] for w in attention(repo)["waiting"]] == [kind]


@pytest.mark.parametrize("payload, says", [
    ("not json at all", "no notification_type"),
    ("[1, 2]", "no notification_type"),
    ("", "no notification_type"),
    ({"session_id": "s-alice", "hook_event_name": "Notification"}, "no notification_type"),
    ({"session_id": "s-alice", "notification_type": 7}, "no notification_type"),
    ({"notification_type": "permission_prompt", "message": "x"}, "no session_id"),
    ({"session_id": ["s"], "notification_type": "idle_prompt"}, "no session_id"),
    ({"session_id": "s-alice", "notification_type": "permission_prompt", "cwd": 12,
      "message": {"not": "text"}}, None),
])
def test_a_malformed_notice_never_stops_the_runtime(team, payload, says):
    repo = team
    count = commits(repo)
    res = hook(repo, "notification", payload)
    assert res.returncode == 0 and res.stdout == "", res
    assert "Traceback" not in res.stderr
    if says:
        assert f"gitstate: notification hook: the event has {says}" in res.stderr or \
            f"gitstate: notification hook: the event names {says}" in res.stderr, res.stderr
    assert commits(repo) == count
    if says:
        assert attention(repo)["waiting"] == []


@pytest.mark.parametrize("kind", [["permission_prompt"], {"a": 1}, 7])
def test_a_damaged_notice_file_is_skipped_by_the_readers(team, kind):
    """A notice file changed by hand (its kind a list, an object, a number) is not one of
    ours: `attention` shows the others, never a traceback."""
    assert notification(team, "s-alice").returncode == 0
    folder = team / ".git" / "gitstate" / "runtime" / "attention"
    [name] = [p for p in folder.iterdir() if p.suffix == ".json"]
    notice = json.loads(name.read_text())
    (folder / "damaged.json").write_text(json.dumps({**notice, "kind": kind}))
    assert [w["agent"] for w in attention(team)["waiting"]] == ["alice"]


def test_a_notice_from_outside_a_repository_records_nothing(team, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = notification(team, "s-alice", cwd=elsewhere)
    assert res.returncode == 0 and res.stderr == ""
    assert attention(team)["waiting"] == []


def test_the_lead_sees_who_waits_in_its_briefing_and_in_the_viewer(team, tmp_path):
    repo = team
    assert gitstate(repo, "spawn", "lead").returncode == 0
    assert notification(repo, "s-bob", "permission_prompt").returncode == 0
    brief = gitstate(repo, "hook", "session-start", "--agent", "lead").stdout
    assert "Waiting for a person (1): bob (bootstrap) waits for permission to use a tool, " \
        in brief and "(`gitstate attention`)." in brief
    own = gitstate(repo, "hook", "session-start", "--agent", "bob").stdout
    assert "Waiting for a person" not in own          # its own notice is not news to it
    assert gitstate(repo, "site", "--out", str(tmp_path / "site")).returncode == 0
    page = (tmp_path / "site" / "index.html").read_text()
    section = page.split('<section aria-labelledby="h-attention"', 1)[1].split("</section>")[0]
    assert "Needs attention <span class=\"count\">(1)" in section
    assert 'href="agents/bob.html"' in section and "waits for permission to use a tool" in section
    agent_page = (tmp_path / "site" / "agents" / "bob.html").read_text()
    assert 'class="flag waiting"' in agent_page and "waits for permission" in agent_page
    watched = gitstate(repo, "roster", "--watch", "--count", "1", "--no-follow").stdout
    assert "Needs attention (1)\n  bob: waits for permission to use a tool, " in watched
    # looking back, the viewer shows history only: no notice of the runtime's
    assert gitstate(repo, "site", "--out", str(tmp_path / "then"), "--at", "HEAD").returncode == 0
    assert "waits for permission" not in (tmp_path / "then" / "index.html").read_text()
    assert gitstate(repo, "transition", "bob", "inbox").returncode == 0
    assert "Waiting for a person" not in gitstate(repo, "hook", "session-start", "--agent",
                                                  "lead").stdout


def test_a_notice_from_an_agents_worktree_is_seen_from_the_main_work_tree(team, tmp_path,
                                                                           monkeypatch):
    """The notices are kept in the clone's common git folder: the lead in the main work tree
    sees an agent that runs in a worktree of its own (bound there by SessionStart)."""
    repo = team
    where = tmp_path / "ana-tree"
    past = f"@{int(time.time()) - 60} +0000"    # before the notice (see `team`)
    monkeypatch.setenv("GIT_COMMITTER_DATE", past)
    monkeypatch.setenv("GIT_AUTHOR_DATE", past)
    assert gitstate(repo, "spawn", "ana", "--session", "s-ana").returncode == 0
    git(repo, "worktree", "add", "-q", "-b", "ana", str(where))
    start(repo, "s-ana", cwd=where)
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    binding = list((repo / ".git" / "worktrees").glob("*/gitstate/runtime/sessions/s-ana.json"))
    assert len(binding) == 1                    # the binding is the worktree's own
    assert notification(repo, "s-ana", cwd=where).returncode == 0
    assert [(w["agent"], w["session"]) for w in attention(repo)["waiting"]] == [
        ("ana", "s-ana")]
    assert not (where / ".git").is_dir()   # nothing of it in the worktree's own files


def test_a_prompt_the_person_submits_clears_the_sessions_notice(team):
    """`memory.clear_attention` is what a prompt hook calls: the person answered."""
    repo = team
    assert notification(repo, "s-alice", "idle_prompt").returncode == 0
    assert notification(repo, "s-bob", "idle_prompt").returncode == 0
    from gitstate.runtime import memory
    memory.clear_attention(str(repo / ".git"), "s-alice")
    memory.clear_attention(str(repo / ".git"), "s-never-seen")   # nothing to clear: no error
    assert [w["agent"] for w in attention(repo)["waiting"]] == ["bob"]
