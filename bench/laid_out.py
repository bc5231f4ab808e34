"""The whole `log`'s first print at a history's size without the history: Python's peak while
the plain log is laid out from the kept moves, for N moves (700,000: what 1,000,000 commits
of bench/gen.py hold), where generating such a repository takes an hour.

The moves come from a generator standing in for `git log` (`movelog.newest_events`: sha,
time, author, agent, state, text, newest first, over AGENTS agents); everything after it is
gitstate's own code: the moves packed and kept as parts (`history/movelog.py`), then the log
laid out and kept (`cli/printed.py`), in a small real repository whose HEAD they are kept at.

    .venv/bin/python bench/laid_out.py REPO --moves 700000 --agents 10000 [--json] [--kept]

`--kept`: the moves are kept first (a process of their own), so that the print reads them
back, as `log` does after `log ID` or `inbox ID` kept them; else both happen in one process.
Run it with another install's Python (`/path/.venv/bin/python bench/laid_out.py ...`) for the
figure before. It prints the seconds and Python's peak (ru_maxrss) of the process printing.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time


def events(n: int, agents: int):
    """n moves over `agents` agents, newest first, as `newest_events` yields them."""
    states = ("inbox", "distill", "deep_work", "idle")
    for i in range(n, 0, -1):
        agent = f"agent-{i % agents:04d}"
        yield (f"{i:040x}", 1_790_000_000 + i * 60, "Bench", agent, states[i % 4],
               f"step {i} of the work on thread {i % 37}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--moves", type=int, default=700_000)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--kept", action="store_true")
    parser.add_argument("--only-keep", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from gitstate.git.repo import open_managed
    from gitstate.history import movelog
    repo = open_managed(args.repo)
    movelog.newest_events = lambda *a, **k: events(args.moves, args.agents)  # type: ignore
    if args.only_keep:
        movelog.agent_moves(repo.git, repo.lifecycle(repo.head()), repo.head(),
                            repo.cache_dir, "agent-0001")
        return 0
    if args.kept:
        shutil.rmtree(repo.cache_dir, ignore_errors=True)
        subprocess.run([sys.executable, __file__, args.repo, "--moves", str(args.moves),
                        "--agents", str(args.agents), "--only-keep"], check=True)
    for name in ("log-text", "log-json") if os.path.isdir(repo.cache_dir) else ():
        shutil.rmtree(os.path.join(repo.cache_dir, name), ignore_errors=True)
    if not args.kept:
        shutil.rmtree(repo.cache_dir, ignore_errors=True)
    from gitstate.cli.printed import whole_log
    t0 = time.perf_counter()
    parts = whole_log(repo, args.json)
    took = time.perf_counter() - t0
    size = sum(len(p) for p in parts or ())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.moves:,} moves, {args.agents:,} agents, {'json' if args.json else 'text'}, "
          f"{'moves kept before' if args.kept else 'moves kept in the same process'}: "
          f"{took:.1f} s, {size / 2 ** 20:.0f} MB printed, Python's peak {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
