"""`gitstate board`: seed 000's board, derived from history. The seed's agents post "Frozen at
X% context. Freeze-state at <path>. Working on <situation>. Wake me if <condition>." when they
freeze, let a role "become vacant with a board notice" when they die holding it, and hand roles
over before death; the board shows those notices in the order they happened."""

from __future__ import annotations

import json

from conftest import fill_freeze_state, git, gitstate, walk
from test_presets import managed, ok


def _story(tmp_path):
    """alice (architect) freezes at 85% and is woken; she hands the role to bob and dies; carol
    (steward) dies holding hers."""
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "bob")
    ok(repo, "spawn", "carol", "--role", "steward")
    ok(repo, "transition", "alice", "inbox", "--set", "context_pct=85")
    gitstate(repo, "freeze", "alice", "--situation", "the roster fold")
    fill_freeze_state(repo / "data" / "freeze-states" / "alice.md")
    ok(repo, "freeze", "alice", "--wake-if", "the fold's tests pass again")
    ok(repo, "wake", "alice", "--approved-by", "zach")
    ok(repo, "handover", "architect", "--to", "bob")
    ok(repo, "bury", "alice", "--summary", "designed the fold")
    walk(repo, "carol", "inbox")
    ok(repo, "bury", "carol", "--summary", "kept the build green")
    return repo


def _board(repo, *args) -> list[dict]:
    return json.loads(ok(repo, "board", *args, "--json").stdout)["notices"]


def test_the_board_says_what_the_seed_posts_in_the_order_it_happened(tmp_path):
    repo = _story(tmp_path)
    notices = _board(repo)
    assert [(n["agent"], n["kind"]) for n in notices] == [
        ("alice", "freeze"), ("alice", "vacancy"), ("alice", "wake"), ("alice", "handover"),
        ("alice", "death"), ("carol", "death"), ("carol", "vacancy")]
    freeze, vacancy, wake, handover, death, _, steward = notices
    assert freeze["text"] == ("Frozen at 85% context. Freeze-state at "
                              "data/freeze-states/alice.md. Working on the roster fold. Wake "
                              "me if the fold's tests pass again.")
    assert freeze["role"] == "architect"
    assert vacancy["text"] == ("Role 'architect' is now vacant. Last held by alice. Mandate: "
                               "patterns/methods/23-architect-mandate.md.")
    assert wake["text"] == "Woken (frozen -> bootstrap), approved by zach."
    assert handover["text"] == "Handed role 'architect' to bob."
    assert death["text"] == "Died (bootstrap -> dead). Final summary: designed the fold"
    assert death["role"] is None          # handed over first: no vacancy at her death
    assert steward["text"] == ("Role 'steward' is now vacant. Last held by carol. Mandate: "
                               "not yet written.")
    # each notice names the commit that posts it; the freeze's body carries the same line
    assert git(repo, "log", "-1", "--format=%b", freeze["commit"]).stdout.strip() \
        == freeze["text"]
    # the text face: a line per notice, oldest first
    lines = ok(repo, "board").stdout.splitlines()
    assert len(lines) == 7 and lines[0].endswith(f"alice: {freeze['text']}")


def test_the_board_takes_an_agent_n_since_and_at_as_log_does(tmp_path):
    repo = _story(tmp_path)
    everything = _board(repo)
    assert _board(repo, "-n", "2") == everything[-2:]
    assert _board(repo, "carol") == everything[-2:]
    assert _board(repo, "--since", "2000-01-01") == everything
    assert _board(repo, "--since", "2030-01-01") == []
    assert ok(repo, "board", "--since", "2030-01-01").stdout.strip() == \
        "no notices since 2030-01-01"
    before_carol = git(repo, "log", "-1", "--format=%H", everything[-3]["commit"]).stdout.strip()
    assert _board(repo, "--at", before_carol) == everything[:5]
    res = gitstate(repo, "board", "--since", "not a date")
    assert res.returncode == 2 and "is not a date" in res.stderr


def test_the_kept_board_read_on_says_what_a_fresh_read_says(tmp_path):
    repo = _story(tmp_path)
    kept = _board(repo)                    # kept under .git/gitstate, read on from here
    ok(repo, "spawn", "dave", "--role", "steward")
    walk(repo, "dave", "inbox")
    gitstate(repo, "freeze", "dave")
    fill_freeze_state(repo / "data" / "freeze-states" / "dave.md")
    ok(repo, "freeze", "dave")
    warm = _board(repo)
    assert warm[:len(kept)] == kept
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert warm == _board(repo, "--at", head)    # --at reads history afresh
    assert warm[-2]["kind"] == "freeze" and warm[-1]["text"].startswith(
        "Role 'steward' is now vacant. Last held by dave.")


def test_the_board_has_a_json_schema_and_a_page_in_the_viewer(tmp_path, monkeypatch):
    repo = _story(tmp_path)
    schema = json.loads(ok(repo, "schema", "board").stdout)
    assert set(schema["properties"]) == {"commit", "agent", "notices"}
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")     # the output checked against its model
    assert _board(repo)[0]["kind"] == "freeze"
    monkeypatch.delenv("GITSTATE_CHECK_JSON")
    ok(repo, "site", "--out", str(tmp_path / "site"))
    page = (tmp_path / "site" / "board.html").read_text()
    assert "Wake me if the fold&#x27;s tests pass again." in page or \
        "Wake me if the fold's tests pass again." in page
    assert 'href="board.html"' in (tmp_path / "site" / "index.html").read_text()
    data = json.loads((tmp_path / "site" / "api" / "board.json").read_text())
    assert [n["kind"] for n in data["notices"]][0] == "freeze"


def _vacant(repo) -> set[str]:
    found = json.loads(ok(repo, "vacancies", "--json").stdout)["vacancies"]
    return {v["role"] for v in found if v["status"] == "vacant"}


def test_a_role_taken_by_assume_is_a_notice(tmp_path):
    """The seed's "any agent may assume a vacant role": the board says who took it, and
    that a holder who hands it on no longer leaves it vacant."""
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "bob")
    ok(repo, "bury", "alice", "--summary", "designed the fold")
    ok(repo, "assume", "bob", "architect")
    assert [(n["agent"], n["kind"], n["role"]) for n in _board(repo)][-2:] == [
        ("alice", "vacancy", "architect"), ("bob", "assume", "architect")]
    assert _board(repo)[-1]["text"] == "Assumed the vacant role 'architect'."
    assert _vacant(repo) == set()


def test_the_board_and_vacancies_agree_over_a_random_sequence_of_moves(tmp_path):
    """Whatever the moves (spawns with and without a role, deaths, hand-overs, roles
    assumed), each commit's vacancy notices name exactly the roles `vacancies` finds vacant
    after it and not before it, and a role taken after birth is a notice of that commit."""
    import random
    rng = random.Random(38)
    repo = managed(tmp_path, "haak")
    ids, roles = [f"a{i}" for i in range(1, 11)], ["architect", "steward"]
    vacant, made = _vacant(repo), []
    for step in range(90):
        who, other, role = rng.choice(ids), rng.choice(ids), rng.choice(roles)
        kind = rng.choice(("spawn", "spawn", "bury", "handover", "handover", "assume", "assume"))
        args = {"spawn": ["spawn", who] + (["--role", role] if rng.random() < 0.6 else []),
                "bury": ["bury", who, "--summary", f"step {step}"],
                "handover": ["handover", role, "--to", other],
                "assume": ["assume", who, role]}[kind]
        if gitstate(repo, *args).returncode != 0:
            continue          # refused by the law: nothing committed
        made.append(kind)
        head = git(repo, "rev-parse", "HEAD").stdout.strip()
        now = _vacant(repo)
        here = [n for n in _board(repo) if n["commit"] == head]
        posted = {n["role"] for n in here if n["kind"] == "vacancy"}
        assert posted == now - vacant, (args, here, vacant, now)
        if kind == "assume":
            assert ("assume", role) in {(n["kind"], n["role"]) for n in here}, (args, here)
        vacant = now
    assert {"spawn", "bury", "handover", "assume"} <= set(made), made   # roles moved about
    # a fresh read (no kept board) says what the kept one said
    kept = _board(repo)
    import shutil
    shutil.rmtree(repo / ".git" / "gitstate", ignore_errors=True)
    assert _board(repo) == kept
