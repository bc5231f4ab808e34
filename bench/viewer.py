"""How fast the viewer answers on a long history: `gitstate serve` as a user runs it (uvicorn,
real HTTP on 127.0.0.1), and `gitstate site`.

For the synthetic repository (made by bench/gen.py if missing) it measures:
  roster page warm     GET /            with the index under .git/gitstate up to date
  /api/roster warm     GET /api/roster  likewise
  update +100          after 100 new commits land: GET /api/tip then GET /, which is what an
                       open page does when it sees the tip move (and GET /api/roster alike)
  agent page           GET /agent/ID: the first of a commit (groups every move and message
                       of the history by agent, once per commit) and the next agents' (warm,
                       once every agent's context was read in the background)
  update +100          also: GET /api/tip then an agent's page, after 100 new commits
  feed, team           GET /feed, GET /team: the first of a commit and warm
  site                 gitstate site --out DIR, a page for every agent (index warm), and
                       again with nothing kept under .git/gitstate (a fresh clone in CI)

    .venv/bin/python bench/viewer.py [--size 100000] [--runs 5]

Targets (issues #13, #25) on 100,000 commits with 1,000 agents, warm: roster page and feed
<= 100 ms, an agent's page <= 200 ms, the team chart <= 300 ms; the update after 100 new
commits <= 300 ms; the static site <= 5 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen import generate  # noqa: E402
from history import ENV, GITSTATE, append_commits  # noqa: E402


def get(url: str) -> float:
    """Seconds to fetch `url` completely."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as r:
        r.read()
        assert r.status == 200, (url, r.status)
    return time.perf_counter() - t0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(repo: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(GITSTATE + ["serve", "--port", str(port)], cwd=repo, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            get(base + "/api/tip")
            return proc, base
        except OSError:
            try:
                proc.wait(0.1)
                raise SystemExit(f"gitstate serve exited: {proc.stderr.read().decode()}")
            except subprocess.TimeoutExpired:
                pass
    raise SystemExit("gitstate serve did not answer")


def ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


def _site(repo: Path, out: Path) -> float:
    """Seconds `gitstate site --out OUT` takes."""
    t0 = time.perf_counter()
    done = subprocess.run(GITSTATE + ["site", "--out", str(out)], cwd=repo, env=ENV,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return time.perf_counter() - t0


def bench(source: Path, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="gitstate-bench-viewer-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(source, repo, symlinks=True)
        subprocess.run(["git", "commit-graph", "write", "--reachable"], cwd=repo, check=True)
        shutil.rmtree(repo / ".git" / "gitstate", ignore_errors=True)
        proc, base = start_server(repo)
        try:
            out = {"cold_api_roster_ms": get(base + "/api/roster") * 1000}
            get(base + "/")
            out["page_warm_ms"] = ms([get(base + "/") for _ in range(runs)])
            out["api_warm_ms"] = ms([get(base + "/api/roster") for _ in range(runs)])
            page_update, api_update = [], []
            for i in range(runs):
                append_commits(repo, 100, 2 * i)
                page_update.append(get(base + "/api/tip") + get(base + "/"))
                append_commits(repo, 100, 2 * i + 1)
                api_update.append(get(base + "/api/roster"))
            out["page_update_ms"], out["api_update_ms"] = ms(page_update), ms(api_update)
            out["agent_first_ms"] = get(base + "/agent/agent-0005") * 1000
            for _ in range(600):       # every agent's context, read in the server's thread
                if (repo / ".git" / "gitstate" / "contexts.json").is_file():
                    break
                time.sleep(0.1)
            out["agent_next_ms"] = ms([get(base + f"/agent/agent-{n:04d}")
                                       for n in range(6, 6 + runs)])
            out["agent_again_ms"] = ms([get(base + "/agent/agent-0005") for _ in range(runs)])
            after = []
            for i in range(runs):   # what an open agent page does when the tip moves
                append_commits(repo, 100, 2 * runs + i)
                after.append(get(base + "/api/tip") + get(base + f"/agent/agent-{20 + i:04d}"))
            out["agent_update_ms"] = ms(after)
            out["feed_first_ms"] = get(base + "/feed") * 1000
            out["feed_warm_ms"] = ms([get(base + "/feed") for _ in range(runs)])
            out["team_first_ms"] = get(base + "/team") * 1000
            out["team_warm_ms"] = ms([get(base + "/team") for _ in range(runs)])
            out["filtered_warm_ms"] = ms([get(base + "/?state=deep_work&q=agent-01")
                                          for _ in range(runs)])
        finally:
            proc.terminate()
            proc.wait(10)
        out["site_s"] = _site(repo, Path(tmp) / "site")
        # as a CI job's fresh clone does: nothing kept under .git/gitstate
        shutil.rmtree(repo / ".git" / "gitstate", ignore_errors=True)
        out["site_cold_s"] = _site(repo, Path(tmp) / "site2")
        out["site_files"] = sum(1 for _ in (Path(tmp) / "site").rglob("*") if _.is_file())
        out["commits"] = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo,
                                            capture_output=True, text=True).stdout)
    return out


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
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, median of {args.runs} runs")
    r = bench(source, args.runs)
    print(f"commits at the end: {r['commits']}")
    print(f"/api/roster cold (index built):   {r['cold_api_roster_ms']:7.0f} ms")
    print(f"roster page warm:                 {r['page_warm_ms']:7.0f} ms   (target 100)")
    print(f"roster page filtered, warm:       {r['filtered_warm_ms']:7.0f} ms   (target 100)")
    print(f"/api/roster warm:                 {r['api_warm_ms']:7.0f} ms   (target 200)")
    print(f"update +100 commits: tip + page:  {r['page_update_ms']:7.0f} ms   (target 300)")
    print(f"update +100 commits: /api/roster: {r['api_update_ms']:7.0f} ms   (target 300)")
    print(f"agent page, first of a commit:    {r['agent_first_ms']:7.0f} ms")
    print(f"agent page, next ones (warm):     {r['agent_next_ms']:7.0f} ms   (target 200)")
    print(f"agent page, the same again:       {r['agent_again_ms']:7.0f} ms   (target 200)")
    print(f"update +100 commits: agent page:  {r['agent_update_ms']:7.0f} ms")
    print(f"feed, first of a commit:          {r['feed_first_ms']:7.0f} ms")
    print(f"feed warm:                        {r['feed_warm_ms']:7.0f} ms   (target 100)")
    print(f"team chart, first of a commit:    {r['team_first_ms']:7.0f} ms")
    print(f"team chart warm:                  {r['team_warm_ms']:7.0f} ms   (target 300)")
    print(f"gitstate site ({r['site_files']} files):     {r['site_s']:7.1f} s   (target 5)")
    print(f"gitstate site, nothing kept yet:  {r['site_cold_s']:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
