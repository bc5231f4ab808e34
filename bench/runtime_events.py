"""What the runtime's events cost a turn (the lifecycle's `runtime:` table, issue "The runtime
moves the state"): Claude Code waits for a hook's command to end, so this is the latency a
prompt, a turn's end or a session's end adds, run as `init --runtime claude-code` installs it
(the command in `sh -c`, through the committed shim), on a fresh squad repository.

  no-rule    an event the lifecycle gives no rule (squad's pre-compact): the binding read, no git
  detached   a prompt with a rule (squad: idle -> active): the hook forks the process that
             decides it and returns; the turn waits for nothing more
  decided    that same prompt until its move is committed (the detached process's work: the
             turn does not wait for it)
  floor      `python -c pass` with the same interpreter

    .venv/bin/python bench/runtime_events.py [--runs 15]
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
import uuid
from pathlib import Path

ENV = {k: v for k, v in os.environ.items()
       if k not in ("PYTHONDONTWRITEBYTECODE", "GITSTATE_AGENT", "GITSTATE_SESSION")}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True,
                          text=True).stdout


def hook(repo: Path, name: str, event: dict) -> float:
    start = time.perf_counter()
    subprocess.run(["sh", "-c", '"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate ' + name],
                   input=json.dumps(event), text=True, cwd=repo, check=True,
                   env={**ENV, "CLAUDE_PROJECT_DIR": str(repo)}, capture_output=True)
    return time.perf_counter() - start


def decided(repo: Path) -> int:
    log = repo / ".git" / "gitstate" / "runtime" / "events.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    runs = ap.parse_args().runs
    root = Path(tempfile.mkdtemp(prefix="gitstate-bench-events-"))
    try:
        repo = root / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty",
            "-m", "start")
        gs = [sys.executable, "-m", "gitstate"]
        subprocess.run([*gs, "init", "--lifecycle", "squad", "--runtime", "claude-code"],
                       cwd=repo, env=ENV, check=True, capture_output=True)
        session = str(uuid.uuid4())
        subprocess.run([*gs, "spawn", "sam", "--role", "specialist", "--session", session],
                       cwd=repo, env=ENV, check=True, capture_output=True)
        base = {"session_id": session, "cwd": str(repo), "transcript_path": "/nonexistent"}
        hook(repo, "session-start", {**base, "hook_event_name": "SessionStart",
                                     "source": "startup"})
        rows: dict[str, list[float]] = {"no-rule": [], "detached": [], "decided": [],
                                        "floor": []}
        for _ in range(runs):
            rows["no-rule"].append(hook(repo, "pre-compact", {
                **base, "hook_event_name": "PreCompact", "trigger": "auto"}))
            before = decided(repo)
            start = time.perf_counter()
            rows["detached"].append(hook(repo, "prompt", {
                **base, "hook_event_name": "UserPromptSubmit", "prompt": "go"}))
            while decided(repo) == before:
                time.sleep(0.002)
            rows["decided"].append(time.perf_counter() - start)
            before = decided(repo)
            hook(repo, "stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False})
            while decided(repo) == before:   # back to idle before the next prompt
                time.sleep(0.002)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=ENV, check=True)
            rows["floor"].append(time.perf_counter() - start)
        moves = git(repo, "log", "--format=%s", "-3")
        assert "runtime: stop" in moves and "runtime: prompt" in moves, moves
        for name, values in rows.items():
            print(f"{name:<10} median {statistics.median(values) * 1000:7.1f} ms   "
                  f"max {max(values) * 1000:7.1f} ms   ({len(values)} runs)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
