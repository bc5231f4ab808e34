"""How fast gitstate derives its views from long histories, against a git floor.

For each synthetic repository (made by bench/gen.py if missing) it measures, in one run:
  floor           git log --grep='\\[STATE:' --format=%H%x1f%ct%x1f%an%x1f%s
  roster cold     gitstate roster --json, with the index under .git/gitstate removed
  roster warm     gitstate roster --json after 100 new commits (the index from the last read)
  verify cold     gitstate verify, with no saved result (each run beside its floor,
                  git log --format=%H%x1f%s --raw -- agent/)
  verify warm     gitstate verify after 100 new commits

    .venv/bin/python bench/history.py [--sizes 10000,100000] [--runs 3] [--against PYTHON]

`--against PYTHON` times the cold verify of another gitstate (the one PYTHON imports) in the
same runs, alternating with this one's; CPU is that of verify and the git it starts.

Targets (issue "Everything else from git log"): roster cold <= 1.5x floor on 100k commits;
roster warm <= 150 ms and flat as history grows; verify cold <= 3x floor on 100k commits.
"""

from __future__ import annotations

import argparse
import json
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
from gen import generate, state_text  # noqa: E402

FLOOR = ["git", "log", r"--grep=\[STATE:", "--format=%H%x1f%ct%x1f%an%x1f%s"]
# the cheapest git command that lists every change of a state file: verify's floor
PATH_FLOOR = ["git", "log", "--format=%H%x1f%s", "--raw", "--", "agent/"]
# what a person types: the `gitstate` command pip installs beside this Python (`python -m`
# would add `runpy`'s imports, ~2 ms, that no installed command pays)
_COMMAND = Path(sys.executable).parent / "gitstate"
GITSTATE = [str(_COMMAND)] if _COMMAND.is_file() else [sys.executable, "-m", "gitstate"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: Path) -> tuple[float, bytes]:
    return timed_cpu(cmd, cwd)[::2]


def timed_cpu(cmd: list[str], cwd: Path) -> tuple[float, float, bytes]:
    """(seconds, CPU seconds of the command and every process it waited for, stdout)."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, env=ENV)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu, proc.stdout


def append_commits(repo: Path, n: int, serial: int) -> None:
    """n new legal commits on main: progress updates of living agents and ordinary work."""
    view = json.loads(subprocess.run(GITSTATE + ["roster", "--json"], cwd=repo, env=ENV,
                                     capture_output=True, check=True).stdout)
    living = view["living"][:50]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.strip()
    t = int(subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=repo, capture_output=True,
                           text=True, check=True).stdout)
    chunks = []
    for i in range(n):
        t += 30
        if i % 3 == 2 or not living:
            msg, path = f"bench work {serial}-{i}\n", f"src/bench{i % 7}.txt"
            data = f"{serial}-{i}\n".encode()
        else:
            r = living[i % len(living)]
            msg = f"@{r['agent']}: [STATE:{r['state']}] bench progress {serial}-{i}\n"
            path = f"agent/{r['agent']}/_state.md"
            data = state_text(r["agent"], r["state"], r["role"], 10_000 + i, {})
        m = msg.encode()
        chunks.append(b"commit refs/heads/main\n")
        chunks.append(f"committer Bench <bench@example.invalid> {t} +0000\n".encode())
        chunks.append(f"data {len(m)}\n".encode() + m + b"\n")
        if i == 0:
            chunks.append(f"from {head}\n".encode())
        chunks.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(chunks),
                   check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=repo, check=True)


def bench_repo(source: Path, runs: int, against: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-bench-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(source, repo, symlinks=True)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        cache = repo / ".git" / "gitstate"
        floor, cold = [], []
        for _ in range(runs):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(timed(GITSTATE + ["roster", "--json"], repo)[0])
            floor.append(timed(FLOOR, repo)[0])
        warm = []
        for i in range(runs):
            append_commits(repo, 100, i)
            warm.append(timed(GITSTATE + ["roster", "--json"], repo)[0])
        verifies: dict[str, list[tuple[float, float]]] = {"now": [], "against": []}
        path_floors = []
        for _ in range(runs):   # each cold verify beside its floor, one after the other
            # ours last: the warm verify below goes on from what it kept
            for who, python in (("against", against), ("now", sys.executable)):
                if python is not None:
                    shutil.rmtree(cache, ignore_errors=True)
                    seconds, cpu, _out = timed_cpu([python, "-m", "gitstate", "verify"], repo)
                    verifies[who].append((seconds, cpu))
            path_floors.append(timed(PATH_FLOOR, repo)[0])
        path_floor = statistics.median(path_floors)
        verify_cold = statistics.median(s for s, _ in verifies["now"])
        verify_cpu = statistics.median(c for _, c in verifies["now"])
        theirs = (statistics.median(s for s, _ in verifies["against"]),
                  statistics.median(c for _, c in verifies["against"])) if against else None
        append_commits(repo, 100, runs)
        verify_warm = timed(GITSTATE + ["verify"], repo)[0]
        count = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo,
                                   capture_output=True, text=True).stdout)
    f = statistics.median(floor)
    return {"commits": count, "floor_s": f, "roster_cold_s": statistics.median(cold),
            "roster_cold_x": statistics.median(cold) / f,
            "roster_warm_ms": statistics.median(warm) * 1000,
            "verify_cold_s": verify_cold, "verify_cold_x": verify_cold / path_floor,
            "verify_cpu_s": verify_cpu, "against": theirs,
            "path_floor_s": path_floor,
            "verify_warm_ms": verify_warm * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--against", metavar="PYTHON",
                        help="also time the cold verify of the gitstate this Python imports, "
                             "in the same runs (each beside the floor)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, median of {args.runs} runs")
    print(f"{'commits':>8} {'floor':>7} {'roster cold':>12} {'warm+100':>9} "
          f"{'path floor':>10} {'verify cold':>12} {'verify+100':>10}")
    for size in (int(s) for s in args.sizes.split(",")):
        source = args.out / f"repo-{size}"
        if not source.is_dir():
            print(f"generating {source} ...", file=sys.stderr)
            generate(source, size, 1000)
        r = bench_repo(source, args.runs, args.against)
        print(f"{r['commits']:>8} {r['floor_s']:>6.2f}s {r['roster_cold_s']:>6.2f}s "
              f"({r['roster_cold_x']:.2f}x) {r['roster_warm_ms']:>6.0f}ms "
              f"{r['path_floor_s']:>9.2f}s {r['verify_cold_s']:>6.2f}s "
              f"({r['verify_cold_x']:.2f}x) "
              f"{r['verify_warm_ms']:>7.0f}ms")
        print(f"{'':>8} verify cold CPU (with its git): {r['verify_cpu_s']:.2f}s")
        if r["against"] is not None:
            seconds, cpu = r["against"]
            print(f"{'':>8} against {args.against}: verify cold {seconds:.2f}s "
                  f"({seconds / r['path_floor_s']:.2f}x), CPU {cpu:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
