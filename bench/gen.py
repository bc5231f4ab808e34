"""Synthetic managed repositories for the benchmarks, written with `git fast-import`.

A history of N commits over A agents following the haak lifecycle: ~70 % state commits (legal
moves, each writing the agent's whole state file), ~30 % ordinary commits, some mentioning
agents. Deterministic for a given seed.

    .venv/bin/python bench/gen.py bench/out/repo-100000 --commits 100000 --agents 1000
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEXT = {"bootstrap": ["inbox"], "inbox": ["distill"], "distill": ["deep_work", "idle"],
        "deep_work": ["inbox", "deep_work"], "idle": ["inbox"]}
# Roles without a holder limit, so that the history stays within haak's law; the first agent
# is the (single) architect.
ROLES = ["librarian", "auditor", None, None]
FREEZE = ("---\nsession_id: {a}\nfrozen_at: '2026-09-01T00:00:00Z'\nrole: null\n"
          "primary_situation: bench\nwake_if: the bench asks\n---\n## Key Decisions\n- x\n"
          "## Accumulated Knowledge\nx\n"
          "## Open Questions\n- x\n## Files Changed\n- x\n## Handoff Notes\nx\n")


def state_text(agent: str, state: str, role: str | None, n: int, extra: dict) -> bytes:
    lines = ["---", f"agent: {agent}", f"state: {state}", f"role: {role or 'null'}",
             "model: opus-4-6", "person: zach", "project: haak", "parent: null", "depth: 0",
             f"thread: thread-{n % 37}", f"context_pct: {n % 80}",
             f"summary: step {n} of the work on thread {n % 37}",
             "last_read_commit: null"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    lines += [f"updated: '2026-11-22T10:{n % 60:02d}:00Z'", "---", "## Notes", "",
              f"Working notes of {agent}.", ""]
    return "\n".join(lines).encode()


class _Import:
    """One branch written commit by commit through `git fast-import`."""

    def __init__(self, path: Path, rng: random.Random) -> None:
        self.proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=path,
                                     stdin=subprocess.PIPE)
        assert self.proc.stdin is not None
        self.out, self.rng, self.t, self.mark = self.proc.stdin, rng, 1_790_000_000, 0

    def commit(self, message: str, files: dict[str, bytes]) -> None:
        self.mark += 1
        self.t += self.rng.randint(5, 120)
        msg = message.encode()
        out = self.out
        out.write(b"commit refs/heads/main\n")
        out.write(f"mark :{self.mark}\n".encode())
        out.write(f"committer Bench <bench@example.invalid> {self.t} +0000\n".encode())
        out.write(f"data {len(msg)}\n".encode() + msg + b"\n")
        if self.mark > 1:
            out.write(f"from :{self.mark - 1}\n".encode())
        for p, data in files.items():
            out.write(f"M 100644 inline {p}\n".encode())
            out.write(f"data {len(data)}\n".encode() + data + b"\n")

    def close(self) -> None:
        self.out.close()
        if self.proc.wait() != 0:
            raise SystemExit("git fast-import failed")


def generate(path: Path, commits: int, agents: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    out = _Import(path, rng)
    # haak, with room for every agent of the benchmark to be alive at once
    lifecycle = (ROOT / "protocols" / "haak" / "lifecycle.yaml").read_bytes().replace(
        b"max_living: 20", f"max_living: {agents}".encode())
    out.commit("gitstate: manage this repository with lifecycle 'haak'\n",
               {"protocols/lifecycle.yaml": lifecycle})
    ids = [f"agent-{i:04d}" for i in range(agents)]
    state: dict[str, str] = {}
    role: dict[str, str | None] = {}
    pending = list(ids)
    living: list[str] = []
    made = 1
    while made < commits:
        made += 1
        if pending and (not living or rng.random() < 0.05):
            a = pending.pop(0)
            state[a], role[a] = "bootstrap", "architect" if a == ids[0] else rng.choice(ROLES)
            living.append(a)
            out.commit(f"@{a}: [STATE:bootstrap] spawned\n",
                       {f"agent/{a}/_state.md": state_text(a, "bootstrap", role[a], made, {})})
            continue
        if rng.random() < 0.3:
            who = rng.choice(living + ["ALL"])
            mention = f" cc @{who}" if rng.random() < 0.3 else ""
            out.commit(f"work on module {made % 211}{mention}\n",
                       {f"src/module{made % 211}.txt": f"revision {made}\n".encode()})
            continue
        _move(out, rng, ids, (state, role, living), made)
        if not living and not pending:
            break
    out.close()
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=path, check=True)


def _move(out: _Import, rng: random.Random, ids: list[str], team: tuple, made: int) -> None:
    """A living agent's next move (`team`: each agent's state and role, and who lives)."""
    state, role, living = team
    a = rng.choice(living)
    s = state[a]
    extra: dict = {}
    if s == "distill" and rng.random() < 0.004:
        nxt = rng.choice(["frozen", "dead"])
    else:
        nxt = rng.choice(NEXT[s])
    files = {}
    if nxt == "frozen":
        extra["freeze_state"] = f"data/freeze-states/{a}.md"
        files[extra["freeze_state"]] = FREEZE.format(a=a).encode()
    if nxt == "dead":
        extra["final_summary"] = f"{a} finished"
    state[a] = nxt
    if nxt in ("frozen", "dead"):
        living.remove(a)
    body = f"\n\nprogress note for @{rng.choice(ids)}" if rng.random() < 0.1 else ""
    files[f"agent/{a}/_state.md"] = state_text(a, nxt, role[a], made, extra)
    out.commit(f"@{a}: [STATE:{nxt}] step {made}{body}\n", files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.path.exists() and any(args.path.iterdir()):
        print(f"{args.path} exists and is not empty", file=sys.stderr)
        return 2
    generate(args.path, args.commits, args.agents, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
