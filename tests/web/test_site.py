"""`gitstate site --out DIR`: the viewer's pages as static files that read without JavaScript
and without a server, and need no web stack."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import gitstate, walk
from webhelp import make_demo, section, text


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    demo = make_demo(tmp_path_factory.mktemp("site") / "demo")
    out = demo.parent / "public"
    res = gitstate(demo, "site", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "wrote" in res.stdout and "4 agents" in res.stdout
    return demo, out


def test_every_page_is_written(built):
    _, out = built
    for rel in ("index.html", "lifecycle.html", "vacancies.html", "style.css",
                "agents/alice.html", "agents/bob.html", "agents/carol.html",
                "api/roster.json", "api/vacancies.json"):
        assert (out / rel).is_file(), rel


def test_static_pages_read_without_script_or_server(built):
    demo, out = built
    index = (out / "index.html").read_text()
    assert "<script" not in index and "<form" not in index
    assert "bob" in text(section(index, "living")) and "carol" in text(section(index, "freezer"))
    assert 'href="agents/carol.html"' in index and 'href="style.css"' in index
    carol = (out / "agents" / "carol.html").read_text()
    assert 'href="../style.css"' in carol and 'href="../index.html"' in carol
    assert "gitstate wake carol --approved-by zach" in text(carol)
    assert "deep_work → frozen" in text(carol)
    for page in out.rglob("*.html"):                 # every link stays inside the site
        for href in re.findall(r'href="(?!data:)([^"#?]+)', page.read_text()):
            assert (page.parent / href).resolve().is_file(), (page, href)


def test_site_json_is_the_cli_json(built):
    demo, out = built
    cli = json.loads(gitstate(demo, "vacancies", "--json").stdout)
    assert json.loads((out / "api" / "vacancies.json").read_text()) == cli


def test_site_needs_no_web_stack(built, tmp_path):
    demo, _ = built
    code = ("import sys; sys.modules['starlette'] = sys.modules['uvicorn'] = None; "
            "from gitstate.__main__ import main; sys.exit(main(['site', '--out', sys.argv[1], "
            "'--at', 'HEAD~2']))")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "old")], cwd=demo,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "alice" in text(section((tmp_path / "old" / "index.html").read_text(), "living"))


def test_a_bad_at_is_a_usage_error(built, tmp_path):
    demo, _ = built
    res = gitstate(demo, "site", "--out", str(tmp_path / "x"), "--at", "no-such-thing")
    assert res.returncode == 2 and "neither a revision nor a date" in res.stderr


def test_the_site_says_when_it_was_built_and_ages_are_as_of_then(built):
    demo, out = built
    index = (out / "index.html").read_text()
    note = re.search(r'<p class="built-note" role="note">Built (\d{4}-\d\d-\d\d \d\d:\d\d) UTC: '
                     r"\"in state for\" and every other age is as of then.</p>", index)
    assert note, "no build time on the page"
    assert note.group(1) in (out / "agents" / "bob.html").read_text()
    for rel in ("feed.html", "team.html"):
        page = (out / rel).read_text()
        assert "<script" not in page and note.group(1) in page, rel
    assert "deep_work → dead" in text((out / "feed.html").read_text())
    assert '<svg class="team-chart"' in (out / "team.html").read_text()
    feed = json.loads((out / "api" / "feed.json").read_text())
    log = json.loads(gitstate(demo, "log", "--json").stdout)["moves"]
    assert feed == list(reversed(log))[:100]
    team = json.loads((out / "api" / "team.json").read_text())
    assert team["counts"]["frozen"][-1] == 1


def test_a_non_empty_out_is_refused_unless_forced(built, tmp_path):
    demo, _ = built
    out = tmp_path / "public"
    out.mkdir()
    (out / "mine.txt").write_text("keep me\n")
    res = gitstate(demo, "site", "--out", str(out))
    assert res.returncode == 2 and "is not empty" in res.stderr and "--force" in res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]        # nothing written
    res = gitstate(demo, "site", "--out", str(out), "--force", "--json")
    assert res.returncode == 0, res.stderr
    assert (out / "index.html").is_file() and (out / "mine.txt").read_text() == "keep me\n"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", json.loads(res.stdout)["built"])
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert gitstate(demo, "site", "--out", str(afile)).returncode == 2


def test_an_agents_page_is_read_as_the_static_site_reads_it(repo):
    """The server reads one agent's page data; the site reads every agent's at once through
    the same `Viewer.page_data`: the same data either way."""
    from gitstate.git.repo import open_managed
    from gitstate.history.views import inboxes
    from gitstate.web.data import Viewer, children_of, rows
    for args in (("alice", "--role", "architect"), ("bob", "--parent", "alice")):
        assert gitstate(repo, "spawn", *args).returncode == 0
    walk(repo, "alice", "inbox")
    viewer = Viewer(open_managed(str(repo)))
    view = viewer.roster()
    boxes = inboxes(viewer.repo, view["commit"],
                    mentions=viewer.index(view["commit"])["messages"])
    for r in rows(view):
        one = viewer.agent(r["agent"])
        assert one == viewer.page_data(view, r, boxes.get(r["agent"]), children_of(view))
    assert viewer.agent("alice")["children"] == ["bob"]
