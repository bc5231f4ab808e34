"""Issue #9: no file takes the team down. Every case of the hostile corpus (tests/hostile/) is
refused at every door, with its rule id, and nothing is written:

- the real pre-commit/commit-msg hooks (a plain `git commit` of the staged file),
- `gitstate check` (the work tree as it is),
- `gitstate verify` (history, after a commit made where no hook ran),
- a hub's pre-receive hook (`gitstate init --server`, the push of that commit),
- and, for lifecycles, `gitstate init --lifecycle FILE`.

Black-box: real git, real hooks, the CLI in a fresh process. Every command runs with a
memory limit and a timeout (tests/hostile/corpus.py), so a case that would crash or stall
a door fails its test as "hung" or "crashed" instead of taking the machine down.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import _GIT_ENV_DROP, make_repo, snapshot, state_path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hostile"))
import corpus  # noqa: E402
from corpus import (AGENT, STATE_FILE, SUBJECT, assert_clean_exit, cases,  # noqa: E402
                    rule_shown)

LAW = "protocols/lifecycle.yaml"
LAW_MESSAGE = "law: a new lifecycle\n\nApproved-by: zach\n"

STATE_CASES = cases("state", "symlink")
LAW_CASES = [c for c in cases("lifecycle", "layout", "pattern") if "states" not in c.extra]
BIG_LAWS = [c for c in cases("lifecycle") if "states" in c.extra]
LAYOUTS = cases("layout")
ALL_FILES = STATE_CASES + LAW_CASES


def ids(case_list):
    return [c.id for c in case_list]


# ---------------------------------------------------------------------------------------
# A team (managed repo with alice in bootstrap) and its hub, built once and copied per test


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"] = "Test Person"
        env[f"GIT_{role}_EMAIL"] = "test@example.invalid"
    return env


def must(res, what: str):
    assert res.returncode == 0, f"setup step {what} failed ({res.returncode}):\n" \
                                f"{res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """work/: `gitstate init` (haak) and `gitstate spawn alice`, pushed to hub.git/, a bare
    hub with `gitstate init --server`."""
    root = tmp_path_factory.mktemp("hostile-template")
    env = _environment(root / "home")
    with pytest.MonkeyPatch.context() as mp:   # the per-test isolation is not set up yet
        for key in list(os.environ):
            mp.delenv(key)
        for key, value in env.items():
            mp.setenv(key, value)
        hub = root / "hub.git"
        corpus.git(root, "init", "-q", "--bare", "-b", "main", str(hub))
        must(corpus.gitstate(hub, "init", "--server"), "gitstate init --server")
        work = make_repo(root / "work")
        (work / "README").write_text("hello\n")
        corpus.git(work, "add", "README")
        corpus.git(work, "commit", "-q", "-m", "first")
        must(corpus.gitstate(work, "init"), "gitstate init")
        must(corpus.gitstate(work, "spawn", AGENT), "gitstate spawn alice")
        corpus.git(work, "remote", "add", "origin", str(hub))
        corpus.git(work, "push", "-q", "origin", "main")
    return root


class Team:
    def __init__(self, root: Path):
        self.root = root
        self.work = root / "work"
        self.hub = root / "hub.git"
        self.no_hooks = root / "no-hooks"
        self.no_hooks.mkdir()

    def head(self) -> str:
        return corpus.git(self.work, "rev-parse", "HEAD").stdout.strip()

    def hub_head(self) -> str:
        return corpus.git(self.hub, "rev-parse", "refs/heads/main").stdout.strip()

    def commit_without_hooks(self, message: str) -> str:
        """A commit from a clone that runs no hooks at all (as `--no-verify` does, and with
        no hooks directory either, so no local guard of any kind judges it)."""
        corpus.git(self.work, "-c", f"core.hooksPath={self.no_hooks}", "commit", "-q",
                   "--no-verify", "-m", message)
        return self.head()

    def push(self):
        return corpus.git(self.work, "push", "-q", "origin", "main", check=False)


@pytest.fixture
def team(template, tmp_path) -> Team:
    root = tmp_path / "team"
    shutil.copytree(template, root, symlinks=True)
    t = Team(root)
    corpus.git(t.work, "remote", "set-url", "origin", str(t.hub))
    return t


# ---------------------------------------------------------------------------------------
# Putting a case into a repository


def place_state(work: Path, case) -> None:
    """The case as agent/alice/_state.md in the work tree."""
    path = state_path(work, AGENT)
    path.unlink()
    if case.kind == "symlink":
        legal = work / "notes" / f"{AGENT}.md"
        legal.parent.mkdir(exist_ok=True)
        legal.write_bytes((corpus.HERE / "state" / "legal_inbox.md").read_bytes())
        os.symlink(case.target, path)
    else:
        path.write_bytes(case.data())


def stage_state(work: Path, case) -> None:
    place_state(work, case)
    corpus.git(work, "add", "-A", "--", "agent", *(["notes"] if case.kind == "symlink" else []))


def stage_law(work: Path, case) -> None:
    (work / LAW).write_bytes(case.data())
    corpus.git(work, "add", "--", LAW)


def assert_refused_with(text: str, case, *, law: bool = False) -> None:
    """The refusal carries one of the case's rule ids in brackets; a lifecycle's may carry
    [lifecycle] instead (a commit that leaves the lifecycle invalid)."""
    rules = case.rules + (("lifecycle",) if law and "lifecycle" not in case.rules else ())
    assert rule_shown(text, rules), \
        f"expected one of {['[' + r + ']' for r in rules]} in:\n{text[-3000:]}"


def assert_nothing_ran(case) -> None:
    pwned = case.extra.get("pwned")
    if pwned:
        assert not os.path.exists(pwned), f"{pwned} exists: a YAML tag ran a command"


@pytest.fixture(autouse=True)
def _no_stale_pwned_file():
    for case in STATE_CASES:
        pwned = case.extra.get("pwned")
        if pwned and os.path.exists(pwned):
            os.unlink(pwned)
    yield


# ---------------------------------------------------------------------------------------
# State files: the hooks, check, verify, the hub


@pytest.mark.parametrize("case", STATE_CASES, ids=ids(STATE_CASES))
def test_the_hooks_refuse(team, case):
    stage_state(team.work, case)
    before = snapshot(team.work)
    res = corpus.git(team.work, "commit", "-q", "-m", SUBJECT, check=False)
    assert_clean_exit(res, "git commit (through the hooks)")
    assert_nothing_ran(case)
    if case.expect == "accept":
        assert res.returncode == 0, res.stderr
        landed = corpus.git(team.work, "cat-file", "blob", f"HEAD:{STATE_FILE}").stdout
        assert landed.encode() == case.data(), "the file must land byte for byte"
        return
    assert res.returncode != 0, f"the hooks let [{case.rules[0]}] in"
    assert_refused_with(res.stderr, case)
    assert STATE_FILE in res.stderr, f"the refusal must name the file:\n{res.stderr[-2000:]}"
    assert "Nothing was committed" in res.stderr
    assert snapshot(team.work) == before, "a refused commit must leave HEAD, index and work tree"


@pytest.mark.parametrize("case", STATE_CASES, ids=ids(STATE_CASES))
def test_check_refuses(team, case):
    place_state(team.work, case)
    before = snapshot(team.work)
    res = corpus.gitstate(team.work, "check")
    assert_clean_exit(res, "gitstate check")
    assert_nothing_ran(case)
    assert snapshot(team.work) == before, "check must write nothing"
    if case.expect == "accept":
        assert res.returncode == 0, res.stdout + res.stderr
        return
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert_refused_with(out, case)
    assert STATE_FILE in out, f"check must name the file:\n{out[-2000:]}"


@pytest.mark.parametrize("case", STATE_CASES, ids=ids(STATE_CASES))
def test_verify_refuses(team, case):
    stage_state(team.work, case)
    bad = team.commit_without_hooks(SUBJECT)
    res = corpus.gitstate(team.work, "verify")
    assert_clean_exit(res, "gitstate verify")
    assert_nothing_ran(case)
    if case.expect == "accept":
        assert res.returncode == 0, res.stdout + res.stderr
        return
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert_refused_with(out, case)
    assert bad[:10] in out, f"verify must name the commit {bad[:10]}:\n{out[-2000:]}"


@pytest.mark.parametrize("case", STATE_CASES, ids=ids(STATE_CASES))
def test_the_hub_refuses(team, case):
    stage_state(team.work, case)
    bad = team.commit_without_hooks(SUBJECT)
    before = team.hub_head()
    res = team.push()
    assert_clean_exit(res, "git push to the hub")
    assert_nothing_ran(case)
    if case.expect == "accept":
        assert res.returncode == 0, res.stderr
        assert team.hub_head() == bad
        return
    assert res.returncode != 0, f"the hub let [{case.rules[0]}] in"
    assert_refused_with(res.stderr, case)
    assert team.hub_head() == before, "the hub's branch must not move"


# ---------------------------------------------------------------------------------------
# Lifecycles: init --lifecycle FILE, the hooks, verify, the hub


def _fresh_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "fresh")
    (repo / "README").write_text("hello\n")
    corpus.git(repo, "add", "README")
    corpus.git(repo, "commit", "-q", "-m", "first")
    return repo


LINE_DECLARED = (b"line: main   # the team line: moves land here one by one; a merge here "
                 b"carries work only\n")


def _law_file(tmp_path: Path, case) -> Path:
    f = tmp_path / "law" / "lifecycle.yaml"
    f.parent.mkdir()
    f.write_bytes(case.data())
    return f


@pytest.mark.parametrize("case", LAW_CASES, ids=ids(LAW_CASES))
def test_init_refuses_a_hostile_lifecycle(tmp_path, case):
    repo = _fresh_repo(tmp_path)
    law = _law_file(tmp_path, case)
    before = snapshot(repo)
    res = corpus.gitstate(repo, "init", "--lifecycle", str(law))
    assert_clean_exit(res, "gitstate init --lifecycle FILE")
    out = res.stdout + res.stderr
    if case.expect == "accept" or (case.expect == "either" and res.returncode == 0):
        assert res.returncode == 0, out
        committed = corpus.run(["git", "cat-file", "blob", f"HEAD:{LAW}"], repo)
        # as it was, with the team line declared (`line: main`) where it declares none
        landed = committed.stdout.encode().replace(LINE_DECLARED, b"")
        assert landed == case.data(), "the lifecycle must land as it was"
        return
    assert res.returncode == 1, out
    assert_refused_with(out, case, law=True)
    assert snapshot(repo) == before, "a refused init must commit and write nothing"
    assert not (repo / LAW).exists()


@pytest.mark.parametrize("case", LAW_CASES, ids=ids(LAW_CASES))
def test_the_hooks_refuse_a_hostile_lifecycle(team, case):
    stage_law(team.work, case)
    before = snapshot(team.work)
    res = corpus.git(team.work, "commit", "-q", "-F", "-", check=False,
                     input=LAW_MESSAGE.encode())
    assert_clean_exit(res, "git commit of the lifecycle (through the hooks)")
    if case.expect == "accept" or (case.expect == "either" and res.returncode == 0):
        assert res.returncode == 0, res.stderr
        return
    assert res.returncode != 0, "the hooks let a hostile lifecycle in"
    assert_refused_with(res.stderr, case, law=True)
    assert snapshot(team.work) == before


@pytest.mark.parametrize("case", LAW_CASES, ids=ids(LAW_CASES))
def test_verify_refuses_a_hostile_lifecycle(team, case):
    stage_law(team.work, case)
    bad = team.commit_without_hooks(LAW_MESSAGE)
    res = corpus.gitstate(team.work, "verify")
    assert_clean_exit(res, "gitstate verify")
    out = res.stdout + res.stderr
    if case.expect == "accept" or (case.expect == "either" and res.returncode == 0):
        assert res.returncode == 0, out
        return
    assert res.returncode == 1, out
    assert_refused_with(out, case, law=True)
    assert bad[:10] in out, f"verify must name the commit {bad[:10]}:\n{out[-2000:]}"


@pytest.mark.parametrize("case", LAW_CASES, ids=ids(LAW_CASES))
def test_the_hub_refuses_a_hostile_lifecycle(team, case):
    stage_law(team.work, case)
    bad = team.commit_without_hooks(LAW_MESSAGE)
    before = team.hub_head()
    res = team.push()
    assert_clean_exit(res, "git push to the hub")
    if case.expect == "accept" or (case.expect == "either" and res.returncode == 0):
        assert res.returncode == 0, res.stderr
        assert team.hub_head() == bad
        return
    assert res.returncode != 0, "the hub let a hostile lifecycle in"
    assert_refused_with(res.stderr, case, law=True)
    assert team.hub_head() == before


# ---------------------------------------------------------------------------------------
# Layouts: never outside the work tree, never inside .git


@pytest.mark.parametrize("case", LAYOUTS, ids=ids(LAYOUTS))
def test_spawn_never_writes_where_a_hostile_layout_points(team, case):
    """Even with the hostile lifecycle already in history (it came from a clone without
    hooks), `spawn shallow` writes nothing: not .git/shallow, nothing outside the work tree."""
    stage_law(team.work, case)
    team.commit_without_hooks(LAW_MESSAGE)
    layout = case.data().decode().split("state_file:", 1)[1].split("\n", 1)[0].strip().strip('"')
    target = team.work / layout.replace("{id}", "shallow")   # an absolute layout stays absolute
    watched = [target, target.parent, team.work / ".git" / "shallow"]
    before = {str(p): os.path.lexists(p) for p in watched}
    head = team.head()
    res = corpus.gitstate(team.work, "spawn", "shallow")
    assert_clean_exit(res, "gitstate spawn shallow")
    out = res.stdout + res.stderr
    assert res.returncode == 1, f"spawn with layout {layout!r} must be refused:\n{out}"
    assert rule_shown(out, case.rules), out
    assert team.head() == head
    for p in watched:
        assert os.path.lexists(p) == before[str(p)], f"spawn wrote {p}"
    status = corpus.git(team.work, "status", "--porcelain", check=False)
    assert status.returncode == 0, f"git is broken after the spawn:\n{status.stderr}"


# ---------------------------------------------------------------------------------------
# A grammar.accept pattern that backtracks catastrophically


PATTERN = next(c for c in LAW_CASES if c.kind == "pattern")


def test_a_backtracking_pattern_cannot_stall_the_views(team, tmp_path):
    """The pattern is refused at load, or run in linear time: either way `roster` (and the
    other readers of history) finish cleanly on the adversarial subject."""
    subject = PATTERN.extra["subject"]
    assert len(subject) == 40
    stage_law(team.work, PATTERN)
    team.commit_without_hooks(LAW_MESSAGE)
    (team.work / "work.txt").write_text("work\n")
    corpus.git(team.work, "add", "work.txt")
    team.commit_without_hooks(subject)
    for args in (("roster",), ("log",), ("status",), ("verify",)):
        res = corpus.gitstate(team.work, *args)
        assert_clean_exit(res, f"gitstate {' '.join(args)}")
        if res.returncode == 1:
            assert rule_shown(res.stdout + res.stderr, ("lifecycle",)), res.stdout + res.stderr
    res = team.push()
    assert_clean_exit(res, "git push to the hub")


# ---------------------------------------------------------------------------------------
# Big lifecycles: accepted, and every door stays usable (the bench measures the time)


@pytest.mark.parametrize("case", BIG_LAWS, ids=ids(BIG_LAWS))
def test_a_big_lifecycle_is_accepted_at_every_door(tmp_path, case):
    """With linear checks each step takes well under a second; the generous timeout only
    stops a quadratic one from running for minutes (on main: 10,000 states took ~50 s a load)."""
    n = case.extra["states"]
    timeout = 30
    repo = _fresh_repo(tmp_path)
    law = _law_file(tmp_path, case)
    res = corpus.gitstate(repo, "init", "--lifecycle", str(law), timeout=timeout)
    assert_clean_exit(res, "gitstate init --lifecycle FILE", codes=(0,))
    res = corpus.gitstate(repo, "lifecycle", "--json", timeout=timeout)
    assert_clean_exit(res, "gitstate lifecycle --json", codes=(0,))
    assert len(json.loads(res.stdout)["states"]) == n
    res = corpus.gitstate(repo, "check", timeout=timeout)
    assert_clean_exit(res, "gitstate check", codes=(0,))
    res = corpus.gitstate(repo, "spawn", "a1", timeout=timeout)
    assert_clean_exit(res, "gitstate spawn a1", codes=(0,))
    # a hand-made legal move through the real hooks: s0 -> s1
    f = repo / "agent" / "a1" / "_state.md"
    f.write_text(f.read_text().replace("state: s0\n", "state: s1\n"))
    corpus.git(repo, "add", "agent/a1/_state.md")
    res = corpus.git(repo, "commit", "-q", "-m", "@a1: [STATE:s1] next", check=False,
                     timeout=timeout)
    assert_clean_exit(res, "git commit (through the hooks)", codes=(0,))
    res = corpus.gitstate(repo, "verify", timeout=timeout)
    assert_clean_exit(res, "gitstate verify", codes=(0,))
    hub = tmp_path / "hub.git"
    corpus.git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    must(corpus.gitstate(hub, "init", "--server"), "gitstate init --server")
    corpus.git(repo, "remote", "add", "origin", str(hub))
    res = corpus.git(repo, "push", "-q", "origin", "main", check=False, timeout=timeout)
    assert_clean_exit(res, "git push to the hub", codes=(0,))


# ---------------------------------------------------------------------------------------
# Every door exits cleanly on the whole corpus: never 139, never a signal, never a traceback


@pytest.mark.parametrize("case", ALL_FILES, ids=ids(ALL_FILES))
def test_hooks_verify_and_roster_exit_cleanly(team, case):
    if case in STATE_CASES:
        stage_state(team.work, case)
        message = SUBJECT
    else:
        stage_law(team.work, case)
        message = LAW_MESSAGE
    # the pre-commit hook's entry point itself, so that its own exit code is seen
    raw = corpus.git(team.work, "diff", "--cached", "--raw", "--no-renames", "--abbrev=40").stdout
    expect = team.work / ".git" / "gitstate-expect"
    res = corpus.gitstate(team.work, "hook", "pre-commit", "--expect", str(expect),
                          input=raw.encode())
    assert_clean_exit(res, "gitstate hook pre-commit")
    # and git running the hooks
    res = corpus.git(team.work, "commit", "-q", "-F", "-", check=False, input=message.encode())
    assert_clean_exit(res, "git commit (through the hooks)")
    if res.returncode != 0:
        team.commit_without_hooks(message)
    for args in (("verify",), ("roster",)):
        res = corpus.gitstate(team.work, *args)
        assert_clean_exit(res, f"gitstate {' '.join(args)}")
    res = team.push()
    assert_clean_exit(res, "git push to the hub (pre-receive)")


# ---------------------------------------------------------------------------------------
# The repository itself in a bad state


def test_a_gitstate_dir_that_is_a_plain_file(team):
    """.git/gitstate (caches, lock, journal) is a plain file: every command works without
    caches or says plainly what is wrong; never an internal error."""
    gs = team.work / ".git" / "gitstate"
    shutil.rmtree(gs)
    gs.write_text("not a directory\n")
    commands = [("status",), ("roster",), ("log",), ("vacancies",), ("check",), ("verify",),
                ("lifecycle",), ("spawn", "bob"), ("transition", AGENT, "inbox")]
    for args in commands:
        res = corpus.gitstate(team.work, *args)
        assert_clean_exit(res, f"gitstate {' '.join(args)}")
        if res.returncode != 0:
            assert ".git/gitstate" in res.stderr, \
                f"gitstate {' '.join(args)} must say what is wrong:\n{res.stderr}"
    f = state_path(team.work, AGENT)
    if "state: bootstrap\n" in f.read_text():   # the transition above may have been refused
        f.write_text(f.read_text().replace("state: bootstrap\n", "state: inbox\n"))
    corpus.git(team.work, "add", STATE_FILE)
    res = corpus.git(team.work, "commit", "-q", "-m", f"@{AGENT}: [STATE:inbox] by hand",
                     check=False)
    assert_clean_exit(res, "git commit (through the hooks)")
    if res.returncode != 0:
        assert ".git/gitstate" in res.stderr, res.stderr


def test_a_stale_index_lock_is_diagnosed_at_once(team):
    """A git killed while holding .git/index.lock: a move says what it found and what to do,
    exit 1, with nothing written (no 21 s retry: the timeout here is generous)."""
    lock = team.work / ".git" / "index.lock"
    lock.write_bytes(b"")
    head = team.head()
    before = state_path(team.work, AGENT).read_bytes()
    for args in (("transition", AGENT, "inbox"), ("spawn", "bob")):
        res = corpus.gitstate(team.work, *args, timeout=10)
        assert_clean_exit(res, f"gitstate {' '.join(args)}")
        assert res.returncode == 1, res.stdout + res.stderr
        assert "index.lock" in res.stderr, f"must say what it found:\n{res.stderr}"
        advice = res.stderr.lower()
        assert any(w in advice for w in ("remove", "delete", "rm ")), \
            f"must say what to do about the lock:\n{res.stderr}"
        assert "run any gitstate command again" not in res.stderr
        assert team.head() == head, "nothing may be committed while the index is locked"
        assert state_path(team.work, AGENT).read_bytes() == before
        assert not (team.work / "agent" / "bob").exists()
    res = corpus.gitstate(team.work, "roster", timeout=10)   # reading needs no index lock
    assert_clean_exit(res, "gitstate roster", codes=(0,))


def test_a_commit_killed_between_head_and_index_is_finished_by_the_next_git_commit(team):
    """As commit_atomically leaves it when killed right after `update-ref HEAD`: HEAD has
    alice in inbox, the journal (.git/gitstate/pending.json) says so, the index and work tree
    still have her in bootstrap. The next plain `git commit` of ordinary work is not refused,
    and the repository ends consistent."""
    work = team.work
    gdir = work / ".git"
    old = team.head()
    text = state_path(work, AGENT).read_text()
    assert "state: bootstrap\n" in text
    new_text = text.replace("state: bootstrap\n", "state: inbox\n")
    blob = corpus.git(work, "hash-object", "-w", "--stdin", input=new_text.encode()).stdout.strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(gdir / "gitstate" / "index.crash.tmp")}
    must(corpus.run(["git", "read-tree", old], work, env=env), "read-tree")
    must(corpus.run(["git", "update-index", "--index-info"], work, env=env,
                    input=f"100644 {blob}\t{STATE_FILE}\n".encode()), "update-index")
    tree = must(corpus.run(["git", "write-tree"], work, env=env), "write-tree").stdout.strip()
    os.unlink(env["GIT_INDEX_FILE"])
    message = f"@{AGENT}: [STATE:inbox] restored"
    sha = corpus.git(work, "commit-tree", tree, "-p", old, "-F", "-",
                     input=(message + "\n").encode()).stdout.strip()
    journal = gdir / "gitstate" / "pending.json"
    journal.write_text(json.dumps({"commit": sha, "parent": old,
                                   "entries": [[STATE_FILE, "100644", blob]]}))
    corpus.git(work, "-c", f"core.hooksPath={team.no_hooks}", "update-ref", "-m",
               f"gitstate: {message}", "HEAD", sha, old)
    # killed here: the index and the work tree never followed
    assert "state: bootstrap" in state_path(work, AGENT).read_text()

    (work / "work.txt").write_text("ordinary work\n")
    corpus.git(work, "add", "work.txt")
    res = corpus.git(work, "commit", "-q", "-m", "ordinary work", check=False)
    assert_clean_exit(res, "git commit (through the hooks)", codes=(0,))
    assert corpus.git(work, "rev-parse", "HEAD^").stdout.strip() == sha
    assert "state: inbox\n" in corpus.git(work, "cat-file", "blob", f"HEAD:{STATE_FILE}").stdout
    assert corpus.git(work, "cat-file", "blob", "HEAD:work.txt").stdout == "ordinary work\n"
    assert corpus.git(work, "status", "--porcelain").stdout == "", "index and work tree must " \
        "match HEAD"
    assert "state: inbox\n" in state_path(work, AGENT).read_text()
    assert not journal.exists(), "the journal is done with"
    res = corpus.gitstate(work, "verify")
    assert_clean_exit(res, "gitstate verify", codes=(0,))


def test_a_move_killed_between_head_and_index_is_finished_by_the_next_git_commit(team, tmp_path):
    """The same situation made by a real crash instead of by hand: `gitstate transition` is
    killed (SIGKILL) at the moment it starts to update the real index, after HEAD moved."""
    work = team.work
    old = team.head()
    fake = tmp_path / "crashing-git"
    fake.mkdir()
    real_git = shutil.which("git")
    (fake / "git").write_text(
        "#!/bin/sh\n"
        "# the real index (no GIT_INDEX_FILE) is about to follow a published HEAD: die now\n"
        'case " $* " in\n'
        '  *" update-index --index-info"*)\n'
        '    if [ -z "$GIT_INDEX_FILE" ]; then kill -9 $PPID; exit 1; fi;;\n'
        "esac\n"
        f'exec "{real_git}" "$@"\n')
    (fake / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    res = corpus.run([sys.executable, "-m", "gitstate", "transition", AGENT, "inbox", "-m",
                      "restored"], work, env=env)
    assert res.returncode == -9, f"the crash was not injected:\n{res.stdout}\n{res.stderr}"
    sha = team.head()
    staged = corpus.git(work, "diff", "--cached", "--name-only").stdout.split()
    assert sha != old and STATE_FILE in staged, \
        "the crash must land between publishing HEAD and updating the index (if gitstate no " \
        "longer updates the index with `git update-index --index-info`, adapt the fake git)"

    (work / "work.txt").write_text("ordinary work\n")
    corpus.git(work, "add", "work.txt")
    res = corpus.git(work, "commit", "-q", "-m", "ordinary work", check=False)
    assert_clean_exit(res, "git commit (through the hooks)", codes=(0,))
    assert corpus.git(work, "rev-parse", "HEAD^").stdout.strip() == sha
    assert "state: inbox\n" in corpus.git(work, "cat-file", "blob", f"HEAD:{STATE_FILE}").stdout
    assert corpus.git(work, "cat-file", "blob", "HEAD:work.txt").stdout == "ordinary work\n"
    assert corpus.git(work, "status", "--porcelain").stdout == "", "index and work tree must " \
        "match HEAD"
    res = corpus.gitstate(work, "verify")
    assert_clean_exit(res, "gitstate verify", codes=(0,))
