"""Shared helpers of the trust tests (issue #8): managed clones, a bare hub, commits that skip
every local hook, and the three doors asked the same question.

A commit "from a clone without hooks" is made here with `git -c core.hooksPath=/dev/null
commit --no-verify`: that switches off every hook git would run (pre-commit, commit-msg and any
reference-transaction guard), wherever `gitstate init` installed them. It is what an attacker,
or an honest clone that never ran `gitstate init`, can always do; the hub and `verify` must
catch it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from conftest import (
    from_template, git, gitstate, make_repo, moves_on_this_branch, state_path, walk,
)

NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


# --- running things -----------------------------------------------------------------------

def run_git(repo: Path, *args: str, env: dict | None = None, check: bool = True,
            input: str | None = None) -> subprocess.CompletedProcess:
    """git with extra environment variables (author, dates, editors)."""
    full = {**os.environ, **(env or {})}
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=full,
                          input=input, errors="surrogateescape",
                          stdin=None if input is not None else subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"setup: git {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def nohooks(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """A git command with every hook switched off (as in a clone without gitstate)."""
    return run_git(repo, *NO_HOOKS, *args, env=env)


def ok(res: subprocess.CompletedProcess, what: str = "") -> subprocess.CompletedProcess:
    assert res.returncode == 0, \
        f"setup {what} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}"
    return res


def gs(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """A gitstate command that is only setup: it must succeed."""
    return ok(gitstate(repo, *args), "gitstate " + " ".join(args))


def sha(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", "--verify", "-q", rev).stdout.strip()


def refs(repo: Path) -> str:
    """Every ref with what it points at: a refused update must leave this as it was."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)").stdout


def subjects(repo: Path, rev: str = "HEAD") -> list[str]:
    return git(repo, "log", "--format=%s", rev).stdout.splitlines()


def out(res: subprocess.CompletedProcess) -> str:
    return (res.stdout or "") + (res.stderr or "")


# --- repositories -------------------------------------------------------------------------

def managed(path: Path, preset: str | None = None) -> Path:
    """A managed repository (like conftest's `repo` fixture), optionally with another preset
    (a copy of one built once per session)."""
    from_template(path, ("managed", preset), lambda root: _managed(root, preset))
    return path


def _managed(path: Path, preset: str | None) -> None:
    make_repo(path)
    (path / "README").write_text("hello\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    gs(path, "init", *(("--lifecycle", preset) if preset else ()))


def make_hub(path: Path) -> Path:
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    gs(path, "init", "--server")
    return path


def with_hub(tmp_path: Path, preset: str | None = None) -> tuple[Path, Path]:
    """(hub, work): a bare hub with `init --server`, and a managed clone whose lawful history is
    pushed to the hub's main branch (a copy of a pair built once per session)."""
    from_template(tmp_path, ("with_hub", preset), lambda root: _with_hub(root, preset))
    return tmp_path / "hub.git", tmp_path / "work"


def _with_hub(root: Path, preset: str | None) -> None:
    hub = make_hub(root / "hub.git")
    work = managed(root / "work", preset)
    git(work, "remote", "add", "origin", str(hub))
    ok(git(work, "push", "-q", "origin", "main", check=False), "first push")


def cached_hub(tmp_path: Path, name: str, build=None, preset: str | None = None
               ) -> tuple[Path, Path]:
    """(hub, work) as `with_hub` gives them, after `build(work)` (which pushes what it wants on
    the hub): built once per test session under `name`, then copied into `tmp_path` for each
    test, which may do with its copy whatever it likes. Only a speed-up: the copy is the same
    two repositories the build made."""
    def make(root: Path) -> None:
        _hub, work = with_hub(root, preset)
        if build:
            build(work)
    from_template(tmp_path, ("cached_hub", name, preset), make)
    return tmp_path / "hub.git", tmp_path / "work"


def alice_in_inbox(work: Path) -> None:
    """A build for `cached_hub`: alice spawned and in inbox, pushed."""
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox")
    push_lawful(work)


def alice_dead(work: Path) -> None:
    """A build for `cached_hub`: alice lived and died, pushed."""
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox", "distill")
    gs(work, "bury", "alice", "--summary", "done")
    push_lawful(work)


def push_lawful(work: Path, *args: str) -> None:
    res = git(work, "push", "-q", "origin", *(args or ("main",)), check=False)
    assert res.returncode == 0, f"setup: a lawful push was refused:\n{res.stderr}"


# --- state files --------------------------------------------------------------------------

def edit_state(repo: Path, agent: str, /, **fields: str) -> None:
    """Set front-matter keys by hand (value written verbatim), as an editor would."""
    path = state_path(repo, agent)
    lines = path.read_text().splitlines(keepends=True)
    for key, value in fields.items():
        for i, line in enumerate(lines[1:], 1):
            if line.startswith("---"):
                lines.insert(i, f"{key}: {value}\n")
                break
            if line.startswith(f"{key}:"):
                lines[i] = f"{key}: {value}\n"
                break
    path.write_text("".join(lines))


def sneak(repo: Path, message: str, *paths: str, env: dict | None = None) -> str:
    """Commit with every hook off (`git add` of `paths`, or -a without). Returns the sha."""
    if paths:
        git(repo, "add", "-A", "--", *paths)
    args = ["commit", "-q", "--no-verify", "--cleanup=verbatim"]
    if not paths:
        args.append("-a")
    msg = repo.parent / f".msg-{os.getpid()}"
    msg.write_text(message, encoding="utf-8", errors="surrogateescape")
    try:
        nohooks(repo, *args, "-F", str(msg), env=env)
    finally:
        msg.unlink()
    return sha(repo)


def sneak_state(repo: Path, agent: str, message: str, /, env: dict | None = None,
                **fields: str) -> str:
    """Hand-edit an agent's state file and commit it with every hook off."""
    edit_state(repo, agent, **fields)
    return sneak(repo, message, f"agent/{agent}/_state.md", env=env)


# --- the doors ----------------------------------------------------------------------------

def _set(x) -> set:
    return {x} if isinstance(x, str) else set(x)


def _matches(p: dict, commits, rules) -> bool:
    return p.get("commit") in _set(commits) and p.get("rule") in _set(rules)


def verify_json(repo: Path, *args: str) -> tuple[int, list[dict]]:
    res = gitstate(repo, "verify", *args, "--json")
    assert res.returncode in (0, 1), \
        f"`gitstate verify {' '.join(args)} --json` exited {res.returncode}:\n{res.stderr}"
    return res.returncode, json.loads(res.stdout)["problems"]


def assert_verify_flags(repo: Path, *expected: tuple[str, object], args: tuple = ()) -> None:
    """`verify` (text, cached) and `verify --no-cache --json` both exit 1 and flag each
    (commit, rule) of `expected` (commit: a sha or a set of shas, rule: an id or a set of ids;
    any of a set will do)."""
    res = gitstate(repo, "verify", *args)
    shown = out(res)
    assert res.returncode == 1, f"`gitstate verify` accepted the history:\n{shown}"
    for commits, rules in expected:
        wanted, short = sorted(_set(rules)), sorted(c[:10] for c in _set(commits))
        lines = [ln for ln in res.stdout.splitlines() if any(c in ln for c in short)]
        assert any(f"[{r}]" in ln for ln in lines for r in wanted), \
            f"`gitstate verify` did not flag {short} with {wanted}:\n{shown}"
    rc, problems = verify_json(repo, "--no-cache", *args)
    assert rc == 1, "`gitstate verify --no-cache` accepted the history"
    for commits, rules in expected:
        assert any(_matches(p, commits, rules) for p in problems), \
            f"`verify --no-cache` did not flag {sorted(c[:10] for c in _set(commits))} with " \
            f"{sorted(_set(rules))}: {[(p['commit'][:10], p['rule']) for p in problems]}"


def assert_push_refused(work: Path, hub: Path, rules, *push_args: str) -> str:
    """The hub refuses the push, names the rule(s) (an id, or a set of ids any of which will
    do; or a list of such, all required), and none of its refs moves."""
    before = refs(hub)
    res = git(work, "push", "origin", *(push_args or ("main",)), check=False)
    assert res.returncode != 0, f"the hub accepted the push:\n{res.stderr}"
    for want in (rules if isinstance(rules, list) else [rules]):
        wanted = _set(want)
        assert any(f"[{r}]" in res.stderr for r in wanted), \
            f"the hub's refusal does not name {sorted(wanted)}:\n{res.stderr}"
    assert refs(hub) == before, "a refused push moved a ref of the hub"
    return res.stderr


def assert_local_refusal(repo: Path, res: subprocess.CompletedProcess, rules,
                         branch: str, before: str) -> None:
    """A git command that would have moved `branch` to an illegal commit failed, said why, and
    left the branch where it was."""
    text = out(res)
    assert sha(repo, f"refs/heads/{branch}") == before, \
        f"the branch moved to an illegal commit; git said:\n{text}"
    assert res.returncode != 0, f"git reported success:\n{text}"
    for want in (rules if isinstance(rules, list) else [rules]):
        wanted = _set(want)
        assert any(f"[{r}]" in text for r in wanted), \
            f"the refusal does not name {sorted(wanted)}:\n{text}"


def now() -> int:
    return int(time.time())


def date_env(ts: int) -> dict:
    stamp = f"@{ts} +0000"
    return {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}


# --- plumbing -----------------------------------------------------------------------------

def tree_with(repo: Path, base: str | None, files: dict[str, str]) -> str:
    """The tree of `base` (None: empty) with `files` (path -> text) written into it, made with
    a private index (`hash-object -w`, `update-index`, `write-tree`): work tree untouched."""
    index = repo.parent / f".index-{os.getpid()}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        if base:
            run_git(repo, "read-tree", base, env=env)
        for path, text in files.items():
            blob = run_git(repo, "hash-object", "-w", "--stdin", input=text).stdout.strip()
            run_git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}",
                    env=env)
        return run_git(repo, "write-tree", env=env).stdout.strip()
    finally:
        if index.exists():
            index.unlink()


def commit_tree(repo: Path, tree: str, message: str, *parents: str,
                env: dict | None = None) -> str:
    args = ["commit-tree", tree]
    for p in parents:
        args += ["-p", p]
    return run_git(repo, *args, "-m", message, env=env).stdout.strip()


def move_branch(repo: Path, commit: str, branch: str = "main") -> None:
    """Point a branch at a crafted commit (hooks off) and bring the work tree along."""
    nohooks(repo, "update-ref", f"refs/heads/{branch}", commit)
    nohooks(repo, "reset", "-q", "--hard", commit)


# --- shared stories -----------------------------------------------------------------------

def two_architects(work) -> None:
    """`side` spawns a2 as architect, main spawns a1 as architect; main checked out."""
    git(work, "checkout", "-q", "-b", "side")
    with moves_on_this_branch(work, "side"):
        gs(work, "spawn", "a2", "--role", "architect")
    git(work, "checkout", "-q", "main")
    gs(work, "spawn", "a1", "--role", "architect")


def divergent_fork(work) -> None:
    """alice in inbox; `side` records progress in inbox, main moves her to distill."""
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox")
    git(work, "checkout", "-q", "-b", "side")
    with moves_on_this_branch(work, "side"):
        gs(work, "transition", "alice", "inbox", "-m", "progress", "--set",
           "thread=side-work")
    git(work, "checkout", "-q", "main")
    walk(work, "alice", "distill")
