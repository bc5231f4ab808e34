"""The viewer in a real headless browser: Debian's chromium driven by playwright (which
downloads no browser of its own here). Elsewhere these tests skip, saying how to enable them."""

from __future__ import annotations

import os
import shutil

import pytest

from conftest import gitstate, walk
from webhelp import LiveServer, make_demo

CHROMIUM = next((p for p in (os.environ.get("GITSTATE_CHROMIUM"), shutil.which("chromium"),
                             "/usr/bin/chromium") if p and os.path.exists(p)), None)
HOW = ("install Debian's chromium (apt-get install -y chromium) and "
       "pip install '.[test]' (playwright, starlette, uvicorn)")

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def sync_api():
    if CHROMIUM is None:
        pytest.skip(f"no chromium here: {HOW}")
    api = pytest.importorskip("playwright.sync_api", reason=f"no playwright: {HOW}")
    pytest.importorskip("uvicorn", reason=f"no uvicorn: {HOW}")
    return api


@pytest.fixture(scope="module")
def browser(sync_api):
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _page(browser, width: int, height: int):
    """A page of that size; no script error nor CSP violation may happen on it."""
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield pg
    context.close()
    assert errors == []


@pytest.fixture
def page(browser):
    yield from _page(browser, 1100, 900)


@pytest.fixture(scope="module")
def demo(tmp_path_factory, sync_api):
    return make_demo(tmp_path_factory.mktemp("browser") / "demo")


def test_roster_shows_the_demo_agents_in_their_sections(demo, page):
    with LiveServer(demo) as server:
        page.goto(server.url + "/")
        assert page.locator("#table-living tbody th").all_inner_texts() == ["bob", "dan"]
        assert page.locator("#table-freezer tbody th").all_inner_texts() == ["carol"]
        assert page.locator("#table-cemetery tbody th").all_inner_texts() == ["alice"]
        assert page.get_by_role("heading", name="Living (2)").is_visible()
        page.keyboard.press("Tab")                      # the skip link comes first
        assert page.evaluate("document.activeElement.textContent") == "Skip to the content"


def test_an_agent_page_shows_its_timeline(demo, page):
    with LiveServer(demo) as server:
        page.goto(server.url + "/")
        page.get_by_role("link", name="alice").first.click()
        page.wait_for_url("**/agent/alice")
        moves = page.locator("table.timeline tbody th").all_inner_texts()
        assert moves[0] == "born in bootstrap" and moves[-1] == "deep_work → dead"
        assert "roster: design drafted" in page.locator("table.timeline").inner_text()
        page.goto(server.url + "/agent/carol")
        assert "gitstate wake carol --approved-by zach" in page.locator(".command").inner_text()


def test_a_new_commit_appears_on_the_open_page_without_a_reload(repo, page, sync_api):
    expect = sync_api.expect
    assert gitstate(repo, "spawn", "erin").returncode == 0
    with LiveServer(repo) as server:
        page.goto(server.url + "/")
        page.evaluate("window.stillHere = true; window.scrollTo(0, 0)")
        page.locator("#at").focus()
        assert page.locator("#table-living tbody th").all_inner_texts() == ["erin"]
        assert gitstate(repo, "spawn", "frank").returncode == 0
        walk(repo, "erin", "inbox")
        # (the page's policy forbids eval, so wait through playwright's own locators)
        expect(page.locator("#table-living tbody th")).to_have_count(2, timeout=20000)
        assert page.locator("#table-living tbody th").all_inner_texts() == ["erin", "frank"]
        assert page.evaluate("window.stillHere") is True          # the same document
        assert page.evaluate("document.activeElement.id") == "at"  # the reader's place kept
        expect(page.locator("#live-status")).to_contain_text("Updated with commit")


def test_a_summary_with_a_script_is_shown_as_text(repo, page):
    evil = "<script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'>"
    assert gitstate(repo, "spawn", "mallory", "--set", f"summary={evil}",
                    "-m", f"born {evil}").returncode == 0
    with LiveServer(repo) as server:
        for path in ("/", "/agent/mallory"):
            page.goto(server.url + path)
            assert page.evaluate("window.pwned") is None
            assert page.locator("main img").count() == 0
        page.goto(server.url + "/")
        assert page.locator("#table-living td.text").inner_text() == evil


@pytest.fixture
def phone(browser):
    yield from _page(browser, 390, 844)


def test_the_roster_filter_is_in_the_url(demo, page):
    with LiveServer(demo) as server:
        page.goto(server.url + "/")
        page.select_option("#f-state", "distill")
        page.get_by_role("button", name="Show").click()
        page.wait_for_url("**/?*state=distill*")
        assert page.locator("#table-living tbody th").all_inner_texts() == ["bob"]
        assert page.locator("#table-freezer").count() == 0
        page.goto(server.url + "/?q=architect")           # a filter is a link
        assert page.locator("#table-living tbody th").all_inner_texts() == ["dan"]
        assert page.locator("#f-q").input_value() == "architect"
        page.goto(server.url + "/")
        attention = page.get_by_role("region", name="Needs attention (1)")
        assert "urgent context (91%)" in attention.inner_text()


def test_an_agents_timeline_and_the_feed(demo, page):
    import json
    log = json.loads(gitstate(demo, "log", "--json").stdout)["moves"]
    with LiveServer(demo) as server:
        page.goto(server.url + "/agent/alice")
        chart = page.locator("svg.timeline-chart")
        assert chart.is_visible() and chart.bounding_box()["width"] > 300
        assert chart.locator("rect[fill]").count() == 5           # a band per state it held
        page.goto(server.url + "/feed")
        items = page.locator("ol.feed > li")
        assert items.count() == len(log)
        newest = log[-1]
        assert newest["agent"] in items.first.inner_text()
        assert items.first.locator("a", has_text="diff").get_attribute("href") \
            == f"/diff/{newest['commit']}/{newest['agent']}"


def test_the_lifecycle_fits_a_phone_without_scrolling_sideways(demo, phone):
    with LiveServer(demo) as server:
        phone.goto(server.url + "/lifecycle")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        figure = phone.locator("figure.diagram")
        assert figure.evaluate("f => f.scrollWidth <= f.clientWidth")
        boxes = phone.locator("svg.lifecycle g.state")
        assert boxes.count() == 7
        for i in range(7):                                   # every state on the screen
            box = boxes.nth(i).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390, i
        for path in ("/", "/agent/alice", "/feed", "/team"):
            phone.goto(server.url + path)
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390, path


def test_commit_and_diff_links(repo, page):
    from conftest import git
    assert gitstate(repo, "spawn", "erin").returncode == 0
    walk(repo, "erin", "inbox")
    git(repo, "config", "gitstate.commitUrl", "https://example.org/r/commit/{sha}")
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    with LiveServer(repo) as server:
        page.goto(server.url + "/agent/erin")
        link = page.locator("table.timeline a.commit").last
        assert link.get_attribute("href") == f"https://example.org/r/commit/{head}"
        page.locator("table.timeline a.diff-link").last.click()
        page.wait_for_url(f"**/diff/{head}/erin")
        assert "+state: inbox" in page.locator("pre.diff").inner_text()
        page.get_by_role("link", name="Back to erin").click()
        page.wait_for_url("**/agent/erin")


def test_live_updates_keep_the_filter(repo, page, sync_api):
    expect = sync_api.expect
    assert gitstate(repo, "spawn", "erin").returncode == 0
    with LiveServer(repo) as server:
        page.goto(server.url + "/?state=inbox")
        assert page.locator("#table-living").count() == 0     # nobody in inbox yet
        page.fill("#f-q", "half wri")                          # typed, not yet sent
        assert gitstate(repo, "spawn", "frank").returncode == 0
        walk(repo, "erin", "inbox")
        expect(page.locator("#table-living tbody th")).to_have_count(1, timeout=20000)
        assert page.locator("#table-living tbody th").all_inner_texts() == ["erin"]
        assert page.url.endswith("/?state=inbox")                  # frank (bootstrap) not shown
        assert page.locator("#f-state").input_value() == "inbox"
        assert page.locator("#f-q").input_value() == "half wri"   # what was typed is kept
        assert page.evaluate("document.activeElement.id") == "f-q"
