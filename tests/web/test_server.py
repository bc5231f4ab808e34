"""The viewer through an HTTP client: the demo's roster, an agent's timeline, a frozen agent's
freeze-state, vacancies, the lifecycle drawn with its counts, time travel, the JSON under /api/
equal to the CLI's --json, and hostile text shown as text."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import git, gitstate, walk
from webhelp import client, free_port, make_demo, section, text

pytest.importorskip("starlette", reason="pip install 'gitstate-agents[web]' to test the server")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("viewer") / "demo")


@pytest.fixture
def web(demo):
    with client(demo) as c:
        yield c


def cli_json(repo, *args):
    res = gitstate(repo, *args, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_roster_shows_the_demo_agents_in_their_sections(web):
    page = web.get("/")
    assert page.status_code == 200
    assert "bob" in text(section(page.text, "living")) and "dan" in text(section(page.text, "living"))
    assert "carol" in text(section(page.text, "freezer"))
    assert "alice" in text(section(page.text, "cemetery"))
    living = text(section(page.text, "living"))
    assert "distill" in living and "librarian #1" in living
    assert '<a href="/agent/alice">' not in section(page.text, "living")   # bob speaks of her
    assert "Designed the roster fold" in text(section(page.text, "cemetery"))
    assert '<th scope="col"><a href="/?sort=agent" title="order by Agent">Agent</a></th>' \
        in page.text and '<th scope="row"' in page.text
    assert '<a href="/agent/bob">bob</a>' in page.text


def test_agent_page_shows_its_timeline_and_inbox(web):
    page = web.get("/agent/alice")
    assert page.status_code == 200
    seen = text(page.text)
    for move in ("born in bootstrap", "bootstrap → inbox", "distill → deep_work",
                 "deep_work → dead"):
        assert move in seen, move
    assert "roster: design drafted" in seen and "gitstate demo" in seen   # text and author
    assert seen.index("born in bootstrap") < seen.index("deep_work → dead")  # oldest first
    bob = text(web.get("/agent/bob").text)
    assert "Inbox" in bob and "@bob please index docs/design.md" in bob


def test_a_frozen_agent_shows_its_freeze_state_and_how_to_wake_it(web):
    seen = text(web.get("/agent/carol").text)
    assert "Freeze-state" in seen and "data/freeze-states/carol.md" in seen
    for heading in ("Key Decisions", "Open Questions", "Handoff Notes"):
        assert heading in seen
    assert "gitstate wake carol --approved-by zach" in seen
    assert "Freeze-state" not in text(web.get("/agent/bob").text)


def test_vacant_roles_with_their_notices(web):
    seen = text(web.get("/vacancies").text)
    assert "Role 'architect'" not in seen           # alice handed it to dan before she died
    assert "Role 'steward' is vacant. Last held by carol" in seen
    assert "Role 'strategist' has never been filled" in seen
    assert "Vacant roles (3)" in text(web.get("/").text)


def test_the_lifecycle_is_drawn_with_how_many_agents_stand_in_each_state(web):
    page = web.get("/lifecycle").text
    svg = page[page.index("<svg"):page.index("</svg>")]
    for state, n in (("distill", "1 agent"), ("frozen", "1 agent"), ("dead", "1 agent"),
                     ("inbox", "0 agents"), ("bootstrap", "1 agent"),
                     ("deep_work", "0 agents")):
        assert f"<title>{state}: {n}" in svg, state
    assert svg.count('<g class="state') == 7
    assert "approval" in svg            # leaving frozen is gated
    assert "https://" not in page and "<script" not in page.split("</footer>")[0]


def test_time_travel_on_every_page(web, demo):
    before = git(demo, "log", "--format=%H", "-1", "--grep=carol: \\[STATE:frozen\\]").stdout
    before = git(demo, "rev-parse", f"{before.strip()}~1").stdout.strip()
    then = web.get(f"/?at={before}")
    assert then.status_code == 200
    assert "alice" in text(section(then.text, "living"))
    assert "carol" in text(section(then.text, "living"))     # not yet frozen
    assert "Live updates are off" in then.text and 'data-live="0"' in then.text
    assert f'href="/agent/alice?at={before}"' in then.text      # links stay in that moment
    for path in ("/lifecycle", "/vacancies", "/agent/alice", "/agent/carol"):
        assert web.get(f"{path}?at={before}").status_code == 200, path
    assert "Role 'steward' is vacant" not in text(web.get(f"/vacancies?at={before}").text)
    assert "Role 'steward' is vacant" in text(web.get("/vacancies").text)
    for bad in ("no-such-rev", "-x", "HEAD~999"):
        res = web.get(f"/?at={bad}")
        assert res.status_code == 400 and "neither a revision nor a date" in text(res.text), bad
        api = web.get(f"/api/roster?at={bad}")
        assert api.status_code == 400 and api.json()["error"] == "UsageError"
    assert web.get("/agent/nobody").status_code == 404
    assert web.get("/agent/..%2Fetc").status_code in (400, 404)


def test_api_equals_the_cli_json(web, demo):
    pinned = cli_json(demo, "roster", "--at", "HEAD")
    assert web.get("/api/roster?at=HEAD").json() == pinned
    now, cli = web.get("/api/roster").json(), cli_json(demo, "roster")
    for view in (now, cli):
        for group in ("living", "freezer", "cemetery"):
            for r in view[group]:
                r.pop("seconds_in_state")           # the wall clock moved in between
    assert now == cli
    assert web.get("/api/vacancies").json() == cli_json(demo, "vacancies")
    assert web.get("/api/log").json() == cli_json(demo, "log")
    assert web.get("/api/log/alice").json() == cli_json(demo, "log", "alice")
    assert web.get("/api/inbox/bob").json() == cli_json(demo, "inbox", "bob")
    assert web.get("/api/show/carol").json() == cli_json(demo, "show", "carol")
    assert web.get("/api/lifecycle").json() == cli_json(demo, "lifecycle")
    assert web.get("/api/lifecycle?at=HEAD~1").json()["name"] == "haak"
    assert web.get("/api/show/bob").status_code == 404


def test_hostile_text_is_shown_as_text(repo):
    evil = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    assert gitstate(repo, "spawn", "mallory", "--role", "auditor", "--set",
                    f"summary={evil}", "-m", f"born {evil}").returncode == 0
    walk(repo, "mallory", "inbox")
    with client(repo) as web:
        for path in ("/", "/agent/mallory", "/vacancies", "/lifecycle"):
            page = web.get(path)
            assert page.status_code == 200
            assert "<script>alert" not in page.text and "<img src=x" not in page.text, path
            assert "default-src 'none'" in page.headers["content-security-policy"]
        roster = web.get("/").text
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in roster
        assert evil in text(roster) and f"born {evil}" in text(web.get("/agent/mallory").text)


def test_the_tip_moves_when_a_commit_lands(repo):
    with client(repo) as web:
        first = web.get("/api/tip").json()["commit"]
        assert gitstate(repo, "spawn", "dave").returncode == 0
        second = web.get("/api/tip").json()["commit"]
        assert second != first and second == git(repo, "rev-parse", "HEAD").stdout.strip()
        assert "dave" in text(section(web.get("/").text, "living"))


def test_only_this_machine_is_answered_and_nothing_is_written(web):
    assert web.get("/", headers={"host": "evil.example"}).status_code == 400
    assert web.post("/").status_code == 405
    assert web.get("/static/style.css").headers["content-type"].startswith("text/css")
    assert web.get("/static/../app.py").status_code == 404


def test_serve_without_the_web_extra_says_how_to_get_it(repo):
    code = ("import sys; sys.modules['uvicorn'] = None; from gitstate.__main__ import main; "
            "sys.exit(main(['serve']))")
    res = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert res.returncode == 1
    # (as this gitstate was installed: from the folder of a clone, else from the index)
    from gitstate.resources import install_extra
    assert f"pip install {install_extra('web')}" in res.stderr and "Traceback" not in res.stderr


def test_gitstate_serve_listens_on_localhost(repo):
    import urllib.request
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gitstate", "serve", "--port", str(port)],
                            cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()        # printed once the repository is open
        assert f"http://127.0.0.1:{port}/" in line and "read-only" in line
        for _ in range(100):                 # until uvicorn listens (bounded)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tip", timeout=2) as r:
                    body = json.loads(r.read())
                break
            except OSError:
                try:                         # not listening yet: unless it died, try again
                    proc.wait(0.1)
                    raise AssertionError(proc.stderr.read())
                except subprocess.TimeoutExpired:
                    pass
        else:
            raise AssertionError("gitstate serve did not answer")
        assert body["commit"] == git(repo, "rev-parse", "HEAD").stdout.strip()
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_on_port_0_picks_a_free_port_prints_it_and_opens_a_browser(repo, tmp_path):
    import os
    import re
    import urllib.request
    seen = tmp_path / "opened"
    browser = tmp_path / "browser.sh"       # what `webbrowser` runs: $BROWSER with the URL
    browser.write_text(f'#!/bin/sh\necho "$1" > {seen}\n')
    browser.chmod(0o755)
    env = dict(os.environ, BROWSER=str(browser), DISPLAY="")
    proc = subprocess.Popen([sys.executable, "-m", "gitstate", "serve", "--port", "0", "--open"],
                            cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        line = proc.stdout.readline()
        m = re.search(r"at http://127\.0\.0\.1:(\d+)/ ", line)
        assert m and int(m.group(1)) > 0, line
        url = f"http://127.0.0.1:{m.group(1)}/"
        with urllib.request.urlopen(url + "api/tip", timeout=20) as r:   # it already listens
            assert json.loads(r.read())["commit"] == git(repo, "rev-parse", "HEAD").stdout.strip()
        for _ in range(200):                 # the browser is started, not waited for (bounded)
            if seen.exists() and seen.read_text().strip():
                break
            try:
                proc.wait(0.05)
                raise AssertionError(proc.stderr.read())
            except subprocess.TimeoutExpired:
                pass
        assert seen.read_text().strip() == url
    finally:
        proc.terminate()
        proc.wait(10)
