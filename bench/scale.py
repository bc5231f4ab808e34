"""How the reads grow with the history: cold and warm figures and peak memory on one large
generated repository (bench/gen.py), each beside its git floor.

    .venv/bin/python bench/scale.py --size 1000000 --agents 10000 [--out bench/out]

For each command: wall time cold (nothing under .git/gitstate) and warm (median of --runs, no
new commits), and the peak resident memory of the whole process as the kernel reports it for
a command and everything it waited for (`wait4`: the larger of gitstate's own Python and its
largest git child), with Python's own peak beside it.
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


def run(cmd: list[str], repo: Path) -> tuple[float, float, float | None]:
    """(seconds, peak MB of the process and what it waited for, peak MB of Python itself)."""
    gitstate = cmd[:len(GITSTATE)] == GITSTATE
    if gitstate:
        cmd = [sys.executable, "-c", _PEAK, *cmd[len(GITSTATE):]]
    r, w = os.pipe()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=repo, env={**ENV, "PEAK_FD": str(w)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            pass_fds=(w,) if gitstate else ())
    os.close(w)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    own = os.read(r, 64)
    os.close(r)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed")
    return elapsed, usage.ru_maxrss / 1024, int(own) / 1024 if own else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--no-verify", action="store_true",
                        help="leave out verify and its floor (at 1,000,000 commits and 10,000 "
                             "agents the floor alone, `git log --raw`, takes minutes)")
    args = parser.parse_args()
    source = args.out / f"repo-{args.size}"
    if not source.is_dir():
        print(f"generating {source} ...", file=sys.stderr)
        generate(source, args.size, args.agents)
    with tempfile.TemporaryDirectory(prefix="gitstate-scale-") as tmp:
        repo = Path(tmp) / "repo"
        # hard links: a large history's objects are not copied (git replaces files, never
        # writes into them; what the reads write goes to new files under .git/gitstate)
        shutil.copytree(source, repo, symlinks=True, copy_function=os.link)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        cache = repo / ".git" / "gitstate"
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.size:,} "
              f"commits, {args.agents:,} agents, load {os.getloadavg()[0]:.1f}")
        print(f"{'command':<30} {'cold':>9} {'warm':>9} {'peak MB':>8} {'python MB':>10}")
        floors = [("floor: git log --grep", FLOOR)]
        if not args.no_verify:
            floors.append(("floor: git log --raw", PATH_FLOOR))
        for name, cmd in floors:
            t, peak, _ = run(cmd, repo)
            print(f"{name:<30} {t:>8.2f}s {'':>9} {peak:>8.0f}", flush=True)
        if not args.no_verify:
            shutil.rmtree(cache, ignore_errors=True)
            t, peak, own = run(GITSTATE + ["verify", "--no-cache"], repo)
            print(f"{'verify --no-cache':<30} {t:>8.2f}s {'':>9} {peak:>8.0f} {own or 0:>10.0f}",
                  flush=True)
        agent = "agent-0001"
        for cmd in (["roster"], ["status"], ["status", agent], ["vacancies"], ["inbox", agent],
                    ["log", agent, "-n", "20"], ["log", "-n", "20"],
                    ["situations", "--no-sqlite"], ["log"], ["log", "--json"]):
            if cmd == ["roster"]:
                shutil.rmtree(cache, ignore_errors=True)
            cold, peak, own = run(GITSTATE + cmd, repo)
            warm = statistics.median(run(GITSTATE + cmd, repo)[0] for _ in range(args.runs))
            label = " ".join("ID" if w == agent else w for w in cmd)
            print(f"{label:<30} {cold:>8.2f}s {warm * 1000:>7.0f}ms {peak:>8.0f} "
                  f"{own or 0:>10.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
