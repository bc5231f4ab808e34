"""haak (seed 000): freeze or die from anywhere, freeze-states that say something (updated at
a re-freeze, marked when shutdown wrote them), hand-overs and vacant roles assumed, every
change to a frozen agent a human's, who and what a session was for, the mortality clock said
aloud, and typos that never become roles. Each rule through the CLI and through a plain
`git commit`."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import UNHOOKED, fill_freeze_state, git, gitstate, set_state_line, state_path, walk
from test_presets import managed, ok, refused_commit, roster


def test_freeze_or_die_from_where_the_agent_stands(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice")
    ok(repo, "spawn", "bob")
    walk(repo, "alice", "inbox", "distill", "deep_work")
    walk(repo, "bob", "inbox", "distill", "deep_work")
    # by hand: deep_work -> dead in one commit
    set_state_line(repo, "bob", "state", "dead")
    set_state_line(repo, "bob", "final_summary", "out of context")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "@bob: [STATE:dead] urgent: dying where I stand")
    # through the CLI: deep_work -> frozen in one commit
    ok(repo, "transition", "alice", "deep_work", "--set", "context_pct=93")
    assert gitstate(repo, "freeze", "alice").returncode == 1     # template first
    fill_freeze_state(repo / "data" / "freeze-states" / "alice.md")
    assert "alice: deep_work -> frozen" in ok(repo, "freeze", "alice").stdout
    assert {r["agent"]: r["state"] for r in roster(repo)["freezer"]} == {"alice": "frozen"}
    assert ok(repo, "verify").returncode == 0


def test_a_freeze_state_of_placeholders_is_refused(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    walk(repo, "alice", "inbox")
    fs = repo / "data" / "freeze-states" / "alice.md"
    res = gitstate(repo, "freeze", "alice", "--situation", "the fold")
    assert res.returncode == 1 and "placeholders" in res.stderr
    assert "session_id: alice" in fs.read_text() and "primary_situation: the fold" in fs.read_text()
    assert git(repo, "log", "-1", "--format=%s").stdout.startswith("@alice: [STATE:inbox]")
    # by hand, the template as written is refused by the hook, naming every blank section
    set_state_line(repo, "alice", "state", "frozen")
    set_state_line(repo, "alice", "freeze_state", "data/freeze-states/alice.md")
    err = refused_commit(repo, "@alice: [STATE:frozen] by hand", "freeze-state")
    assert "'## Key Decisions'" in err and "'## Handoff Notes'" in err and "placeholder" in err
    # a freeze-state with one section still blank: refused, naming that one
    fill_freeze_state(fs)
    text = fs.read_text().replace("## Open Questions\n- written by hand", "## Open Questions\n")
    fs.write_text(text)
    err = refused_commit(repo, "@alice: [STATE:frozen] by hand", "freeze-state")
    assert "'## Open Questions' is still the template's placeholder" in err
    assert "Key Decisions" not in err
    res = gitstate(repo, "freeze", "alice")
    assert res.returncode == 1 and "Open Questions" in res.stderr
    fill_freeze_state(fs)
    fs.write_text(fs.read_text().replace("## Open Questions\n", "## Open Questions\n- none\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "@alice: [STATE:frozen] frozen by hand")
    shown = json.loads(ok(repo, "show", "alice", "--json").stdout)
    assert shown["sections"]["open_questions"] == "- none"
    # a placeholder freeze-state from a clone without hooks is named by verify
    ok(repo, "spawn", "bob")
    walk(repo, "bob", "inbox")
    bfs = repo / "data" / "freeze-states" / "bob.md"
    bfs.write_text(fs.read_text().replace("- none", "- (question)"))
    set_state_line(repo, "bob", "state", "frozen")
    set_state_line(repo, "bob", "freeze_state", "data/freeze-states/bob.md")
    git(repo, "add", "-A")
    git(repo, *UNHOOKED, "commit", "-qm", "@bob: [STATE:frozen] blank")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[freeze-state]" in res.stdout


def test_handover_one_commit_then_bury(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "bob")
    walk(repo, "alice", "inbox", "distill")
    # the seed's two steps: give the role, then bury without it
    res = gitstate(repo, "spawn", "carol", "--role", "architect")
    assert res.returncode == 1 and "`gitstate handover architect --from alice --to carol`" \
        in res.stderr
    assert "alice: hands architect to bob, stays distill" in ok(repo, "handover", "architect", "--to", "bob").stdout
    assert git(repo, "log", "-1", "--format=%B").stdout.strip().endswith(
        "Role-transfer: architect -> bob")
    files = git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert files == ["agent/alice/_state.md", "agent/bob/_state.md"]
    res = ok(repo, "bury", "alice", "--summary", "handed over")
    assert "vacant" not in res.stdout
    assert [(r["agent"], r["role"]) for r in roster(repo)["living"]] == [("bob", "architect")]
    # by hand: the same hand-over with a plain git commit
    ok(repo, "spawn", "dan")
    set_state_line(repo, "bob", "role", "null")
    set_state_line(repo, "dan", "role", "architect")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "@bob: [STATE:bootstrap] architect to dan",
        "-m", "Role-transfer: architect -> dan")
    # without the trailer it is a change of a fixed field, and the advice names handover
    set_state_line(repo, "dan", "role", "null")
    set_state_line(repo, "bob", "role", "architect")
    err = refused_commit(repo, "@dan: [STATE:bootstrap] back", "fixed-field")
    assert "gitstate handover ROLE --to ID2" in err
    git(repo, "reset", "-q", "--hard")
    res = gitstate(repo, "handover", "architect", "--from", "bob", "--to", "dan")
    assert res.returncode == 1 and "does not hold role 'architect'" in res.stderr
    assert ok(repo, "verify").returncode == 0


def test_waking_a_frozen_holder_when_another_took_the_role(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "carol", "--role", "steward")
    walk(repo, "carol", "inbox")
    gitstate(repo, "freeze", "carol")
    fill_freeze_state(repo / "data" / "freeze-states" / "carol.md")
    ok(repo, "freeze", "carol")
    ok(repo, "spawn", "dave", "--role", "steward")     # carol is frozen: the role is free
    res = gitstate(repo, "wake", "carol", "--approved-by", "zach")
    assert res.returncode == 1 and "[role-max]" in res.stderr
    advice = "`gitstate handover steward --from dave --to carol --approved-by HUMAN`"
    assert advice in res.stderr
    # by hand, the hook gives the same way out
    set_state_line(repo, "carol", "state", "bootstrap")
    err = refused_commit(repo, "@carol: [STATE:bootstrap] awake\n\nApproved-by: zach", "role-max")
    assert advice in err
    git(repo, "reset", "-q", "--hard")
    res = gitstate(repo, "handover", "steward", "--from", "dave", "--to", "carol")
    assert res.returncode == 1 and "[needs-approval]" in res.stderr   # carol is frozen
    assert "carol is frozen: every change to it" in res.stderr
    ok(repo, "handover", "steward", "--from", "dave", "--to", "carol", "--approved-by", "zach")
    ok(repo, "wake", "carol", "--approved-by", "zach")
    assert {r["agent"]: r["role"] for r in roster(repo)["living"]} == {"carol": "steward",
                                                                      "dave": None}
    assert ok(repo, "verify").returncode == 0


def test_person_project_and_roles_held_in_the_entity_graph(tmp_path, monkeypatch):
    repo = managed(tmp_path, "haak")
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    git(repo, "config", "user.name", "zach")
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "bob", "--set", "person=ana")
    text = state_path(repo, "alice").read_text()
    assert "person: zach" in text and f"project: {repo.name}" in text
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Zach W")      # the author git would write wins
    ok(repo, "spawn", "erin")
    assert "person: Zach W" in state_path(repo, "erin").read_text()
    walk(repo, "alice", "inbox", "distill")
    ok(repo, "bury", "alice", "--summary", "done", "--transfer-role-to", "bob")
    graph = json.loads(ok(repo, "situations", "--json", "--no-sqlite").stdout)
    owned = {(b["member"], b["owner"]) for b in graph["belongings"]}
    assert ("person:zach", "situation:session-alice") in owned
    assert ("person:ana", "situation:session-bob") in owned
    assert (f"situation:{repo.name}", "situation:session-alice") in owned
    assert ("role:architect", "situation:session-alice") in owned    # kept after the transfer
    assert ("role:architect", "situation:session-bob") in owned
    # the lifecycle's defaults win over git's identity
    life = repo / "protocols" / "lifecycle.yaml"
    life.write_text(life.read_text() + "\ndefaults:\n  person: mainen\n  project: haak\n")
    git(repo, "commit", "-qam", "who we work for", "-m", "Approved-by: zach")
    ok(repo, "spawn", "carol")
    text = state_path(repo, "carol").read_text()
    assert "person: mainen" in text and "project: haak" in text


def test_mortality_is_said_when_a_threshold_is_crossed(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    out = ok(repo, "transition", "alice", "inbox", "--set", "context_pct=20").stdout
    assert "mortality" not in out
    out = ok(repo, "transition", "alice", "inbox", "--set", "context_pct=52").stdout
    assert "mortality: midlife" in out
    out = ok(repo, "transition", "alice", "distill", "--set", "context_pct=60").stdout
    assert "mortality" not in out                       # still midlife: said once
    res = json.loads(ok(repo, "transition", "alice", "distill", "--set", "context_pct=91",
                        "--json").stdout)
    assert res["advice"].startswith("urgent")
    assert "mortality: urgent" in ok(repo, "status").stdout
    assert "mortality: urgent" in ok(repo, "status", "alice").stdout
    # (a session-start briefing begins a new context: its clock restarts, nothing is said)
    # a hand-made commit crossing the threshold is legal; status says it from then on
    ok(repo, "spawn", "bob")
    set_state_line(repo, "bob", "context_pct", "77")
    git(repo, "commit", "-qam", "@bob: [STATE:bootstrap] long session")
    assert "mortality: legacy" in ok(repo, "status", "bob").stdout


def test_the_presets_page_says_where_the_haak_preset_differs_from_its_seed():
    readme = (Path(__file__).parents[2] / "docs" / "how-to" / "presets.md").read_text()
    assert "`gitstate handover ROLE --to ID`" in readme
    assert "max: 1" in readme and "convention" in readme


def test_at_urgent_context_status_offers_what_the_hooks_accept(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice")
    walk(repo, "alice", "inbox", "distill")
    ok(repo, "transition", "alice", "distill", "--set", "context_pct=93")
    shown = json.loads(ok(repo, "status", "alice", "--json").stdout)
    assert shown["next"] == ["idle", "frozen", "dead", "distill"]
    assert "freeze or die (`gitstate freeze alice`" in shown["advice"]
    res = gitstate(repo, "transition", "alice", "deep_work")
    assert res.returncode == 1 and "allows at urgent context: idle, frozen, dead" in res.stderr
    assert "idle" in ok(repo, "transition", "alice", "idle").stdout


def test_typos_do_not_become_law(tmp_path):
    repo = managed(tmp_path, "haak")
    res = gitstate(repo, "spawn", "carol", "--role", "stewrad")
    assert res.returncode == 1 and "[unknown-role]" in res.stderr
    assert "(did you mean 'steward'?)" in res.stderr and "`--new-role`" in res.stderr
    assert "stewrad" not in ok(repo, "vacancies").stdout
    # by hand too; a new role said so is taken
    new = repo / "agent" / "carol" / "_state.md"
    new.parent.mkdir(parents=True)
    new.write_text("---\nagent: carol\nstate: bootstrap\nrole: stewrad\n---\n")
    refused_commit(repo, "@carol: [STATE:bootstrap] born", "unknown-role")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")
    ok(repo, "spawn", "carol", "--role", "gardener", "--new-role")
    # a message to nobody is said, and still committed
    ok(repo, "spawn", "bob")
    res = ok(repo, "transition", "carol", "inbox", "-m", "@bobb and @bob: look at this")
    assert "no agent is called @bobb (did you mean @bob?)" in res.stderr
    assert "@bob " not in res.stderr.replace("@bob?", "")
    # a dead id is not spawned again: said, with what to do instead
    walk(repo, "carol", "distill")
    ok(repo, "bury", "carol", "--summary", "gardened")
    res = gitstate(repo, "spawn", "carol")
    assert res.returncode == 1 and "agent 'carol' is dead (dead): an id is never reused" \
        in res.stderr and "`gitstate spawn carol-2`" in res.stderr
    walk(repo, "bob", "inbox")
    gitstate(repo, "freeze", "bob")
    fill_freeze_state(repo / "data" / "freeze-states" / "bob.md")
    ok(repo, "freeze", "bob")
    res = gitstate(repo, "spawn", "bob")
    assert res.returncode == 1 and "is frozen" in res.stderr
    assert "`gitstate wake bob --approved-by HUMAN`" in res.stderr
    assert ok(repo, "verify").returncode == 0
    # a clone without hooks: verify names the typo
    new = repo / "agent" / "erin" / "_state.md"
    new.parent.mkdir(parents=True)
    new.write_text("---\nagent: erin\nstate: bootstrap\nrole: stewrad\n---\n")
    git(repo, "add", "-A")
    git(repo, *UNHOOKED, "commit", "-qm", "@erin: [STATE:bootstrap] born")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[unknown-role]" in res.stdout


def _frozen(repo, agent: str, role: str | None = None) -> Path:
    ok(repo, "spawn", agent, *(["--role", role] if role else []))
    walk(repo, agent, "inbox")
    gitstate(repo, "freeze", agent)
    fs = repo / "data" / "freeze-states" / f"{agent}.md"
    fill_freeze_state(fs)
    ok(repo, "freeze", agent)
    return fs


def test_a_woken_agent_refreezes_with_an_updated_freeze_state(tmp_path):
    repo = managed(tmp_path, "haak")
    fs = _frozen(repo, "alice")
    ok(repo, "wake", "alice", "--approved-by", "zach")
    walk(repo, "alice", "inbox")
    res = gitstate(repo, "freeze", "alice")
    assert res.returncode == 1 and "[freeze-state]" in res.stderr
    assert "alice froze before and was woken" in res.stderr
    set_state_line(repo, "alice", "state", "frozen")         # by hand: the same
    refused_commit(repo, "@alice: [STATE:frozen] again", "freeze-state")
    git(repo, "reset", "-q", "--hard")
    fs.write_text(fs.read_text().replace("## Open Questions\n", "## Open Questions\n"
                                         "- asked after waking: is the fold linear?\n"))
    ok(repo, "freeze", "alice")
    assert "is the fold linear?" in json.loads(ok(repo, "show", "alice", "--json").stdout)[
        "sections"]["open_questions"]
    assert ok(repo, "verify").returncode == 0
    # a clone without hooks: a re-freeze with the old file is named by verify
    ok(repo, "wake", "alice", "--approved-by", "zach")
    set_state_line(repo, "alice", "state", "frozen")
    git(repo, *UNHOOKED, "commit", "-qam", "@alice: [STATE:frozen] same again")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "froze before and was woken" in res.stdout


def test_shutdowns_freeze_states_say_they_are_not_the_agents(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "bob")
    walk(repo, "bob", "inbox")
    fs = _frozen(repo, "alice")
    ok(repo, "wake", "alice", "--approved-by", "zach")      # woken, never re-wrote hers
    ok(repo, "shutdown")
    for agent in ("bob", "alice"):
        shown = json.loads(ok(repo, "show", agent, "--json").stdout)
        assert shown["written_by"].startswith("gitstate shutdown at 20")
        text = ok(repo, "show", agent).stdout
        assert text.startswith(f"note: data/freeze-states/{agent}.md was written by "
                               f"{shown['written_by']}, not by {agent}")
    assert "written by hand" in fs.read_text()               # what alice wrote is kept
    # woken again and shut down again without a word of hers: the mark's time is what changed
    ok(repo, "wake", "alice", "--approved-by", "zach")
    ok(repo, "shutdown")
    assert json.loads(ok(repo, "show", "alice", "--json").stdout)["state"] == "frozen"
    fresh = _frozen(repo, "carol")
    assert json.loads(ok(repo, "show", "carol", "--json").stdout)["written_by"] is None
    assert "note:" not in ok(repo, "show", "carol").stdout and fresh.exists()
    assert ok(repo, "verify").returncode == 0


def test_every_change_to_a_frozen_agent_needs_a_human(tmp_path):
    repo = managed(tmp_path, "haak")
    _frozen(repo, "carol", role="steward")
    ok(repo, "spawn", "dave")
    # handing away a frozen agent's role, as burying it, is a human's decision
    res = gitstate(repo, "handover", "steward", "--from", "carol", "--to", "dave")
    assert res.returncode == 1 and "[needs-approval]" in res.stderr
    assert "carol is frozen: every change to it (its role handed away included)" in res.stderr
    set_state_line(repo, "carol", "role", "null")
    set_state_line(repo, "dave", "role", "steward")
    refused_commit(repo, "@carol: [STATE:frozen] steward to dave\n\n"
                   "Role-transfer: steward -> dave", "needs-approval")
    git(repo, "reset", "-q", "--hard")
    ok(repo, "handover", "steward", "--from", "carol", "--to", "dave", "--approved-by", "zach")
    res = gitstate(repo, "bury", "carol", "--summary", "never woken")
    assert res.returncode == 1 and "[needs-approval]" in res.stderr
    ok(repo, "bury", "carol", "--summary", "never woken", "--approved-by", "zach")
    assert ok(repo, "verify").returncode == 0
    # a clone without hooks: a frozen agent changed without approval is named by verify
    _frozen(repo, "erin", role="auditor")
    set_state_line(repo, "erin", "summary", "gone quiet")
    git(repo, *UNHOOKED, "commit", "-qm", "@erin: [STATE:frozen] noted", "--",
        "agent/erin/_state.md")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "erin is frozen: every change to it" in res.stdout


def test_a_living_agent_assumes_a_vacant_role(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "bob")
    ok(repo, "spawn", "carol")
    res = gitstate(repo, "assume", "bob", "architect")          # alice holds it
    assert res.returncode == 1 and "[assume-role]" in res.stderr
    assert "role 'architect' is not vacant: alice holds it" in res.stderr
    walk(repo, "alice", "inbox", "distill")
    ok(repo, "bury", "alice", "--summary", "designed the fold")
    assert "Role 'architect' is vacant" in ok(repo, "vacancies").stdout
    out = ok(repo, "assume", "bob", "architect").stdout
    assert "bob: assumes architect, stays bootstrap" in out
    assert git(repo, "log", "-1", "--format=%B").stdout.strip().endswith(
        "Assumes-role: architect")
    assert "architect" not in ok(repo, "vacancies").stdout
    # by hand: carol takes the never-filled strategist role with a plain commit
    set_state_line(repo, "carol", "role", "strategist")
    err = refused_commit(repo, "@carol: [STATE:bootstrap] strategist now", "fixed-field")
    assert "`gitstate assume ID ROLE`, trailer 'Assumes-role: ROLE'" in err
    git(repo, "commit", "-qam", "@carol: [STATE:bootstrap] I take strategist",
        "-m", "Assumes-role: strategist")
    # one role at a time; a role held is not taken
    res = gitstate(repo, "assume", "carol", "auditor")
    assert res.returncode == 1 and "[assume-role]" in res.stderr
    assert "carol holds role 'strategist'; an agent holds one role at a time" in res.stderr
    ok(repo, "spawn", "dan")
    set_state_line(repo, "dan", "role", "architect")
    git(repo, *UNHOOKED, "commit", "-qam", "@dan: [STATE:bootstrap] mine",
        "-m", "Assumes-role: architect")
    res = gitstate(repo, "verify")
    assert res.returncode == 1 and "[assume-role]" in res.stdout and "bob holds it" in res.stdout


def test_a_role_is_not_handed_to_an_agent_that_holds_another(tmp_path):
    """A `Role-transfer:` whose taker holds a role of its own would make that role vanish
    unhanded: refused by the hook, and by verify when committed with the hooks off."""
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "alice", "--role", "architect")
    ok(repo, "spawn", "frank", "--role", "steward")
    set_state_line(repo, "alice", "role", "null")
    set_state_line(repo, "frank", "role", "architect")
    git(repo, "add", "-A")
    message = "@alice: [STATE:bootstrap] hands architect to frank\n\n" \
              "Role-transfer: architect -> frank"
    refused_commit(repo, message, "assume-role")
    git(repo, *UNHOOKED, "commit", "-qm", message)
    res = gitstate(repo, "verify", "--no-cache")
    assert res.returncode == 1 and "[assume-role]" in res.stdout + res.stderr
    assert "frank holds role 'steward'" in res.stdout + res.stderr
