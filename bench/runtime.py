"""Latency of Claude Code's hooks on a synthetic 10,000-commit history (bench/gen.py), run
as `.claude/settings.json` runs them: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/gitstate NAME`
(the committed shim, which finds gitstate through `git config gitstate.python`), the event on
stdin.

  session-start  SessionStart (startup): the briefing, with a warm index under .git/gitstate
  context        PostToolUse when no mortality phase is crossed (every tool call)
  context+commit PostToolUse when a phase is crossed: one progress commit by gitstate
  spawn-guard    PreToolUse on the Agent tool (a spawn that is allowed)
  floor          `python -c pass` with the same interpreter

Then a whole scripted Claude Code session (the real `claude` of .ci/npm, against
tests/runtime/scripted_model.py: a SessionStart, --calls Bash tool calls, one sub-agent) in the
same repository with gitstate's hooks and without them: the hooks' share of its wall time.

    .venv/bin/python bench/runtime.py [--size 10000] [--runs 15] [--sessions 5]

Targets: SessionStart <= 300 ms; the context hook <= 50 ms when no phase is crossed; the
spawn guard under 150 ms. Figures measured before (bench/README.md): 160 ms, 22 ms, 220-245 ms.
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

sys.path.insert(0, str(HERE.parent / "tests" / "runtime"))
SCRIPT = str(Path(sys.executable).parent / "gitstate")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CLAUDE = HERE.parent / ".ci" / "npm" / "node_modules" / ".bin" / "claude"
BEFORE = {"session_start_ms": "160", "context_ms": "22", "spawn_guard_ms": "220-245"}


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
        "model": "claude-opus-4-6", "content": [{"type": "tool_use", "id": "toolu_1",
                                                 "name": "Bash", "input": {}}],
        "usage": {"input_tokens": 5, "cache_read_input_tokens":
                                              prompt_tokens - 5,
                                              "cache_creation_input_tokens": 0}}}
    filler = {"type": "user", "message": {"role": "user", "content": "x" * 2000}}
    # a realistic size: ~1 MB of earlier conversation before the latest turn
    path.write_text("".join(json.dumps(filler) + "\n" for _ in range(500))
                    + json.dumps(line) + "\n")
    return path


def bench(source: Path, runs: int, against: Path | None = None) -> dict:
    """The hooks' latencies; `against`: the gitstate of that source tree instead (an older
    checkout, e.g. `git worktree add /tmp/old <commit>`), run the same way."""
    with tempfile.TemporaryDirectory(prefix="gitstate-bench-rt-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(source, repo, symlinks=True)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        roster = json.loads(run([SCRIPT, "roster", "--json"], repo)[1])
        agent = roster["living"][0]["agent"]
        install_hooks(repo)
        hook = str(repo / ".claude" / "hooks" / "gitstate")
        env = dict(ENV, GITSTATE_AGENT=agent, CLAUDE_PROJECT_DIR=str(repo))
        if against is not None:
            env["PYTHONPATH"] = str(against)
        base = {"session_id": "bench-session", "cwd": str(repo), "permission_mode": "default"}
        start = json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup",
                            "transcript_path": "", "model": "claude-opus-4-6"})
        t_start = [run([hook, "session-start"], repo, start, env)[0] for _ in range(runs)]
        quiet = transcript(Path(tmp) / "quiet.jsonl", 20_000)       # 10 %: fresh
        post = {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}
        ev_quiet = json.dumps({**post, "transcript_path": str(quiet)})
        t_ctx = []
        for _ in range(runs):
            elapsed, out = run([hook, "context"], repo, ev_quiet, env)
            assert out == "", out
            t_ctx.append(elapsed)
        crossing = transcript(Path(tmp) / "cross.jsonl", 110_000)   # 55 %: midlife
        ev_cross = json.dumps({**post, "transcript_path": str(crossing)})
        phases = repo / ".git" / "gitstate" / "runtime" / "phases"
        t_commit = []
        for _ in range(max(3, runs // 3)):
            shutil.rmtree(phases, ignore_errors=True)
            elapsed, out = run([hook, "context"], repo, ev_cross, env)
            assert "midlife" in out, out
            t_commit.append(elapsed)
        pre = json.dumps({**base, "hook_event_name": "PreToolUse", "tool_name": "Agent",
                          "transcript_path": "", "tool_use_id": "toolu_2",
                          "tool_input": {"prompt": "p", "description": "d",
                                         "subagent_type": "general-purpose"}})
        t_guard = [run([hook, "spawn-guard"], repo, pre, env)[0] for _ in range(runs)]
        t_floor = [run([sys.executable, "-c", "pass"], repo)[0] for _ in range(runs)]
        count = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo,
                                   capture_output=True, text=True).stdout)
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    return {"commits": count, "session_start_ms": ms(t_start),
            "session_start_first_ms": t_start[0] * 1000, "context_ms": ms(t_ctx),
            "context_commit_ms": ms(t_commit), "spawn_guard_ms": ms(t_guard),
            "floor_ms": ms(t_floor)}


def install_hooks(repo: Path) -> None:
    """`gitstate init --runtime claude-code`'s settings and shim, and this clone's Python."""
    from gitstate.runtime.claude_code.settings import install
    install(repo)
    subprocess.run(["git", "config", "gitstate.python", sys.executable], cwd=repo, check=True)


def session(source: Path, runs: int, calls: int) -> dict:
    """Wall time of one scripted Claude Code session, with gitstate's hooks and without."""
    import uuid

    from scripted_model import ScriptedModel, Turn, text, tool
    model = ScriptedModel()
    out: dict = {}
    try:
        with tempfile.TemporaryDirectory(prefix="gitstate-bench-cc-") as tmp:
            repo = Path(tmp) / "repo"
            shutil.copytree(source, repo, symlinks=True)
            install_hooks(repo)
            hooked = (repo / ".claude" / "settings.json").read_text()
            agent = json.loads(run([SCRIPT, "roster", "--json"], repo)[1])["living"][0]["agent"]
            home = Path(tmp) / "home"
            home.mkdir()
            env = dict(ENV, ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="anything",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", HOME=str(home),
                       GITSTATE_AGENT=agent)
            for label, settings in (("with_hooks", hooked), ("without_hooks", "{}\n")):
                (repo / ".claude" / "settings.json").write_text(settings)
                times = []
                for i in range(runs + 1):       # the first run warms the caches: not counted
                    name = f"{label}-{i}"
                    turns = [Turn(tool("Bash", {"command": "true", "description": "x"}),
                                  input_tokens=20_000 + 1_000 * n) for n in range(calls)]
                    turns.append(Turn(tool("Agent", {
                        "description": "look", "subagent_type": "general-purpose",
                        "prompt": f"look [script:{name}-child]"})))
                    token = model.script(name, *turns, Turn(text("done")))
                    model.script(f"{name}-child", Turn(text("nothing")))
                    t0 = time.perf_counter()
                    proc = subprocess.run(
                        [str(CLAUDE), "-p", f"work {token}", "--session-id",
                         str(uuid.uuid4()), "--allowedTools", "Bash,Agent", "--model",
                         "claude-sonnet-4-5"], cwd=repo, env=env, capture_output=True,
                        text=True, timeout=600, stdin=subprocess.DEVNULL)
                    if proc.returncode != 0:
                        raise SystemExit(f"claude failed: {proc.stderr}")
                    if i:
                        times.append(time.perf_counter() - t0)
                out[label] = statistics.median(times) * 1000
    finally:
        model.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--against", type=Path, default=None,
                        help="also measure the gitstate of this source tree, in alternation")
    parser.add_argument("--rounds", type=int, default=3,
                        help="with --against: alternate this many times")
    parser.add_argument("--sessions", type=int, default=5,
                        help="scripted Claude Code sessions each way (0: none)")
    parser.add_argument("--calls", type=int, default=20, help="tool calls per session")
    args = parser.parse_args()
    source = args.out / f"repo-{args.size}"
    if not source.is_dir():
        print(f"generating {source} ...", file=sys.stderr)
        generate(source, args.size, 1000)
    if args.against is not None:
        rows: dict = {"this": [], "against": []}
        for _ in range(args.rounds):     # alternated: a busy machine slows both alike
            rows["this"].append(bench(source, args.runs))
            rows["against"].append(bench(source, args.runs, args.against.resolve()))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, median of "
              f"{args.rounds} alternated rounds of {args.runs} runs: this tree | {args.against}")
        for key in ("session_start_ms", "context_ms", "spawn_guard_ms", "floor_ms"):
            a = statistics.median(r[key] for r in rows["this"])
            b = statistics.median(r[key] for r in rows["against"])
            print(f"  {key:<24} {a:8.1f} ms | {b:8.1f} ms")
        return 0
    r = bench(source, args.runs)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {r['commits']} commits, "
          f"median of {args.runs} runs")
    for key in ("session_start_first_ms", "session_start_ms", "context_ms",
                "context_commit_ms", "spawn_guard_ms", "floor_ms"):
        before = f"   (before: {BEFORE[key]} ms)" if key in BEFORE else ""
        print(f"  {key:<24} {r[key]:8.1f} ms{before}")
    if args.sessions and CLAUDE.exists():
        s = session(source, args.sessions, args.calls)
        share = 100 * (s["with_hooks"] - s["without_hooks"]) / s["with_hooks"]
        print(f"a scripted Claude Code session ({args.calls} Bash calls, one sub-agent), "
              f"median of {args.sessions}:")
        print(f"  with gitstate's hooks    {s['with_hooks']:8.0f} ms")
        print(f"  without                  {s['without_hooks']:8.0f} ms")
        print(f"  the hooks' share         {share:8.1f} %")
    elif args.sessions:
        print(f"(no Claude Code session: {CLAUDE} is missing; "
              "`npm install --prefix .ci/npm --no-package-lock`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
