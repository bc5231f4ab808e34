"""How long each read command takes, warm, on a long history: with no new commits since the
last read, and after 100 new ones (50 agents' progress updates and ordinary work).

    .venv/bin/python bench/reads.py [--size 100000] [--runs 5] [--only inbox --only log]
    .venv/bin/python bench/reads.py --against /tmp/base      # beside an older tree

Each figure is the wall time of the whole `gitstate CMD` process (median of --runs), in its
text form and with `--json`, bytecode cache enabled, with the CPU time it and its git
children took beside it (what a loaded machine changes least). Targets (issue "Near the
floor"): <= 60 ms with no new commits, <= 100 ms after 100 new commits, at 100,000 commits
and 1,000 agents, for every view in both forms.

`--against DIR`: a tree holding another `gitstate` package (`git archive main gitstate | tar
-x -C DIR`), run through PYTHONPATH in the same repository, each run right after this tree's
(what each keeps under .git/gitstate under its own names it keeps; what both keep alike they
share), so that both see the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen import generate  # noqa: E402
from history import ENV, GITSTATE, append_commits  # noqa: E402


def commands(repo: Path) -> list[list[str]]:
    view = json.loads(subprocess.run(GITSTATE + ["roster", "--json"], cwd=repo, env=ENV,
                                     capture_output=True, check=True).stdout)
    agent = view["living"][0]["agent"]
    cmds = [["status"], ["status", agent], ["roster"], ["vacancies"], ["inbox", agent],
            ["log", agent, "-n", "20"], ["log", "-n", "20"], ["log"]]
    if view["freezer"]:
        cmds.append(["show", view["freezer"][0]["agent"]])
    return cmds + [["situations", "--no-sqlite"]]


def run(cmd: list[str], repo: Path, tree: str | None) -> tuple[float, float]:
    """(wall, CPU) seconds of `gitstate CMD` (of the package in `tree`, when given)."""
    env = {**ENV, "PYTHONPATH": tree} if tree else ENV
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(GITSTATE + cmd, cwd=repo, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _measure(cmd: list[str], repo: Path, trees: list, runs: int, serial: int) -> None:
    """One command's row (and the other tree's beside it): `runs` times with no new commits,
    then `runs` times after 100 new ones."""
    still: dict = {tree: [] for tree in trees}
    fresh: dict = {tree: [] for tree in trees}
    for _ in range(runs):
        for tree in trees:
            still[tree].append(run(cmd, repo, tree))
    for i in range(runs):
        append_commits(repo, 100, serial + i + 1)
        for tree in trees:
            fresh[tree].append(run(cmd, repo, tree))
    label = " ".join("ID" if i == 1 and not w.startswith("-") else w for i, w in enumerate(cmd))
    for tree in trees:
        cells = [_cell(rows) for rows in (still[tree], fresh[tree])]
        print(f"{label if tree is None else '  against':<36} {cells[0]:>17} {cells[1]:>17}",
              flush=True)
    if os.getloadavg()[0] > 3:
        print(f"  (load {os.getloadavg()[0]:.1f})", flush=True)


def _cell(rows: list[tuple[float, float]]) -> str:
    """Median wall (median CPU) of `rows`, in ms."""
    return (f"{statistics.median(w for w, _ in rows) * 1000:.0f} "
            f"({statistics.median(c for _, c in rows) * 1000:.0f}) ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--only", action="append", metavar="COMMAND",
                        help="only this command (e.g. inbox, log); repeat for more")
    parser.add_argument("--against", metavar="DIR",
                        help="a tree holding another gitstate package, measured beside")
    args = parser.parse_args()
    source = args.out / f"repo-{args.size}"
    if not source.is_dir():
        print(f"generating {source} ...", file=sys.stderr)
        generate(source, args.size, 1000)
    trees = [None] + ([str(Path(args.against).resolve())] if args.against else [])
    for tree in trees[1:]:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(tree) / "gitstate")],
                       check=True)
    with tempfile.TemporaryDirectory(prefix="gitstate-reads-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(source, repo, symlinks=True)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        cmds = [c + form for c in commands(repo) for form in ([], ["--json"])
                if not args.only or c[0] in args.only]
        for cmd in cmds:                                  # every cache warm
            for tree in trees:
                run(cmd, repo, tree)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.size} commits, "
              f"median of {args.runs} runs, load {os.getloadavg()[0]:.1f}; wall (CPU)")
        print(f"{'command':<36} {'no new commits':>17} {'+100 commits':>17}")
        for serial, cmd in enumerate(cmds):
            _measure(cmd, repo, trees, args.runs, 1000 + serial * args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
