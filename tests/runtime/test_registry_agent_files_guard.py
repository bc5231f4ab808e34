"""registry (seed 001): Claude Code's own door refuses a sub-agent type that an agent file in
`.claude/agents` forbids (`forbiddenAgents`): the spawn guard before it exists, and its
registration when it starts anyway."""

from __future__ import annotations

import json

from conftest import git, gitstate
from test_claude_code import base, hook
from test_runtime_events import bound, repo_of

AGENT = ".claude/agents/programmer.md"


def test_a_type_an_agent_file_forbids_is_refused_by_the_runtime_s_hooks(tmp_path):
    repo = repo_of(tmp_path, "registry")
    human = git(repo, "config", "user.name").stdout.strip()
    (repo / AGENT).parent.mkdir(parents=True, exist_ok=True)
    (repo / AGENT).write_text("---\nname: programmer\nforbiddenAgents: [researcher]\n---\n")
    git(repo, "add", AGENT)
    git(repo, "commit", "-q", "-m", "programmers hand reading on", "-m", f"Approved-by: {human}")
    session = bound(repo, "p1", "--role", "programmer")

    def guard(kind: str):
        tool = {**base(repo, session, "PreToolUse"), "tool_name": "Agent", "tool_use_id": "t1",
                "tool_input": {"description": "look", "prompt": "read", "subagent_type": kind}}
        return hook(repo, "spawn-guard", tool)

    out = json.loads(guard("researcher").stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "[self-spawn] A programmer may not spawn a researcher; it may spawn: general, " \
        "reviewer" in out["permissionDecisionReason"]
    assert guard("reviewer").stdout.strip() == ""   # what it may spawn passes
    tip = git(repo, "rev-parse", "HEAD").stdout
    res = hook(repo, "subagent-start", {**base(repo, session, "SubagentStart"),
                                        "agent_id": "a1b2c3d4e5", "agent_type": "researcher"})
    assert res.returncode == 0, res.stderr   # the runtime is never blocked
    assert "researcher sub-agent of p1 not registered" in res.stderr
    assert "[self-spawn]" in res.stderr and "may not spawn a researcher" in res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == tip
    assert "researcher-a1b2c3d4e5" not in gitstate(repo, "roster").stdout
