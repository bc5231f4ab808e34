"""How the reads grow with the history: cold and warm figures and peak memory on one large
generated repository (bench/gen.py), each beside its git floor.

    .venv/bin/python bench/scale.py --size 1000000 --agents 10000 [--out bench/out]
    .venv/bin/python bench/scale.py --size 10000 --against /tmp/other   # beside another tree

"after": each view warm, then after +1, +10 and +100 new commits (added to the copies): the
"warm" column is the median of --runs, each after its own new commits.

For each command: wall time cold (nothing under .git/gitstate) and warm (median of --runs, no
new commits), each with the CPU time of the command and everything it waited for beside it
(what a loaded machine changes least), and the peak resident memory of the whole process as
the kernel reports it (`wait4`: the larger of gitstate's own Python and its largest git
child), with Python's own peak beside it.

`--against DIR`: a tree holding another `gitstate` package, run through PYTHONPATH on its own
copy of the repository, each run right after this tree's, so that both see the same load; or
the Python of another install (a venv's `bin/python`), run as it is.

"together MB": the largest sum, sampled every 50 ms, of the resident memory of the command and
every process under it (Python and its git processes at once).
"""

from __future__ import annotations

import argparse
import os
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
from history import ENV, FLOOR, GITSTATE, PATH_FLOOR  # noqa: E402

# Runs gitstate in this process and says its own peak memory on the fd $PEAK_FD.
_PEAK = ("import os, resource, sys\n"
         "from gitstate.__main__ import main\n"
         "try:\n    code = main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
         "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
         "os.write(int(os.environ['PEAK_FD']), str(peak).encode())\n"
         "sys.exit(code or 0)\n")


def run(cmd: list[str], repo: Path,
        tree: str | None = None) -> tuple[float, float, float, float | None, float]:
    """(seconds, CPU seconds, peak MB of the process and what it waited for, peak MB of
    Python itself, peak MB of it and its children together) of `cmd` (gitstate's: of the
    package in `tree`, or run by the Python `tree`, when given)."""
    gitstate = cmd[:len(GITSTATE)] == GITSTATE
    python = tree if tree and os.path.isfile(tree) else sys.executable
    if gitstate:
        cmd = [python, "-c", _PEAK, *cmd[len(GITSTATE):]]
    r, w = os.pipe()
    env = {**ENV, "PEAK_FD": str(w),
           **({"PYTHONPATH": tree} if tree and python == sys.executable else {})}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, pass_fds=(w,) if gitstate else ())
    os.close(w)
    together = _Together(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    together.done = True
    own = os.read(r, 64)
    os.close(r)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed")
    return (elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            int(own) / 1024 if own else None, together.peak / 2 ** 20)


class _Together:
    """The largest sum of resident memory of a process and its descendants, sampled by a
    thread every 50 ms (Linux: /proc) until `done`."""

    def __init__(self, pid: int) -> None:
        import threading
        self.pid, self.peak, self.done = pid, 0, False
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self.done:
            total = 0
            for pid in _tree(self.pid):
                try:
                    with open(f"/proc/{pid}/statm") as fh:
                        total += int(fh.read().split()[1]) * page
                except (OSError, ValueError, IndexError):
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.05)


def _tree(pid: int) -> list[int]:
    """`pid` and every process under it."""
    out = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                for child in fh.read().split():
                    out += _tree(int(child))
    except OSError:
        pass
    return out


def _row(label: str, cold: tuple, warm: list | None = None) -> None:
    cells = [f"{cold[0]:.2f}s ({cold[1] * 1000:.0f}ms)"]
    if warm is not None:
        cells.append(f"{statistics.median(w[0] for w in warm) * 1000:.0f} "
                     f"({statistics.median(w[1] for w in warm) * 1000:.0f})ms")
    own = f"{cold[3] or 0:>10.0f}" if cold[3] is not None else f"{'':>10}"
    print(f"{label:<30} {cells[0]:>17} {cells[1] if warm else '':>15} {cold[2]:>8.0f} {own} "
          f"{cold[4]:>11.0f}", flush=True)


def _views(trees: list, repos: dict, runs: int) -> None:
    """Each view cold (the first with nothing kept) and warm, tree after tree."""
    agent = "agent-0001"
    for cmd in (["roster"], ["status"], ["status", agent], ["vacancies"], ["inbox", agent],
                ["log", agent, "-n", "20"], ["log", "-n", "20"],
                ["situations", "--no-sqlite"], ["show", agent], ["status", "nobody"],
                ["log"], ["log", "--json"]):
        cold = {}
        for tree in trees:
            if cmd == ["roster"]:
                shutil.rmtree(repos[tree] / ".git" / "gitstate", ignore_errors=True)
            cold[tree] = run(GITSTATE + cmd, repos[tree], tree)
        warm: dict = {tree: [] for tree in trees}
        for _ in range(runs):
            for tree in trees:
                warm[tree].append(run(GITSTATE + cmd, repos[tree], tree))
        label = " ".join("ID" if w == agent else w for w in cmd)
        for tree in trees:
            _row(label if tree is None else "  against", cold[tree], warm[tree])


AFTER = (["roster"], ["roster", "--json"], ["status"], ["vacancies"])


def _add_commits(repo: Path, n: int, seed: int) -> None:
    """`n` commits, each a tagged move of one agent (its state file's summary changed), made
    with hooks off. The repository's files are hard links to the generated one's: a file is
    written anew beside and renamed over, never written into."""
    import random
    import re
    rnd = random.Random(seed)
    logs = repo / ".git" / "logs"
    if logs.is_dir() and not (repo / ".git" / "logs.own").exists():   # appended to by git
        shutil.copytree(logs, repo / ".git" / "logs.new")
        shutil.rmtree(logs)
        os.replace(repo / ".git" / "logs.new", logs)
        (repo / ".git" / "logs.own").touch()
    agents = subprocess.run(["git", "ls-tree", "--name-only", "HEAD", "agent/"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout.split()
    for i in range(n):
        agent = rnd.choice(agents).split("/")[-1]
        path = repo / "agent" / agent / "_state.md"
        text = path.read_text()
        state = re.search(r"^state: (\S+)", text, re.M)
        text = re.sub(r"^summary: .*$", f"summary: bench step {seed}-{i}", text, flags=re.M)
        path.with_suffix(".new").write_text(text)
        os.replace(path.with_suffix(".new"), path)
        for shared in ("COMMIT_EDITMSG", "ORIG_HEAD"):      # written into, not renamed over
            (repo / ".git" / shared).unlink(missing_ok=True)
        subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "commit",
                        "-qam", f"@{agent}: [STATE:{state.group(1) if state else 'idle'}] bench {i}"],
                       cwd=repo, check=True)


def _after_commits(trees: list, repos: dict, runs: int) -> None:
    """Each view warm, then read again after +1, +10, +100 new commits (made on the copies
    of the repository, never the generated one), tree after tree."""
    seed = 0
    for n in (1, 10, 100):
        for cmd in AFTER:
            found: dict = {tree: [] for tree in trees}
            for _ in range(runs):
                for tree in trees:
                    run(GITSTATE + cmd, repos[tree], tree)       # kept at the tip
                    seed += 1
                    _add_commits(repos[tree], n, seed)
                    found[tree].append(run(GITSTATE + cmd, repos[tree], tree))
            label = f"{' '.join(cmd)} after +{n}"
            for tree in trees:
                _row(label if tree is None else "  against", found[tree][0], found[tree])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--no-verify", action="store_true",
                        help="leave out verify and its floor (at 1,000,000 commits and 10,000 "
                             "agents the floor alone, `git log --raw`, takes minutes)")
    parser.add_argument("--against", metavar="DIR|PYTHON", action="append", default=[],
                        help="a tree holding another gitstate package, or the Python of "
                             "another install, measured beside (may be given more than once)")
    parser.add_argument("--only", metavar="WHAT", default="",
                        help="comma-separated: floors, verify, views, after (default: all)")
    args = parser.parse_args()
    source = args.out / f"repo-{args.size}"
    if not source.is_dir():
        print(f"generating {source} ...", file=sys.stderr)
        generate(source, args.size, args.agents)
    trees = [None] + [str(Path(a).absolute()) for a in args.against]
    for tree in trees[1:]:
        if not os.path.isfile(tree):
            subprocess.run([sys.executable, "-m", "compileall", "-q",
                            str(Path(tree) / "gitstate")], check=True)
    only = set(filter(None, args.only.split(","))) or {"floors", "verify", "views", "after"}
    with tempfile.TemporaryDirectory(prefix="gitstate-scale-") as tmp:
        repos = {}
        for i, tree in enumerate(trees):
            repos[tree] = repo = Path(tmp) / f"repo-{i}"
            # hard links: a large history's objects are not copied (git replaces files, never
            # writes into them; what the reads write goes to new files under .git/gitstate)
            shutil.copytree(source, repo, symlinks=True, copy_function=os.link)
            subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        started = run([sys.executable, "-c", "pass"], repos[None])[0]
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.size:,} "
              f"commits, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}, python -c "
              f"pass {started * 1000:.0f} ms; wall (CPU)")
        print(f"{'command':<30} {'cold':>17} {'warm':>15} {'peak MB':>8} {'python MB':>10} "
              f"{'together MB':>11}")
        floors = [("floor: git log --grep", FLOOR)] if "floors" in only else []
        if not args.no_verify and "floors" in only:
            floors.append(("floor: git log --raw", PATH_FLOOR))
        for name, cmd in floors:
            _row(name, run(cmd, repos[None]))
        for tree in trees if not args.no_verify and "verify" in only else ():
            shutil.rmtree(repos[tree] / ".git" / "gitstate", ignore_errors=True)
            _row("verify --no-cache" if tree is None else "  against",
                 run(GITSTATE + ["verify", "--no-cache"], repos[tree], tree))
        if "views" in only:
            _views(trees, repos, args.runs)
        if "after" in only:
            _after_commits(trees, repos, args.runs)
        print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
