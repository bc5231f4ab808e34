"""`policies.agents_from` (registry, seed 001): the forbidden-agents lists of the runtime's agent
files, merged into the lifecycle by one pure function (law/agents.py)."""

from __future__ import annotations

import pytest

from gitstate.errors import InvalidFile
from gitstate.law.agents import agent_file, forbidden_of, law_of, merged
from gitstate.law.lifecycle import is_law_path
from gitstate.law.load import load_lifecycle
from gitstate.resources import preset_dir

LAW = """
name: t
initial: working
states:
  working: {}
  done: {terminal: true, roster: dead}
transitions: {working: [done]}
roles:
  programmer: {}
  researcher: {never_spawns: [reviewer]}
policies:
  agents_from: .claude/agents
"""


def lifecycle(extra: str = ""):
    return load_lifecycle(LAW + extra)


def agent(front: str, body: str = "You write code.\n") -> bytes:
    return f"---\n{front}---\n{body}".encode()


def test_the_registry_preset_reads_its_agents_from_claude_code_s_folder():
    lc = load_lifecycle((preset_dir("registry") / "lifecycle.yaml").read_text())
    assert lc.policies.agents_from == ".claude/agents"


def test_an_agent_file_s_forbidden_list_is_added_to_its_type_s_never_spawns():
    lc = merged(lifecycle(), {
        ".claude/agents/researcher.md": agent("description: r\nforbiddenAgents: [programmer]\n"),
        ".claude/agents/programmer.md": agent("forbiddenAgents:\n  - researcher\n  - reviewer\n"),
        ".claude/agents/notes.txt": b"not an agent file",
        ".claude/agents/deeper/tester.md": agent("forbiddenAgents: [programmer]\n")})
    assert lc.roles["researcher"].never_spawns == ("reviewer", "programmer")
    assert lc.roles["programmer"].never_spawns == ("researcher", "reviewer")
    assert "tester" not in lc.roles   # only the files directly in the folder are agent files


def test_the_type_is_the_front_matter_s_name_else_the_file_s():
    assert forbidden_of("a/x.md", agent("name: lead\nforbiddenAgents: [x]\n")) == ("lead", ("x",))
    assert forbidden_of("a/x.md", agent("description: no list\n")) == ("x", ())
    assert forbidden_of("a/x.md", agent("forbiddenAgents: a, b\n")) == ("x", ("a", "b"))


def test_an_undeclared_type_is_declared_by_its_file_where_custom_roles_are_allowed():
    lc = merged(lifecycle(), {".claude/agents/tester.md": agent("forbiddenAgents: [tester]\n"),
                              ".claude/agents/plain.md": agent("description: plain\n")})
    assert lc.roles["tester"].never_spawns == ("tester",)
    assert "plain" not in lc.roles   # a file that forbids nothing changes nothing
    with pytest.raises(InvalidFile) as err:
        merged(lifecycle("  custom_roles: false\n"),
               {".claude/agents/tester.md": agent("forbiddenAgents: [x]\n")})
    assert err.value.where == ".claude/agents/tester.md:1"
    assert "custom_roles: false" in err.value.message


@pytest.mark.parametrize(("text", "where", "says"), [
    (b"You write code.\n", ".claude/agents/p.md:1", "front matter must start the file"),
    (b"---\nname: p\nforbiddenAgents: [a\n---\n", ".claude/agents/p.md:", ""),
    (b"---\nname: p\ndescription: d\nforbiddenAgents: {a: 1}\n---\n",
     ".claude/agents/p.md:4", "must be a list of agent types"),
    (b"---\nname: [p]\n---\n", ".claude/agents/p.md:2", "'name' must be the agent's type"),
    (b"---\nforbiddenAgents: [a]\nmodel: x\nforbiddenAgents: [b]\n---\n",
     ".claude/agents/p.md:4", "'forbiddenAgents' is given twice (lines 2 and 4)"),
    (b"---\nname: p\n", ".claude/agents/p.md:1", "never closed"),
])
def test_malformed_front_matter_is_refused_with_its_file_and_line(text, where, says):
    with pytest.raises(InvalidFile) as err:
        merged(lifecycle(), {".claude/agents/p.md": text})
    assert (err.value.where or "").startswith(where) and says in err.value.message
    assert err.value.where != ".claude/agents/p.md:"   # a line number, always


def test_only_the_keys_gitstate_reads_must_be_strict_yaml():
    """Claude Code writes descriptions that strict YAML refuses (`when: ...` inside a plain
    value, examples on indented lines); the law reads `name` and `forbiddenAgents` alone."""
    text = (b"---\nname: code-reviewer\ndescription: Use this agent when: the code is done."
            b" Examples: <example>Context: a PR</example>\ntools: Read, Grep, Glob\n"
            b"forbiddenAgents:\n  - code-reviewer   # no reviews of reviews\n  - programmer\n"
            b"model: sonnet\n---\nYou review code.\n")
    assert forbidden_of(".claude/agents/cr.md", text) == (
        "code-reviewer", ("code-reviewer", "programmer"))


def test_a_malformed_file_is_left_out_where_the_law_is_read_leniently():
    lc = merged(lifecycle(), {".claude/agents/p.md": b"oops\n",
                              ".claude/agents/r.md": agent("forbiddenAgents: [programmer]\n")},
                strict=False)
    assert lc.roles["r"].never_spawns == ("programmer",)


def test_agent_files_are_law_only_where_the_lifecycle_names_their_folder():
    lc, without = lifecycle(), load_lifecycle(LAW.replace("  agents_from: .claude/agents\n", ""))
    assert is_law_path(".claude/agents/p.md", lc) and agent_file(lc, ".claude/agents/p.md") == "p"
    assert not is_law_path(".claude/agents/p.md", without)
    assert not is_law_path(".claude/agents/p.md")
    assert not is_law_path(".claude/agents/sub/p.md", lc) and not is_law_path(".claude/x.md", lc)
    assert agent_file(lc, ".githooks/commit-msg") is None and is_law_path(".githooks/x", lc)
    asked = []
    assert law_of(without, asked.append) is without and asked == []   # no folder: not read


@pytest.mark.parametrize("folder", ["/etc", "../up", ".git/x"])
def test_an_agents_folder_outside_the_repository_is_refused(folder):
    with pytest.raises(InvalidFile) as err:
        load_lifecycle(LAW.replace(".claude/agents", folder))
    said = str(err.value)
    assert "agents_from" in said and "relative path inside the repository" in said
