"""An adopted history: tagged commits in an accepted subject form, with state files in a format
of their own, written before the lifecycle was committed. verify judges its tagged timeline
by the law it adopted and says which commits it judged by their tags alone."""

from __future__ import annotations

import json

from conftest import git, gitstate, make_repo
from gitstate.resources import shipped

ACCEPT = '''grammar:
  accept:
    - "^(?P<id>[a-z0-9-]+): state -> (?P<state>[a-z_]+)"
'''


def _adopted(tmp_path):
    repo = make_repo(tmp_path / "old")
    shas = {}
    for agent, state in (("alice", "bootstrap"), ("alice", "deep_work"), ("bob", "inbox"),
                         ("carol", "bootstrap"), ("carol", "dead"), ("carol", "inbox"),
                         ("alice", "inbox")):
        f = repo / "agent" / agent / "_state.md"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"# {agent}\n\n| field | value |\n|---|---|\n| State | {state} |\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"{agent}: state -> {state}")
        shas[(agent, state)] = git(repo, "rev-parse", "HEAD").stdout.strip()
    law = tmp_path / "lifecycle.yaml"
    law.write_text(shipped("protocols", "haak", "lifecycle.yaml").read_text() + ACCEPT)
    res = gitstate(repo, "init", "--lifecycle", str(law))
    assert res.returncode == 0, res.stderr
    return repo, shas


def test_verify_judges_an_adopted_history_by_its_tags(tmp_path):
    repo, shas = _adopted(tmp_path)
    res = gitstate(repo, "verify", "--json")
    assert res.returncode == 1
    data = json.loads(res.stdout)
    found = {(p["commit"], p["rule"]) for p in data["problems"]}
    assert found == {(shas[("alice", "deep_work")], "illegal-transition"),
                     (shas[("bob", "inbox")], "not-initial"),
                     (shas[("carol", "inbox")], "terminal")}
    assert all("judged by its tag alone" in p["message"] for p in data["problems"])
    assert sorted(data["judged_by_tag"]) == sorted(shas.values())
    text = gitstate(repo, "verify", "--no-cache").stdout
    assert "7 tagged commits older than protocols/lifecycle.yaml judged by their tags alone" \
        in text and "3 commits broke the rules" in text
    # the log shows the same moves verify judged
    moves = {(r["agent"], r["from"], r["to"]) for r in json.loads(
        gitstate(repo, "log", "--json").stdout)["moves"]}
    assert {("alice", "bootstrap", "deep_work"), ("bob", None, "inbox"),
            ("carol", "dead", "inbox")} <= moves
    again = json.loads(gitstate(repo, "verify", "--json").stdout)      # from the cache
    assert again["judged_by_tag"] == data["judged_by_tag"] and not again["ok"]


def test_a_legal_adopted_history_passes_and_a_managed_one_is_judged_in_full(tmp_path):
    repo = make_repo(tmp_path / "r")
    assert gitstate(repo, "init").returncode == 0
    assert gitstate(repo, "spawn", "alice").returncode == 0
    data = json.loads(gitstate(repo, "verify", "--json").stdout)
    assert data["ok"] and data["judged_by_tag"] == []


def test_the_roster_of_an_adopted_history_says_once_what_it_read(tmp_path):
    repo, _ = _adopted(tmp_path)
    out = gitstate(repo, "roster").stdout
    assert out.count("not in gitstate's format") == 1
    assert "state from its last tag" in out and "expected '---'" not in out
    rows = json.loads(gitstate(repo, "roster", "--json").stdout)["living"]
    assert {r["agent"]: r["state"] for r in rows} == {"alice": "inbox", "bob": "inbox",
                                                      "carol": "inbox"}
    assert all(r["problem"].startswith("[unreadable]") for r in rows)
