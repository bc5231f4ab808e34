"""Every rule, shown refusing a bad commit and accepting a good one through the real hooks,
with plain `git commit` and hand-edited state files, exactly as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    fill_freeze_state,
    from_template,
    git,
    gitstate,
    make_repo,
    moves_on_this_branch,
    repo_with,
    set_state_line,
    snapshot,
    state_path,
    walk,
)

from gitstate.resources import read_shipped


def _spawn_alice_and_bob(repo: Path) -> None:
    for agent in ("alice", "bob"):
        res = gitstate(repo, "spawn", agent)
        assert res.returncode == 0, res.stderr


@pytest.fixture
def team(tmp_path):
    """The `repo` fixture's repository with alice and bob spawned."""
    return repo_with(tmp_path, "alice-and-bob", _spawn_alice_and_bob)


def commit(repo: Path, message: str, *paths: str, extra: tuple[str, ...] = ()):
    if paths:
        git(repo, "add", "-A", "--", *paths)
    return git(repo, "commit", "-q", *extra, "-m", message, check=False)


def refused(repo: Path, message: str, *paths: str, rule: str, extra: tuple[str, ...] = ()) -> str:
    """Commit and assert the hook refused it for `rule`, leaving everything as it was."""
    if paths:
        git(repo, "add", "-A", "--", *paths)
    before = snapshot(repo)
    res = git(repo, "commit", "-q", *extra, "-m", message, check=False)
    assert res.returncode != 0, f"expected [{rule}] to refuse the commit"
    assert f"[{rule}]" in res.stderr, res.stderr
    assert "Nothing was committed" in res.stderr
    assert snapshot(repo) == before, "a refused commit must leave HEAD, index and work tree"
    return res.stderr


def test_a_hand_made_legal_commit_is_accepted(team):
    set_state_line(team, "alice", "state", "inbox")
    (team / "work.txt").write_text("work\n")
    res = commit(team, "@alice: [STATE:inbox] restored", "agent/alice/_state.md", "work.txt")
    assert res.returncode == 0, res.stderr
    files = git(team, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert files == ["agent/alice/_state.md", "work.txt"]   # work and state landed together


def test_ordinary_commits_pass(team):
    (team / "notes.txt").write_text("x\n")
    assert commit(team, "notes, cc @alice", "notes.txt").returncode == 0
    (team / "agent" / "alice" / "scratch.md").write_text("mine\n")
    assert commit(team, "@alice: scratch notes", "agent/alice/scratch.md").returncode == 0


def test_illegal_transition(team):
    set_state_line(team, "alice", "state", "deep_work")
    err = refused(team, "@alice: [STATE:deep_work] skip", "agent/alice/_state.md",
                  rule="illegal-transition")
    assert "from bootstrap the lifecycle allows: inbox" in err
    assert "agent/alice/_state.md:3" in err


def test_tag_mismatch(team):
    set_state_line(team, "alice", "state", "inbox")
    refused(team, "@alice: [STATE:distill] x", "agent/alice/_state.md", rule="tag-mismatch")


def test_tag_without_change(team):
    (team / "w.txt").write_text("w\n")
    refused(team, "@alice: [STATE:inbox] forgot the file", "w.txt", rule="tag-without-change")


def test_change_without_tag(team):
    set_state_line(team, "alice", "state", "inbox")
    err = refused(team, "moved alice", "agent/alice/_state.md", rule="change-without-tag")
    assert "@alice: [STATE:inbox]" in err


def test_prefix_mismatch(team):
    set_state_line(team, "alice", "state", "inbox")
    refused(team, "@bob: [STATE:inbox] not mine", "agent/alice/_state.md", rule="prefix-mismatch")


def test_more_than_one_agent(team):
    set_state_line(team, "alice", "state", "inbox")
    set_state_line(team, "bob", "state", "inbox")
    refused(team, "@alice: [STATE:inbox] both", "agent", rule="multiple-agents")


def test_required_fields(team):
    walk(team, "alice", "inbox", "distill")
    set_state_line(team, "alice", "state", "dead")
    refused(team, "@alice: [STATE:dead] bye", "agent/alice/_state.md", rule="missing-field")
    set_state_line(team, "alice", "final_summary", "built the thing")
    assert commit(team, "@alice: [STATE:dead] bye", "agent/alice/_state.md").returncode == 0


def test_leaving_a_terminal_state(team):
    walk(team, "alice", "inbox", "distill")
    res = gitstate(team, "transition", "alice", "dead", "--set", "final_summary=done")
    assert res.returncode == 0, res.stderr
    set_state_line(team, "alice", "state", "bootstrap")
    refused(team, "@alice: [STATE:bootstrap] back", "agent/alice/_state.md", rule="terminal")


def test_deleting_a_state_file(team):
    git(team, "rm", "-q", "agent/bob/_state.md")
    refused(team, "remove bob", rule="deleted")


def test_invalid_ids_and_agent_mismatch(team):
    bad = team / "agent" / "Bad Id!" / "_state.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nagent: x\nstate: bootstrap\n---\n")
    refused(team, "@x: [STATE:bootstrap] hi", "agent", rule="invalid-id")
    git(team, "reset", "-q")
    bad.unlink()
    set_state_line(team, "alice", "agent", "bob")
    refused(team, "@alice: [STATE:bootstrap] who am i", "agent/alice/_state.md",
            rule="agent-mismatch")


def test_new_agent_must_start_in_the_initial_state(team):
    p = state_path(team, "carol")
    p.parent.mkdir(parents=True)
    p.write_text("---\nagent: carol\nstate: deep_work\n---\n")
    err = refused(team, "@carol: [STATE:deep_work] born busy", "agent/carol/_state.md",
                  rule="not-initial")
    assert "starts in 'bootstrap'" in err
    p.write_text("---\nagent: carol\nstate: bootstrap\n---\n")
    assert commit(team, "@carol: [STATE:bootstrap] born", "agent/carol/_state.md").returncode == 0


def test_unknown_state_and_broken_files(team):
    set_state_line(team, "alice", "state", "napping")
    err = refused(team, "@alice: [STATE:napping] zz", "agent/alice/_state.md", rule="unknown-state")
    assert "states: bootstrap, inbox" in err
    state_path(team, "alice").write_text("---\nagent: alice\nstate: [inbox\n---\n")
    err = refused(team, "@alice: [STATE:inbox] x", "agent/alice/_state.md", rule="unreadable")
    assert "agent/alice/_state.md:" in err
    state_path(team, "alice").write_bytes(b"---\nagent: alice\nstate: inbox\nx: \xff\n---\n")
    err = refused(team, "@alice: [STATE:inbox] x", "agent/alice/_state.md", rule="unreadable")
    assert "not UTF-8" in err and "agent/alice/_state.md:4" in err


def test_bad_field_values(team):
    set_state_line(team, "alice", "state", "inbox")
    set_state_line(team, "alice", "context_pct", "140")
    refused(team, "@alice: [STATE:inbox] x", "agent/alice/_state.md", rule="bad-field")


def test_approval_for_waking_a_frozen_agent(team):
    walk(team, "alice", "inbox", "distill")
    assert gitstate(team, "freeze", "alice").returncode == 1      # writes the template
    fill_freeze_state(team / "data" / "freeze-states" / "alice.md")
    res = gitstate(team, "freeze", "alice")
    assert res.returncode == 0, res.stderr
    set_state_line(team, "alice", "state", "bootstrap")
    refused(team, "@alice: [STATE:bootstrap] waking myself", "agent/alice/_state.md",
            rule="needs-approval")
    res = commit(team, "@alice: [STATE:bootstrap] woken\n\nApproved-by: zach", "agent/alice/_state.md")
    assert res.returncode == 0, res.stderr


def test_urgent_context_refuses_new_work(team):
    walk(team, "alice", "inbox", "distill")
    set_state_line(team, "alice", "state", "deep_work")
    set_state_line(team, "alice", "context_pct", "95")
    err = refused(team, "@alice: [STATE:deep_work] one more", "agent/alice/_state.md", rule="urgent")
    assert "freeze or die" in err


def test_malformed_subject(team):
    set_state_line(team, "alice", "state", "inbox")
    refused(team, "alice [STATE:inbox] x", "agent/alice/_state.md", rule="malformed-subject")


def test_every_problem_is_printed_at_once(team):
    # pre-commit sees the files (before any editor opens) and reports all their problems
    set_state_line(team, "alice", "state", "deep_work")
    set_state_line(team, "alice", "agent", "zed")
    set_state_line(team, "alice", "context_pct", "95")
    err = refused(team, "@bob: [STATE:idle] all wrong", "agent/alice/_state.md",
                  rule="illegal-transition")
    for rule in ("agent-mismatch", "urgent"):
        assert f"[{rule}]" in err
    assert "the commit message (its @id: prefix, [STATE:x] tag and trailers) is judged once these are fixed" in err
    # commit-msg sees files and message together and reports everything it finds
    set_state_line(team, "alice", "state", "inbox")
    set_state_line(team, "alice", "agent", "alice")
    set_state_line(team, "alice", "context_pct", "0")
    err = refused(team, "@bob: [STATE:idle] wrong words\n\n[STATE:x] again",
                  "agent/alice/_state.md", rule="prefix-mismatch")
    assert "[tag-mismatch]" not in err  # the tag is bob's, and bob changed nothing
    err = refused(team, "@alice: [STATE:idle] wrong tag", "agent/alice/_state.md",
                  rule="tag-mismatch")


def test_commit_all_with_a_bad_edit_keeps_the_edit(team):
    set_state_line(team, "alice", "state", "deep_work")
    before = state_path(team, "alice").read_bytes()
    res = git(team, "commit", "-q", "-am", "@alice: [STATE:deep_work] skip", check=False)
    assert res.returncode != 0
    assert state_path(team, "alice").read_bytes() == before
    assert git(team, "status", "--porcelain").stdout == " M agent/alice/_state.md\n"


def test_amending_a_state_commit_judges_it_against_its_parent(team):
    walk(team, "alice", "inbox")
    res = git(team, "commit", "-q", "--amend", "-m", "@alice: [STATE:inbox] restored, reworded",
              check=False)
    assert res.returncode == 0, res.stderr
    assert git(team, "log", "-1", "--format=%s").stdout.strip().endswith("reworded")


def test_merging_a_branch_that_moved_an_agent_is_refused_on_the_team_line(team):
    """The line rule: a move reaches the team line by itself, never inside a merge; the merge
    goes through once it keeps the line's state files, carrying the branch's work."""
    git(team, "checkout", "-q", "-b", "side")
    with moves_on_this_branch(team, "side"):
        walk(team, "alice", "inbox")
    (team / "work.txt").write_text("the side's work\n")
    git(team, "add", "work.txt")
    git(team, "commit", "-q", "-m", "side's work")
    git(team, "checkout", "-q", "main")
    walk(team, "bob", "inbox")
    before = git(team, "rev-parse", "HEAD").stdout
    res = git(team, "merge", "-q", "--no-edit", "side", check=False)
    assert res.returncode != 0 and "[merge-moves]" in res.stderr, res.stderr
    assert "agent/alice/_state.md" in res.stderr and "--push" in res.stderr
    assert git(team, "rev-parse", "HEAD").stdout == before
    assert (team / ".git" / "MERGE_HEAD").exists()      # the merge is left as it was
    git(team, "checkout", "HEAD", "--", "agent/alice/_state.md")
    res = git(team, "commit", "-q", "--no-edit", check=False)
    assert res.returncode == 0, res.stderr
    assert "state: bootstrap" in state_path(team, "alice").read_text()
    assert (team / "work.txt").read_text() == "the side's work\n"


def test_off_the_team_line_a_merge_is_work_on_that_branch(team):
    """A branch catching up with the team line (`git merge main` on it) is not judged: moves
    are the team line's alone."""
    git(team, "checkout", "-q", "-b", "side")
    walk(team, "alice", "inbox")
    git(team, "checkout", "-q", "main")
    walk(team, "bob", "inbox")
    git(team, "checkout", "-q", "side")
    res = git(team, "merge", "-q", "--no-edit", "main", check=False)
    assert res.returncode == 0, res.stderr
    assert "state: inbox" in state_path(team, "bob").read_text()


def test_a_merge_tagged_as_a_move_is_refused_on_the_team_line(team):
    git(team, "checkout", "-q", "-b", "side")
    (team / "w.txt").write_text("w\n")
    git(team, "add", "w.txt")
    git(team, "commit", "-q", "-m", "work")
    git(team, "checkout", "-q", "main")
    walk(team, "bob", "inbox")
    res = git(team, "merge", "-q", "--no-ff", "-m", "@alice: [STATE:dead] merged", "side",
              check=False)
    assert res.returncode != 0 and "[tag-on-merge]" in res.stderr, res.stderr


def test_editing_the_lifecycle_is_checked(team):
    lc = team / "protocols" / "lifecycle.yaml"
    lc.write_text(lc.read_text().replace("initial: bootstrap", "initial: nowhere"))
    refused(team, "tweak the law", "protocols/lifecycle.yaml", rule="lifecycle")


# -- the hook's cost ------------------------------------------------------------------------


def test_ordinary_commit_never_starts_python(team, tmp_path):
    """The shims decide in shell: an ordinary commit does not run gitstate at all."""
    marker = tmp_path / "ran"
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\nexit 0\n")
    fake.chmod(0o755)
    git(team, "config", "gitstate.python", str(fake))
    (team / "plain.txt").write_text("x\n")
    assert commit(team, "plain work", "plain.txt").returncode == 0
    assert not marker.exists()
    set_state_line(team, "alice", "state", "inbox")     # a state commit does reach it
    assert commit(team, "@alice: [STATE:inbox] x", "agent/alice/_state.md").returncode == 0
    assert "pre-commit" in marker.read_text()


def test_hook_run_imports_no_heavy_modules(team):
    """Even when Python runs (a state commit), the hook imports no pydantic, GitPython or
    click; and once the lifecycle is cached, a flat state file needs no PyYAML, nor the
    lifecycle's reader, `json`, `pathlib`, `subprocess` or `sqlite3` (its kept files are not a
    database: bench/README.md, "The kept files"), either."""
    set_state_line(team, "alice", "state", "inbox")
    git(team, "add", "agent/alice/_state.md")
    raw = git(team, "diff", "--cached", "--raw", "--no-renames", "--abbrev=40").stdout
    probe = ("import sys\n"
             "from gitstate.doors.hooks import run_hook\n"
             "code = run_hook('pre-commit', ['--expect', '.git/gitstate-expect'])\n"
             "heavy = [m for m in ('pydantic', 'git', 'click', 'yaml', 'dataclasses', 'typing',"
             " 'json', 'pathlib', 'subprocess', 'sqlite3', 'gitstate.law.load')"
             " if m in sys.modules]\n"
             "import json\n"
             "print(json.dumps({'code': code, 'heavy': heavy}))\n")
    results = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", probe], cwd=team, capture_output=True,
                             text=True, input=raw, env=dict(os.environ, GIT_INDEX_FILE=".git/index"))
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = results
    assert cold["code"] == 0 and not {"pydantic", "git", "click"} & set(cold["heavy"])
    assert warm == {"code": 0, "heavy": []}, warm
    expect = (team / ".git" / "gitstate-expect").read_text().split("\n")
    assert expect[1] == "@alice: [STATE:inbox]"


def test_hook_without_gitstate_refuses_state_commits(team):
    git(team, "config", "gitstate.python", "/nonexistent/python")
    env = dict(os.environ, PATH="/usr/bin:/bin")
    set_state_line(team, "alice", "state", "inbox")
    git(team, "add", "agent/alice/_state.md")
    res = subprocess.run(["git", "commit", "-q", "-m", "@alice: [STATE:inbox] x"], cwd=team,
                         capture_output=True, text=True, env=env)
    if subprocess.run(["python3", "-c", "import gitstate"], env=env, cwd=team,
                      capture_output=True).returncode == 0:
        pytest.skip("a system python3 here has gitstate installed")
    assert res.returncode != 0 and "cannot be found" in res.stderr


def test_a_file_deep_under_the_shims_folder_is_law_here_too(team):
    """Every path under `.githooks/` is law; the commit hooks pick those paths with git
    pathspecs, nested ones included."""
    (team / ".githooks" / "extra").mkdir(parents=True)
    (team / ".githooks" / "extra" / "run").write_text("#!/bin/sh\n")
    refused(team, "tooling", ".githooks/extra/run", rule="needs-approval")


def test_pathspec_settings_in_the_environment_do_not_open_the_hooks(team, monkeypatch):
    """GIT_LITERAL_PATHSPECS (and friends) would make the hooks' pathspecs match nothing, so
    that every commit looked ordinary; the shims clear them."""
    set_state_line(team, "alice", "state", "deep_work")
    for name in ("GIT_LITERAL_PATHSPECS", "GIT_NOGLOB_PATHSPECS"):
        monkeypatch.setenv(name, "1")
        refused(team, "@alice: [STATE:deep_work] skip", "agent/alice/_state.md",
                rule="illegal-transition")
        monkeypatch.delenv(name)


def _bare_id_layout(root: Path) -> None:
    repo = make_repo(root / "repo")
    (repo / "protocols").mkdir()
    law = read_shipped("protocols", "haak", "lifecycle.yaml") + "\nlayout:\n  state_file: '{id}'\n"
    (repo / "protocols" / "lifecycle.yaml").write_text(law)
    for args in (("init", "--human", "zach"), ("spawn", "alice")):
        res = gitstate(repo, *args)
        assert res.returncode == 0, res.stderr


def test_the_ref_guard_judges_a_layout_of_bare_ids(tmp_path):
    """layout.state_file '{id}': every file at the top may be a state file, so no commit is
    too ordinary for the guard to look at (here one that skipped the commit hooks)."""
    repo = from_template(tmp_path, ("layout", "{id}"), _bare_id_layout) / "repo"
    path = repo / "alice"
    path.write_text(path.read_text().replace("state: bootstrap", "state: deep_work"))
    git(repo, "add", "alice")
    before = git(repo, "rev-parse", "HEAD").stdout
    res = git(repo, "commit", "-q", "--no-verify", "-m", "work", check=False)
    assert res.returncode != 0 and "[illegal-transition]" in res.stderr, res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_an_index_named_without_a_folder(team, monkeypatch):
    """GIT_INDEX_FILE=name (no folder, relative to the top): the hooks keep their markers in
    the git dir, and legal commits, state or not, pass without a word."""
    shutil.copy(team / ".git" / "index", team / "other-index")
    monkeypatch.setenv("GIT_INDEX_FILE", "other-index")
    (team / "notes.txt").write_text("x\n")
    res = commit(team, "notes", "notes.txt")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    set_state_line(team, "alice", "state", "deep_work")
    refused(team, "@alice: [STATE:deep_work] skip", "agent/alice/_state.md",
            rule="illegal-transition")
    set_state_line(team, "alice", "state", "inbox")
    res = commit(team, "@alice: [STATE:inbox] read", "agent/alice/_state.md")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert not any(p.name.startswith("gitstate-") for p in team.iterdir())


def test_a_legal_state_commit_starts_python_once(team, tmp_path):
    """pre-commit judges it; commit-msg accepts the subject it expected and leaves a blessing
    that the ref guard finds (in a clone's .git folder and in a linked worktree's git dir
    alike), so neither starts Python again."""
    marker = tmp_path / "ran"
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\necho \"$3\" >> {marker}\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    git(team, "config", "gitstate.python", str(wrapper))
    set_state_line(team, "alice", "state", "inbox")
    assert commit(team, "@alice: [STATE:inbox] read", "agent/alice/_state.md").returncode == 0
    assert marker.read_text().split() == ["pre-commit"]
    marker.unlink()
    linked = tmp_path / "linked"
    git(team, "worktree", "add", "-q", "-b", "side", str(linked))
    set_state_line(linked, "alice", "state", "distill")
    res = commit(linked, "@alice: [STATE:distill] think", "agent/alice/_state.md")
    assert res.returncode == 0, res.stderr
    assert marker.read_text().split() == ["pre-commit"]


def test_a_legal_state_commit_asks_git_s_config_once_and_head_never_again(team, tmp_path,
                                                                          monkeypatch):
    """The pre-commit shim reads gitstate's Python and the commit's encoding in one `git
    config`, which the judge takes instead of asking again; commit-msg takes HEAD and the git
    dir from the verdict pre-commit left (the ref guard still matches the blessing with the
    commit's parent)."""
    set_state_line(team, "alice", "state", "inbox")
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    assert commit(team, "@alice: [STATE:inbox] read", "agent/alice/_state.md").returncode == 0
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    started = [e["argv"] for e in map(json.loads, trace.read_text().splitlines())
               if e["event"] == "start"]
    assert sum("config" in argv for argv in started) == 1, started
    assert not any("rev-parse" in argv for argv in started), started
    assert git(team, "log", "-1", "--format=%s").stdout.strip() == "@alice: [STATE:inbox] read"


def test_a_judgement_is_good_for_the_commit_judged_only(team):
    """commit-msg judged a legal move, then the commit was aborted (here by the user's own
    commit-msg hook): another command's commit with the same parent and tree but another
    message is judged again by the ref guard, by `commit --no-verify` or `reset` alike."""
    own = team / ".git" / "hooks" / "commit-msg.pre-gitstate"
    set_state_line(team, "alice", "state", "inbox")
    git(team, "add", "agent/alice/_state.md")
    own.write_text("#!/bin/sh\nexit 1\n")
    own.chmod(0o755)
    assert commit(team, "@alice: [STATE:inbox] read").returncode != 0
    own.unlink()
    before = git(team, "rev-parse", "HEAD").stdout
    res = git(team, "commit", "-q", "--no-verify", "-m", "untagged", check=False)
    assert res.returncode != 0 and "[change-without-tag]" in res.stderr, res.stderr
    lie = git(team, "commit-tree", git(team, "write-tree").stdout.strip(), "-p", "HEAD",
              "-m", "@alice: [STATE:deep_work] lie").stdout.strip()
    res = git(team, "reset", "-q", "--soft", lie, check=False)
    assert res.returncode != 0 and "[tag-mismatch]" in res.stderr, res.stderr
    assert git(team, "rev-parse", "HEAD").stdout == before


def test_the_message_judged_is_the_one_the_users_hook_leaves(team):
    """The user's own commit-msg hook runs first: a subject it rewrites is judged as
    committed."""
    own = team / ".git" / "hooks" / "commit-msg.pre-gitstate"
    own.write_text("#!/bin/sh\nsed -i 's/^@alice: /JIRA-1 @alice: /' \"$1\"\n")
    own.chmod(0o755)
    set_state_line(team, "alice", "state", "inbox")
    refused(team, "@alice: [STATE:inbox] read", "agent/alice/_state.md", rule="malformed-subject")


def test_a_judged_subject_that_git_strips_as_a_comment_is_judged_again(team):
    """With core.commentChar `@`, git strips the subject commit-msg judged after it judged
    it: the commit made has the next line for subject, and the ref guard judges that commit
    rather than trust the judgement."""
    git(team, "config", "core.commentChar", "@")
    set_state_line(team, "alice", "state", "inbox")
    before = git(team, "rev-parse", "HEAD").stdout
    msg = "@alice: [STATE:inbox] read\n[STATE:deep_work] lie"
    res = commit(team, msg, "agent/alice/_state.md", extra=("--cleanup=strip",))
    assert res.returncode != 0, git(team, "log", "-1", "--format=%B").stdout
    assert git(team, "rev-parse", "HEAD").stdout == before
    assert gitstate(team, "verify").returncode == 0


def test_a_state_file_name_with_a_newline_after_it_is_no_state_file(team):
    """`agent/alice/_state.md` followed by a newline is another file: the commit hooks let it
    through as ordinary work, so no reader may take it for alice's state file."""
    text = state_path(team, "alice").read_text().replace("state: bootstrap", "state: deep_work")
    (team / "agent" / "alice" / "_state.md\n").write_text(text)
    assert commit(team, "notes", "agent").returncode == 0
    roster = json.loads(gitstate(team, "roster", "--json").stdout)
    alice = [a for rows in roster.values() if isinstance(rows, list) for a in rows
             if a["agent"] == "alice"]
    assert [a["state"] for a in alice] == ["bootstrap"], alice
    assert gitstate(team, "verify").returncode == 0


def test_a_trailer_beside_a_legal_subject_is_judged(team):
    """The subject pre-commit expects is not the whole message: a trailer under it (here a
    role assumed that the state file does not write) is judged by Python."""
    set_state_line(team, "alice", "state", "inbox")
    refused(team, "@alice: [STATE:inbox] read\n\nAssumes-role: architect",
            "agent/alice/_state.md", rule="assume-role")
    assert commit(team, "@alice: [STATE:inbox] read\n\nCo-authored-by: bob").returncode == 0


def _sha256_alice(root: Path) -> None:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", "--object-format=sha256")
    git(repo, "config", "commit.gpgsign", "false")
    for args in (("init", "--human", "zach"), ("spawn", "alice")):
        res = gitstate(repo, *args)
        assert res.returncode == 0, res.stderr


def test_the_ref_guard_knows_a_merge_in_a_sha256_repository(tmp_path):
    """A move may not ride into the team line inside a merge: the guard sees the merge by its
    two parents, whose names are 64 hex digits long here."""
    repo = from_template(tmp_path, ("sha256",), _sha256_alice) / "repo"
    git(repo, "checkout", "-q", "-b", "feature", "main")
    with moves_on_this_branch(repo, "feature"):
        res = gitstate(repo, "transition", "alice", "inbox", "-m", "on feature")
    assert res.returncode == 0, res.stderr
    git(repo, "checkout", "-q", "main")
    (repo / "work.txt").write_text("work\n")
    git(repo, "add", "work.txt")
    git(repo, "commit", "-q", "-m", "work")
    before = git(repo, "rev-parse", "HEAD").stdout
    git(repo, "merge", "-q", "--no-commit", "feature")
    # the commit hooks skipped: the guard alone judges the merge
    res = git(repo, "commit", "-q", "--no-verify", "--no-edit", check=False)
    assert res.returncode != 0 and "[merge-moves]" in res.stderr, res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before
    res = git(repo, "branch", "-q", "-D", "feature")     # a deletion: 64 zeros, no commit
    assert res.stderr == "", res.stderr


def test_a_root_commit_is_judged_whatever_log_showroot_says(team):
    """`log.showRoot=false` hides a root commit's files from `git log`: neither the guard's
    listing nor Python's reading of history may lose them."""
    git(team, "config", "log.showRoot", "false")
    git(team, "checkout", "-q", "--orphan", "fresh")
    set_state_line(team, "alice", "state", "deep_work")
    git(team, "add", "-A")
    res = git(team, "commit", "-q", "--no-verify", "-m", "a new start", check=False)
    assert res.returncode != 0 and "[not-initial]" in res.stderr, res.stderr
    assert git(team, "rev-parse", "-q", "--verify", "fresh", check=False).stdout == ""


@pytest.mark.parametrize("judge", ["0", "1"])
def test_a_state_file_path_of_odd_bytes_is_refused_by_name_not_by_a_traceback(repo, monkeypatch,
                                                                              judge):
    """With `core.quotePath=false` git hands the hooks a path as its bytes: one that is not
    UTF-8 names an agent no id can be, refused as such (in-process, and by the resident
    judge, which the first commit starts)."""
    monkeypatch.setenv("GITSTATE_JUDGE", judge)
    monkeypatch.setenv("GITSTATE_JUDGE_IDLE", "5")     # a judge this test starts goes soon
    git(repo, "config", "core.quotePath", "false")
    odd = os.fsencode(repo) + b"/agent/b\xff"
    for attempt in range(2):
        os.makedirs(odd, exist_ok=True)
        with open(odd + b"/_state.md", "wb") as fh:
            fh.write(b"---\nagent: b\nstate: bootstrap\n---\n")
        git(repo, "add", "-A")
        before = snapshot(repo)
        res = git(repo, "commit", "-qm", "@b: [STATE:bootstrap] odd", check=False)
        assert res.returncode == 1 and "[invalid-id]" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr and snapshot(repo) == before
    status = repo / ".git" / "gitstate" / "judge.json"
    if status.exists():
        os.kill(json.loads(status.read_text())["pid"], 9)
