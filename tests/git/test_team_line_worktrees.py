"""One machine, one team line: agents in worktrees of the repository on branches of their own
land their moves on the local team line by compare-and-swap (no hub), the lead's worktree on
the team line follows path by path, and views read the line from any worktree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import git, gitstate, state_path


def _ok(res):
    assert res.returncode == 0, f"{res.stdout}\n{res.stderr}"
    return res


def _worktree(lead: Path, name: str) -> Path:
    where = lead.parent / name
    git(lead, "worktree", "add", "-q", "-b", name, str(where))
    return where


def _subjects(repo: Path, rev: str = "main") -> list[str]:
    return git(repo, "log", "--first-parent", "--format=%s", rev).stdout.splitlines()


def _state(repo: Path, agent: str, rev: str = "main") -> str:
    text = git(repo, "show", f"{rev}:agent/{agent}/_state.md").stdout
    return next(ln.split(":", 1)[1].strip() for ln in text.splitlines()
                if ln.startswith("state:"))


def test_a_move_in_a_worktree_lands_on_the_team_line_and_the_lead_follows(repo):
    _ok(gitstate(repo, "spawn", "ana"))
    ana = _worktree(repo, "ana")
    branch_before = git(ana, "rev-parse", "HEAD").stdout
    (ana / "notes.txt").write_text("work in progress\n")
    git(ana, "add", "notes.txt")

    res = _ok(gitstate(ana, "transition", "ana", "inbox", "-m", "reading"))

    assert "on main" in res.stdout
    assert "notes.txt" in res.stderr and "stays on this branch" in res.stderr
    assert _subjects(repo)[0] == "@ana: [STATE:inbox] reading"
    # the worktree's branch, index and files are as they were: its work is its branch's
    assert git(ana, "rev-parse", "HEAD").stdout == branch_before
    assert git(ana, "diff", "--cached", "--name-only").stdout.split() == ["notes.txt"]
    assert "notes.txt" not in git(repo, "ls-tree", "-r", "--name-only", "main").stdout
    # the lead's worktree on main followed: nothing reads as reversed there
    assert git(repo, "status", "--porcelain").stdout == ""
    assert "state: inbox" in state_path(repo, "ana").read_text()
    # views read the team line from the worktree
    roster = json.loads(_ok(gitstate(ana, "roster", "--json")).stdout)
    assert [(a["agent"], a["state"]) for a in roster["living"]] == [("ana", "inbox")]
    record = json.loads(_ok(gitstate(ana, "transition", "ana", "distill", "--json")).stdout)
    assert record["line"] == "main" and record["commit"] == git(
        repo, "rev-parse", "main").stdout.strip()


def test_moves_from_a_worktree_then_the_lead_then_the_branch_merged(repo):
    """The issue's test: two moves land from a worktree, the lead moves the agent, then the
    worktree's branch is merged: no conflict in a state file, and the merge changes none."""
    _ok(gitstate(repo, "spawn", "ana"))
    ana = _worktree(repo, "ana")
    _ok(gitstate(ana, "transition", "ana", "inbox"))
    (ana / "feature.py").write_text("print('feature')\n")
    git(ana, "add", "feature.py")
    git(ana, "commit", "-q", "-m", "feature: first cut")            # work, through the hooks
    _ok(gitstate(ana, "transition", "ana", "distill", "-m", "feature done"))
    _ok(gitstate(repo, "transition", "ana", "deep_work", "-m", "the lead moves ana"))

    res = git(repo, "merge", "--no-edit", "ana", check=False)         # through the hooks

    assert res.returncode == 0, res.stdout + res.stderr
    assert git(repo, "diff", "HEAD^1", "HEAD", "--name-only").stdout.split() == ["feature.py"]
    assert _state(repo, "ana") == "deep_work"
    assert git(repo, "status", "--porcelain").stdout == ""
    verified = json.loads(_ok(gitstate(repo, "verify", "--no-cache", "--json")).stdout)
    assert verified["ok"] and verified["problems"] == []


def test_the_lead_worktree_with_its_own_edits_keeps_them_and_is_told_how_to_catch_up(repo):
    _ok(gitstate(repo, "spawn", "ana"))
    _ok(gitstate(repo, "spawn", "bo"))
    ana = _worktree(repo, "ana")
    (repo / "README").write_text("the lead's unsaved edit\n")          # elsewhere: no matter
    ana_file = state_path(repo, "ana")
    ana_file.write_text(ana_file.read_text() + "\nthe lead's note\n")  # the moved file itself

    _ok(gitstate(ana, "transition", "ana", "inbox"))
    _ok(gitstate(ana, "transition", "bo", "inbox", "--json"))

    assert _state(repo, "ana") == "inbox" and _state(repo, "bo") == "inbox"
    assert (repo / "README").read_text() == "the lead's unsaved edit\n"
    assert ana_file.read_text().endswith("the lead's note\n")          # never overwritten
    assert "state: inbox" in state_path(repo, "bo").read_text()        # followed
    status = git(repo, "status", "--porcelain").stdout.splitlines()
    assert sorted(status) == [" M README", "MM agent/ana/_state.md"] or \
        sorted(status) == [" M README", " M agent/ana/_state.md"], status
    note = _ok(gitstate(repo, "roster")).stderr
    assert "agent/ana/_state.md held edits here" in note and "git checkout HEAD --" in note
    git(repo, "checkout", "HEAD", "--", "agent/ana/_state.md")
    assert _ok(gitstate(repo, "roster")).stderr == ""


def test_push_with_a_local_team_line_lands_there(repo):
    _ok(gitstate(repo, "spawn", "ana"))
    ana = _worktree(repo, "ana")
    record = json.loads(_ok(gitstate(ana, "transition", "ana", "inbox", "--push",
                                     "--json")).stdout)
    assert record["push"]["outcome"] == "landed" and record["push"]["upstream"] == "main"
    assert record["commit"] == git(repo, "rev-parse", "main").stdout.strip()


def test_a_move_refused_on_the_line_changes_nothing_anywhere(repo):
    _ok(gitstate(repo, "spawn", "ana"))
    ana = _worktree(repo, "ana")
    before = (git(repo, "rev-parse", "main").stdout, git(ana, "rev-parse", "HEAD").stdout)
    res = gitstate(ana, "transition", "ana", "deep_work")               # bootstrap -> deep_work
    assert res.returncode == 1 and "illegal-transition" in res.stderr
    assert (git(repo, "rev-parse", "main").stdout, git(ana, "rev-parse", "HEAD").stdout) == before
    assert git(repo, "status", "--porcelain").stdout == ""


def test_worktrees_moving_at_once_lose_nothing(repo):
    """A burst: four worktrees, each moving its own agent (every other one with --push), and
    the lead moving a fifth, all at once, with no pause. Every move is on the line, judged,
    once; the lead's worktree is clean."""
    agents = [f"agent-{i}" for i in range(4)]
    for a in agents + ["lead-agent"]:
        _ok(gitstate(repo, "spawn", a))
    places = [_worktree(repo, a) for a in agents] + [repo]
    script = ("import sys\nfrom gitstate.cli.main import main\n"
              "agent, push = sys.argv[1], sys.argv[2:]\n"
              "for state in ('inbox', 'distill', 'idle', 'inbox', 'distill', 'idle'):\n"
              "    code = main(['transition', agent, state, '-m', state, *push])\n"
              "    if code: sys.exit(code)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, a, *(["--push"] if i % 2 else [])],
                              cwd=p, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for i, (a, p) in enumerate(zip(agents + ["lead-agent"], places))]
    for p in procs:
        _out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    subjects = _subjects(repo)
    for a in agents + ["lead-agent"]:
        assert sum(s.startswith(f"@{a}: [STATE:") for s in subjects) == 7, a   # spawn + 6
        assert _state(repo, a) == "idle"
    assert git(repo, "status", "--porcelain").stdout == ""
    assert all(git(p, "status", "--porcelain").stdout == "" for p in places[:-1])
    verified = json.loads(_ok(gitstate(repo, "verify", "--no-cache", "--json")).stdout)
    assert verified["ok"], verified["problems"]


# --- the team line of a clone, and its hub -------------------------------------------------

def test_worktrees_of_a_clone_land_on_the_hub_and_sync_lands_what_waited(tmp_path):
    from hubs import hub_and_clones
    hub, (lead,) = hub_and_clones(tmp_path, 1)
    _ok(gitstate(lead, "spawn", "ana", "--push"))
    ana = _worktree(lead, "ana-work")
    # a move without --push (a hook's, say) lands on the local team line only
    _ok(gitstate(ana, "transition", "ana", "inbox"))
    assert _state(lead, "ana") == "inbox" and _state(hub, "ana") == "bootstrap"
    # the next --push lands what waited on the line first, then itself, in order
    record = json.loads(_ok(gitstate(ana, "transition", "ana", "distill", "--push",
                                     "--json")).stdout)
    assert record["push"]["outcome"] == "landed" and _state(hub, "ana") == "distill"
    assert [s for s in _subjects(hub) if s.startswith("@ana")][:2] == [
        "@ana: [STATE:distill] inbox -> distill", "@ana: [STATE:inbox] bootstrap -> inbox"]
    # sync from the agent's worktree lands the line's moves through the queue
    _ok(gitstate(ana, "transition", "ana", "idle"))
    _ok(gitstate(ana, "sync"))
    assert _state(hub, "ana") == "idle"
    assert git(lead, "rev-parse", "main").stdout == git(hub, "rev-parse", "main").stdout
    assert git(lead, "status", "--porcelain").stdout == ""
    assert _ok(gitstate(hub, "verify", "--no-cache")).returncode == 0


def test_a_broken_follow_journal_is_no_traceback(repo):
    gdir = Path(git(repo, "rev-parse", "--absolute-git-dir").stdout.strip())
    (gdir / "gitstate").mkdir(exist_ok=True)
    for junk in ('[{"path": 3}, {"nopath": 1}, "x"]', "not json", '{"a": 1}',
                 '[{"path": "../../outside", "old": null}]'):
        (gdir / "gitstate" / "follow.json").write_text(junk)
        res = gitstate(repo, "roster")
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert not (repo.parent.parent / "outside").exists()


def test_a_stale_worktree_is_judged_by_the_line_it_lands_on(repo):
    """The worktree forked before a1 took the architect's role: a spawn there of a second
    architect is judged on the line, where a1 holds it, and refused."""
    ana = _worktree(repo, "ana")
    _ok(gitstate(repo, "spawn", "a1", "--role", "architect"))
    before = git(repo, "rev-parse", "main").stdout
    res = gitstate(ana, "spawn", "a2", "--role", "architect")
    assert res.returncode == 1 and "[role-max]" in res.stderr, res.stdout + res.stderr
    assert git(repo, "rev-parse", "main").stdout == before


def test_the_head_a_command_reads_is_read_again_after_head_moves(repo):
    """`Managed.head()` reuses HEAD as `line_ref` read it only within the same call: a
    command that moves HEAD (a sync, a move) and reads again sees the new HEAD."""
    from gitstate.git.repo import open_managed
    managed = open_managed(str(repo))
    assert managed.line_ref() is None                       # on the line: moves go to HEAD
    git(repo, "commit", "-q", "--allow-empty", "-m", "work")
    assert managed.head() == git(repo, "rev-parse", "HEAD").stdout.strip()
    fresh = open_managed(str(repo))
    assert fresh.head() == git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "commit", "-q", "--allow-empty", "-m", "more work")
    assert fresh.head() == git(repo, "rev-parse", "HEAD").stdout.strip()
