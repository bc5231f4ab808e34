"""registry (seed 001): the forbidden-agents list read from `.claude/agents/*.md` front matter
(`policies.agents_from`) is law at every door, and a change of those files is a change of the
law."""

from __future__ import annotations

from pathlib import Path

from conftest import UNHOOKED, git, gitstate
from hubs import make_hub
from test_presets import managed, new_state_file, ok, refused_commit

AGENT = ".claude/agents/programmer.md"
FORBIDS = "---\nname: programmer\ndescription: writes code\nforbiddenAgents: [researcher]\n---\n" \
          "You write code. Hand reading to a reviewer.\n"


def with_agent_file(tmp_path: Path, text: str = FORBIDS) -> Path:
    """A registry repository whose programmer's agent file is `text`, committed with the
    approval a change of the law needs (its human is the committer, `init`'s default)."""
    repo = managed(tmp_path, "registry")
    human = git(repo, "config", "user.name").stdout.strip()
    (repo / AGENT).parent.mkdir(parents=True, exist_ok=True)
    (repo / AGENT).write_text(text)
    git(repo, "add", AGENT)
    git(repo, "commit", "-q", "-m", "programmers hand reading on", "-m", f"Approved-by: {human}")
    return repo


def test_a_type_an_agent_file_forbids_is_refused_at_every_door(tmp_path):
    repo = with_agent_file(tmp_path)
    ok(repo, "spawn", "p1", "--role", "programmer")
    hub = make_hub(tmp_path / "hub.git")
    git(repo, "remote", "add", "origin", str(hub))
    git(repo, "push", "-q", "origin", "main")
    # the command
    res = gitstate(repo, "spawn", "r1", "--parent", "p1", "--role", "researcher")
    assert res.returncode == 1 and "[self-spawn]" in res.stderr
    assert "a programmer may not spawn a researcher; it may spawn: general, reviewer" in res.stderr
    ok(repo, "spawn", "v1", "--parent", "p1", "--role", "reviewer")   # what it may spawn
    shown = ok(repo, "lifecycle").stdout
    assert "programmer: any number; never spawns researcher" in shown
    assert "agent files: .claude/agents/*.md (their forbiddenAgents are law)" in shown
    # the hooks
    new_state_file(repo, "r1", state="in-progress", parent="p1", depth=2, role="researcher")
    refused_commit(repo, "@r1: [STATE:in-progress] born", "self-spawn")
    # the ref guard, when the commit hooks are skipped
    res = git(repo, "commit", "-q", "--no-verify", "-m", "@r1: [STATE:in-progress] born",
              check=False)
    assert res.returncode != 0 and "[self-spawn]" in res.stderr
    # verify, and the hub, of a commit that skipped the hooks
    git(repo, *UNHOOKED, "commit", "-qm", "@r1: [STATE:in-progress] born")
    res = gitstate(repo, "verify", "--no-cache")
    assert res.returncode == 1 and "[self-spawn]" in res.stdout
    res = git(repo, "push", "-q", "origin", "main", check=False)
    assert res.returncode != 0 and "[self-spawn]" in res.stderr
    assert "born" not in git(hub, "log", "--format=%s", "main").stdout


def test_unforbidding_in_an_agent_file_is_a_change_of_the_law(tmp_path):
    repo = with_agent_file(tmp_path)
    human = git(repo, "config", "user.name").stdout.strip()
    ok(repo, "spawn", "p1", "--role", "programmer")
    (repo / AGENT).write_text(FORBIDS.replace("forbiddenAgents: [researcher]\n", ""))
    err = refused_commit(repo, "programmers may spawn researchers", "needs-approval", AGENT)
    assert f"this commit changes the law ({AGENT})" in err
    res = git(repo, "commit", "-q", "--no-verify", "-m", "unforbid", check=False)
    assert res.returncode != 0 and "[needs-approval]" in res.stderr   # the ref guard
    # a move cannot carry it in either
    res = gitstate(repo, "spawn", "r1", "--parent", "p1", "--role", "researcher")
    assert res.returncode == 1 and "[needs-approval]" in res.stderr
    # nor a clone without hooks: verify finds it
    git(repo, *UNHOOKED, "commit", "-qm", "programmers may spawn researchers")
    res = gitstate(repo, "verify", "--no-cache")
    assert res.returncode == 1 and "[needs-approval]" in res.stdout and AGENT in res.stdout
    # approved, the law changes: the spawn is legal from then on
    git(repo, "commit", "-q", "--amend", "-m", "programmers may spawn researchers",
        "-m", f"Approved-by: {human}")
    ok(repo, "spawn", "r1", "--parent", "p1", "--role", "researcher")
    assert gitstate(repo, "verify", "--no-cache").returncode == 0


def test_a_malformed_agent_file_is_refused_with_its_file_and_line(tmp_path):
    repo = with_agent_file(tmp_path)
    human = git(repo, "config", "user.name").stdout.strip()
    (repo / AGENT).write_text("---\nname: programmer\nforbiddenAgents: [researcher\n---\n")
    git(repo, "add", AGENT)
    res = git(repo, "commit", "-q", "-m", "broken", "-m", f"Approved-by: {human}", check=False)
    assert res.returncode == 1 and f"[unreadable] {AGENT}:4: invalid YAML" in res.stderr
    (repo / AGENT).write_text("---\nname: programmer\nforbiddenAgents: {researcher: 1}\n---\n")
    git(repo, "add", AGENT)
    res = git(repo, "commit", "-q", "-m", "broken", "-m", f"Approved-by: {human}", check=False)
    assert res.returncode == 1 and f"{AGENT}:3" in res.stderr
    assert "'forbiddenAgents' must be a list of agent types" in res.stderr
    # committed without hooks: verify names the commit, the file and its line; a command that
    # reads the law says where it is broken, without a traceback
    git(repo, *UNHOOKED, "commit", "-q", "-m", "broken", "-m", f"Approved-by: {human}")
    res = gitstate(repo, "verify", "--no-cache")
    assert res.returncode == 1 and f"{AGENT}:3" in res.stdout and "broken" in res.stdout
    res = gitstate(repo, "spawn", "p1", "--role", "programmer")
    assert res.returncode != 0 and f"{AGENT}:3" in res.stderr and "Traceback" not in res.stderr
    res = gitstate(repo, "check")   # the work tree's law, as it is now
    assert res.returncode == 1 and f"[unreadable] {AGENT}:3: 'forbiddenAgents' must be" in res.stdout


def test_the_shims_run_the_hooks_for_agent_files(tmp_path):
    repo = managed(tmp_path, "registry")
    shim = (repo / ".githooks" / "pre-commit").read_text()
    assert "':(glob).claude/agents/*.md'" in shim
    guard = (repo / ".githooks" / "reference-transaction").read_text()
    assert ".claude/agents" in guard
