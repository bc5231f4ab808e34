"""The viewer at a glance: trouble first, the roster filtered by its URL, the activity feed,
the team over time, agents' timelines, hand-overs, the tree, commits as links and each move's
diff, freeze-states as Markdown, and every new field shown as text when it holds markup."""

from __future__ import annotations

import json
import re

import pytest

from conftest import git, gitstate, repo_with, walk
from webhelp import client, make_demo, section, text

pytest.importorskip("starlette", reason="pip install 'gitstate-agents[web]' to test the server")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("glance") / "demo")


@pytest.fixture
def web(demo):
    with client(demo) as c:
        yield c


def rows(html: str, key: str) -> list[str]:
    """The agents of one roster table, in the order shown."""
    if f'id="table-{key}"' not in html:
        return []
    return re.findall(r'<th scope="row" data-label="Agent"><a href="[^"]*">([^<]+)</a>',
                      section(html, key))


# -- trouble first ---------------------------------------------------------------------------

def test_trouble_is_said_in_words_before_the_roster(web):
    page = web.get("/").text
    attention = re.search(r'<section aria-labelledby="h-attention".*?</section>', page, re.S)
    assert attention, "no 'Needs attention' section"
    assert text(attention.group(0)).strip().startswith("Needs attention (1)")
    assert "carol : ⚠ urgent context (91%)" in text(attention.group(0))
    assert page.index("h-attention") < page.index("h-living")
    assert '<tr class="trouble"><th scope="row" data-label="Agent"><a href="/agent/carol">' in page
    assert "urgent context (91%)" in text(web.get("/agent/carol").text)
    assert "⚠" not in text(section(page, "living"))          # bob and dan are fine


def test_silence_past_the_heartbeat_and_a_state_past_its_timeout():
    from gitstate.law.load import load_lifecycle
    from gitstate.resources import preset_dir
    from gitstate.web.trouble import trouble
    lc = load_lifecycle((preset_dir("squad") / "lifecycle.yaml").read_text(encoding="utf-8"))
    now = 1_800_000_000
    base = {"agent": "a", "roster": "living", "state": "idle", "role": "worker",
            "phase": "fresh", "context_pct": 10, "problem": None}
    fresh = dict(base, last_commit={"sha": "x", "time": now - 60},
                 in_state_since={"sha": "x", "time": now - 60})
    assert trouble(fresh, lc, now) == []
    # times as ISO 8601 text read the same as seconds
    old = dict(base, last_commit="2027-01-15T07:00:00Z", in_state_since="2027-01-15T07:00:00Z")
    found = dict(trouble(old, lc, 1_800_000_000))
    # an idle session waits by design: past its timeout, never "silent" (no crash)
    assert found == {"overdue": "past its timeout: idle -> suspended was due after 30m"}
    found = dict(trouble(dict(old, state="active"), lc, now))   # a working one has crashed
    assert found["silent"].startswith("silent for ") and "heartbeat 30m" in found["silent"]
    core = dict(old, role="core")                             # core sessions stay warm
    assert "overdue" not in dict(trouble(core, lc, now))
    dead = dict(old, roster="dead", state="cleanup")
    assert trouble(dead, lc, now) == []


# -- the roster filtered and ordered by its URL ----------------------------------------------

def test_the_roster_is_filtered_by_its_url(web):
    assert rows(web.get("/?state=distill").text, "living") == ["bob"]
    assert rows(web.get("/?state=distill").text, "freezer") == []
    page = web.get("/?role=steward").text
    assert rows(page, "freezer") == ["carol"] and rows(page, "living") == []
    assert "Showing 1 of 4 agents." in text(page)
    assert rows(web.get("/?phase=urgent").text, "freezer") == ["carol"]
    assert rows(web.get("/?phase=urgent").text, "living") == []
    assert rows(web.get("/?q=ARCHITECT").text, "living") == ["dan"]
    assert rows(web.get("/?q=roster+fold").text, "cemetery") == ["alice"]
    assert rows(web.get("/?q=urgent").text, "freezer") == ["carol"]   # trouble's words too
    page = web.get("/?state=distill&q=dan").text
    assert "Nobody here matches." in page and "Clear" in text(page)
    form = re.search(r'<form class="filters".*?</form>', web.get("/?state=distill").text, re.S)
    assert form and '<option value="distill" selected>' in form.group(0)


def test_the_roster_is_ordered_by_its_url(web):
    assert rows(web.get("/?sort=agent").text, "living") == ["bob", "dan"]
    assert rows(web.get("/?sort=state").text, "living") == ["dan", "bob"]  # bootstrap, distill
    assert rows(web.get("/?sort=nonsense").text, "living") == ["bob", "dan"]
    page = web.get("/?state=distill&q=b").text
    assert '<a href="/?state=distill&amp;q=b&amp;sort=role" title="order by Role">' in page
    assert '<th scope="col" aria-sort="ascending"><a href="/?state=distill&amp;q=b&amp;sort=agent"' \
        in web.get("/?state=distill&q=b&sort=agent").text
    at = web.get("/?at=HEAD~1&state=distill").text
    assert '<input type="hidden" name="at" value="HEAD~1">' in at


def test_sections_a_lifecycle_cannot_have_are_not_shown(tmp_path):
    repo = repo_with(tmp_path, "registry-tree", lambda r: None, "--lifecycle", "registry")
    assert gitstate(repo, "spawn", "boss", "--role", "general").returncode == 0
    assert gitstate(repo, "spawn", "kid", "--parent", "boss").returncode == 0
    with client(repo) as web:
        page = web.get("/").text
        assert "h-living" in page and "h-cemetery" in page
        assert "h-freezer" not in page and "Freezer" not in page    # registry has no freezer
        assert '<a href="/tree">Tree</a>' in page
        tree = web.get("/tree").text
        assert re.search(r'<li><a href="/agent/boss">boss</a>.*?<ul><li><a href="/agent/kid">',
                         tree, re.S)
        assert "Spawned: kid" in text(web.get("/agent/boss").text)


# -- feed, team, timeline, hand-overs --------------------------------------------------------

def test_the_feed_lists_every_move_newest_first_each_linked_to_its_diff(web, demo):
    log = json.loads(gitstate(demo, "log", "--json").stdout)["moves"]
    page = web.get("/feed").text
    shas = re.findall(r'href="/diff/([0-9a-f]{40})/', page)
    assert shas == [m["commit"] for m in reversed(log)][:100]
    assert text(page).index("deep_work → dead") < text(page).index("born in bootstrap")
    api = web.get("/api/feed").json()
    assert [m["commit"] for m in api] == shas


def test_a_moves_diff_shows_what_it_changed_in_the_state_file(web, demo):
    sha = git(demo, "log", "-1", "--format=%H", "--grep=alice: \\[STATE:dead\\]").stdout.strip()
    page = web.get(f"/diff/{sha}/alice").text
    assert '<span class="add">+state: dead</span>' in page
    assert '<span class="del">-state: deep_work</span>' in page
    assert web.get(f"/api/diff/{sha}/alice").json()["path"] == "agent/alice/_state.md"
    assert web.get("/diff/nothex/alice").status_code == 400
    assert web.get(f"/diff/{'0' * 40}/alice").status_code == 404


def test_an_agents_timeline_is_drawn_with_its_context_and_hand_overs(web):
    page = web.get("/agent/alice").text
    svg = page[page.index('<svg class="timeline-chart"'):]
    svg = svg[:svg.index("</svg>")]
    assert 'role="img"' in svg and "<title id=\"tl-title\">States of alice over time" in svg
    for state in ("bootstrap", "inbox", "distill", "deep_work", "dead"):
        assert f"<title>{state}: " in svg, state
    assert "<title>architect handed from alice to dan at " in svg
    assert re.search(r"<title>40% at ", svg)                    # its context at a move
    seen = text(page)
    assert "Role architect handed from alice to dan" in seen
    assert '<td data-label="Context">40%</td>' in page          # the chart's numbers in words
    assert "received role architect handed over by alice" in text(web.get("/agent/dan").text)


def test_the_team_chart_counts_agents_in_each_state(web):
    page = web.get("/team").text
    assert '<svg class="team-chart" role="img"' in page
    assert "frozen: 1 now" in page and "distill: 1 now" in page     # its text alternative
    team = web.get("/api/team").json()
    last = {s: c[-1] for s, c in team["counts"].items()}
    assert last["distill"] == 1 and last["frozen"] == 1 and last["dead"] == 1
    assert last["bootstrap"] == 1 and sum(last.values()) == 4
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", team["times"][-1])


def test_the_new_pages_travel_in_time(web, demo):
    before = git(demo, "log", "-1", "--format=%H", "--grep=carol: \\[STATE:frozen\\]").stdout
    before = git(demo, "rev-parse", f"{before.strip()}~1").stdout.strip()
    feed = web.get(f"/feed?at={before}").text
    assert "deep_work → frozen" not in text(feed) and "As it was at" in text(feed)
    assert f'href="/agent/carol?at={before}"' in feed
    team = web.get(f"/api/team?at={before}").json()
    assert team["commit"] == before and team["counts"]["frozen"][-1] == 0
    assert web.get(f"/tree?at={before}").status_code == 200
    assert web.get("/feed?page=x").status_code == 400
    # as it was before any agent: an empty chart, said so
    first = git(demo, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    page = web.get(f"/team?at={first}")
    assert page.status_code == 200 and "No agent has lived here yet." in page.text
    assert web.get(f"/api/team?at={first}").json()["times"] == []


# -- commits as links ------------------------------------------------------------------------

def test_commits_link_to_the_repositorys_web_home(demo):
    head = git(demo, "rev-parse", "HEAD").stdout.strip()
    try:
        git(demo, "config", "gitstate.commitUrl", "https://example.org/t/commit/{sha}")
        with client(demo) as web:
            page = web.get("/").text
            assert f'href="https://example.org/t/commit/{head}"' in page
            assert 'href="https://example.org/t/commit/' in web.get("/agent/alice").text
            assert 'href="https://example.org/t/commit/' in web.get("/feed").text
        git(demo, "config", "gitstate.commitUrl", "javascript:alert(1)//{sha}")
        with client(demo) as web:
            page = web.get("/feed").text
            assert "javascript:" not in page and 'class="commit"' not in page
    finally:
        git(demo, "config", "--unset", "gitstate.commitUrl")


# -- freeze-states as Markdown; hostile text -------------------------------------------------

def test_a_freeze_state_is_rendered_as_markdown(web):
    page = web.get("/agent/carol").text
    freeze = page[page.index('id="freeze-state"'):page.index('id="h-timeline"')]
    assert '<div class="markdown">' in freeze and "<pre class=\"section\">" not in freeze
    assert "<li>" in freeze or "<p>" in freeze


EVIL = "<script>window.pwned=1</script><img src=x onerror=alert(1)>"


def test_every_new_field_shows_markup_as_text(tmp_path):
    def setup(repo):
        assert gitstate(repo, "spawn", "eve", "--role", "auditor", "--set",
                        f"summary={EVIL}", "-m", f"born {EVIL}").returncode == 0
        walk(repo, "eve", "inbox", "distill")
        assert gitstate(repo, "freeze", "eve").returncode == 1    # writes the template
        fs = repo / "data" / "freeze-states" / "eve.md"
        fs.write_text("".join(
            f"{EVIL} [click](javascript:alert(1)) <a href=\"javascript:alert(2)\">x</a>\n"
            if ln.startswith(("(", "- (")) else ln
            for ln in fs.read_text(encoding="utf-8").splitlines(keepends=True)))
        res = gitstate(repo, "freeze", "eve", "-m", f"cold {EVIL}", "--wake-if", EVIL)
        assert res.returncode == 0, res.stderr
    repo = repo_with(tmp_path, "evil-glance", setup)
    git(repo, "config", "gitstate.commitUrl", 'https://e.org/"><script>x</script>/{sha}')
    with client(repo) as web:
        pages = {p: web.get(p).text for p in
                 ("/", "/?q=" + EVIL, "/feed", "/board", "/team", "/agent/eve",
                  "/lifecycle")}
        sha = git(repo, "log", "-1", "--format=%H", "--grep=eve: \\[STATE:").stdout.strip()
        pages["diff"] = web.get(f"/diff/{sha}/eve").text
        for name, page in pages.items():
            assert "<script>window.pwned" not in page, name
            assert "<img src=x" not in page, name
            assert 'href="javascript:' not in page, name
            assert "<script>x</script>" not in page, name
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in pages["/feed"]
        assert "Wake me if &lt;script&gt;window.pwned=1&lt;/script&gt;" in pages["/board"]
        assert 'value="&lt;script&gt;' in pages["/?q=" + EVIL]
        assert 'href="https://e.org/&quot;&gt;&lt;script&gt;' in pages["/"]
        freeze = pages["/agent/eve"]
        freeze = freeze[freeze.index('id="freeze-state"'):freeze.index('id="h-timeline"')]
        assert '<div class="markdown">' in freeze                  # rendered, raw HTML off
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in freeze
        assert "[click](javascript:alert(1))" in freeze             # not made a link


def test_the_index_carried_to_a_new_tip_equals_one_read_from_nothing(repo):
    from gitstate.git.repo import open_managed
    from gitstate.web.data import Viewer

    def snapshot(v: Viewer, commit: str) -> tuple:
        idx = v.index(commit)
        msgs = [(m[0], m[1], m[2], m[3].prefix, sorted(m[3].mentions), m[3].subject)
                for m in idx["messages"]]
        return (idx["moves"], idx["by_agent"], msgs, idx["to_all"], idx["to_one"],
                {a: v.context(a, commit) for a in idx["by_agent"]}, v.transfers(commit))

    assert gitstate(repo, "spawn", "erin", "--role", "architect", "--set",
                    "context_pct=5").returncode == 0
    viewer = Viewer(open_managed(str(repo)))
    viewer.lazy = False                   # every agent's context, as the site reads it
    first = git(repo, "rev-parse", "HEAD").stdout.strip()
    snapshot(viewer, first)
    assert gitstate(repo, "spawn", "finn").returncode == 0
    assert gitstate(repo, "transition", "erin", "inbox", "--set",
                    "context_pct=55").returncode == 0
    (repo / "note.txt").write_text("x\n")
    git(repo, "add", "note.txt")
    git(repo, "commit", "-q", "-m", "finn: a question for @erin and @ALL")
    assert gitstate(repo, "handover", "architect", "--to", "finn").returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert viewer._carried(head) is not None          # a line of new commits: carried on
    carried = snapshot(viewer, head)
    fresh_viewer = Viewer(open_managed(str(repo)))
    fresh_viewer.lazy = False
    assert carried == snapshot(fresh_viewer, head)
    assert [m["to"] for m in carried[1]["erin"]] == ["bootstrap", "inbox", "inbox"]
    assert [c[1] for c in carried[5]["erin"]] == [5.0, 55.0, 55.0]
    assert carried[6]["finn"][0]["role"] == "architect"
    assert viewer.index(first)["moves"] == snapshot(fresh_viewer, first)[0]   # untouched
