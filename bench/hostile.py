"""Time to refuse hostile input (issue #9), and lifecycle check time by size.

1. Every file case of the hostile corpus (tests/hostile/cases.toml) is staged in a managed
   repository (alice spawned, as the corpus expects) and committed with a plain `git commit`
   through the installed hooks; the time of that commit (refused, or accepted for the
   controls) is the median of --runs. A commit with hooks switched off is the floor.
2. Lifecycles that are chains of 1,000 and 10,000 states are loaded in this process: the
   time to read the YAML and the time of the load-time checks, medians of --runs.

Run from the repository root with the project's Python:

    .venv/bin/python bench/hostile.py [--runs 5]

Target: every refusal through the hook < 200 ms.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hostile"))
try:
    import corpus
except ModuleNotFoundError:   # pragma: no cover
    raise SystemExit("bench/hostile.py needs the corpus in tests/hostile/") from None

TARGET_MS = 200.0
LAW = "protocols/lifecycle.yaml"
LAW_MESSAGE = "law: a new lifecycle\n\nApproved-by: zach\n"


def sh(repo: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=repo, check=True, capture_output=True, input=input)


def setup(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    sh(repo, "git", "init", "-q", "-b", "main")
    for k, v in (("user.name", "bench"), ("user.email", "bench@example.invalid"),
                 ("commit.gpgsign", "false")):
        sh(repo, "git", "config", k, v)
    sh(repo, sys.executable, "-m", "gitstate", "init", "--human", "zach")
    sh(repo, sys.executable, "-m", "gitstate", "spawn", corpus.AGENT)
    return repo


def stage(repo: Path, case) -> tuple[list[str], bytes]:
    """Put the case in place and stage it; (git commit arguments, stdin)."""
    if case.kind in ("state", "symlink"):
        path = repo / corpus.STATE_FILE
        path.unlink()
        if case.kind == "symlink":
            notes = repo / "notes"
            notes.mkdir(exist_ok=True)
            (notes / f"{corpus.AGENT}.md").write_bytes(
                (corpus.HERE / "state" / "legal_inbox.md").read_bytes())
            os.symlink(case.target, path)
        else:
            path.write_bytes(case.data())
        sh(repo, "git", "add", "-A", "--", "agent", "notes" if case.kind == "symlink" else "agent")
        return ["-m", corpus.SUBJECT], b""
    (repo / LAW).write_bytes(case.data())
    sh(repo, "git", "add", "--", LAW)
    return ["-F", "-"], LAW_MESSAGE.encode()


def restore(repo: Path, head: str) -> None:
    sh(repo, "git", "reset", "-q", "--hard", head)
    sh(repo, "git", "clean", "-qfdx", "--", "notes", "agent")


def timed(repo: Path, args: list[str], stdin: bytes, hooks_off: str | None) -> tuple[float, int]:
    cmd = ["git"] + (["-c", f"core.hooksPath={hooks_off}"] if hooks_off else []) + \
        ["commit", "-q", *args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, input=stdin)
    return (time.perf_counter() - t0) * 1000, proc.returncode


def refusals(runs: int) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="gitstate-bench-hostile-") as tmp:
        root = Path(tmp)
        repo = setup(root)
        off = root / "no-hooks"
        off.mkdir()
        head = sh(repo, "git", "rev-parse", "HEAD").stdout.decode().strip()
        for case in corpus.load_cases():
            if case.kind == "repo" or "states" in case.extra:
                continue
            samples, floor, codes = [], [], set()
            for _ in range(runs):
                args, stdin = stage(repo, case)
                ms, code = timed(repo, args, stdin, None)
                samples.append(ms)
                codes.add(code)
                restore(repo, head)
                args, stdin = stage(repo, case)
                floor.append(timed(repo, args, stdin, str(off))[0])
                restore(repo, head)
            rows.append({"case": case.id, "expect": case.expect,
                         "refused": codes != {0}, "ms": statistics.median(samples),
                         "floor": statistics.median(floor)})
    return rows


def chain(n: int) -> str:
    return corpus.lifecycle_states(n).decode()


def lifecycle_times(runs: int) -> list[dict]:
    from gitstate.law import yamlio
    from gitstate.law.checks import CHECKS
    from gitstate.law.load import load_lifecycle

    class Reader:
        def __init__(self):
            self.problems = []

        def bad(self, path, message):
            self.problems.append(message)

    rows = []
    for n in (1_000, 10_000):
        text = chain(n)
        lc = load_lifecycle(text)
        reads, checks, loads = [], [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            yamlio.load(text, where=LAW, strict=False)
            reads.append(time.perf_counter() - t0)
            r = Reader()
            t0 = time.perf_counter()
            for check in CHECKS:
                check(lc, r)
            checks.append(time.perf_counter() - t0)
            assert not r.problems, r.problems[:3]
            t0 = time.perf_counter()
            load_lifecycle(text)
            loads.append(time.perf_counter() - t0)
        rows.append({"states": n, "bytes": len(text), "read": statistics.median(reads) * 1000,
                     "checks": statistics.median(checks) * 1000,
                     "load": statistics.median(loads) * 1000})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    print(f"python {sys.version.split()[0]}, "
          f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}, "
          f"{os.cpu_count()} cpus, runs {runs}\n")
    rows = refusals(runs)
    print("| case | through the hook | hooks off | verdict |")
    print("|---|---|---|---|")
    worst = 0.0
    for r in rows:
        verdict = "refused" if r["refused"] else "accepted"
        if r["expect"] == "accept" and r["refused"] or r["expect"] == "refuse" and not r["refused"]:
            verdict += " (UNEXPECTED)"
        if r["refused"]:
            worst = max(worst, r["ms"])
        print(f"| {r['case']} | {r['ms']:.0f} ms | {r['floor']:.0f} ms | {verdict} |")
    print(f"\nslowest refusal: {worst:.0f} ms (target < {TARGET_MS:.0f} ms): "
          f"{'met' if worst < TARGET_MS else 'NOT met'}\n")
    print("| states | size | read YAML | checks | load_lifecycle |")
    print("|---|---|---|---|---|")
    for r in lifecycle_times(runs):
        print(f"| {r['states']:,} | {r['bytes'] / 1024:,.0f} KiB | {r['read']:.0f} ms | "
              f"{r['checks']:.1f} ms | {r['load']:.0f} ms |")
    shutil.rmtree(ROOT / "bench" / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
