"""The moves the runtime's hooks make land on the team line when the branch's upstream is a
hub, as `--push` lands them (with whatever the branch holds that the hub has not got); when
landing gives up, the commit stays here, the hook still exits 0, and the agent's next `--push`
lands it. Claude Code's context hook, run as the runtime runs it, in a clone of a real hub."""

from __future__ import annotations

from pathlib import Path

from conftest import git, gitstate
from hubs import hub_and_clones, hub_subjects, pushed
from test_claude_code import post_tool, said, start, transcript


def rev(repo: Path, what: str) -> str:
    return git(repo, "rev-parse", what).stdout.strip()


def agent_clone(tmp_path: Path) -> tuple[Path, Path]:
    """A hub, and a clone with Claude Code's hooks where alice (session s1) is in deep_work:
    spawned on the hub, her three moves since committed here only."""
    hub, (_a, b) = hub_and_clones(tmp_path)
    assert gitstate(b, "init", "--runtime", "claude-code").returncode == 0
    assert pushed(b, "spawn", "alice", "--session", "s1")[0] == 0
    # what the runtime knows of the session is recorded, and landed, when it starts
    assert "landed on origin/main" in said(start(b, "s1"))
    assert hub_subjects(hub)[0].startswith("@alice: [STATE:bootstrap] runtime: pid ")
    for state in ("inbox", "distill", "deep_work"):
        assert gitstate(b, "transition", "alice", state).returncode == 0
    moved = rev(b, "HEAD")
    said(start(b, "s1", "resume"))   # the same facts: nothing more to record
    assert rev(b, "HEAD") == moved
    return hub, b


def test_a_measurement_the_context_hook_commits_lands_with_the_moves_before_it(tmp_path):
    hub, b = agent_clone(tmp_path)
    told = said(post_tool(b, "s1", transcript(tmp_path / "s1.jsonl", 110_000)))   # 55 %
    assert "mortality phase midlife" in told and "landed on origin/main" in told, told
    assert hub_subjects(hub)[:4] == [
        "@alice: [STATE:deep_work] context 55% (110,000 of 200,000 tokens): midlife",
        "@alice: [STATE:deep_work] distill -> deep_work",
        "@alice: [STATE:distill] inbox -> distill",
        "@alice: [STATE:inbox] bootstrap -> inbox"]
    assert rev(b, "HEAD") == rev(hub, "main")
    assert git(hub, "log", "-1", "--format=%an", "main").stdout.strip() == "gitstate"
    assert gitstate(hub, "verify", "--no-cache").returncode == 0


def test_a_measurement_that_cannot_land_stays_here_and_the_next_push_lands_it(tmp_path):
    hub, b = agent_clone(tmp_path)
    tip = rev(hub, "main")
    away = hub.with_name("hub-away.git")
    hub.rename(away)                                       # the hub cannot be reached
    try:
        res = post_tool(b, "s1", transcript(tmp_path / "s1.jsonl", 110_000))
    finally:
        away.rename(hub)
    told = said(res)                                       # exit 0: the agent goes on
    assert "midlife" in told and "not landed" in told and "`--push`" in told, told
    assert git(b, "log", "-1", "--format=%s").stdout.startswith(
        "@alice: [STATE:deep_work] context 55%")
    assert rev(hub, "main") == tip
    code, out = pushed(b, "transition", "alice", "inbox", "-m", "wrapping up")
    assert code == 0 and out["outcome"] == "landed", out
    assert [e["outcome"] for e in out["earlier"]] == ["landed"] * 4
    assert hub_subjects(hub)[:2] == [
        "@alice: [STATE:inbox] wrapping up",
        "@alice: [STATE:deep_work] context 55% (110,000 of 200,000 tokens): midlife"]
    assert rev(b, "HEAD") == rev(hub, "main")
    assert gitstate(hub, "verify", "--no-cache").returncode == 0


def test_a_hook_never_makes_the_agents_own_commits_again(tmp_path):
    """Work the agent committed (a commit that moves no agent) would have to be made again
    after the landed moves: the hook leaves the branch as it is, and says so."""
    hub, b = agent_clone(tmp_path)
    (b / "src.py").write_text("print('half done')\n")
    git(b, "add", "src.py")
    git(b, "commit", "-q", "-m", "wip: the parser")
    work = rev(b, "HEAD")
    tip = rev(hub, "main")
    told = said(post_tool(b, "s1", transcript(tmp_path / "s1.jsonl", 110_000)))
    assert "midlife" in told and "not landed" in told and "work" in told, told
    assert rev(b, "HEAD~1") == work and rev(hub, "main") == tip       # untouched
    assert git(b, "log", "-1", "--format=%an").stdout.strip() == "gitstate"
