"""Cost per call of `gitstate statusline` (Claude Code's statusLine: it runs after every
assistant message) on the synthetic 10,000-commit history of bench/gen.py, run as the
`.claude/settings.local.json` that `gitstate init --runtime claude-code` writes runs it: the
command in `sh -c`, without CLAUDE_PROJECT_DIR (so the top of the work tree is asked of git),
through the committed shim (which asks git for `gitstate.python`), the JSON on stdin.

  steady    the refs are where they were at the last call: the state kept, no git from gitstate
  moved     a commit landed since the last call: the agent's state read again with git
  crossing  the context crosses a mortality mark: one progress commit by gitstate
  python    `python -m gitstate statusline` itself, without the shell and the shim (steady)
  floor     `python -c pass` with the same interpreter

    .venv/bin/python bench/statusline.py [--size 10000] [--runs 15]
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
from gen import generate  # noqa: E402
from runtime import run  # noqa: E402

ENV = {k: v for k, v in os.environ.items()
       if k not in ("PYTHONDONTWRITEBYTECODE", "CLAUDE_PROJECT_DIR", "GITSTATE_AGENT")}
COMMAND = '"${CLAUDE_PROJECT_DIR:-$(git rev-parse --show-toplevel)}"/.claude/hooks/gitstate ' \
          'statusline'


def payload(repo: Path, session: str, pct: float) -> str:
    return json.dumps({
        "hook_event_name": "Status", "session_id": session, "cwd": str(repo),
        "transcript_path": "", "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
        "workspace": {"current_dir": str(repo), "project_dir": str(repo)},
        "context_window": {"context_window_size": 200_000, "used_percentage": pct,
                           "current_usage": {"input_tokens": 10, "cache_read_input_tokens":
                                             int(2000 * pct) - 10,
                                             "cache_creation_input_tokens": 0}}})


def bench(source: Path, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-bench-sl-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(source, repo, symlinks=True)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        from gitstate.runtime.claude_code.settings import install   # as init --runtime claude-code
        install(repo, user=Path(tmp) / "no-user-settings.json")
        subprocess.run(["git", "config", "gitstate.python", sys.executable], cwd=repo,
                       check=True)
        local = json.loads((repo / ".claude" / "settings.local.json").read_text())
        assert local["statusLine"]["command"] == COMMAND, local
        agent, session = "bench-sl", "bench-statusline"
        run([sys.executable, "-m", "gitstate", "spawn", agent, "--session", session], repo)
        start = json.dumps({"session_id": session, "cwd": str(repo), "source": "startup",
                            "hook_event_name": "SessionStart", "transcript_path": "",
                            "model": "claude-opus-4-6"})
        run([str(repo / ".claude" / "hooks" / "gitstate"), "session-start"], repo, start,
            dict(ENV, CLAUDE_PROJECT_DIR=str(repo)))
        shell = ["sh", "-c", COMMAND]
        quiet = payload(repo, session, 12.0)
        first = run(shell, repo, quiet, ENV)[1]
        assert first.startswith(f"gitstate {agent}: "), first
        t_steady = []
        for _ in range(runs):
            elapsed, out = run(shell, repo, quiet, ENV)
            assert out == first, (out, first)
            t_steady.append(elapsed)
        t_python = [run([sys.executable, "-m", "gitstate", "statusline"], repo, quiet, ENV)[0]
                    for _ in range(runs)]
        t_moved = []
        for i in range(max(3, runs // 3)):
            subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", f"work {i}"],
                           cwd=repo, check=True, env=ENV)
            t_moved.append(run(shell, repo, quiet, ENV)[0])
        phases = repo / ".git" / "gitstate" / "runtime" / "phases"
        t_cross = []
        for _ in range(max(3, runs // 3)):
            shutil.rmtree(phases, ignore_errors=True)
            elapsed, out = run(shell, repo, payload(repo, session, 55.0), ENV)
            assert "(recorded)" in out, out
            t_cross.append(elapsed)
        t_floor = [run([sys.executable, "-c", "pass"], repo)[0] for _ in range(runs)]
        count = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo,
                                   capture_output=True, text=True).stdout)
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    return {"commits": count, "steady_ms": ms(t_steady), "python_ms": ms(t_python),
            "moved_ms": ms(t_moved), "crossing_ms": ms(t_cross), "floor_ms": ms(t_floor)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()
    source = args.out / f"repo-{args.size}"
    if not source.is_dir():
        print(f"generating {source} ...", file=sys.stderr)
        generate(source, args.size, 1000)
    t0 = time.perf_counter()
    r = bench(source, args.runs)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {r['commits']:,} commits, "
          f"median of {args.runs} runs ({time.perf_counter() - t0:.0f}s in all)")
    for key, what in (("steady_ms", "steady: refs unchanged, no git from gitstate"),
                      ("python_ms", "python -m gitstate statusline alone (steady)"),
                      ("moved_ms", "moved: the state read again with git"),
                      ("crossing_ms", "crossing: one progress commit"),
                      ("floor_ms", "floor: python -c pass")):
        print(f"  {what:48} {r[key]:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
