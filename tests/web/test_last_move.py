"""The viewer's roster: an agent that set no summary shows the text of its last move instead,
marked as such, on the served page and the static site, and found by the search."""

from __future__ import annotations

import re

import pytest
from conftest import gitstate
from webhelp import client, section, text

pytest.importorskip("starlette", reason="pip install 'gitstate-agents[web]' to test the server")


def moved(repo, *args: str) -> None:
    res = gitstate(repo, *args)
    assert res.returncode == 0, res.stdout + res.stderr


def summary_cell(html: str, key: str, agent: str) -> str:
    """The Summary cell of `agent`'s row in roster section `key`."""
    m = re.search(rf'<a href="/agent/{agent}">{agent}</a></th>.*?'
                  r'<td data-label="(?:Summary|Final summary)" class="text">(.*?)</td></tr>',
                  section(html, key), re.S)
    assert m, f"no row for {agent} in {key}"
    return m.group(1)


def test_an_agent_without_a_summary_shows_its_last_move_marked_as_such(repo):
    moved(repo, "spawn", "alice", "--role", "architect")
    moved(repo, "transition", "alice", "inbox", "-m", "reading the <b>specs</b>")
    moved(repo, "spawn", "bob")
    moved(repo, "transition", "bob", "inbox", "--set", "summary=indexing the wiki",
          "-m", "bob's own words are elsewhere")
    with client(repo) as web:
        page = web.get("/").text
        alice = summary_cell(page, "living", "alice")
        assert 'class="last-move"' in alice and "last move:" in text(alice)
        assert "reading the &lt;b&gt;specs&lt;/b&gt;" in alice      # as text, never markup
        bob = summary_cell(page, "living", "bob")
        assert text(bob).strip() == "indexing the wiki" and "last-move" not in bob
        # the search finds what is shown
        found = web.get("/?q=specs").text
        assert '<a href="/agent/alice">' in found and '<a href="/agent/bob">' not in found
        # the next move's text replaces it
        moved(repo, "transition", "alice", "distill", "-m", "notes for the team")
        alice = summary_cell(web.get("/").text, "living", "alice")
        assert "notes for the team" in text(alice) and "specs" not in alice


def test_a_summary_or_a_final_summary_wins_over_the_last_move(repo):
    moved(repo, "spawn", "carol")
    moved(repo, "transition", "carol", "inbox", "-m", "on my way out")
    moved(repo, "transition", "carol", "distill", "-m", "distilling")
    moved(repo, "bury", "carol", "--summary", "left the notes in docs/")
    moved(repo, "spawn", "dan")
    with client(repo) as web:
        page = web.get("/").text
    carol = summary_cell(page, "cemetery", "carol")
    assert text(carol).strip() == "left the notes in docs/" and "last-move" not in carol
    assert "last move: spawned" in text(summary_cell(page, "living", "dan"))


def test_the_static_site_shows_the_last_move_too(repo, tmp_path):
    moved(repo, "spawn", "erin")
    moved(repo, "transition", "erin", "inbox", "-m", "triaging the queue")
    out = tmp_path / "site"
    assert gitstate(repo, "site", "--out", str(out)).returncode == 0
    page = (out / "index.html").read_text()
    m = re.search(r'erin</a></th>.*?<td data-label="Summary" class="text">(.*?)</td>', page,
                  re.S)
    assert m and "last move: triaging the queue" in text(m.group(1))
