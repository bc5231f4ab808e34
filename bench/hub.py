"""The hub's cost per push: time added by the pre-receive (and post-receive) hooks to a
`git push` of k state commits, on histories of 10,000 and 100,000 commits.

The target (issue "The law holds at every door") is a cost in proportion to what is pushed,
not to the history behind it. Each push is timed against the same push to a copy of the hub
without hooks; the difference is the hooks' cost. Run from the repository root:

    .venv/bin/python bench/hub.py [--sizes 10000,100000] [--pushes 5] [--commits 1,10]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEXT = {"bootstrap": "inbox", "inbox": "distill", "distill": "idle", "idle": "inbox",
        "deep_work": "inbox"}


def sh(cwd: Path, *args: str) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def history(size: int, out: Path) -> Path:
    repo = out / f"repo-{size}"
    if not repo.exists():
        sh(HERE.parent, sys.executable, str(HERE / "gen.py"), str(repo), "--commits", str(size))
    return repo


def moves(work: Path, k: int, n: int) -> None:
    """k legal state commits in `work`, by gitstate itself (living agents, one step each)."""
    rows = json.loads(sh(work, sys.executable, "-m", "gitstate", "status", "--json"))["agents"]
    living = [r for r in rows if r["roster"] == "living" and r["state"] in NEXT]
    for i in range(k):
        r = living[(n * k + i) % len(living)]
        sh(work, sys.executable, "-m", "gitstate", "transition", r["agent"], NEXT[r["state"]],
           "-m", f"bench push {n}")
        r["state"] = NEXT[r["state"]]


def timed_push(work: Path, remote: str) -> float:
    t0 = time.perf_counter()
    sh(work, "git", "push", "-q", remote, "HEAD:main")
    return time.perf_counter() - t0


def measure(size: int, k: int, pushes: int, out: Path, against: str | None = None) -> dict:
    """Medians of pushes of k state commits to a hub without hooks, to one made by this
    gitstate, and (with `against`, another gitstate's Python) to one made by that one: in
    turn, push after push, so that both see the same load."""
    source = history(size, out)
    with tempfile.TemporaryDirectory(prefix="gitstate-hub-") as tmp:
        root = Path(tmp)
        hub, plain, other = root / "hub.git", root / "plain.git", root / "other.git"
        sh(root, "git", "clone", "-q", "--bare", str(source), str(hub))
        shutil.copytree(hub, plain)
        if against:
            shutil.copytree(hub, other)
            sh(other, against, "-m", "gitstate", "init", "--server")
        sh(hub, sys.executable, "-m", "gitstate", "init", "--server")
        work = root / "work"
        sh(root, "git", "clone", "-q", str(hub), str(work))
        for k_, v in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
            sh(work, "git", "config", k_, v)
        sh(work, "git", "remote", "add", "plain", str(plain))
        if against:
            sh(work, "git", "remote", "add", "other", str(other))
        with_hooks, without, theirs = [], [], []
        for n in range(pushes):
            moves(work, k, n)
            without.append(timed_push(work, "plain"))
            with_hooks.append(timed_push(work, "origin"))
            if against:
                theirs.append(timed_push(work, "other"))
        base = statistics.median(without)
        added = statistics.median(with_hooks) - base
        return {"size": size, "k": k, "with_hooks_s": statistics.median(with_hooks),
                "without_s": base, "added_per_commit_ms": added / k * 1000,
                "against_added_per_commit_ms":
                    (statistics.median(theirs) - base) / k * 1000 if theirs else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--commits", default="1,10")
    parser.add_argument("--pushes", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--against", metavar="PYTHON",
                        help="also time a hub made by the gitstate of this Python (A/B)")
    args = parser.parse_args()
    args.out.mkdir(exist_ok=True)
    print(f"{'history':>9}{'pushed':>8}{'push, hooks':>13}{'push, none':>12}"
          f"{'added per commit':>18}" + (f"{'against: added':>16}" if args.against else ""))
    for size in map(int, args.sizes.split(",")):
        for k in map(int, args.commits.split(",")):
            r = measure(size, k, args.pushes, args.out, args.against)
            print(f"{size:>9}{k:>8}{r['with_hooks_s'] * 1000:>11.0f}ms"
                  f"{r['without_s'] * 1000:>10.0f}ms{r['added_per_commit_ms']:>16.0f}ms"
                  + (f"{r['against_added_per_commit_ms']:>14.0f}ms" if args.against else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
