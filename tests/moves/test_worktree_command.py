"""`gitstate worktree add|remove`: an agent in its own worktree in one step, with the real
git worktrees and the hooks `gitstate init` installed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import git, gitstate


def _ok(res):
    assert res.returncode == 0, f"{res.stdout}\n{res.stderr}"
    return res


def _with_claude_settings(repo: Path) -> None:
    _ok(gitstate(repo, "init", "--runtime", "claude-code"))
    git(repo, "add", ".claude", ".mcp.json")
    git(repo, "commit", "-q", "-m", "Claude Code runs gitstate")


def test_add_spawns_a_bound_agent_in_its_own_worktree(repo):
    _with_claude_settings(repo)
    record = json.loads(_ok(gitstate(repo, "worktree", "add", "ana", "--role", "architect",
                                     "--runtime", "claude-code", "--json")).stdout)
    where = Path(record["path"])
    assert where == repo.parent / "repo-ana" and where.is_dir()
    assert record["branch"] == "ana" and record["upstream"] == "main"
    assert record["move"]["to"] == "bootstrap" and record["note"] is None
    session = record["session"]
    assert re.fullmatch(r"[0-9a-f-]{36}", session)
    assert record["start"] == f"cd {where} && claude --session-id {session}"
    # the worktree is at the spawn, on its own branch, tracking the team line
    assert git(where, "rev-parse", "HEAD").stdout == git(repo, "rev-parse", "main").stdout
    assert git(where, "rev-parse", "--abbrev-ref", "@{upstream}").stdout.strip() == "main"
    state = (where / "agent" / "ana" / "_state.md").read_text()
    assert f"session: {session}" in state and "role: architect" in state
    assert (where / ".claude" / "settings.json").is_file()
    # the agent moves from there, and the move is on the team line
    _ok(gitstate(where, "transition", "ana", "inbox"))
    assert git(repo, "log", "-1", "--format=%s", "main").stdout.startswith("@ana: [STATE:inbox]")


def test_add_refuses_what_is_taken_and_does_nothing(repo):
    git(repo, "branch", "bo")
    before = git(repo, "rev-parse", "main").stdout
    res = gitstate(repo, "worktree", "add", "bo")
    assert res.returncode == 1 and "a branch 'bo' exists already" in res.stderr
    (repo.parent / "repo-cy").mkdir()
    res = gitstate(repo, "worktree", "add", "cy")
    assert res.returncode == 1 and "exists already" in res.stderr and "--path" in res.stderr
    assert git(repo, "rev-parse", "main").stdout == before      # nobody was spawned


def test_add_without_committed_claude_settings_says_how_to_get_them(repo):
    res = _ok(gitstate(repo, "worktree", "add", "ana", "--runtime", "claude-code"))
    assert "git add .claude .mcp.json" in res.stderr


def test_add_for_codex_and_gemini_names_the_agent_to_the_sessions_hooks(repo):
    """Codex and Gemini CLI take no session id: the command names the agent instead, which
    the runtime's SessionStart binds; the note says which of their settings to commit."""
    for agent, runtime, command, settings in (("ana", "codex", "codex", "git add .codex "),
                                              ("bo", "gemini", "gemini", "git add .gemini ")):
        res = _ok(gitstate(repo, "worktree", "add", agent, "--runtime", runtime, "--json"))
        record = json.loads(res.stdout)
        assert record["start"] == f"cd {record['path']} && GITSTATE_AGENT={agent} {command}"
        assert settings in record["note"] and f"init --runtime {runtime}" in record["note"]
    _ok(gitstate(repo, "init", "--runtime", "codex"))
    git(repo, "add", ".codex")
    git(repo, "commit", "-q", "-m", "Codex runs gitstate")
    record = json.loads(_ok(gitstate(repo, "worktree", "add", "cy", "--runtime", "codex",
                                     "--json")).stdout)
    assert record["note"] is None


def test_remove_refuses_uncommitted_work_then_ends_the_agent_and_keeps_the_branch(repo):
    record = json.loads(_ok(gitstate(repo, "worktree", "add", "ana", "--json")).stdout)
    where = Path(record["path"])
    (where / "draft.txt").write_text("not committed\n")
    res = gitstate(repo, "worktree", "remove", "ana")
    assert res.returncode == 1 and "draft.txt" in res.stderr and where.is_dir()
    assert "state: bootstrap" in git(repo, "show", "main:agent/ana/_state.md").stdout
    git(where, "add", "draft.txt")
    git(where, "commit", "-q", "-m", "the draft")
    gone = json.loads(_ok(gitstate(repo, "worktree", "remove", "ana", "--summary",
                                   "done", "--json")).stdout)
    assert gone["removed"] and not where.exists() and gone["unmerged"] == 1
    assert gone["move"]["to"] == "dead"
    assert "final_summary: done" in git(repo, "show", "main:agent/ana/_state.md").stdout
    assert git(repo, "rev-parse", "-q", "--verify", "ana").returncode == 0   # branch kept
    assert git(repo, "status", "--porcelain").stdout == ""
