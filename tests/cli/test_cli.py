"""The command line, run as a user runs it: a fresh process in a real repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git, gitstate, make_repo, snapshot, state_path, walk


def ok(repo: Path, *args: str):
    res = gitstate(repo, *args)
    assert res.returncode == 0, f"gitstate {' '.join(args)}:\n{res.stdout}\n{res.stderr}"
    return res


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


# -- init -----------------------------------------------------------------------------------


def test_init_in_a_repo_without_commits(empty_repo):
    res = ok(empty_repo, "init")
    assert "managed with lifecycle 'haak'" in res.stdout
    assert (empty_repo / "protocols" / "lifecycle.yaml").is_file()
    assert (empty_repo / "protocols" / "deep_work.md").is_file()
    # the clone runs what it installed, never the tracked .githooks/ ("How the hooks work")
    assert git(empty_repo, "config", "core.hooksPath", check=False).stdout == ""
    for name in ("pre-commit", "commit-msg", "reference-transaction"):
        assert "gitstate-shim" in (empty_repo / ".git" / "hooks" / name).read_text()
    subject = git(empty_repo, "log", "-1", "--format=%s").stdout.strip()
    assert subject.startswith("gitstate: manage")
    assert f"committed {head(empty_repo)[:10]} ({subject})" in res.stdout   # as git says it
    modes = git(empty_repo, "ls-files", "-s", ".githooks").stdout
    assert modes.count("100755") == 3
    assert git(empty_repo, "status", "--porcelain").stdout == ""


def test_init_is_idempotent(repo):
    before = head(repo)
    res = ok(repo, "init")
    assert "nothing to change" in res.stdout
    assert head(repo) == before


def test_init_keeps_what_the_user_staged(empty_repo):
    (empty_repo / "mine.txt").write_text("staged\n")
    git(empty_repo, "add", "mine.txt")
    ok(empty_repo, "init")
    assert git(empty_repo, "diff", "--cached", "--name-only").stdout == "mine.txt\n"
    assert "mine.txt" not in git(empty_repo, "show", "--name-only", "HEAD").stdout


def test_init_chains_to_a_users_existing_hook(empty_repo):
    hooks = empty_repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    mine = hooks / "pre-commit"
    mine.write_text("#!/bin/sh\necho user-hook-ran >> \"$(git rev-parse --git-dir)/ran\"\n")
    mine.chmod(0o755)
    res = ok(empty_repo, "init")
    assert "kept your pre-commit hook" in res.stdout
    assert git(empty_repo, "config", "core.hooksPath", check=False).stdout == ""
    assert (hooks / "pre-commit.pre-gitstate").read_text().startswith("#!/bin/sh\necho user")
    ok(empty_repo, "spawn", "alice")
    state = state_path(empty_repo, "alice")
    state.write_text(state.read_text().replace("state: bootstrap", "state: deep_work"))
    git(empty_repo, "add", "-A")
    res = git(empty_repo, "commit", "-qm", "@alice: [STATE:deep_work] x", check=False)
    assert res.returncode == 1 and "[illegal-transition]" in res.stderr
    git(empty_repo, "checkout", "-q", "HEAD", "--", "agent")
    (empty_repo / "f").write_text("x")
    git(empty_repo, "add", "f")
    git(empty_repo, "commit", "-qm", "plain")
    assert (empty_repo / ".git" / "ran").read_text() == "user-hook-ran\n"
    again = ok(empty_repo, "init")   # idempotent with chained hooks too
    assert "kept" not in again.stdout


def test_init_installs_into_a_configured_hooks_path(empty_repo):
    git(empty_repo, "config", "core.hooksPath", "myhooks")
    ok(empty_repo, "init")
    assert (empty_repo / "myhooks" / "commit-msg").is_file()
    assert git(empty_repo, "config", "core.hooksPath").stdout.strip() == "myhooks"


def test_init_with_a_lifecycle_file(empty_repo, tmp_path):
    life = tmp_path / "life.yaml"
    life.write_text("name: tiny\ninitial: a\nstates: {a: {}, z: {roster: dead, terminal: true}}\n"
                    "transitions: {a: [z]}\n")
    ok(empty_repo, "init", "--lifecycle", str(life))
    assert "tiny" in ok(empty_repo, "lifecycle").stdout
    res = gitstate(empty_repo, "init", "--lifecycle", "haak")
    assert res.returncode == 1 and "--force" in res.stderr
    ok(empty_repo, "init", "--lifecycle", "haak", "--force")
    assert "haak" in ok(empty_repo, "lifecycle").stdout


def test_init_refuses_bad_input(empty_repo, tmp_path):
    res = gitstate(empty_repo, "init", "--lifecycle", "nope")
    assert res.returncode == 2 and "shipped presets: era, haak, maos, registry, squad" in res.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("initial: a\nstates: {a: {}}\ntransitions: {a: [b]}\n")
    res = gitstate(empty_repo, "init", "--lifecycle", str(bad))
    assert res.returncode == 1 and "bad.yaml:3" in res.stderr and "Traceback" not in res.stderr
    res = gitstate(tmp_path, "init")
    assert res.returncode == 1 and "not a git repository" in res.stderr


# -- spawn / transition ---------------------------------------------------------------------


def test_spawn_and_transition_commit_atomically(repo):
    res = ok(repo, "spawn", "ERA-1", "--role", "architect", "--model", "opus", "--json")
    data = json.loads(res.stdout)
    assert data["agent"] == "era-1" and data["to"] == "bootstrap" and data["from"] is None
    text = state_path(repo, "era-1").read_text()
    assert "agent: era-1\n" in text and "role: architect\n" in text and "depth: 0\n" in text
    (repo / "work.py").write_text("print('hi')\n")
    git(repo, "add", "work.py")
    ok(repo, "transition", "era-1", "inbox", "-m", "restored", "--set", "context_pct=12",
       "--set", "custom=kept")
    shown = git(repo, "show", "--name-only", "--format=%s", "HEAD").stdout.split("\n")
    assert shown[0] == "@era-1: [STATE:inbox] restored"
    assert set(filter(None, shown[1:])) == {"agent/era-1/_state.md", "work.py"}
    assert git(repo, "status", "--porcelain").stdout == ""
    text = state_path(repo, "era-1").read_text()
    assert "context_pct: 12\n" in text and "custom: kept\n" in text


def test_illegal_transition_is_refused_before_committing(repo):
    ok(repo, "spawn", "alice")
    (repo / "w.txt").write_text("staged work\n")
    git(repo, "add", "w.txt")
    before = snapshot(repo)
    res = gitstate(repo, "transition", "alice", "deep_work")
    assert res.returncode == 1
    assert "alice is in bootstrap; from bootstrap the lifecycle allows: inbox" in res.stderr
    assert snapshot(repo) == before


def test_refusal_in_json(repo):
    ok(repo, "spawn", "alice")
    res = gitstate(repo, "transition", "alice", "idle", "--json")
    assert res.returncode == 1
    data = json.loads(res.stdout)
    assert data["error"] == "Rejected"
    assert data["violations"][0]["rule"] == "illegal-transition"


def test_the_cli_and_the_hook_use_the_same_words(repo):
    ok(repo, "spawn", "alice")
    cli_err = gitstate(repo, "transition", "alice", "deep_work").stderr
    p = state_path(repo, "alice")
    p.write_text(p.read_text().replace("state: bootstrap", "state: deep_work"))
    git(repo, "add", "-A")
    hook_err = git(repo, "commit", "-qm", "@alice: [STATE:deep_work] x", check=False).stderr
    line = "[illegal-transition] agent/alice/_state.md:3: alice is in bootstrap"
    assert line in cli_err and line in hook_err


@pytest.mark.parametrize("agent", ["../evil", "a/b", "-rf", "all", "x" * 65, "bad id"])
def test_hostile_ids_are_refused_and_never_used_as_paths(repo, agent):
    before = snapshot(repo)
    res = gitstate(repo, "spawn", "--", agent)
    assert res.returncode == 1 and "invalid agent id" in res.stderr
    assert snapshot(repo) == before
    assert not (repo.parent / "evil").exists()


def test_unknown_agents_and_bad_options(repo):
    res = gitstate(repo, "transition", "ghost", "inbox")
    assert res.returncode == 1 and "spawn it first" in res.stderr
    ok(repo, "spawn", "alice")
    res = gitstate(repo, "spawn", "alice")
    assert res.returncode == 1 and "already exists" in res.stderr
    res = gitstate(repo, "transition", "alice", "inbox", "--set", "nokey")
    assert res.returncode == 2 and "KEY=VALUE" in res.stderr
    res = gitstate(repo, "transition", "alice", "inbox", "--set", "state=x")
    assert res.returncode == 2
    res = gitstate(repo, "transition", "alice")
    assert res.returncode == 2


def test_parent_and_depth(repo):
    ok(repo, "spawn", "boss")
    ok(repo, "spawn", "kid", "--parent", "boss")
    text = state_path(repo, "kid").read_text()
    assert "parent: boss\n" in text and "depth: 1\n" in text
    res = gitstate(repo, "spawn", "orphan", "--parent", "nobody")
    assert res.returncode == 1 and "does not exist" in res.stderr


def test_transition_commits_the_staged_notes_and_keeps_the_unstaged_ones(repo):
    ok(repo, "spawn", "alice")
    p = state_path(repo, "alice")
    p.write_text(p.read_text() + "\nmy staged note ü\n")
    git(repo, "add", str(p))
    p.write_text(p.read_text() + "my unstaged draft\n")
    ok(repo, "transition", "alice", "inbox")
    committed = git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    assert committed.endswith("my staged note ü\n") and "state: inbox" in committed
    work = p.read_text()
    assert work == committed + "my unstaged draft\n"     # the move applied, the draft kept
    diff = git(repo, "diff", "--", "agent/alice/_state.md").stdout
    assert [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")] \
        == ["+my unstaged draft"]


def test_a_state_file_edited_into_nonsense_is_reported_not_crashed(repo):
    ok(repo, "spawn", "alice")
    broken = "---\nagent: alice\nstate: [oops\n---\n"
    state_path(repo, "alice").write_text(broken)
    ok(repo, "transition", "alice", "inbox")       # the unstaged draft is not what commits
    assert state_path(repo, "alice").read_text() == broken      # and it is left as it was
    git(repo, "add", "agent/alice/_state.md")
    res = gitstate(repo, "transition", "alice", "distill")
    assert res.returncode == 1 and "agent/alice/_state.md:4: invalid YAML" in res.stderr
    assert "Traceback" not in res.stderr


# -- reading --------------------------------------------------------------------------------


def test_status(repo):
    assert "no agents yet" in ok(repo, "status").stdout
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "bob")
    walk(repo, "alice", "inbox", "distill")
    ok(repo, "transition", "alice", "deep_work", "--set", "context_pct=80", "--set", "thread=t")
    rows = json.loads(ok(repo, "status", "--json").stdout)["agents"]
    assert [r["agent"] for r in rows] == ["alice", "bob"]
    alice = json.loads(ok(repo, "status", "alice", "--json").stdout)
    assert alice["state"] == "deep_work" and alice["phase"] == "legacy"
    assert alice["next"] == ["inbox", "frozen", "dead", "deep_work"] and alice["roster"] == "living"
    text = ok(repo, "status", "alice").stdout
    assert "next: inbox, frozen, dead, deep_work" in text and "legacy" in text


def test_check_notices_missing_hooks(repo):
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    res = gitstate(repo, "check")
    assert res.returncode == 1 and "[hooks]" in res.stdout and "gitstate init" in res.stdout
    ok(repo, "init")
    assert "ok" in ok(repo, "check").stdout


def test_check(repo):
    assert "ok" in ok(repo, "check").stdout
    ok(repo, "spawn", "alice")
    p = state_path(repo, "alice")
    p.write_text(p.read_text().replace("state: bootstrap", "state: napping"))
    res = gitstate(repo, "check", "--json")
    assert res.returncode == 1
    [problem] = json.loads(res.stdout)["problems"]
    assert problem["rule"] == "unknown-state" and problem["line"] == 3


def test_lifecycle_and_presets(repo):
    assert "initial:   bootstrap" in ok(repo, "lifecycle").stdout
    assert ok(repo, "lifecycle", "--mermaid").stdout.startswith("stateDiagram-v2")
    data = json.loads(ok(repo, "lifecycle", "--json").stdout)
    assert data["initial"] == "bootstrap" and "frozen" in data["states"]
    rows = json.loads(ok(repo, "presets", "--json").stdout)["presets"]
    assert any(r["name"] == "haak" and r["default"] for r in rows)


def test_reading_an_unmanaged_repo_says_what_to_do(empty_repo):
    res = gitstate(empty_repo, "status")
    assert res.returncode == 1 and "gitstate init" in res.stderr


def test_no_command_shows_help():
    res = gitstate(Path.cwd())
    assert res.returncode == 0 and "gitstate demo" in res.stdout


def test_runtime_session_start_hook(repo):
    ok(repo, "spawn", "alice")
    git(repo, "commit", "-q", "--allow-empty", "-m", "hello @alice")
    res = ok(repo, "hook", "session-start", "--agent", "alice")
    assert "alice: bootstrap" in res.stdout and "next: inbox" in res.stdout
    assert "Role 'strategist' has never been filled" in res.stdout
    assert "Inbox: 1 message waiting" in res.stdout


def test_demo_tells_its_story(tmp_path):
    res = gitstate(tmp_path, "demo", "--dir", str(tmp_path / "story"))
    assert res.returncode == 0, res.stdout + res.stderr
    told = res.stdout + res.stderr
    assert "[illegal-transition]" in told and "[needs-approval]" in told
    story = tmp_path / "story"
    log = git(story, "log", "--format=%s").stdout
    assert "@alice: [STATE:dead] died" in log
    assert "skipping the distill step" not in log
    # the board: carol's freeze as the seed posts it, alice's hand-over and death
    assert "carol: Frozen at 91% context. Freeze-state at data/freeze-states/carol.md. " \
           "Working on the schema migration. " in told and "Wake me if someone owns the archive tables." in told
    assert "alice: Handed role 'architect' to dan." in told
    status = json.loads(gitstate(story, "status", "--json").stdout)
    assert {r["agent"]: r["state"] for r in status["agents"]} == {
        "alice": "dead", "bob": "distill", "carol": "frozen", "dan": "bootstrap"}


def test_init_names_the_humans_and_gates_changes_of_the_law(empty_repo):
    ok(empty_repo, "init", "--human", "ada", "--human", "grace")
    life = empty_repo / "protocols" / "lifecycle.yaml"
    assert "humans: [ada, grace]" in life.read_text()
    before = head(empty_repo)
    res = gitstate(empty_repo, "init", "--lifecycle", "squad", "--force")
    assert res.returncode == 1 and "approval" in res.stderr and "--approved-by" in res.stderr
    assert head(empty_repo) == before and "humans: [ada, grace]" in life.read_text()
    assert gitstate(empty_repo, "init", "--lifecycle", "squad", "--force",
                    "--approved-by", "zach").returncode == 1     # not one of this law's humans
    ok(empty_repo, "init", "--lifecycle", "squad", "--force", "--approved-by", "grace")
    assert "Approved-by: grace" in git(empty_repo, "log", "-1", "--format=%B").stdout
    assert "spawning" in life.read_text()


def test_init_without_human_names_the_user_of_git_config(empty_repo):
    git(empty_repo, "config", "user.name", "José Smith-Ávila")
    res = ok(empty_repo, "init")
    assert "humans: jose-smith-avila, from git config user.name" in res.stdout
    law = json.loads(ok(empty_repo, "lifecycle", "--json").stdout)
    assert law["policies"]["humans"] == ["jose-smith-avila"]
    other = make_repo(empty_repo.parent / "other")
    git(other, "config", "user.name", "Pat Smith")
    ok(other, "init", "--lifecycle", "squad")
    assert json.loads(ok(other, "lifecycle", "--json").stdout)["policies"]["humans"] == \
        ["pat-smith"]


@pytest.mark.parametrize("name", [None, "李雷", "--"])
def test_init_without_human_or_usable_user_name_refuses_and_writes_nothing(empty_repo, name):
    if name is None:
        git(empty_repo, "config", "--unset", "user.name")
    else:
        git(empty_repo, "config", "user.name", name)
    (empty_repo / "README").write_text("hello\n")
    git(empty_repo, "add", "README")
    git(empty_repo, "commit", "-q", "-m", "first")
    before = snapshot(empty_repo)
    res = gitstate(empty_repo, "init", process=True)    # no terminal: it never asks
    assert res.returncode == 2
    assert "--human NAME" in res.stderr and "user.name" in res.stderr
    assert snapshot(empty_repo) == before
    assert not (empty_repo / "protocols").exists()
    assert not (empty_repo / ".git" / "hooks" / "pre-commit").exists()
    assert git(empty_repo, "config", "gitstate.managed", check=False).stdout == ""
    ok(empty_repo, "init", "--human", "lei")
    assert "humans: [lei]" in (empty_repo / "protocols" / "lifecycle.yaml").read_text()


def test_init_human_on_a_managed_repo_is_a_change_of_the_law_approved(repo):
    life = repo / "protocols" / "lifecycle.yaml"
    before, text = head(repo), life.read_text()
    res = gitstate(repo, "init", "--human", "pat")
    assert res.returncode == 1
    assert "from zach to pat" in res.stderr
    assert "gitstate init --human pat --approved-by zach" in res.stderr
    assert head(repo) == before and life.read_text() == text
    assert gitstate(repo, "init", "--human", "pat", "--approved-by", "pat").returncode == 1
    assert head(repo) == before

    res = ok(repo, "init", "--human", "pat", "--human", "ana", "--approved-by", "zach")
    assert "humans: zach -> pat, ana" in res.stdout
    assert git(repo, "log", "-1", "--format=%B").stdout.strip() == \
        "gitstate: the humans of the law are pat, ana\n\nApproved-by: zach"
    assert git(repo, "diff", "--name-only", "HEAD~1").stdout.split() == [
        "protocols/lifecycle.yaml"]
    assert json.loads(ok(repo, "lifecycle", "--json").stdout)["policies"]["humans"] == \
        ["pat", "ana"]
    assert git(repo, "status", "--porcelain").stdout == ""
    ok(repo, "verify", "--no-cache")
    assert "nothing to change" in ok(repo, "init", "--human", "pat", "--human", "ana").stdout
    # zach approves nothing now; ana may
    res = gitstate(repo, "init", "--human", "zach", "--approved-by", "zach")
    assert res.returncode == 1 and "'zach' is not one of them" in res.stderr
    ok(repo, "init", "--human", "zach", "--approved-by", "ana")
    ok(repo, "verify", "--no-cache")


def test_init_refreshes_a_clones_hooks_without_committing_unapproved_shims(repo):
    shim = repo / ".githooks" / "pre-commit"
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--allow-empty", "-m", "x")
    installed = repo / ".git" / "hooks" / "pre-commit"
    installed.write_text("#!/bin/sh\n# gitstate-shim: pre-commit -- an older one\nexit 0\n")
    committed = shim.read_bytes()
    shim.write_text(shim.read_text() + "# edited\n")
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "edit the shim",
        "-m", "Approved-by: zach")
    before = head(repo)
    res = ok(repo, "init")
    assert "left .githooks/pre-commit as committed" in res.stdout
    assert head(repo) == before                                   # nothing committed
    assert installed.read_bytes() == committed                    # but this clone is current


def test_a_move_lists_what_rode_along_in_its_commit(repo):
    ok(repo, "spawn", "alice")
    (repo / "notes.txt").write_text("work\n")
    git(repo, "add", "notes.txt")
    out = ok(repo, "transition", "alice", "inbox").stdout
    assert "also committed: notes.txt" in out
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() \
        == ["agent/alice/_state.md", "notes.txt"]
    plain = json.loads(ok(repo, "transition", "alice", "distill", "--json").stdout)
    assert plain["also_committed"] == []
    assert "also committed" not in ok(repo, "transition", "alice", "distill").stdout


def test_init_force_over_another_preset_removes_its_unedited_docs(repo):
    (repo / "protocols" / "frozen.md").write_text("our own freezer rules\n")
    git(repo, "commit", "-qam", "our freezer rules")
    res = gitstate(repo, "init", "--lifecycle", "era", "--force", "--approved-by", "zach")
    assert res.returncode == 0, res.stderr
    assert not (repo / "protocols" / "dead.md").exists()          # haak's, as shipped
    assert "removed protocols/dead.md" in res.stdout
    assert (repo / "protocols" / "frozen.md").read_text() == "our own freezer rules\n"
    assert "kept protocols/frozen.md" in res.stdout
    assert (repo / "protocols" / "logout.md").is_file()          # era's own
    committed = git(repo, "ls-tree", "--name-only", "HEAD", "protocols/").stdout.split()
    assert "protocols/dead.md" not in committed and "protocols/frozen.md" in committed
    assert git(repo, "status", "--porcelain").stdout == ""


def test_init_force_refused_without_approval_removes_nothing(repo):
    res = gitstate(repo, "init", "--lifecycle", "era", "--force")
    assert res.returncode == 1 and "needs a human's approval" in res.stderr
    assert (repo / "protocols" / "dead.md").is_file()
    assert git(repo, "status", "--porcelain").stdout == ""


def _complete(repo, words: str) -> list[str]:
    import os
    import subprocess
    import sys
    env = dict(os.environ, COMP_WORDS=words, COMP_CWORD=str(len(words.split(" ")) - 1),
               _GITSTATE_COMPLETE="bash_complete")
    out = subprocess.run([sys.executable, "-m", "gitstate"], cwd=repo, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return [line.split(",", 1)[1] for line in out.stdout.splitlines() if line]


def test_shell_completion_of_commands_agents_states_and_roles(repo, tmp_path):
    ok(repo, "spawn", "alice")
    ok(repo, "spawn", "albert")
    assert _complete(repo, "gitstate tra") == ["transition"]
    assert _complete(repo, "gitstate transition al") == ["albert", "alice"]
    assert _complete(repo, "gitstate transition alice d") == ["distill", "deep_work", "dead"]
    assert "architect" in _complete(repo, "gitstate spawn bob --role ar")
    assert _complete(tmp_path, f"gitstate -C {repo} status ali") == ["alice"]
    assert _complete(tmp_path, "gitstate status ali") == []     # not a repository: nothing


def test_unstaged_edits_of_the_keys_a_move_sets_are_kept_as_they_were(repo):
    ok(repo, "spawn", "alice")
    p = state_path(repo, "alice")
    draft = p.read_text().replace("summary: null", "summary: my own words")
    p.write_text(draft)
    ok(repo, "transition", "alice", "inbox", "--set", "summary=from the move")
    assert p.read_text() == draft                      # nothing of the user's is lost
    committed = git(repo, "show", "HEAD:agent/alice/_state.md").stdout
    assert "summary: from the move" in committed and "state: inbox" in committed


def test_every_command_help_ends_with_examples_that_parse():
    """Each command's --help shows examples, and each example is a command line click takes
    (its options and arguments exist)."""
    import shlex

    import click

    from gitstate.cli import main
    from gitstate.cli.app import cli
    for module in main.FAMILIES:
        __import__(f"gitstate.cli.{module}")

    def commands(group, path=()):
        for name, cmd in group.commands.items():
            yield (*path, name), cmd
            if isinstance(cmd, click.Group):
                yield from commands(cmd, (*path, name))
    seen = 0
    for path, cmd in commands(cli):
        res = gitstate(Path.cwd(), *path, "--help")
        assert res.returncode == 0 and "Examples:\n" in res.stdout, path
        lines = res.stdout.split("Examples:\n", 1)[1].splitlines()
        examples = [line.split("#")[0].split("&&")[-1].split(" > ")[0].strip()
                    for line in lines if line.strip()]
        assert examples, path
        for text in examples:
            words = shlex.split(text)
            if words[0] != "gitstate":
                continue                      # an example of another program's
            words = words[3:] if words[1:2] == ["-C"] else words[1:]
            ctx = cli.make_context("gitstate", list(words), resilient_parsing=False)
            name, sub, rest = cli.resolve_command(ctx, ctx._protected_args + ctx.args)
            if isinstance(sub, click.Group):
                sub_ctx = sub.make_context(name, rest, parent=ctx)
                name, sub, rest = sub.resolve_command(sub_ctx, sub_ctx._protected_args
                                                      + sub_ctx.args)
            sub.make_context(name, rest, parent=ctx)   # raises on an unknown option
            seen += 1
    assert seen > 40


def test_the_roster_keeps_its_role_column_when_an_agent_holds_no_role(repo):
    ok(repo, "spawn", "plain")
    ok(repo, "spawn", "keeper", "--role", "librarian")
    rows = {line.split()[0]: line for line in ok(repo, "roster").stdout.splitlines()
            if line.startswith("  ")}
    plain, keeper = rows["plain"], rows["keeper"]
    assert plain.split()[2] == "-" and keeper.split()[2:4] == ["librarian", "#1"]
    assert plain.index("% ") == keeper.index("% ")      # the context column lines up


def test_bury_without_a_summary_names_the_option_that_gives_one(repo):
    ok(repo, "spawn", "brief")
    before = head(repo)
    res = gitstate(repo, "bury", "brief")
    assert res.returncode == 1 and "--summary" in res.stderr and "final_summary:" not in res.stderr
    assert head(repo) == before
    ok(repo, "bury", "brief", "--summary", "done")


def test_ctrl_c_says_it_was_interrupted_and_exits_130(repo, monkeypatch):
    """Ctrl-C while a command waits (here `await`): the shell's 130 and one line that says
    so, where click alone leaves an empty line and exit code 1."""
    if os.environ.get("GITSTATE_TESTS_SUBPROCESS") == "1":
        pytest.skip("patches the command in this process (GITSTATE_TESTS_SUBPROCESS unset)")
    import gitstate.cli.operating as operating

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(operating, "await_agents", interrupted)
    assert gitstate(repo, "spawn", "alice").returncode == 0
    res = gitstate(repo, "await", "alice")
    assert res.returncode == 130, res
    assert "gitstate: interrupted" in res.stderr and "Traceback" not in res.stderr
