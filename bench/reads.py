"""How long each read command takes, warm, on a long history: with no new commits since the
last read, and after 100 new ones (50 agents' progress updates and ordinary work).

    .venv/bin/python bench/reads.py [--size 100000] [--runs 5]

Each figure is the wall time of the whole `gitstate CMD` process (median of --runs), in its
text form and with `--json`, bytecode cache enabled. Targets (issue "Near the floor"):
<= 60 ms with no new commits, <= 100 ms after 100 new commits, at 100,000 commits and 1,000
agents, for every view in both forms.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen import generate  # noqa: E402
from history import ENV, GITSTATE, append_commits, timed  # noqa: E402


def commands(repo: Path) -> list[list[str]]:
    view = json.loads(subprocess.run(GITSTATE + ["roster", "--json"], cwd=repo, env=ENV,
                                     capture_output=True, check=True).stdout)
    agent = view["living"][0]["agent"]
    cmds = [["status"], ["status", agent], ["roster"], ["vacancies"], ["inbox", agent],
            ["log", agent, "-n", "20"], ["log", "-n", "20"], ["log"]]
    if view["freezer"]:
        cmds.append(["show", view["freezer"][0]["agent"]])
    return cmds + [["situations", "--no-sqlite"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()
    source = args.out / f"repo-{args.size}"
    if not source.is_dir():
        print(f"generating {source} ...", file=sys.stderr)
        generate(source, args.size, 1000)
    with tempfile.TemporaryDirectory(prefix="gitstate-reads-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(source, repo, symlinks=True)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        cmds = [c + form for c in commands(repo) for form in ([], ["--json"])]
        for cmd in cmds:                                  # every cache warm
            timed(GITSTATE + cmd, repo)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.size} commits, "
              f"median of {args.runs} runs, load {os.getloadavg()[0]:.1f}")
        print(f"{'command':<36} {'no new commits':>15} {'+100 commits':>13}")
        serial = 0
        for cmd in cmds:
            still = [timed(GITSTATE + cmd, repo)[0] for _ in range(args.runs)]
            fresh = []
            for _ in range(args.runs):
                serial += 1
                append_commits(repo, 100, 1000 + serial)
                fresh.append(timed(GITSTATE + cmd, repo)[0])
            label = " ".join("ID" if i == 1 and not w.startswith("-") else w
                             for i, w in enumerate(cmd))
            print(f"{label:<36} {statistics.median(still) * 1000:>12.0f} ms "
                  f"{statistics.median(fresh) * 1000:>10.0f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
