"""Latency of Claude Code's hooks (`gitstate hook NAME`, the event on stdin) on a synthetic
10,000-commit history (bench/gen.py), run as the settings run them: the `gitstate` script.

  session-start  SessionStart (startup): the briefing, with a warm index under .git/gitstate
  context        PostToolUse when no mortality phase is crossed (every tool call)
  context+commit PostToolUse when a phase is crossed: one progress commit by gitstate
  spawn-guard    PreToolUse on the Agent tool (a spawn that is allowed)
  floor          `python -c pass` with the same interpreter

    .venv/bin/python bench/runtime.py [--size 10000] [--runs 15]

Targets (issue #11): SessionStart <= 300 ms; the context hook <= 50 ms when no phase is
crossed.
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

SCRIPT = str(Path(sys.executable).parent / "gitstate")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(args: list[str], cwd: Path, stdin: str = "", env: dict | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=env or ENV)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return elapsed, proc.stdout


def transcript(path: Path, prompt_tokens: int) -> Path:
    line = {"type": "assistant", "isSidechain": False, "message": {
        "model": "claude-opus-4-6", "usage": {"input_tokens": 5, "cache_read_input_tokens":
                                              prompt_tokens - 5,
                                              "cache_creation_input_tokens": 0}}}
    filler = {"type": "user", "message": {"role": "user", "content": "x" * 2000}}
    # a realistic size: ~1 MB of earlier conversation before the latest turn
    path.write_text("".join(json.dumps(filler) + "\n" for _ in range(500))
                    + json.dumps(line) + "\n")
    return path


def bench(source: Path, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-bench-rt-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(source, repo, symlinks=True)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        roster = json.loads(run([SCRIPT, "roster", "--json"], repo)[1])
        agent = roster["living"][0]["agent"]
        env = dict(ENV, GITSTATE_AGENT=agent)
        base = {"session_id": "bench-session", "cwd": str(repo), "permission_mode": "default"}
        start = json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup",
                            "transcript_path": "", "model": "claude-opus-4-6"})
        t_start = [run([SCRIPT, "hook", "session-start"], repo, start, env)[0]
                   for _ in range(runs)]
        quiet = transcript(Path(tmp) / "quiet.jsonl", 20_000)       # 10 %: fresh
        post = {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}
        ev_quiet = json.dumps({**post, "transcript_path": str(quiet)})
        t_ctx = []
        for _ in range(runs):
            elapsed, out = run([SCRIPT, "hook", "context"], repo, ev_quiet)
            assert out == "", out
            t_ctx.append(elapsed)
        crossing = transcript(Path(tmp) / "cross.jsonl", 110_000)   # 55 %: midlife
        ev_cross = json.dumps({**post, "transcript_path": str(crossing)})
        phases = repo / ".git" / "gitstate" / "runtime" / "phases"
        t_commit = []
        for _ in range(max(3, runs // 3)):
            shutil.rmtree(phases, ignore_errors=True)
            elapsed, out = run([SCRIPT, "hook", "context"], repo, ev_cross)
            assert "midlife" in out, out
            t_commit.append(elapsed)
        pre = json.dumps({**base, "hook_event_name": "PreToolUse", "tool_name": "Agent",
                          "transcript_path": "", "tool_use_id": "toolu_2",
                          "tool_input": {"prompt": "p", "description": "d",
                                         "subagent_type": "general-purpose"}})
        t_guard = [run([SCRIPT, "hook", "spawn-guard"], repo, pre)[0] for _ in range(runs)]
        t_floor = [run([sys.executable, "-c", "pass"], repo)[0] for _ in range(runs)]
        count = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo,
                                   capture_output=True, text=True).stdout)
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    return {"commits": count, "session_start_ms": ms(t_start),
            "session_start_first_ms": t_start[0] * 1000, "context_ms": ms(t_ctx),
            "context_commit_ms": ms(t_commit), "spawn_guard_ms": ms(t_guard),
            "floor_ms": ms(t_floor)}


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
    r = bench(source, args.runs)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {r['commits']} commits, "
          f"median of {args.runs} runs")
    for key in ("session_start_first_ms", "session_start_ms", "context_ms",
                "context_commit_ms", "spawn_guard_ms", "floor_ms"):
        print(f"  {key:<24} {r[key]:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
