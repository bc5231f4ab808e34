"""`gitstate serve` in a clone whose branch tracks a hub follows the hub: a move pushed from
another clone shows in the viewer without `git pull`, the clone's own branch and work tree are
left alone, and the "Live" line says what it follows. A clone without a hub, and a bare hub
served with `-C`, read their own HEAD as before."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import git
from hubs import hub_and_clones, pushed
from webhelp import section, text

pytest.importorskip("starlette", reason="pip install 'gitstate-agents[web]' to test the server")

DEADLINE = 60      # seconds; polled for, never waited out


def app_client(reading, follows):
    from starlette.testclient import TestClient

    from gitstate.web.asgi import LOCAL_HOSTS, create_app
    return TestClient(create_app(reading, hosts=LOCAL_HOSTS + ["testserver"], follows=follows))


def rev(repo, name: str) -> str:
    return git(repo, "rev-parse", name).stdout.strip()


def test_a_clone_follows_the_hub_without_a_pull(tmp_path):
    from gitstate.git.repo import open_managed
    from gitstate.web.follow import follow
    hub, (a, b) = hub_and_clones(tmp_path)
    head_before = rev(a, "HEAD")
    said: list[str] = []
    reading, follower, follows = follow(open_managed(str(a)), echo=said.append)
    assert follower is not None and said == []
    assert follows == f"origin/main on {hub}"
    with app_client(reading, follows) as web:
        assert web.get("/api/tip").json()["commit"] == rev(hub, "main")
        page = web.get("/").text
        assert f"Live: following origin/main on {hub}; this page shows new commits" in text(page)
        code, landed = pushed(b, "spawn", "ana", "--role", "architect")
        assert code == 0, landed
        assert "ana" not in text(section(web.get("/").text, "living"))   # not fetched yet
        assert follower.step()                   # the follower's one step: a fetch
        assert web.get("/api/tip").json()["commit"] == rev(hub, "main") != head_before
        assert "ana" in text(section(web.get("/").text, "living"))
        roster = web.get("/api/roster").json()
        assert [r["agent"] for r in roster["living"]] == ["ana"]
        assert web.get("/agent/ana").status_code == 200
        # time travel on the hub's line: HEAD~1 is the hub's commit before the spawn
        assert web.get("/api/roster?at=HEAD~1").json()["living"] == []
    # the clone itself is left as it was: its branch, HEAD, index and work tree
    assert rev(a, "HEAD") == rev(a, "main") == head_before
    assert git(a, "status", "--porcelain").stdout == ""
    assert rev(a, "refs/remotes/origin/main") == rev(hub, "main")


def test_the_follower_fetches_in_the_background(tmp_path):
    from gitstate.git.repo import open_managed
    from gitstate.web.follow import follow
    hub, (a, b) = hub_and_clones(tmp_path)
    reading, follower, follows = follow(open_managed(str(a)), echo=print)
    follower.every = 0.05
    follower.start()
    try:
        with app_client(reading, follows) as web:
            assert pushed(b, "spawn", "bea")[0] == 0
            end = time.monotonic() + DEADLINE
            while web.get("/api/tip").json()["commit"] != rev(hub, "main"):
                assert time.monotonic() < end, "the hub's new commit never showed"
                time.sleep(0.05)                 # polling with a deadline
            assert [r["agent"] for r in web.get("/api/roster").json()["living"]] == ["bea"]
    finally:
        follower.stop()


def test_a_hub_out_of_reach_is_said_and_followed_again_when_back(tmp_path):
    from gitstate.git.repo import open_managed
    from gitstate.web.follow import follow
    hub, (a, b) = hub_and_clones(tmp_path)
    said: list[str] = []
    reading, follower, _ = follow(open_managed(str(a)), echo=said.append)
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    assert not follower.step()
    assert len(said) == 1 and said[0].startswith("gitstate: warning: cannot fetch origin/main")
    assert "does not appear to be a git repository" in said[0]      # git's words, in short
    assert not follower.step() and len(said) == 1           # said once, not every 2 s
    git(a, "remote", "set-url", "origin", str(hub))
    assert pushed(b, "spawn", "cy")[0] == 0
    assert follower.step() and said[-1] == "gitstate: fetching origin/main works again"
    assert reading.git.head() == rev(hub, "main")
    # never fetched and out of reach: the clone's own branch is shown, and that is said
    git(a, "update-ref", "-d", "refs/remotes/origin/main")
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    said.clear()
    reading, follower, follows = follow(open_managed(str(a)), echo=said.append)
    assert follower is None and follows is None and reading.git.head() == rev(a, "HEAD")
    assert len(said) == 1 and "does not appear to be a git repository" in said[0]
    assert "it was never fetched, so the pages show this clone's main" in said[0]


def test_without_a_hub_the_branch_itself_is_read(tmp_path, repo):
    from gitstate.git.repo import open_managed
    from gitstate.web.follow import follow, hub_upstream
    assert hub_upstream(open_managed(str(repo))) is None            # no upstream at all
    git(repo, "branch", "side")
    git(repo, "switch", "-q", "side")
    git(repo, "branch", "--set-upstream-to=main")                   # an upstream here: "."
    assert git(repo, "config", "branch.side.remote").stdout.strip() == "."
    assert hub_upstream(open_managed(str(repo))) is None
    hub, _clones = hub_and_clones(tmp_path / "h")
    bare = open_managed(str(hub), bare_ok=True)
    reading, follower, _ = follow(bare)                             # a hub reads its HEAD
    assert follower is None and reading is bare
    with app_client(reading, None) as web:
        assert web.get("/api/tip").json()["commit"] == rev(hub, "main")
        assert "Live: this page follows new commits." in web.get("/").text


def _serve(where, *args: str):
    """`gitstate serve --port 0 ARGS` in `where`: (the process, the address, its lines)."""
    proc = subprocess.Popen([sys.executable, "-m", "gitstate", "serve", "--port", "0", *args],
                            cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    first = proc.stdout.readline()
    m = re.search(r"at (http://127\.0\.0\.1:\d+/) ", first)
    assert m, first + proc.stderr.read()
    return proc, m.group(1), first


def _tip(url: str) -> str:
    end = time.monotonic() + DEADLINE
    while True:
        try:
            with urllib.request.urlopen(url + "api/tip", timeout=10) as r:
                return json.loads(r.read())["commit"]
        except OSError:
            assert time.monotonic() < end, "gitstate serve did not answer"
            time.sleep(0.05)


def test_gitstate_serve_says_what_it_follows(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(b, "spawn", "dee")[0] == 0             # the hub is ahead of clone a
    proc, url, _first = _serve(a)
    try:
        live = proc.stdout.readline()
        assert live.startswith(f"gitstate: live: following origin/main on {hub} (fetched "
                               "every 2 s;"), live
        assert _tip(url) == rev(hub, "main") != rev(a, "HEAD")
    finally:
        proc.terminate()
        proc.wait(DEADLINE)
    proc, url, _first = _serve(a, "--no-follow")         # the clone as it is
    try:
        assert _tip(url) == rev(a, "HEAD")
    finally:
        proc.terminate()
        out = proc.communicate(timeout=DEADLINE)[0]
    assert "following" not in out


def test_a_clone_made_without_gitstate_init_follows_too(tmp_path):
    """A lead's fresh clone, only `git clone`d: its law is the hub's, read from the branch."""
    hub, (_a, b) = hub_and_clones(tmp_path)
    lead = tmp_path / "lead"
    git(tmp_path, "clone", "-q", str(hub), str(lead))
    assert pushed(b, "spawn", "eve")[0] == 0
    from gitstate.git.repo import open_managed
    from gitstate.web.follow import follow
    reading, follower, follows = follow(open_managed(str(lead)))
    assert follows == f"origin/main on {hub}"
    with app_client(reading, follows) as web:
        assert [r["agent"] for r in web.get("/api/roster").json()["living"]] == ["eve"]
