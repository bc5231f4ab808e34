"""`gitstate mcp` answers a real MCP client: the SDK's own, over stdio, with the server
spawned as `python -m gitstate mcp` in a temporary repository."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from conftest import fill_freeze_state, git, gitstate, walk

pytestmark = pytest.mark.e2e       # a real client and server process per test

# the SDK's client is imported by the tests that use it (every worker of pytest-xdist imports
# this module, and the SDK takes about a second of CPU to import)
if importlib.util.find_spec("mcp") is None:
    pytest.skip("could not import 'mcp'", allow_module_level=True)
anyio = pytest.importorskip("anyio")


async def _session_run(repo, steps, roots=None, env=None, args=(), command=None):
    import os

    from mcp import ClientSession, StdioServerParameters, stdio_client, types
    command = command or [sys.executable, "-m", "gitstate", "mcp", *args]
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   cwd=str(repo), env={**os.environ, **(env or {})})

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{r}") for r in roots])

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots
                                 if roots is not None else None) as session:
            await session.initialize()
            return await steps(session)


def run(repo, steps, roots=None, *, agent=None, env=None, args=(), command=None):
    """`steps(session)` against `gitstate mcp ARGS` started in `repo`; `roots`: the client's
    roots (paths), offered to the server; `agent`: the agent it moves as (GITSTATE_AGENT in
    its environment); `env`: more of its environment; `command`: another command that
    starts the server."""
    env = {**(env or {}), **({"GITSTATE_AGENT": agent} if agent else {})}
    return anyio.run(_session_run, repo, steps, roots, env, args, command)


def test_the_server_init_registers_in_mcp_json_answers_without_gitstate_on_path(tmp_path):
    """`init --runtime claude-code` registers the server in .mcp.json; its command, started
    as Claude Code starts it (in the session's folder, here a subfolder; a PATH without
    gitstate; no CLAUDE_PROJECT_DIR), is gitstate's server, bound by the session's id."""
    import os

    from conftest import managed_repo
    repo = managed_repo(tmp_path / "repo", "--runtime", "claude-code")
    server = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["gitstate"]
    assert gitstate(repo, "spawn", "alice", "--session", "s-1").returncode == 0
    (repo / "sub").mkdir()
    os.environ.pop("CLAUDE_PROJECT_DIR", None)

    async def steps(session):
        tools = (await session.list_tools()).tools
        moved = await session.call_tool("transition", {"agent": "alice", "state": "inbox",
                                                       "message": "over .mcp.json"})
        return tools, moved

    tools, moved = run(repo / "sub", steps, command=[server["command"], *server["args"]],
                       env={"PATH": "/usr/bin:/bin", "CLAUDE_CODE_SESSION_ID": "s-1"})
    assert "transition" in {t.name for t in tools}
    assert not moved.is_error, moved.content
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@alice: [STATE:inbox] over .mcp.json"


def test_tools_are_listed_with_typed_inputs_and_outputs(repo):
    async def steps(session):
        return (await session.list_tools()).tools

    tools = {t.name: t for t in run(repo, steps)}
    assert {"status", "roster", "vacancies", "log", "inbox", "show", "lifecycle", "spawn",
            "transition", "freeze", "wake", "bury", "sweep", "verify", "check", "await",
            "reap", "shutdown", "sync"} <= set(tools)
    spawn = tools["spawn"]
    assert spawn.input_schema["required"] == ["agent"]
    assert spawn.input_schema["properties"]["parent"]
    assert set(spawn.output_schema["properties"]) == {
        "commit", "agent", "from", "to", "path", "advice", "also_committed", "subject",
        "line",    # the team line, for a move made from a worktree on another branch
        "push"}    # how it landed
    assert "living" in tools["roster"].output_schema["properties"]


def test_status_and_moves_answer_as_the_cli_does(repo):
    async def steps(session):
        born = await session.call_tool("spawn", {"agent": "alice", "role": "architect"})
        moved = await session.call_tool("transition", {"agent": "alice", "state": "inbox",
                                                       "message": "restored"})
        refused = await session.call_tool("transition", {"agent": "alice",
                                                         "state": "deep_work"})
        status = await session.call_tool("status", {"agent": "alice"})
        roster = await session.call_tool("roster", {})
        return born, moved, refused, status, roster

    born, moved, refused, status, roster = run(repo, steps, agent="alice")
    assert not born.is_error and born.structured_content["to"] == "bootstrap"
    assert moved.structured_content["from"] == "bootstrap"
    assert refused.is_error
    said = refused.content[0].text     # the SDK frames a tool's error; the words are ours
    cli = gitstate(repo, "transition", "alice", "deep_work")     # the same move, by the CLI
    assert cli.returncode == 1
    assert said == "Error executing tool transition: " + cli.stderr.strip().removeprefix(
        "gitstate: ")
    assert "[illegal-transition]" in said and "from inbox the lifecycle allows: distill" in said
    assert status.structured_content == json.loads(
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

    reaped, waited, shut = run(repo, steps, args=("--agent", "zed"))   # one agent's server
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

    frozen, answers = run(repo, reads, agent="carol")
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

    # an agent's server does not approve as zach: until allowed_signers, zach wakes carol
    woken, buried, vacant = run(repo, moves, agent="alice")
    assert woken.is_error and "[agent-approval]" in woken.content[0].text
    assert "carol frozen -> bootstrap is approved by zach" in woken.content[0].text
    assert buried.structured_content["to"] == "dead"
    notice = "Role 'architect' is vacant. Last held by alice"
    assert buried.structured_content["vacancies"][0].startswith(notice)
    assert vacant.structured_content["vacancies"][0]["last_holder"] == "alice"
    cli = json.loads(gitstate(repo, "vacancies", "--json").stdout)
    assert [v["role"] for v in vacant.structured_content["vacancies"]] == \
        [v["role"] for v in cli["vacancies"]]
    assert json.loads(gitstate(repo, "wake", "carol", "--approved-by", "zach", "--json")
                      .stdout)["from"] == "frozen"      # zach, at a terminal


def test_mcp_says_what_to_install_when_the_sdk_is_missing(repo, tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "mcp.py").write_text("raise ModuleNotFoundError('no mcp', name='mcp')\n")
    import os
    import subprocess
    env = dict(os.environ, PYTHONPATH=str(blocker))
    res = subprocess.run([sys.executable, "-m", "gitstate", "mcp"], cwd=repo, env=env,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    from gitstate.resources import install_extra
    assert res.returncode == 2 and f"pip install {install_extra('mcp')}" in res.stderr


def test_every_tool_describes_itself_refuses_extra_keys_and_says_whether_it_commits(repo):
    async def steps(session):
        return (await session.list_tools()).tools

    tools = {t.name: t for t in run(repo, steps)}
    assert {"handover", "logout", "situations", "doctor"} <= set(tools)
    for tool in tools.values():
        schema = tool.input_schema
        assert tool.description and schema["additionalProperties"] is False, tool.name
        for name, prop in schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
        hints = tool.annotations
        assert hints is not None and hints.read_only_hint is not None, tool.name
        assert hints.destructive_hint is not None and hints.idempotent_hint is not None
    reads = {n for n, t in tools.items() if t.annotations.read_only_hint}
    assert {"status", "roster", "log", "show", "lifecycle", "check", "verify", "situations",
            "doctor", "vacancies", "await", "board"} == reads
    assert {n for n, t in tools.items() if t.annotations.destructive_hint} == {
        "bury", "reap", "shutdown", "sweep"}
    props = tools["transition"].input_schema["properties"]
    assert {"message", "set", "approved_by", "paths", "repository"} <= set(props)
    assert "text" not in props and "sets" not in props
    assert "from" in tools["handover"].input_schema["properties"]
    assert {"limit", "since"} <= set(tools["log"].input_schema["properties"])


def test_arguments_are_judged_in_gitstates_words(repo):
    gitstate(repo, "spawn", "alice")
    tip = git(repo, "rev-parse", "HEAD").stdout

    async def steps(session):
        return (await session.call_tool("transition", {"agent": "alice", "state": "inbox",
                                                       "text": "lost?"}),
                await session.call_tool("log", {"limit": "ten"}),
                await session.call_tool("spawn", {"agent": "bob", "set": "a=b"}),
                await session.call_tool("transition", {"state": "inbox"}),
                await session.call_tool("log", {"limit": -1}))

    extra, typed, listed, missing, negative = run(repo, steps)
    assert negative.content[0].text.endswith("log: argument 'limit' must be at least 0, not -1")
    assert extra.is_error and extra.content[0].text == (
        "Error executing tool transition: transition: unknown argument 'text' (did you mean "
        "'message'?); transition takes: agent, state, message, body, set, approved_by, paths, "
        "push, repository")
    assert typed.content[0].text == ("Error executing tool log: log: argument 'limit' must "
                                     "be an integer, not \"ten\"")
    assert listed.content[0].text.endswith("argument 'set' must be a list, not \"a=b\"")
    assert missing.content[0].text.endswith("transition: missing argument 'agent'")
    for said in (extra, typed, listed, missing, negative):
        text = said.content[0].text
        assert "pydantic" not in text and "http" not in text and "validation error" not in text
    assert git(repo, "rev-parse", "HEAD").stdout == tip    # nothing moved


def test_log_limit_and_since_and_the_new_tools(repo, monkeypatch):
    for agent, role in (("alice", "architect"), ("bob", None)):
        gitstate(repo, "spawn", agent, *(("--role", role) if role else ()))
    walk(repo, "alice", "inbox")

    async def steps(session):
        return {"log": await session.call_tool("log", {"limit": 2, "newest_first": True}),
                "since": await session.call_tool("log", {"since": "2090-01-01"}),
                "handover": await session.call_tool("handover", {
                    "role": "architect", "to": "bob", "from": "alice", "message": "yours"}),
                "situations": await session.call_tool("situations", {}),
                "doctor": await session.call_tool("doctor", {}),
                "logout": await session.call_tool("logout", {"agent": "bob", "note": "x"})}

    got = run(repo, steps, agent="alice")
    assert [r["agent"] for r in got["log"].structured_content["moves"]] == ["alice", "bob"]
    assert got["since"].structured_content["moves"] == []
    assert not got["handover"].is_error, got["handover"].content
    assert "Role-transfer: architect -> bob" in git(repo, "log", "-1", "--format=%B").stdout
    assert {k: v for k, v in got["situations"].structured_content.items()
            if k != "sqlite"} == json.loads(
        gitstate(repo, "situations", "--no-sqlite", "--json").stdout)
    monkeypatch.setenv("GITSTATE_AGENT", "alice")          # as the server was started
    assert got["doctor"].structured_content["findings"] == json.loads(
        gitstate(repo, "doctor", "--json").stdout)["findings"]
    monkeypatch.delenv("GITSTATE_AGENT")
    # haak has no logout state: the command's own refusal, in the CLI's words
    cli = gitstate(repo, "logout", "bob", "--note", "x")
    assert cli.returncode != 0 and got["logout"].is_error
    assert got["logout"].content[0].text == "Error executing tool logout: " + \
        cli.stderr.strip().removeprefix("gitstate: ")


def test_say_speaks_as_the_bound_agent_and_the_inbox_reads_it(repo):
    """The tool calls what `gitstate say` calls: one commit of no file, whose subject says who
    speaks; a refusal is the command's own words."""
    for agent in ("alice", "bob"):
        gitstate(repo, "spawn", agent)
    (repo / "work.txt").write_text("staged, not said\n")
    git(repo, "add", "work.txt")

    async def steps(session):
        return (await session.call_tool("say", {"to": ["bob"], "message": "review please"}),
                await session.call_tool("say", {"to": ["bobb"], "message": "hi"}))

    said, unknown = run(repo, steps, agent="alice")
    assert not said.is_error, said.content
    sha = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert said.structured_content == {"commit": sha, "from": "alice", "to": ["bob"],
                                       "subject": "@alice: to @bob: review please", "body": "",
                                       "push": None}
    assert git(repo, "diff-tree", "--no-commit-id", "-r", "--name-only", "HEAD").stdout == ""
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["work.txt"]
    inbox = json.loads(gitstate(repo, "inbox", "bob", "--json").stdout)["messages"]
    assert [(m["commit"], m["from"]) for m in inbox] == [(sha, "alice")]
    assert unknown.is_error and "unknown agent 'bobb' (did you mean 'bob'?)" in \
        unknown.content[0].text


def test_the_repository_is_an_argument_or_the_clients_root(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    gitstate(repo, "spawn", "alice")

    async def steps(session):
        return await session.call_tool("status", {"agent": "alice"})

    async def by_argument(session):
        return await session.call_tool("status", {"agent": "alice",
                                                  "repository": str(repo)})

    assert run(elsewhere, steps).is_error                      # not a repository
    assert not run(elsewhere, by_argument).is_error
    rooted = run(elsewhere, steps, roots=[repo])
    assert not rooted.is_error and rooted.structured_content["state"] == "bootstrap"


def test_a_move_commits_only_its_own_file_and_the_paths_it_names(repo):
    gitstate(repo, "spawn", "alice")
    (repo / "theirs.txt").write_text("another agent's work\n")
    git(repo, "add", "theirs.txt")
    (repo / "mine.txt").write_text("alice's work\n")
    tip = git(repo, "rev-parse", "HEAD").stdout

    async def refused(session):
        return await session.call_tool("transition", {"agent": "alice", "state": "inbox"})

    said = run(repo, refused, agent="alice")
    assert said.is_error and "staged change that alice's move does not name: theirs.txt" \
        in said.content[0].text
    assert git(repo, "rev-parse", "HEAD").stdout == tip
    git(repo, "restore", "--staged", "theirs.txt")
    git(repo, "add", "theirs.txt")   # still staged, by someone else

    async def named(session):
        return await session.call_tool("transition", {
            "agent": "alice", "state": "inbox",
            "paths": ["mine.txt", "theirs.txt", "agent/alice/_state.md"]})

    moved = run(repo, named, agent="alice")
    assert not moved.is_error, moved.content
    assert sorted(git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()) == [
        "agent/alice/_state.md", "mine.txt", "theirs.txt"]
    assert "state: inbox" in git(repo, "show", "HEAD:agent/alice/_state.md").stdout


def inspector_call(repo, *args):
    """The MCP Inspector's command line (npm @modelcontextprotocol/inspector, pinned in
    .ci/npm/package.json) against `gitstate mcp` in `repo`: its JSON answer."""
    import os
    import subprocess

    from npm_tools import inspector
    # the Inspector hands the server only a few variables of its own: the test's git
    # identity and configuration are passed on (-e)
    env = [f"-e{k}={v}" for k, v in os.environ.items()
           if k.startswith(("GIT_", "HOME", "XDG_", "PYTHON"))] + ["-eGITSTATE_AGENT=alice"]
    res = subprocess.run([inspector(), "--cli", *env, sys.executable, "-m", "gitstate", "mcp",
                          *args], cwd=repo, capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    answer = json.loads(res.stdout)
    assert res.returncode == (5 if answer.get("isError") else 0), res.stderr  # 5: a tool error
    return answer


@pytest.fixture
def inspector_installed():
    from npm_tools import inspector
    inspector()     # else skip, before the repository is built


def test_the_mcp_inspector_lists_calls_and_is_refused(inspector_installed, repo):
    listed = {t["name"]: t for t in inspector_call(repo, "--method", "tools/list")["tools"]}
    assert listed["transition"]["annotations"] == {
        "readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
        "openWorldHint": False}
    assert listed["roster"]["annotations"]["readOnlyHint"] is True
    assert listed["transition"]["inputSchema"]["additionalProperties"] is False
    born = inspector_call(repo, "--method", "tools/call", "--tool-name", "spawn",
                          "--tool-arg", "agent=alice", "--tool-arg", "message=hello")
    assert not born.get("isError") and born["structuredContent"]["to"] == "bootstrap"
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == \
        "@alice: [STATE:bootstrap] hello"
    tip = git(repo, "rev-parse", "HEAD").stdout
    refused = inspector_call(repo, "--method", "tools/call", "--tool-name", "transition",
                             "--tool-arg", "agent=alice", "--tool-arg", "state=inbox",
                             "--tool-arg", "text=lost")
    assert refused["isError"] is True
    assert "unknown argument 'text' (did you mean 'message'?)" in refused["content"][0]["text"]
    assert git(repo, "rev-parse", "HEAD").stdout == tip
    log = inspector_call(repo, "--method", "tools/call", "--tool-name", "log",
                         "--tool-arg", "limit=1")
    assert [r["text"] for r in log["structuredContent"]["moves"]] == ["hello"]


MOVES = {"spawn": {"agent": "mallory"}, "transition": {"agent": "bob", "state": "inbox"},
         "freeze": {"agent": "bob"}, "wake": {"agent": "bob", "approved_by": "zach"},
         "bury": {"agent": "bob", "summary": "gone"}, "handover": {"role": "x", "to": "bob"},
         "logout": {"agent": "bob", "note": "x"}, "sweep": {}, "reap": {}, "shutdown": {},
         "inbox": {"agent": "bob", "mark_read": True},
         "say": {"to": ["bob"], "message": "hello"}, "sync": {}}


def test_an_unbound_server_reads_and_refuses_every_move(repo):
    """No --agent, no GITSTATE_AGENT, and a runtime session no agent records: the server
    reads, and every tool that commits is refused, saying how to bind, before anything moves
    (the attack it closes: an unbound server moving bob for alice's session)."""
    gitstate(repo, "spawn", "bob")
    tip = git(repo, "rev-parse", "HEAD").stdout

    async def steps(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        writes = {n for n, t in tools.items() if not t.annotations.read_only_hint}
        return writes, {name: await session.call_tool(name, args)
                        for name, args in MOVES.items()}, \
            await session.call_tool("status", {"agent": "bob"}), \
            await session.call_tool("sweep", {"dry_run": True})

    writes, said, status, dry = run(repo, steps, env={"CLAUDE_CODE_SESSION_ID": "s-123"})
    assert writes == set(MOVES)          # every tool that can commit is tried here
    for name, answer in said.items():
        text = answer.content[0].text
        assert answer.is_error and "[unbound-mover]" in text, (name, text)
        assert "gitstate spawn <your-id> --session s-123" in text, name
    assert not status.is_error and status.structured_content["state"] == "bootstrap"
    assert not dry.is_error
    assert git(repo, "rev-parse", "HEAD").stdout == tip


def test_the_server_moves_as_the_agent_its_runtime_session_names(repo):
    """Claude Code hands a stdio server CLAUDE_CODE_SESSION_ID: the server moves as the agent
    whose state file records that session, judged as a session bound to it; a GITSTATE_AGENT
    exported for another session (GITSTATE_SESSION) binds nothing."""
    gitstate(repo, "spawn", "alice", "--session", "s-alice")
    gitstate(repo, "spawn", "bob")

    async def steps(session):
        return (await session.call_tool("transition", {"agent": "alice", "state": "inbox"}),
                await session.call_tool("transition", {"agent": "bob", "state": "inbox"}))

    mine, theirs = run(repo, steps, env={"CLAUDE_CODE_SESSION_ID": "s-alice",
                                         "GITSTATE_AGENT": "bob",
                                         "GITSTATE_SESSION": "s-bob"})
    assert not mine.is_error, mine.content
    assert mine.structured_content["to"] == "inbox"
    assert theirs.is_error and "[not-yours]" in theirs.content[0].text
    assert "alice may not move bob" in theirs.content[0].text
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "@alice: [STATE:inbox] " \
        "bootstrap -> inbox"

    async def move_bob(session):
        return await session.call_tool("transition", {"agent": "bob", "state": "inbox"})

    inherited = run(repo, move_bob, env={"CLAUDE_CODE_SESSION_ID": "s-new",
                                         "GITSTATE_AGENT": "bob", "GITSTATE_SESSION": "s-bob"})
    assert inherited.is_error and "[unbound-mover]" in inherited.content[0].text
    assert "GITSTATE_AGENT=bob was exported for another session" in inherited.content[0].text
    assert not run(repo, move_bob, agent="bob").is_error      # bound by its environment


def test_moves_land_on_the_hub_and_sync_lands_what_did_not(tmp_path):
    """In a clone of a hub, a move made through MCP lands as `--push` lands it (its result
    says how); `push: false` commits here only, and the `sync` tool lands it later, as
    `gitstate sync` does."""
    from hubs import hub_and_clones, hub_subjects
    hub, (a, _b) = hub_and_clones(tmp_path)

    def rev(repo, what):
        return git(repo, "rev-parse", what).stdout.strip()

    async def steps(session):
        born = await session.call_tool("spawn", {"agent": "alice", "role": "architect"})
        here = await session.call_tool("transition", {"agent": "alice", "state": "inbox",
                                                      "push": False})
        local = rev(a, "HEAD")
        synced = await session.call_tool("sync", {})
        moved = await session.call_tool("transition", {"agent": "alice", "state": "distill",
                                                       "message": "planning"})
        return born, here, local, synced, moved

    born, here, local, synced, moved = run(a, steps, agent="alice")
    assert not born.is_error, born.content
    landing = born.structured_content["push"]
    assert landing["outcome"] == "landed" and landing["upstream"] == "origin/main"
    assert born.structured_content["commit"] == landing["commit"]
    assert here.structured_content["push"] is None             # committed here only
    assert here.structured_content["commit"] == local
    assert not synced.is_error, synced.content
    out = synced.structured_content
    assert out["ok"] and [(m["commit"], m["outcome"]) for m in out["moves"]] == [
        (local, "landed")], out
    assert moved.structured_content["push"]["outcome"] == "landed"
    assert hub_subjects(hub)[:3] == ["@alice: [STATE:distill] planning",
                                     "@alice: [STATE:inbox] bootstrap -> inbox",
                                     "@alice: [STATE:bootstrap] spawned as architect"]
    assert rev(a, "HEAD") == rev(hub, "main") == moved.structured_content["commit"]
    assert gitstate(hub, "verify", "--no-cache").returncode == 0


def test_a_move_committed_without_landing_lands_with_the_next_mcp_move(tmp_path):
    from hubs import hub_and_clones, hub_subjects, pushed
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    assert gitstate(a, "transition", "alice", "inbox", "-m", "by hand").returncode == 0

    async def steps(session):
        return await session.call_tool("transition", {"agent": "alice", "state": "distill"})

    moved = run(a, steps, agent="alice")
    landing = moved.structured_content["push"]
    assert landing["outcome"] == "landed", landing
    assert [e["outcome"] for e in landing["earlier"]] == ["landed"]
    assert hub_subjects(hub)[:2] == ["@alice: [STATE:distill] inbox -> distill",
                                     "@alice: [STATE:inbox] by hand"]
