"""Added latency of gitstate's hooks (pre-commit + commit-msg together) on `git commit`.

For each kind of commit, the same commit is made alternately with the hooks and with hooks
switched off (`-c core.hooksPath=<empty dir>`); the added latency is the difference of the
medians. Run from the repository root with the project's Python:

    .venv/bin/python bench/hooks.py [--runs 30]

Beside its figures it prints `python -c pass` of the same interpreter (the floor under any hook
that starts Python), the load average, and the git processes one commit of each kind starts
(from git's trace, GIT_TRACE2_EVENT).

A state commit is judged by the resident judge (gitstate/doors/resident.py) once the first one
started it; each figure is also given without it (GITSTATE_JUDGE=0): what a commit costs when
no judge is running.

Targets: <= 10 ms for a commit touching no state file (commit hooks and the ref guard
together), <= 40 ms for a state commit, and a `git fetch` that the ref guard sees but need not
judge (it moves remote-tracking refs only): <= 10 ms.

The bytecode of the gitstate that runs is written first, as `pip install` does: with
PYTHONDONTWRITEBYTECODE in the environment and an editable install, every hook would compile
gitstate again (~25 ms), which no installed gitstate pays.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS_MS = {"ordinary": 10.0, "state": 40.0, "fetch": 10.0}


def sh(repo: Path, *args: str) -> None:
    subprocess.run(args, cwd=repo, check=True, capture_output=True)


def timed(repo: Path, args: list[str], hooks_off: str | None,
          env: dict | None = None, trace: Path | None = None) -> tuple[float, float]:
    """Milliseconds of one `git ARGS`, on the clock and of CPU (git and every process it
    started, user and system: what a busy machine does not inflate as much), with gitstate's
    hooks or with hooks switched off (or, with `env`, the hooks of another folder run by
    another gitstate). `trace`: git's trace of every git process is written there."""
    cmd = ["git"] + (["-c", f"core.hooksPath={hooks_off}"] if hooks_off else []) + args
    env = {**(env or {}), **({"GIT_TRACE2_EVENT": str(trace)} if trace else {})}
    before, judged = resource.getrusage(resource.RUSAGE_CHILDREN), judge_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **env} if env else None)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"git {args[0]} failed: {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed * 1000, cpu * 1000 + max(0.0, judge_cpu() - judged)


def judge_cpu() -> float:
    """Milliseconds of CPU the resident judges running now have used (gitstate/doors/resident.py:
    a process the hooks talk to, no child of the commit): counted in a commit's CPU."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else ()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"gitstate.doors.resident_server" not in fh.read():
                    continue
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            continue
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def setup(root: Path, python: str = sys.executable) -> Path:
    """A managed repository with alice in deep_work, made by `python`'s gitstate (with
    `--against`, the older one's: a newer lifecycle may hold fields an older gitstate does not
    read, e.g. `line:`; both judge the commits measured the same way)."""
    repo = root / "repo"
    repo.mkdir()
    sh(repo, "git", "init", "-q", "-b", "main")
    for k, v in (("user.name", "bench"), ("user.email", "bench@example.invalid"),
                 ("commit.gpgsign", "false")):
        sh(repo, "git", "config", k, v)
    sh(repo, python, "-m", "gitstate", "init", "--human", "bench")
    sh(repo, python, "-m", "gitstate", "spawn", "alice")
    for state in ("inbox", "distill", "deep_work"):
        sh(repo, python, "-m", "gitstate", "transition", "alice", state)
    if python != sys.executable:
        sh(repo, sys.executable, "-m", "gitstate", "init", "--human", "bench")   # our hooks
    return repo


def other_hooks(root: Path, python: str) -> Path:
    """The hooks another gitstate (its Python) installs for the same lifecycle."""
    other = root / "other"
    other.mkdir()
    sh(other, "git", "init", "-q", "-b", "main")
    sh(other, python, "-m", "gitstate", "init", "--no-commit", "--human", "zach")
    return other / ".git" / "hooks"


def git_processes(trace: Path) -> int:
    """The git processes a GIT_TRACE2_EVENT file names, but git's own housekeeping
    (`maintenance run --auto`, `gc --auto`), which runs now and then with or without hooks."""
    starts = [e["argv"] for e in map(json.loads, trace.read_text().splitlines())
              if e["event"] == "start"]
    return sum(not ({"maintenance", "gc"} & set(argv[1:3])) for argv in starts)


def python_pass(python: str) -> tuple[float, float]:
    """Milliseconds of `python -c pass`, on the clock and of CPU: the floor under any hook
    that starts Python."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([python, "-c", "pass"], check=True)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed * 1000, 1000 * (after.ru_utime - before.ru_utime
                                   + after.ru_stime - before.ru_stime)


def compile_gitstate(python: str) -> None:
    """Write the bytecode of the gitstate that `python` imports, as its installer would."""
    subprocess.run([python, "-c", "import compileall, os, gitstate; compileall.compile_dir("
                    "os.path.dirname(gitstate.__file__), quiet=1)"], check=True)


def measure(runs: int, against: str | None = None) -> dict[str, dict[str, float]]:
    compile_gitstate(sys.executable)
    if against:
        compile_gitstate(against)
    with tempfile.TemporaryDirectory(prefix="gitstate-bench-") as tmp:
        root = Path(tmp)
        repo = setup(root, against or sys.executable)
        off = root / "no-hooks"
        off.mkdir()
        modes = ("hooks", "bare", "no-judge") + (("against",) if against else ())
        samples: dict[str, dict[str, list[tuple[float, float]]]] = {
            k: {m: [] for m in modes} for k in (*TARGETS_MS, "python -c pass")}
        theirs = str(other_hooks(root, against)) if against else None

        def hooks_of(mode: str) -> str | None:
            return {"hooks": None, "bare": str(off), "against": theirs, "no-judge": None}[mode]

        env_of = {"against": {"GITSTATE_PYTHON": against or ""},
                  "no-judge": {"GITSTATE_JUDGE": "0"}}
        upstream = root / "upstream"
        sh(root, "git", "clone", "-q", str(repo), str(upstream))
        sh(repo, "git", "remote", "add", "upstream", str(upstream))
        state_file = repo / "agent" / "alice" / "_state.md"
        text = state_file.read_text()
        n = 0

        def one(kind: str, mode: str, trace: Path | None = None) -> tuple[float, float]:
            nonlocal n
            n += 1
            if kind == "ordinary":
                (repo / "work.txt").write_text(f"{n}\n")
                sh(repo, "git", "add", "work.txt")
                args = ["commit", "-q", "-m", f"ordinary work {n}"]
            elif kind == "state":
                state_file.write_text(text.replace("summary: null", f"summary: step {n}"))
                (repo / "work.txt").write_text(f"{n}\n")
                sh(repo, "git", "add", "work.txt", str(state_file))
                args = ["commit", "-q", "-m", f"@alice: [STATE:deep_work] step {n}"]
            else:
                (upstream / "up.txt").write_text(f"{n}\n")
                sh(upstream, "git", "add", "up.txt")
                sh(upstream, "git", "-c", f"core.hooksPath={off}", "commit", "-qm", f"up {n}")
                args = ["fetch", "-q", "upstream"]
            return timed(repo, args, hooks_of(mode), env_of.get(mode), trace)

        for _ in range(runs):
            for mode in modes:
                for kind in TARGETS_MS:
                    samples[kind][mode].append(one(kind, mode))
            samples["python -c pass"]["hooks"].append(python_pass(sys.executable))
            if against:
                samples["python -c pass"]["against"].append(python_pass(against))
        gits = {}   # git processes of one commit of each kind, its own `git` included
        for kind in TARGETS_MS:
            for mode in modes:
                trace = root / f"trace-{kind}-{mode}.json"
                one(kind, mode, trace)
                gits[kind, mode] = git_processes(trace)
        pass_ = samples.pop("python -c pass")
        out: dict = {"python -c pass": {
            m: (statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs))
            for m, xs in pass_.items() if xs}}
        for kind, s in samples.items():
            def med(mode: str, which: int) -> float:
                return statistics.median(x[which] for x in s[mode])
            hooks, bare = med("hooks", 0), med("bare", 0)
            out[kind] = {"with_hooks_ms": hooks, "without_ms": bare, "added_ms": hooks - bare,
                         "target_ms": TARGETS_MS[kind],
                         "cpu_added_ms": med("hooks", 1) - med("bare", 1),
                         "no_judge_added_ms": med("no-judge", 0) - bare,
                         "no_judge_cpu_added_ms": med("no-judge", 1) - med("bare", 1),
                         "against_added_ms": med("against", 0) - bare if against else None,
                         "against_cpu_added_ms": med("against", 1) - med("bare", 1)
                         if against else None,
                         "git": {m: gits[kind, m] for m in modes}}
        return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--against", metavar="PYTHON",
                        help="also time the hooks of the gitstate of this Python (A/B)")
    args = parser.parse_args()
    results = measure(args.runs, args.against)
    floor = results.pop("python -c pass")
    print(f"python {sys.version.split()[0]}, git "
          f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}"
          f", {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, median of {args.runs} "
          "runs each")
    print(f"python -c pass: {floor['hooks'][0]:.1f} ms, CPU {floor['hooks'][1]:.1f} ms"
          + (f"   against: {floor['against'][0]:.1f} ms, CPU {floor['against'][1]:.1f} ms"
             if "against" in floor else ""))
    print(f"{'commit':<10}{'with hooks':>12}{'without':>10}{'added':>9}{'target':>9}"
          f"{'':>8}{'CPU added':>10}{'git':>6}")
    worst = 0
    for kind, r in results.items():
        verdict = "ok" if r["added_ms"] <= r["target_ms"] else "OVER"
        worst |= verdict != "ok"
        git = r["git"]
        print(f"{kind:<10}{r['with_hooks_ms']:>10.1f}ms{r['without_ms']:>8.1f}ms"
              f"{r['added_ms']:>7.1f}ms{r['target_ms']:>7.0f}ms  {verdict:<4}"
              f"{r['cpu_added_ms']:>8.1f}ms{git['hooks']:>4}/{git['bare']}"
              + f"   no judge: {r['no_judge_added_ms']:.1f}ms added, "
                f"{r['no_judge_cpu_added_ms']:.1f}ms CPU"
              + (f"   against: {r['against_added_ms']:.1f}ms added, "
                 f"{r['against_cpu_added_ms']:.1f}ms CPU, git {git['against']}"
                 if args.against else ""))
    print("git: git processes of one such commit with the hooks / without (its own included, "
          "git's `maintenance --auto` not)")
    print("CPU added counts the resident judge's (gitstate/doors/resident.py); no judge: the same "
          "commit with GITSTATE_JUDGE=0, what a commit costs when no judge is running")
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
