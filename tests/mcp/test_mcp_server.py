"""`gitstate mcp` answers a real MCP client: the SDK's own, over stdio, with the server
spawned as `python -m gitstate mcp` in a temporary repository."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import fill_freeze_state, git, gitstate, walk

pytestmark = pytest.mark.e2e       # a real client and server process per test

pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402


async def _session_run(repo, steps):
    import os
    params = StdioServerParameters(command=sys.executable, args=["-m", "gitstate", "mcp"],
                                   cwd=str(repo), env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await steps(session)


def run(repo, steps):
    return anyio.run(_session_run, repo, steps)


def test_tools_are_listed_with_typed_inputs_and_outputs(repo):
    async def steps(session):
        return (await session.list_tools()).tools

    tools = {t.name: t for t in run(repo, steps)}
    assert {"status", "roster", "vacancies", "log", "inbox", "show", "lifecycle", "spawn",
            "transition", "freeze", "wake", "bury", "sweep", "verify", "check", "await",
            "reap", "shutdown"} <= set(tools)
    spawn = tools["spawn"]
    assert spawn.input_schema["required"] == ["agent"]
    assert spawn.input_schema["properties"]["parent"]
    assert set(spawn.output_schema["properties"]) == {"commit", "agent", "from", "to", "path", "advice", "also_committed",
                                                      "subject"}
    assert "living" in tools["roster"].output_schema["properties"]


def test_status_and_moves_answer_as_the_cli_does(repo):
    async def steps(session):
        born = await session.call_tool("spawn", {"agent": "alice", "role": "architect"})
        moved = await session.call_tool("transition", {"agent": "alice", "state": "inbox",
                                                       "text": "restored"})
        refused = await session.call_tool("transition", {"agent": "alice",
                                                         "state": "deep_work"})
        status = await session.call_tool("status", {"agent": "alice"})
        roster = await session.call_tool("roster", {})
        return born, moved, refused, status, roster

    born, moved, refused, status, roster = run(repo, steps)
    assert not born.is_error and born.structured_content["to"] == "bootstrap"
    assert moved.structured_content["from"] == "bootstrap"
    assert refused.is_error
    said = refused.content[0].text     # the SDK frames a tool's error; the words are ours
    cli = gitstate(repo, "transition", "alice", "deep_work")     # the same move, by the CLI
    assert cli.returncode == 1
    assert said == "Error executing tool transition: " + cli.stderr.strip().removeprefix(
        "gitstate: ")
    assert "[illegal-transition]" in said and "from inbox the lifecycle allows: distill" in said
    assert status.structured_content["result"] == json.loads(
        gitstate(repo, "status", "alice", "--json").stdout)
    assert roster.structured_content["living"][0]["agent"] == "alice"
    subjects = git(repo, "log", "--format=%s", "-2").stdout.splitlines()
    assert subjects == ["@alice: [STATE:inbox] restored",
                        "@alice: [STATE:bootstrap] spawned as architect"]


def test_operations_on_the_fleet(repo):
    gitstate(repo, "spawn", "zed")

    async def steps(session):
        return (await session.call_tool("reap", {}),
                await session.call_tool("await", {"agents": ["zed"], "timeout": 0.5}),
                await session.call_tool("shutdown", {}))

    reaped, waited, shut = run(repo, steps)
    assert reaped.structured_content == {"exit_code": 0,
                                         "lines": ["no agent has lost its process"]}
    assert waited.structured_content["exit_code"] == 124
    assert shut.structured_content["exit_code"] == 0 and shut.structured_content["lines"]
    assert "@zed: [STATE:" in git(repo, "log", "-1", "--format=%s").stdout


def test_reads_and_refusals_of_unknown_agents(repo):
    async def steps(session):
        return (await session.call_tool("inbox", {"agent": "nobody"}),
                await session.call_tool("lifecycle", {}),
                await session.call_tool("log", {}))

    inbox, lc, log = run(repo, steps)
    assert inbox.is_error and "unknown agent 'nobody'" in inbox.content[0].text
    assert lc.structured_content["name"] == "haak"
    assert log.structured_content["moves"] == [] and log.structured_content["agent"] is None


def test_the_other_tools_answer_what_their_commands_print(repo):
    """vacancies, show, check, verify, sweep, freeze, wake and bury: the same data as the
    command's `--json` (the moves: the same record a command prints for the same move)."""
    for agent, role in (("alice", "architect"), ("carol", "steward")):
        gitstate(repo, "spawn", agent, "--role", role)
    walk(repo, "carol", "inbox", "distill")
    walk(repo, "alice", "inbox", "distill")
    assert gitstate(repo, "freeze", "carol").returncode == 1        # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "carol.md")

    async def reads(session):
        frozen = await session.call_tool("freeze", {"agent": "carol"})
        return frozen, {name: await session.call_tool(name, args) for name, args in (
            ("show", {"agent": "carol"}), ("check", {}), ("verify", {}),
            ("sweep", {"dry_run": True}))}

    frozen, answers = run(repo, reads)
    assert frozen.structured_content["to"] == "frozen"
    for name, args in (("show", ("carol",)), ("check", ()), ("verify", ("--no-cache",)),
                       ("sweep", ("--dry-run",))):
        assert not answers[name].is_error, name
        assert answers[name].structured_content == json.loads(
            gitstate(repo, name, *args, "--json").stdout), name

    async def moves(session):
        return (await session.call_tool("wake", {"agent": "carol", "approved_by": "zach"}),
                await session.call_tool("bury", {"agent": "alice", "summary": "done"}),
                await session.call_tool("vacancies", {}))

    woken, buried, vacant = run(repo, moves)
    assert (woken.structured_content["from"], woken.structured_content["agent"]) == \
        ("frozen", "carol")
    assert buried.structured_content["to"] == "dead"
    notice = "Role 'architect' is vacant. Last held by alice"
    assert buried.structured_content["vacancies"][0].startswith(notice)
    assert vacant.structured_content["vacancies"][0]["last_holder"] == "alice"
    cli = json.loads(gitstate(repo, "vacancies", "--json").stdout)
    assert [v["role"] for v in vacant.structured_content["vacancies"]] == \
        [v["role"] for v in cli["vacancies"]]


def test_mcp_says_what_to_install_when_the_sdk_is_missing(repo, tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "mcp.py").write_text("raise ModuleNotFoundError('no mcp', name='mcp')\n")
    import os
    import subprocess
    env = dict(os.environ, PYTHONPATH=str(blocker))
    res = subprocess.run([sys.executable, "-m", "gitstate", "mcp"], cwd=repo, env=env,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert res.returncode == 2 and "pip install 'gitstate-agents[mcp]'" in res.stderr
