"""Hubs for the tests of `--push` and the landing queue: a bare hub made by `gitstate init
--server` with a managed history, and clones of it (copies of ones built once per session)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import from_template, git, gitstate, managed_repo


def make_hub(path: Path) -> Path:
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    assert gitstate(path, "init", "--server").returncode == 0
    return path


def without_queue(hub: Path) -> None:
    """The hub judges pushes but keeps no landing queue (as one made before it had one)."""
    git(hub, "update-ref", "-d", "refs/gitstate/hub")
    git(hub, "config", "--unset", "receive.procReceiveRefs")


def hub_and_clones(tmp_path: Path, n: int = 2, *,
                   queue: bool = True) -> tuple[Path, list[Path]]:
    """A hub with `init --server`, its managed history pushed from tmp_path/seed, and `n`
    managed clones of it (a copy of the ones built once per session)."""
    from_template(tmp_path, ("hub_and_clones", n), lambda root: _hub_and_clones(root, n))
    if not queue:
        without_queue(tmp_path / "hub.git")
    return tmp_path / "hub.git", [tmp_path / f"c{i}" for i in range(n)]


def seeded(tmp_path: Path, hub: Path) -> Path:
    """tmp_path/seed: a managed repository whose main is pushed to `hub` and tracks it."""
    seed = managed_repo(tmp_path / "seed")
    git(seed, "remote", "add", "origin", str(hub))
    git(seed, "push", "-q", "-u", "origin", "main")
    return seed


def _hub_and_clones(tmp_path: Path, n: int) -> None:
    hub = make_hub(tmp_path / "hub.git")
    seeded(tmp_path, hub)
    for i in range(n):
        c = tmp_path / f"c{i}"
        git(tmp_path, "clone", "-q", str(hub), str(c))
        git(c, "config", "commit.cleanup", "verbatim")
        res = gitstate(c, "init")
        assert res.returncode == 0, res.stderr


def pushed(repo: Path, *args: str) -> tuple[int, dict]:
    """(exit code, how the move landed): the `push` of the move's `--json` record, with the
    record itself under `move` (a refusal's record, or stderr, as it is)."""
    res = gitstate(repo, *args, "--push", "--json")
    if res.returncode != 0:   # shown with a failing test's captured output: what went wrong
        print(f"gitstate {' '.join(args)} --push --json: exit {res.returncode}\n"
              f"stdout: {res.stdout[:3000]}\nstderr: {res.stderr[:3000]}")
    if not res.stdout.strip():
        return res.returncode, {"stderr": res.stderr}
    out = json.loads(res.stdout)
    return res.returncode, {**out["push"], "move": out} if "push" in out else out


def hub_subjects(hub: Path) -> list[str]:
    return git(hub, "log", "--format=%s", "main").stdout.splitlines()
