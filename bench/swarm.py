"""A swarm of agents meeting at one hub over a real transport (`git daemon` on 127.0.0.1).

Each clone (and each worktree) runs its own agent through a number of moves, every one with
`--push` semantics (commit, push, on a lost race fetch, replay, retry), in parallel processes.
Reports moves landed per second at the hub, retries per landed move, and the hub's
pre-receive time per push. Run from the repository root:

    .venv/bin/python bench/swarm.py [--clones 1,4,16] [--worktrees 0] [--moves 25]

The swarm test (tests/git/test_swarm.py) uses the same set-up with 16 clones and 4 worktrees.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# one agent's walk through haak: born, then round the work loop
LOOP = ["inbox", "distill", "deep_work", "inbox", "distill", "idle"]


def sh(cwd: Path, *args: str, env: dict | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed in {cwd}: {proc.stderr}")
    return proc.stdout


def gitstate(cwd: Path, *args: str) -> str:
    return sh(cwd, sys.executable, "-m", "gitstate", *args)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """`git daemon` serving `base` (push allowed) on a free port of 127.0.0.1."""

    def __init__(self, base: Path):
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
             f"--base-path={base}", f"--port={self.port}", "--listen=127.0.0.1", str(base)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while True:   # ready when it accepts a connection
            if self.proc.poll() is not None:
                raise RuntimeError("git daemon stopped: " + self.proc.stderr.read().decode())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("git daemon did not start listening")
                time.sleep(0.05)

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def make_hub(where: Path, *, preset: str | None = None) -> Path:
    """A bare hub with `init --server` and a managed history on main."""
    hub = where / "hub.git"
    sh(where, "git", "init", "-q", "--bare", "-b", "main", str(hub))
    gitstate(hub, "init", "--server")
    (hub / "git-daemon-export-ok").touch()
    seed = where / "seed"
    sh(where, "git", "init", "-q", "-b", "main", str(seed))
    sh(seed, "git", "config", "commit.gpgsign", "false")
    (seed / "README").write_text("a swarm\n")
    sh(seed, "git", "add", "README")
    sh(seed, "git", "commit", "-q", "-m", "first")
    gitstate(seed, "init", *(("--lifecycle", preset) if preset else ()))
    sh(seed, "git", "push", "-q", str(hub), "main")
    return hub


def make_clones(where: Path, url: str, clones: int, worktrees: int,
                backoff: float | None = None) -> list[Path]:
    """`clones` clones of the hub, and `worktrees` worktrees of one more clone, each a place
    where one agent works; every branch tracks the hub's main."""
    places = []
    for i in range(clones):
        c = where / f"clone-{i:02d}"
        sh(where, "git", "clone", "-q", url, str(c))
        gitstate(c, "init")
        places.append(c)
    if worktrees:
        base = where / "wt-base"
        sh(where, "git", "clone", "-q", url, str(base))
        gitstate(base, "init")
        for k in range(worktrees):
            w = where / f"worktree-{k}"
            sh(base, "git", "worktree", "add", "-q", "-b", f"agent-{k}", str(w), "origin/main")
            sh(w, "git", "branch", "-q", "--set-upstream-to=origin/main")
            places.append(w)
    for p in places:
        sh(p, "git", "config", "gitstate.pushAttempts", "200")
        sh(p, "git", "config", "gitstate.pushSeconds", "600")
        if backoff is not None:
            sh(p, "git", "config", "gitstate.pushBackoffMax", str(backoff))
    return places


WORKER = r"""
import json, random, sys, time
from gitstate.git.repo import open_managed
from gitstate.moves.agent import spawn, transition
from gitstate.moves.landing import push_move
place, agent, moves, out, role = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
think = float(sys.argv[6])
loop = %r
repo = open_managed(place)
rows = []
for i in range(moves):
    if i == 0:
        move = lambda: spawn(repo, agent, role=role or None)
    else:
        if think:   # an agent works between two moves: it does not push again the same instant
            time.sleep(random.uniform(0, think))
        state = loop[(i - 1) %% len(loop)]
        move = lambda: transition(repo, agent, state, text=f"move {i}")
    t = time.monotonic()
    try:
        landing, _ = push_move(repo, agent, move)
    except Exception as exc:   # a refusal before anything was committed
        rows.append({"move": i, "outcome": "refused", "reason": str(exc), "attempts": 0})
        break
    rows.append({"move": i, "outcome": landing.outcome, "attempts": landing.attempts,
                 "commit": landing.commit, "reason": landing.reason, "kept": landing.kept,
                 "seconds": time.monotonic() - t})
    if landing.outcome != "landed":
        break
json.dump(rows, open(out, "w"))
""" % (LOOP,)


def run_swarm(places: list[Path], moves: int, out: Path, *, role: str = "",
              agents: list[str] | None = None,
              think: float = 0.0) -> tuple[list[list[dict]], float]:
    """Start one worker process per place; (each worker's rows, wall seconds)."""
    agents = agents or [f"agent-{i:02d}" for i in range(len(places))]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = []
    start = time.monotonic()
    for i, (place, agent) in enumerate(zip(places, agents)):
        dest = out / f"rows-{i}.json"
        procs.append((subprocess.Popen([sys.executable, "-c", WORKER, str(place), agent,
                                        str(moves), str(dest), role, str(think)], env=env,
                                       stderr=subprocess.PIPE), dest))
    results = []
    for proc, dest in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"a worker failed: {err.decode()}")
        results.append(json.loads(dest.read_text()))
    return results, time.monotonic() - start


def pre_receive_seconds(hub: Path, clone: Path, agent: str, pushes: int = 5) -> float:
    """Median time the hub's pre-receive takes to judge one pushed state commit: a progress
    update made in `clone` on the hub's tip, shown to the hook as git shows a push (the new
    objects visible, not yet under any ref)."""
    import statistics
    sh(clone, "git", "pull", "-q", "--ff-only", str(hub), "main")
    state = json.loads(gitstate(clone, "status", agent, "--json"))["state"]
    gitstate(clone, "transition", agent, state, "-m", "progress")
    tip = sh(hub, "git", "rev-parse", "main").strip()
    new = sh(clone, "git", "rev-parse", "HEAD").strip()
    env = dict(os.environ, GIT_DIR=str(hub),
               GIT_ALTERNATE_OBJECT_DIRECTORIES=str(clone / ".git" / "objects"))
    times = []
    for _ in range(pushes):
        t = time.perf_counter()
        proc = subprocess.run([str(hub / "hooks" / "pre-receive")], cwd=hub,
                              input=f"{tip} {new} refs/heads/main\n", text=True,
                              capture_output=True, env=env)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
    return statistics.median(times)


def measure(n: int, worktrees: int, moves: int, backoff: float | None = None,
            think: float = 0.0) -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-swarm-") as tmp:
        where = Path(tmp)
        hub = make_hub(where)
        daemon = Daemon(where)
        try:
            places = make_clones(where, daemon.url("hub.git"), n, worktrees, backoff)
            results, wall = run_swarm(places, moves, where, think=think)
        finally:
            daemon.stop()
        rows = [r for rs in results for r in rs]
        landed = [r for r in rows if r["outcome"] == "landed"]
        on_hub = set(sh(hub, "git", "rev-list", "main").split())
        return {"clones": n, "worktrees": worktrees, "moves": moves, "landed": len(landed),
                "lost": sum(1 for r in landed if r["commit"] not in on_hub),
                "not_landed": len(rows) - len(landed), "seconds": round(wall, 1),
                "landed_per_second": round(len(landed) / wall, 2),
                "retries_per_landed": round(sum(r["attempts"] - 1 for r in landed)
                                            / max(1, len(landed)), 2),
                "pre_receive_ms": round(pre_receive_seconds(hub, places[0], "agent-00")
                                        * 1000)}


def main() -> None:
    for role in ("AUTHOR", "COMMITTER"):   # a machine without a git identity can run it too
        os.environ.setdefault(f"GIT_{role}_NAME", "swarm")
        os.environ.setdefault(f"GIT_{role}_EMAIL", "swarm@example.invalid")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clones", default="1,4,16")
    ap.add_argument("--worktrees", type=int, default=0)
    ap.add_argument("--moves", type=int, default=25)
    ap.add_argument("--backoff-max", type=float, default=None,
                    help="gitstate.pushBackoffMax for every clone (default: gitstate's, 1 s)")
    ap.add_argument("--think", type=float, default=0.0,
                    help="each agent works a random 0..THINK seconds between its moves "
                         "(default 0: every agent pushes again at once)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for n in (int(x) for x in args.clones.split(",")):
        r = measure(n, args.worktrees, args.moves, args.backoff_max, args.think)
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{n:>3} clones +{r['worktrees']} worktrees x {r['moves']} moves: "
                  f"{r['landed']} landed ({r['lost']} lost, {r['not_landed']} not landed) in "
                  f"{r['seconds']} s = {r['landed_per_second']} moves/s; "
                  f"{r['retries_per_landed']} retries per landed move; pre-receive "
                  f"{r['pre_receive_ms']} ms per push")


if __name__ == "__main__":
    main()
