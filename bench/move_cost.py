"""The client's cost per move: CPU of `gitstate transition AGENT STATE --push` in all the
client's processes (gitstate, its git processes, the hooks they run), and of the same move
without `--push`, beside `python -c pass` of the same interpreter.

The hub is a bare repository made by `gitstate init --server` on this machine, reached by
path: its processes (git-receive-pack and upload-pack, and everything they start: the hub's
hooks) are children of the client's `git push`/`git fetch` too, so their CPU is taken out
(each is started through a shell wrapper that appends its children's times to a file). What is
left is what a client pays wherever its hub is. The git processes are counted from git's own
trace (GIT_TRACE2_EVENT), the hub's left out. Run from the repository root:

    .venv/bin/python bench/move_cost.py [--runs 10] [--against [LABEL=]PYTHON ...] [--show]

`--against` may be given several times (e.g. the release before and the branch before a
change: an interpreter, or a script that runs one with another PYTHONPATH); all are measured
in the same run, taking turns, so the machine's load falls on each alike.

Target (issue 39): one `--push` move <= 0.2 s of CPU in all the client's processes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_PUSH_S = 0.2
CYCLE = {"bootstrap": "inbox", "inbox": "distill", "distill": "idle", "idle": "inbox"}
WRAPPER = """#!/bin/sh
{command} "$@"; rc=$?
times >> {out}
exit $rc
"""


def sh(cwd: Path, *args: str, env: dict | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed in {cwd}: {proc.stderr}")
    return proc.stdout


def identify(repo: Path) -> None:
    for k, v in (("user.name", "bench"), ("user.email", "bench@example.invalid"),
                 ("commit.gpgsign", "false")):
        sh(repo, "git", "config", k, v)


def setup(root: Path, python: str) -> tuple[Path, Path, Path]:
    """A hub (`init --server`) holding alice, a clone `pusher` that moves her with `--push`,
    and a clone `local` that moves bob without. Returns (pusher, local, hub times file)."""
    root.mkdir(parents=True)
    hub = root / "hub.git"
    sh(root, "git", "init", "-q", "--bare", "-b", "main", str(hub))
    sh(hub, python, "-m", "gitstate", "init", "--server")
    seed = root / "seed"
    sh(root, "git", "init", "-q", "-b", "main", str(seed))
    identify(seed)
    (seed / "README").write_text("hello\n")
    sh(seed, "git", "add", "README")
    sh(seed, "git", "commit", "-q", "-m", "first")
    sh(seed, python, "-m", "gitstate", "init", "--human", "bench")
    sh(seed, "git", "push", "-q", str(hub), "main")
    times = root / "hub-times"
    for name in ("receive-pack", "upload-pack"):
        wrapper = root / f"{name}.sh"
        wrapper.write_text(WRAPPER.format(command=f"git-{name}", out=times))
        wrapper.chmod(0o755)
    clones = []
    for name, agent in (("pusher", "alice"), ("local", "bob")):
        clone = root / name
        sh(root, "git", "clone", "-q", str(hub), str(clone))
        identify(clone)
        sh(clone, python, "-m", "gitstate", "init", "--human", "bench")
        for name in ("receive-pack", "upload-pack"):
            sh(clone, "git", "config", f"remote.origin.{name.replace('-', '')}",
               str(root / f"{name}.sh"))
        sh(clone, python, "-m", "gitstate", "spawn", agent)
        clones.append(clone)
    sh(clones[0], python, "-m", "gitstate", "sync")   # alice lands: the pusher is in step
    return clones[0], clones[1], times


def hub_cpu(times: Path) -> float:
    """Seconds of CPU the hub's processes have spent so far (their wrappers' children)."""
    if not times.exists():
        return 0.0
    total = 0.0
    lines = times.read_text().splitlines()
    for line in lines[1::2]:   # each `times`: the shell's own line, then its children's
        total += sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", line))
    return total


def git_processes(trace: Path) -> collections.Counter:
    """The client's git processes by command, from a GIT_TRACE2_EVENT file (the hub's, under
    receive-pack and upload-pack, left out)."""
    starts, hub = {}, []
    for line in (trace.read_text() if trace.exists() else "").splitlines():
        event = json.loads(line)
        if event["event"] == "start":
            starts[event["sid"]] = event["argv"]
            if any(w in " ".join(event["argv"][:2]) for w in ("receive-pack", "upload-pack")):
                hub.append(event["sid"])
    counts: collections.Counter = collections.Counter()
    for sid, argv in starts.items():
        if any(sid.startswith(h) for h in hub):
            continue
        counts[command_of(argv)] += 1
    return counts


def command_of(argv: list[str]) -> str:
    """`git -c x=y -C dir cat-file --batch ...` -> `cat-file`."""
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    name = args[i] if i < len(args) else "?"
    return name.rsplit("/", 1)[-1]


def timed(cwd: Path, args: list[str], times: Path | None,
          trace: Path) -> tuple[float, float, collections.Counter, float]:
    """(wall s, the client's CPU s, its git processes, the hub's CPU s) of one command."""
    trace.unlink(missing_ok=True)
    hub0 = hub_cpu(times) if times else 0.0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "GIT_TRACE2_EVENT": str(trace)})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    hub = hub_cpu(times) - hub0 if times else 0.0
    return wall, cpu - hub, git_processes(trace), hub


def compile_gitstate(python: str) -> None:
    subprocess.run([python, "-c", "import compileall, os, gitstate; compileall.compile_dir("
                    "os.path.dirname(gitstate.__file__), quiet=1)"], check=True, cwd="/")


def measure(runs: int, pythons: dict[str, str]) -> dict[str, dict]:
    for python in pythons.values():
        compile_gitstate(python)
    with tempfile.TemporaryDirectory(prefix="gitstate-move-cost-") as tmp:
        root = Path(tmp)
        trace = root / "trace.json"
        made = {label: setup(root / label, py) for label, py in pythons.items()}
        state = {label: {"alice": "bootstrap", "bob": "bootstrap"} for label in pythons}
        samples: dict = {label: collections.defaultdict(list) for label in pythons}
        procs: dict = {label: {} for label in pythons}
        for _ in range(runs):
            for label, py in pythons.items():
                pusher, local, times = made[label]
                s = samples[label]
                s["python -c pass"].append(timed(root, [py, "-c", "pass"], None, trace))
                for kind, clone, agent, extra in (("push", pusher, "alice", ["--push"]),
                                                  ("local", local, "bob", [])):
                    to = CYCLE[state[label][agent]]
                    got = timed(clone, [py, "-m", "gitstate", "transition", agent, to,
                                        *extra], times if extra else None, trace)
                    state[label][agent] = to
                    s[kind].append(got)
                    procs[label][kind] = got[2]
        out: dict = {}
        for label in pythons:
            out[label] = {kind: {"wall_s": statistics.median(x[0] for x in xs),
                                 "cpu_s": statistics.median(x[1] for x in xs),
                                 "hub_cpu_s": statistics.median(x[3] for x in xs),
                                 "git": sum(procs[label].get(kind, {}).values()),
                                 "by_command": dict(procs[label].get(kind, {}))}
                          for kind, xs in samples[label].items()}
        return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--against", metavar="[LABEL=]PYTHON", action="append", default=[],
                        help="also measure the gitstate of this Python (before/after); "
                        "several times for several")
    parser.add_argument("--show", action="store_true",
                        help="list the git processes of each move by command")
    args = parser.parse_args()
    pythons = {"now": sys.executable}
    for n, given in enumerate(args.against):
        label, _, python = given.rpartition("=")
        pythons[label or ("against" if n == 0 else f"against{n + 1}")] = python
    load0 = os.getloadavg()[0]
    results = measure(args.runs, pythons)
    git_version = subprocess.run(["git", "--version"], capture_output=True,
                                 text=True).stdout.split()[-1]
    print(f"python {sys.version.split()[0]}, git {git_version}, {os.cpu_count()} cores, "
          f"load {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, median of "
          f"{args.runs} runs each")
    print(f"{'':<9}{'move':<16}{'wall':>8}{'CPU':>8}{'git':>6}{'hub CPU':>9}")
    worst = 0
    for label, kinds in results.items():
        for kind, r in kinds.items():
            verdict = ""
            if kind == "push":
                verdict = "ok" if r["cpu_s"] <= TARGET_PUSH_S else "OVER"
                worst |= label == "now" and verdict != "ok"
            hub = f"{r['hub_cpu_s'] * 1000:>7.0f}ms" if kind == "push" else " " * 9
            print(f"{label:<9}{kind:<16}{r['wall_s'] * 1000:>6.0f}ms{r['cpu_s'] * 1000:>6.0f}ms"
                  f"{r['git']:>6}{hub}  {verdict}")
            if args.show and r["by_command"]:
                listed = sorted(r["by_command"].items(), key=lambda kv: (-kv[1], kv[0]))
                print(" " * 11 + ", ".join(f"{c} {n}" for c, n in listed))
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
