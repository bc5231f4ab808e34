"""A swarm of agents meeting at one hub over a real transport on 127.0.0.1: `git daemon`, or
with `--transport http` smart HTTP through nginx + fcgiwrap + `git http-backend` (Debian's
packages: `apt-get install -y nginx fcgiwrap`), the way a team hosts a hub.

Each clone (and each worktree) runs its own agent through a number of moves, every one a
`gitstate spawn/transition ... --push --json` command-line process, as users and agent
runtimes run them, all clones at once. The hub is made by `gitstate init --server` (a landing
queue), or with `--hub retry` the same hub without its queue (`--push` fetches, replays and
pushes again), or with `--hub plain` a bare repository with no hooks at all (as GitHub). With
default settings (no `gitstate.push*` config) unless `--attempts` says otherwise. Reports moves
landed per second, time from command start to landed (median, p99, longest), the worst
agent's p99 against the median agent's (fairness), attempts, the hub's cost per landing on
an idle hub, and the hub's own rate: moves filed in its queue at once and landed by one
drain, timed apart from any client (`--hub-rate N`). `--against PYTHON` measures another
install's gitstate too (e.g. one from before a change), each figure just before this one's,
so that a before/after pair shares the run and its load; each figure says the load average
at its start and end. Run from the repository root:

    .venv/bin/python bench/swarm.py [--clones 1,4,16] [--worktrees 0] [--moves 10] [--hub queue]
                                    [--transport daemon|http] [--hub-rate 16] [--against PY]

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
# the gitstate every hub, clone and agent of a measurement runs: this one, or (`--against`)
# another install's, for a before/after pair measured in the same run
PYTHON = sys.executable
# one agent's walk through haak: born, then round the work loop
LOOP = ["inbox", "distill", "deep_work", "inbox", "distill", "idle"]


def sh(cwd: Path, *args: str, env: dict | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed in {cwd}: {proc.stderr}")
    return proc.stdout


def gitstate(cwd: Path, *args: str) -> str:
    return sh(cwd, PYTHON, "-m", "gitstate", *args)


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


GIT_HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"
# what the hub's hooks need from this process's environment under the web server (fcgiwrap
# hands a CGI only the FastCGI parameters): git and python on PATH, the same git config
_PASSED_ENV = ("PATH", "HOME", "LANG", "PYTHONPATH", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
               "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
               "GIT_COMMITTER_EMAIL")


def http_missing() -> str | None:
    """Why a hub cannot be served over smart HTTP here (None: it can)."""
    missing = [name for name in ("nginx", "fcgiwrap") if not _which_sbin(name)]
    if not Path(GIT_HTTP_BACKEND).exists():
        missing.append(GIT_HTTP_BACKEND)
    return ", ".join(missing) + " missing: `apt-get install -y nginx fcgiwrap`" if missing \
        else None


def _which_sbin(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def _nginx_conf(run: Path, port: int, sock: Path, base: Path) -> str:
    """nginx's configuration: `git http-backend` through fcgiwrap's socket on `port`."""
    params = {"SCRIPT_FILENAME": GIT_HTTP_BACKEND, "GIT_PROJECT_ROOT": str(base),
              "GIT_HTTP_EXPORT_ALL": "1", "REMOTE_USER": "swarm",   # receive-pack on
              **{k: os.environ[k] for k in _PASSED_ENV if k in os.environ},
              **{k: v for k, v in os.environ.items() if k.startswith("GITSTATE_")}}
    fastcgi = "\n".join(f"            fastcgi_param {k} {_quoted(v)};"
                        for k, v in params.items())
    temp = "\n".join(f"    {kind}_temp_path {run / kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    user = "user root;\n" if os.geteuid() == 0 else ""   # workers reach our socket
    return f"""{user}daemon off;
worker_processes 2;
pid {run / "nginx.pid"};
error_log {run / "error.log"};
events {{ worker_connections 512; }}
http {{
    access_log off;
{temp}
    client_max_body_size 0;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            fastcgi_pass unix:{sock};
            fastcgi_read_timeout 600s;
            fastcgi_send_timeout 600s;
            fastcgi_buffering off;
            fastcgi_request_buffering off;
            fastcgi_param REQUEST_METHOD $request_method;
            fastcgi_param QUERY_STRING $query_string;
            fastcgi_param CONTENT_TYPE $content_type;
            fastcgi_param CONTENT_LENGTH $content_length;
            fastcgi_param HTTP_CONTENT_ENCODING $http_content_encoding;
            fastcgi_param GIT_PROTOCOL $http_git_protocol;
            fastcgi_param PATH_INFO $uri;
            fastcgi_param REMOTE_ADDR $remote_addr;
            fastcgi_param SERVER_PROTOCOL $server_protocol;
{fastcgi}
        }}
    }}
}}
"""


class HttpHub:
    """nginx + fcgiwrap + `git http-backend` serving `base` (push allowed) on a free port of
    127.0.0.1, the way a team hosts a hub over smart HTTP: everything (config, pid, logs,
    request bodies, fcgiwrap's socket) in a private temporary folder, no root-owned path."""

    def __init__(self, base: Path):
        self.run = Path(tempfile.mkdtemp(prefix="gitstate-http-"))
        self.port = free_port()
        sock = self.run / "fcgi.sock"
        # its own process group: the 24 workers it forks are stopped with it
        self.fcgi = subprocess.Popen([_which_sbin("fcgiwrap") or "fcgiwrap", "-c", "24", "-f",
                                      "-s", f"unix:{sock}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        _wait_for(lambda: sock.exists(), self.fcgi, "fcgiwrap")
        (self.run / "nginx.conf").write_text(_nginx_conf(self.run, self.port, sock, base))
        self.proc = subprocess.Popen([_which_sbin("nginx") or "nginx", "-p", str(self.run),
                                      "-c", str(self.run / "nginx.conf"), "-e",
                                      str(self.run / "error.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False
        try:
            _wait_for(listening, self.proc, "nginx")
        except RuntimeError:
            self.stop()
            raise

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        import signal
        for proc in (getattr(self, "proc", None), self.fcgi):
            if proc is None:
                continue
            group = proc is self.fcgi     # fcgiwrap's workers outlive their parent otherwise
            proc.send_signal(signal.SIGTERM) if not group else _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill() if not group else _signal_group(proc, signal.SIGKILL)
                proc.wait()
            if group:
                _signal_group(proc, signal.SIGKILL)   # any worker still there
        shutil.rmtree(self.run, ignore_errors=True)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _wait_for(ready, proc: subprocess.Popen, name: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"{name} stopped: {err}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not start listening")
        time.sleep(0.05)


def serve(base: Path, transport: str) -> Daemon | HttpHub:
    """The hubs under `base` served over `transport`: daemon (git://) or http (nginx)."""
    return HttpHub(base) if transport == "http" else Daemon(base)


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
    gitstate(seed, "init", "--human", "zach", *(("--lifecycle", preset) if preset else ()))
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
    if "push" not in data:   # refused before anything was committed
        rows.append({"move": i, "outcome": "refused", "reason": data.get("message")
                     or data.get("error"), "attempts": 0, "seconds": seconds})
        break
    data = data["push"]     # how the move landed (the rest is the move's own record)
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
    env = dict(os.environ, PYTHONPATH=str(ROOT)) if PYTHON == sys.executable else \
        {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    procs = []
    start = time.monotonic()
    for i, (place, agent) in enumerate(zip(places, agents)):
        dest = out / f"rows-{i}.json"
        procs.append((subprocess.Popen([PYTHON, "-c", WORKER, str(place), agent,
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


DRAIN = r"""
import json, resource, sys, time
from gitstate.doors.queue import drain
from gitstate.git.runner import Git
def cpu():
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))
t, c = time.perf_counter(), cpu()
outcomes = drain(Git(sys.argv[1]))
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": cpu() - c,
                  "landed": sum(1 for o in outcomes if o["outcome"] == "landed")}))
"""


def hub_rate(n: int, pythons: list[str]) -> list[dict]:
    """The hub's own rate, its clients timed apart from it: `n` moves, each made by its own
    agent on the same tip (as a burst of clones makes them), filed in the landing queue as
    `n` pushers file them, then landed by one `drain`, timed in its process (without the
    interpreter's start; its CPU time with its git processes' too, the figure a loaded
    machine does not inflate). One copy of the same hub for each Python in `pythons`."""
    with tempfile.TemporaryDirectory(prefix="gitstate-hub-rate-") as tmp:
        where = Path(tmp)
        hub = make_hub(where)
        clone = where / "clone"
        sh(where, "git", "clone", "-q", str(hub), str(clone))
        gitstate(clone, "init")
        agents = [f"agent-{i:02d}" for i in range(n)]
        for agent in agents:
            gitstate(clone, "spawn", agent)
        sh(clone, "git", "push", "-q", "origin", "HEAD:main")
        tip = sh(clone, "git", "rev-parse", "HEAD").strip()
        moves = []
        for i, agent in enumerate(agents):   # (gitstate itself would land each on main)
            sh(clone, "git", "switch", "-q", "--detach", tip)
            path = clone / "agent" / agent / "_state.md"
            path.write_text(path.read_text().replace("state: bootstrap", "state: inbox", 1))
            sh(clone, "git", "add", str(path))
            sh(clone, "git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",
               f"@{agent}: [STATE:inbox] bootstrap -> inbox")
            moves.append(sh(clone, "git", "rev-parse", "HEAD").strip())
            sh(clone, "git", "branch", "-q", "-f", f"rate-{i}", "HEAD")
        sh(clone, "git", "push", "-q", "origin", *(f"rate-{i}" for i in range(n)))
        results = []
        for k, python in enumerate(pythons):
            copy = where / f"hub-{k}.git"
            shutil.copytree(hub, copy)
            queue = copy / "gitstate" / "queue"
            queue.mkdir(parents=True, exist_ok=True)
            for move in moves:
                (queue / f"{time.time_ns():020d}-1-{move[:12]}").write_text(json.dumps(
                    {"branch": "refs/heads/main", "move": move}))
            proc = subprocess.run([python, "-c", DRAIN, str(copy)], cwd=where,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"drain failed: {proc.stderr}")
            got = json.loads(proc.stdout)
            count = int(sh(copy, "git", "rev-list", "--count", f"{tip}..main"))
            results.append({"python": python, "requests": n, "landed": got["landed"],
                             "commits": count, "seconds": round(got["seconds"], 3),
                             "cpu_seconds": round(got["cpu"], 3),
                             "landings_per_second": round(got["landed"] / got["seconds"], 1),
                             "landings_per_cpu_second": round(got["landed"] / got["cpu"], 1)})
        return results


def _pkt(line: str | None) -> str:
    return "0000" if line is None else f"{len(line) + 4:04x}{line}"


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summarise(results: list[list[dict]], wall: float, hub: Path) -> dict:
    rows = [r for rs in results for r in rs]
    landed = [r for r in rows if r["outcome"] == "landed"]
    on_hub = set(sh(hub, "git", "rev-list", "main").split())
    return {"landed": len(landed), "lost": sum(1 for r in landed if r["commit"] not in on_hub),
            "not_landed": len(rows) - len(landed),
            "reasons": sorted({str(r.get("rule") or r.get("reason"))[:120]
                               for r in rows if r["outcome"] != "landed"}),
            "seconds": round(wall, 1), "landed_per_second": round(len(landed) / wall, 2),
            **_latencies([r["seconds"] for r in landed], results),
            "attempts_max": max((r["attempts"] for r in landed), default=0),
            "retries_per_landed": round(sum(r["attempts"] - 1 for r in landed)
                                        / max(1, len(landed)), 2)}


def _latencies(seconds: list[float], results: list[list[dict]]) -> dict:
    """Command to landed: p50, p99 and the longest; the worst agent's p99 over the median's."""
    per_agent = sorted(percentile([r["seconds"] for r in rs], 0.99) for rs in results if rs)
    median_p99 = per_agent[len(per_agent) // 2] if per_agent else 0.0
    if not seconds:
        return {"p50": None, "p99": None, "longest": None,
                "worst_agent_p99_over_median": round(per_agent[-1] / median_p99, 2)
                if median_p99 else None}
    return {"p50": round(percentile(seconds, 0.5), 2), "p99": round(percentile(seconds, 0.99), 2),
            "longest": round(max(seconds), 2),
            "worst_agent_p99_over_median": round(per_agent[-1] / median_p99, 2)
            if median_p99 else None}


def _children_cpu() -> float:
    """CPU seconds of every process this one started and waited for, and theirs."""
    import resource
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(n: int, worktrees: int, moves: int, *, kind: str = "queue",
            backoff: float | None = None, attempts: int | None = None,
            think: float = 0.0, transport: str = "daemon") -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-swarm-") as tmp:
        where = Path(tmp)
        hub = make_hub(where, kind=kind)
        daemon = serve(where, transport)
        try:
            places = make_clones(where, daemon.url("hub.git"), n, worktrees, backoff, attempts)
            cpu0 = _children_cpu()
            results, wall = run_swarm(places, moves, where, think=think)
        finally:
            daemon.stop()
        cpu = _children_cpu() - cpu0
        out = {"hub": kind, "transport": transport, "clones": n, "worktrees": worktrees,
               "moves": moves,
               **summarise(results, wall, hub)}
        # the burst's CPU in all its processes (clients, git daemon, the hub's), what a
        # loaded machine does not inflate as it does the clock
        out["cpu_ms_per_move"] = round(cpu * 1000 / max(1, out["landed"]))
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
    ap.add_argument("--transport", choices=("daemon", "http"), default="daemon",
                    help="daemon: git daemon (git://); http: nginx + fcgiwrap + git "
                         "http-backend (smart HTTP)")
    ap.add_argument("--against", metavar="PYTHON",
                    help="measure the gitstate of this Python too (e.g. an install from "
                         "before a change), each figure just before this one's: a pair from "
                         "the same run, under the same load")
    ap.add_argument("--hub-rate", type=int, default=16, metavar="N",
                    help="the hub's own rate: N moves made on one tip, filed in its queue at "
                         "once and landed by one drain, timed apart from any client "
                         "(default 16; 0: not measured)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.transport == "http" and http_missing():
        ap.error(f"--transport http: {http_missing()}")
    global PYTHON
    pythons = ([args.against] if args.against else []) + [sys.executable]
    for n in (int(x) for x in args.clones.split(",")):
        for python in pythons:
            PYTHON = python
            load = os.getloadavg()[0]
            r = measure(n, args.worktrees, args.moves, kind=args.hub,
                        backoff=args.backoff_max, attempts=args.attempts, think=args.think,
                        transport=args.transport)
            r.update(python=python, load=[round(load, 1), round(os.getloadavg()[0], 1)])
            _show(r, args.json)
    PYTHON = sys.executable
    if args.hub_rate and args.hub == "queue":
        load = os.getloadavg()[0]
        for r in hub_rate(args.hub_rate, pythons):
            r["load"] = [round(load, 1), round(os.getloadavg()[0], 1)]
            print(json.dumps(r) if args.json else
                  f"the hub's own rate ({r['python']}): {r['requests']} moves filed at once, "
                  f"{r['landed']} landed ({r['commits']} commits on the branch) in "
                  f"{r['seconds']} s = {r['landings_per_second']} landings/s ("
                  f"{r['cpu_seconds']} s of CPU, its processes' and git's: "
                  f"{r['landings_per_cpu_second']} landings per CPU-second); load average "
                  f"{r['load'][0]} -> {r['load'][1]}")


def _show(r: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(r))
        return
    print(f"{r['hub']} hub over {r['transport']} ({r['python']}), {r['clones']:>2} clones "
          f"+{r['worktrees']} worktrees x {r['moves']} moves: {r['landed']} landed ({r['lost']} "
          f"lost, {r['not_landed']} not landed) in {r['seconds']} s = "
          f"{r['landed_per_second']} moves/s; command to landed p50 {r['p50']} s, p99 "
          f"{r['p99']} s, longest {r['longest']} s; worst agent's p99 / median agent's "
          f"{r['worst_agent_p99_over_median']}; attempts max {r['attempts_max']}"
          + f"; {r['cpu_ms_per_move']} ms of CPU per move in all its processes"
          + (f"; a landing costs the hub {r['landing_ms']} ms" if "landing_ms" in r else "")
          + f"; load average {r['load'][0]} -> {r['load'][1]}")
    for reason in r["reasons"]:
        print(f"    not landed: {reason}")


if __name__ == "__main__":
    main()
