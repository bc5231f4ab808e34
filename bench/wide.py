"""One commit that spawns N agents at once: what each door costs to refuse it.

One commit moves one agent (`multiple-agents`), so such a commit is illegal however it was
made; here it is made in a clone with every hook off (`git fast-import`, the agents' state
files copied from a spawned agent's with the id changed) and then

- pushed to a hub made with `gitstate init --server` (the whole `git push`, refused);
- audited by `gitstate verify --no-cache` (text) and `gitstate verify --no-cache --json`,
  each a whole process.

The target: every door's judgement linear in the commit's size, and the 10,000-agent commit
refused in under 2 s. Each door is timed as a whole process (wall), with the CPU time of it
and everything it waited for beside it (on a shared machine the CPU time is the steadier
figure). Run from the repository root:

    .venv/bin/python bench/wide.py [--agents 1000,10000] [--runs 3] [--role ROLE]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


def sh(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return proc


def gitstate(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return sh(cwd, sys.executable, "-m", "gitstate", *args, check=check)


def wide_commit(work: Path, agents: int, role: str | None = None) -> str:
    """A commit on top of HEAD spawning `agents` agents at once (every hook off): each state
    file is alice's with the id changed (and `role` set, if given). Returns its id."""
    alice = (work / "agent" / "alice" / "_state.md").read_text()
    if role:
        alice = alice.replace("\nrole: null\n", f"\nrole: {role}\n")
    head = sh(work, "git", "rev-parse", "HEAD").stdout.strip()
    width = len(str(agents))
    ids = [f"w{i:0{width}d}" for i in range(agents)]
    msg = f"@{ids[0]}: [STATE:bootstrap] spawned {agents} at once".encode()
    parts = [b"commit refs/heads/main\n",
             f"committer Bench <bench@example.invalid> {int(time.time())} +0000\n".encode(),
             f"data {len(msg)}\n".encode(), msg, b"\n", f"from {head}\n".encode()]
    for a in ids:
        text = alice.replace("agent: alice\n", f"agent: {a}\n").encode()
        parts += [f"M 100644 inline agent/{a}/_state.md\n".encode(),
                  f"data {len(text)}\n".encode(), text, b"\n"]
    subprocess.run(["git", *NO_HOOKS, "fast-import", "--quiet", "--force"], cwd=work,
                   input=b"".join(parts), check=True)
    return sh(work, "git", "rev-parse", "HEAD").stdout.strip()


def setup(root: Path, agents: int, role: str | None) -> tuple[Path, Path]:
    hub, work = root / "hub.git", root / "work"
    sh(root, "git", "init", "-q", "--bare", "-b", "main", str(hub))
    gitstate(hub, "init", "--server")
    sh(root, "git", "init", "-q", "-b", "main", str(work))
    for k, v in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        sh(work, "git", "config", k, v)
    (work / "README").write_text("hello\n")
    sh(work, "git", "add", "README")
    sh(work, "git", "commit", "-q", "-m", "first")
    gitstate(work, "init", "--human", "zach")
    gitstate(work, "spawn", "alice")
    sh(work, "git", "remote", "add", "origin", str(hub))
    sh(work, "git", "push", "-q", "origin", "main")
    wide_commit(work, agents, role)
    return hub, work


def timed(cwd: Path, *args: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, CPU seconds of the process and all it waited for, the process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, proc


def measure(agents: int, runs: int, role: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-wide-") as tmp:
        hub, work = setup(Path(tmp), agents, role)
        before = sh(hub, "git", "for-each-ref").stdout
        push, text, js = [], [], []
        for _ in range(runs):
            t, cpu, p = timed(work, "git", "push", "-q", "origin", "main")
            assert p.returncode != 0 and "[multiple-agents]" in p.stderr, p.stderr[-2000:]
            assert sh(hub, "git", "for-each-ref").stdout == before, "a refused push moved a ref"
            push.append((t, cpu, len(p.stderr.splitlines())))
            t, cpu, p = timed(work, sys.executable, "-m", "gitstate", "verify", "--no-cache")
            assert p.returncode == 1, p.stderr
            text.append((t, cpu, len(p.stdout.splitlines())))
            t, cpu, p = timed(work, sys.executable, "-m", "gitstate", "verify", "--no-cache",
                              "--json")
            assert p.returncode == 1, p.stderr
            js.append((t, cpu, p.stdout.count('"rule"')))
    return {"agents": agents, "push": _med(push), "verify": _med(text), "json": _med(js)}


def _med(runs: list[tuple]) -> tuple[float, float, int]:
    """(median wall, median CPU, what was printed) of a door's runs."""
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            runs[0][2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--role", default=None,
                        help="give every new agent this role (e.g. steward, max 1)")
    args = parser.parse_args()
    print(f"{'agents':>7} | {'push, refused':>21} | {'verify --no-cache':>21} | "
          f"{'verify --no-cache --json':>25}")
    print(f"{'':>7} | {'wall':>6} {'CPU':>6} {'lines':>7} | {'wall':>6} {'CPU':>6} {'lines':>7} "
          f"| {'wall':>6} {'CPU':>6} {'problems':>11}")
    for n in map(int, args.agents.split(",")):
        r = measure(n, args.runs, args.role)
        cells = [f"{r[k][0]:>5.2f}s {r[k][1]:>5.2f}s {r[k][2]:>{w},}"
                 for k, w in (("push", 7), ("verify", 7), ("json", 11))]
        print(f"{n:>7,} | " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
