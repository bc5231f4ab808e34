"""A swarm of agents meeting at one hub over a real transport (`git daemon` on 127.0.0.1).

Each clone (and each worktree) runs its own agent through a number of moves, every one a
`gitstate spawn/transition ... --push --json` command-line process, as users and agent
runtimes run them, all clones at once. The hub is made by `gitstate init --server` (a landing
queue), or with `--hub retry` the same hub without its queue (`--push` fetches, replays and
pushes again), or with `--hub plain` a bare repository with no hooks at all (as GitHub). With
default settings (no `gitstate.push*` config) unless `--attempts` says otherwise. Reports moves
landed per second, time from command start to landed (median, p99, longest), the worst
agent's p99 against the median agent's (fairness), attempts, and the hub's cost per landing.
Run from the repository root:

    .venv/bin/python bench/swarm.py [--clones 1,4,16] [--worktrees 0] [--moves 10] [--hub queue]

The swarm test (tests/git/test_swarm.py) uses the same set-up.
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


def make_hub(where: Path, *, preset: str | None = None, kind: str = "queue") -> Path:
    """A bare hub with `init --server` and a managed history on main; `kind` retry: without
    its landing queue; plain: no hooks at all."""
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
    if kind != "queue":
        sh(hub, "git", "update-ref", "-d", "refs/gitstate/hub")
        sh(hub, "git", "config", "--unset", "receive.procReceiveRefs")
    if kind == "plain":
        for name in ("pre-receive", "proc-receive", "post-receive"):
            (hub / "hooks" / name).unlink()
    return hub


def make_clones(where: Path, url: str, clones: int, worktrees: int,
                backoff: float | None = None, attempts: int | None = None) -> list[Path]:
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
    for p in places:   # gitstate's defaults unless asked
        if attempts is not None:
            sh(p, "git", "config", "gitstate.pushAttempts", str(attempts))
        if backoff is not None:
            sh(p, "git", "config", "gitstate.pushBackoffMax", str(backoff))
    return places


WORKER = r"""
import json, random, subprocess, sys, time
place, agent, moves, out, role = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
think = float(sys.argv[6])
loop = %r
rows = []
for i in range(moves):
    if i == 0:
        args = ["spawn", agent] + (["--role", role] if role else [])
    else:
        if think:   # an agent works between two moves: it does not push again the same instant
            time.sleep(random.uniform(0, think))
        args = ["transition", agent, loop[(i - 1) %% len(loop)], "-m", f"move {i}"]
    t = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "gitstate", *args, "--push", "--json"],
                          cwd=place, capture_output=True, text=True)
    seconds = time.monotonic() - t
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        data = {"error": proc.stderr.strip() or proc.stdout.strip()}
    if "outcome" not in data:   # refused before anything was committed
        rows.append({"move": i, "outcome": "refused", "reason": data.get("message")
                     or data.get("error"), "attempts": 0, "seconds": seconds})
        break
    rows.append({"move": i, "outcome": data["outcome"], "attempts": data["attempts"],
                 "commit": data["commit"], "reason": data["reason"], "rule": data.get("rule"),
                 "kept": data["kept"], "seconds": seconds})
    if data["outcome"] != "landed":
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


def landing_seconds(hub: Path, clone: Path, agent: str, landings: int = 5) -> float:
    """Median time the hub takes to land one queued move on an otherwise idle hub: its
    proc-receive hook run as git runs it, for a move whose objects the hub has."""
    import statistics
    sh(clone, "git", "pull", "-q", "--ff-only", str(hub), "main")
    times = []
    for _ in range(landings):
        state = json.loads(gitstate(clone, "status", agent, "--json"))["state"]
        gitstate(clone, "transition", agent, state, "-m", "progress")
        new = sh(clone, "git", "rev-parse", "HEAD").strip()
        sh(clone, "git", "push", "-q", "--no-verify", str(hub), "+HEAD:refs/heads/bench-objects")
        request = "".join(_pkt(line) for line in ("version=1\0", None,
                                                  f"{'0' * 40} {new} refs/gitstate/queue/main",
                                                  None))
        t = time.perf_counter()
        proc = subprocess.run([str(hub / "hooks" / "proc-receive")], cwd=hub, input=request,
                              text=True, capture_output=True, env=dict(os.environ,
                                                                       GIT_DIR=str(hub)))
        times.append(time.perf_counter() - t)
        if proc.returncode != 0 or "ok refs/gitstate/queue/main" not in proc.stdout:
            raise RuntimeError(proc.stdout + proc.stderr)
    sh(hub, "git", "update-ref", "-d", "refs/heads/bench-objects")
    return statistics.median(times)


def _pkt(line: str | None) -> str:
    return "0000" if line is None else f"{len(line) + 4:04x}{line}"


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summarise(results: list[list[dict]], wall: float, hub: Path) -> dict:
    rows = [r for rs in results for r in rs]
    landed = [r for r in rows if r["outcome"] == "landed"]
    on_hub = set(sh(hub, "git", "rev-list", "main").split())
    seconds = [r["seconds"] for r in landed]
    per_agent = sorted(percentile([r["seconds"] for r in rs], 0.99) for rs in results if rs)
    median_p99 = per_agent[len(per_agent) // 2] if per_agent else 0.0
    return {"landed": len(landed), "lost": sum(1 for r in landed if r["commit"] not in on_hub),
            "not_landed": len(rows) - len(landed),
            "reasons": sorted({str(r.get("rule") or r.get("reason"))[:120]
                               for r in rows if r["outcome"] != "landed"}),
            "seconds": round(wall, 1), "landed_per_second": round(len(landed) / wall, 2),
            "p50": round(percentile(seconds, 0.5), 2) if seconds else None,
            "p99": round(percentile(seconds, 0.99), 2) if seconds else None,
            "longest": round(max(seconds), 2) if seconds else None,
            "worst_agent_p99_over_median": round(per_agent[-1] / median_p99, 2)
            if median_p99 else None,
            "attempts_max": max((r["attempts"] for r in landed), default=0),
            "retries_per_landed": round(sum(r["attempts"] - 1 for r in landed)
                                        / max(1, len(landed)), 2)}


def measure(n: int, worktrees: int, moves: int, *, kind: str = "queue",
            backoff: float | None = None, attempts: int | None = None,
            think: float = 0.0) -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-swarm-") as tmp:
        where = Path(tmp)
        hub = make_hub(where, kind=kind)
        daemon = Daemon(where)
        try:
            places = make_clones(where, daemon.url("hub.git"), n, worktrees, backoff, attempts)
            results, wall = run_swarm(places, moves, where, think=think)
        finally:
            daemon.stop()
        out = {"hub": kind, "clones": n, "worktrees": worktrees, "moves": moves,
               **summarise(results, wall, hub)}
        if kind == "queue":
            out["landing_ms"] = round(landing_seconds(hub, places[0], "agent-00") * 1000)
        return out


def main() -> None:
    for role in ("AUTHOR", "COMMITTER"):   # a machine without a git identity can run it too
        os.environ.setdefault(f"GIT_{role}_NAME", "swarm")
        os.environ.setdefault(f"GIT_{role}_EMAIL", "swarm@example.invalid")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clones", default="1,4,16")
    ap.add_argument("--worktrees", type=int, default=0)
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--hub", choices=("queue", "retry", "plain"), default="queue",
                    help="queue: init --server; retry: without its queue; plain: no hooks")
    ap.add_argument("--attempts", type=int, default=None,
                    help="gitstate.pushAttempts for every clone (default: none, time bounds)")
    ap.add_argument("--backoff-max", type=float, default=None,
                    help="gitstate.pushBackoffMax for every clone (default: gitstate's, 2 s)")
    ap.add_argument("--think", type=float, default=0.0,
                    help="each agent works a random 0..THINK seconds between its moves "
                         "(default 0: every agent pushes again at once)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for n in (int(x) for x in args.clones.split(",")):
        r = measure(n, args.worktrees, args.moves, kind=args.hub, backoff=args.backoff_max,
                    attempts=args.attempts, think=args.think)
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{args.hub} hub, {n:>2} clones +{r['worktrees']} worktrees x {r['moves']} "
                  f"moves: {r['landed']} landed ({r['lost']} lost, {r['not_landed']} not "
                  f"landed) in {r['seconds']} s = {r['landed_per_second']} moves/s; command "
                  f"to landed p50 {r['p50']} s, p99 {r['p99']} s, longest {r['longest']} s; "
                  f"worst agent's p99 / median agent's {r['worst_agent_p99_over_median']}; "
                  f"attempts max {r['attempts_max']}"
                  + (f"; a landing costs the hub {r['landing_ms']} ms" if "landing_ms" in r
                     else ""))
            for reason in r["reasons"]:
                print(f"    not landed: {reason}")


if __name__ == "__main__":
    main()
