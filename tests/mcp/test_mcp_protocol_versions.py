"""`gitstate mcp` as clients expect it now, through the SDK's own client on the newest
protocol version the SDK speaks (`LATEST_PROTOCOL_VERSION`, reached by `server/discover`) and
the one before it (the handshake's `initialize`): every tool's structured result is its
command's own object (never `{"result": ...}`), the state files are resources (a template by
agent id, and a listing), and the briefing is a prompt."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

from conftest import git, gitstate, walk

pytestmark = pytest.mark.e2e       # a real client and server process per test

# the SDK's client is imported by the tests that use it (every worker of pytest-xdist imports
# this module, and the SDK takes about a second of CPU to import)
if importlib.util.find_spec("mcp") is None:
    pytest.skip("could not import 'mcp'", allow_module_level=True)
anyio = pytest.importorskip("anyio")
jsonschema = pytest.importorskip("jsonschema")

from mcp_types.version import (  # noqa: E402
    KNOWN_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS)

NEWEST = LATEST_PROTOCOL_VERSION
BEFORE = KNOWN_PROTOCOL_VERSIONS[KNOWN_PROTOCOL_VERSIONS.index(NEWEST) - 1]
VERSIONS = pytest.mark.parametrize("version", [NEWEST, BEFORE])


def run(repo, version: str, steps, *, agent: str | None = None):
    """`steps(session)` against `gitstate mcp` started in `repo`, the session on `version`."""
    env = {**os.environ, **({"GITSTATE_AGENT": agent} if agent else {})}
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    from mcp import ClientSession, StdioServerParameters, stdio_client
    params = StdioServerParameters(command=sys.executable, args=["-m", "gitstate", "mcp"],
                                   cwd=str(repo), env=env)

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                if version in MODERN_PROTOCOL_VERSIONS:
                    await discover(session)
                else:
                    await session.initialize()
                assert session.protocol_version == version
                return await steps(session)
    return anyio.run(go)


async def discover(session, tries: int = 3):
    """`server/discover`, asked again while it times out: the SDK gives the probe 10 s, and on
    two shared cores the server may take longer to start (a client in `auto` mode would fall
    back to `initialize` instead)."""
    from mcp.shared.exceptions import MCPError
    for left in range(tries - 1, -1, -1):
        try:
            return await session.discover()
        except MCPError as exc:
            if "timed out" not in str(exc) or not left:
                raise


def test_the_two_versions_are_the_sdks_newest_and_the_one_before():
    assert NEWEST == KNOWN_PROTOCOL_VERSIONS[-1] and BEFORE != NEWEST
    assert KNOWN_PROTOCOL_VERSIONS.index(BEFORE) == len(KNOWN_PROTOCOL_VERSIONS) - 2


@VERSIONS
def test_every_tool_returns_its_commands_own_object(repo, version):
    assert gitstate(repo, "spawn", "alice", "--role", "architect").returncode == 0
    assert gitstate(repo, "spawn", "bob").returncode == 0
    walk(repo, "alice", "inbox")

    async def steps(session):
        tools = (await session.list_tools()).tools
        one = await session.call_tool("status", {"agent": "alice"})
        every = await session.call_tool("status", {})
        roster = await session.call_tool("roster", {})
        return tools, one, every, roster

    tools, one, every, roster = run(repo, version, steps)
    assert len(tools) >= 20
    for tool in tools:        # an object, and never the SDK's {"result": ...} wrapper
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert set(tool.output_schema.get("properties") or {}) != {"result"}, tool.name
    status = {t.name: t for t in tools}["status"].output_schema
    cli_schema = json.loads(gitstate(repo, "schema", "status").stdout)
    assert status["anyOf"] == cli_schema["anyOf"] and status["$defs"] == cli_schema["$defs"]
    for result, args in ((one, ("alice",)), (every, ())):
        assert not result.is_error, result.content
        assert "result" not in result.structured_content
        assert result.structured_content == json.loads(
            gitstate(repo, "status", *args, "--json").stdout)
        jsonschema.validate(result.structured_content, status)
    assert one.structured_content["state"] == "inbox"
    assert [a["agent"] for a in every.structured_content["agents"]] == ["alice", "bob"]
    cli = json.loads(gitstate(repo, "roster", "--json").stdout)   # the CLI omits unset keys
    assert set(cli) <= set(roster.structured_content)
    same = [{k: v for k, v in row.items() if k != "seconds_in_state"}   # read at its moment
            for row in cli["living"]]
    assert [{k: row[k] for k in mine} for row, mine in zip(
        roster.structured_content["living"], same)] == same


def _committed(repo, agent: str, rev: str = "main") -> str:
    return git(repo, "show", f"{rev}:agent/{agent}/_state.md").stdout


@VERSIONS
def test_state_files_are_resources_read_on_the_team_line(repo, version):
    assert gitstate(repo, "spawn", "alice").returncode == 0
    assert gitstate(repo, "spawn", "bob").returncode == 0
    uri = "gitstate://agent/{}/state"

    async def steps(session):
        templates = (await session.list_resource_templates()).resource_templates
        listed = (await session.list_resources()).resources
        before = (await session.read_resource(uri.format("alice"))).contents[0]
        moved = await session.call_tool("transition", {"agent": "alice", "state": "inbox",
                                                       "message": "awake"})
        after = (await session.read_resource(uri.format("alice"))).contents[0]
        refused = []
        for who in ("nobody", "../x"):
            try:
                await session.read_resource(uri.format(who))
            except Exception as exc:   # noqa: BLE001 — the SDK raises the server's error
                refused.append(str(exc))
        return templates, listed, before, moved, after, refused

    first = _committed(repo, "alice")
    templates, listed, before, moved, after, refused = run(repo, version, steps,
                                                           agent="alice")
    assert [t.uri_template for t in templates] == ["gitstate://agent/{agent}/state"]
    assert [(str(r.uri), r.title) for r in listed] == [
        (uri.format("alice"), "alice: bootstrap"), (uri.format("bob"), "bob: bootstrap")]
    assert before.text == first and before.mime_type == "text/markdown"
    assert not moved.is_error, moved.content
    assert after.text == _committed(repo, "alice") != first and "state: inbox" in after.text
    assert "agent 'nobody' is not registered here" in refused[0]
    assert len(refused) == 2


def test_from_a_worktree_on_another_branch_the_resource_is_the_team_lines(repo):
    """A server started in a worktree on a branch of its own reads the state file at the team
    line's tip (`Managed.head()`), not at its branch's."""
    assert gitstate(repo, "spawn", "alice").returncode == 0
    where = repo.parent / "wt-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(where))
    walk(repo, "alice", "inbox")                 # the team line moves on; feature does not

    async def steps(session):
        return (await session.read_resource("gitstate://agent/alice/state")).contents[0].text

    text = run(where, NEWEST, steps)
    assert text == _committed(repo, "alice", "main") != _committed(repo, "alice", "feature")
    assert "state: inbox" in text


@VERSIONS
def test_the_briefing_is_a_prompt_for_the_bound_agent_or_the_one_named(repo, version):
    from gitstate.runtime.briefing import briefing
    assert gitstate(repo, "spawn", "alice", "--role", "architect").returncode == 0
    assert gitstate(repo, "spawn", "bob").returncode == 0
    walk(repo, "bob", "inbox")
    tip = git(repo, "rev-parse", "HEAD").stdout.strip()

    async def steps(session):
        prompts = (await session.list_prompts()).prompts
        mine = await session.get_prompt("briefing", {})
        bobs = await session.get_prompt("briefing", {"agent": "bob", "source": "resume"})
        return prompts, mine, bobs

    prompts, mine, bobs = run(repo, version, steps, agent="alice")
    prompt = {p.name: p for p in prompts}["briefing"]
    assert {a.name: a.required for a in prompt.arguments} == {"agent": False, "source": False}
    text = mine.messages[0].content.text
    assert mine.messages[0].role == "user"
    assert text.startswith("gitstate briefing (started) alice: bootstrap (living)")
    assert text == briefing({"cwd": str(repo), "source": "startup"}, "alice")
    assert "role: architect" in text and "What bootstrap asks" in text
    bob = bobs.messages[0].content.text
    assert bob.startswith("gitstate briefing (resumed) bob: inbox (living)")
    assert git(repo, "rev-parse", "HEAD").stdout.strip() == tip      # a prompt only reads
    assert not (repo / ".git" / "gitstate" / "runtime").exists() or not any(
        (repo / ".git" / "gitstate" / "runtime").rglob("*alice*"))
