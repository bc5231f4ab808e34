"""The fold from tag events to per-agent tracks, and the views over it (pure)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gitstate.history.fold import (AgentTrack, agent_record, fold, roster_view, track_from_plain,
                              track_to_plain, vacancies, vacancy_notice)
from gitstate.law.load import load_lifecycle
from gitstate.resources import shipped

HAAK = load_lifecycle(shipped("protocols", "haak", "lifecycle.yaml").read_text())
AGENTS = ["alice", "bob", "carol"]


def replay(events):
    """The model: walk the transitions one by one, remembering everything."""
    seen: dict[str, list] = {}
    for place, (sha, t, _a, agent, state, _x) in enumerate(events, start=1):
        seen.setdefault(agent, []).append((sha, t, state, place))
    out = {}
    for born, (agent, steps) in enumerate(seen.items()):
        current = steps[-1][2]
        # entered = the first step of the last run of steps in the current state
        i = len(steps) - 1
        while i > 0 and steps[i - 1][2] == current:
            i -= 1
        previous = next((s[2] for s in reversed(steps[:i])), None)
        out[agent] = AgentTrack((steps[0][0], steps[0][1], steps[0][3]),
                                (steps[-1][0], steps[-1][1], steps[-1][3]), current,
                                (steps[i][0], steps[i][1], steps[i][3]), len(steps), previous,
                                born)
    return out


events_st = st.lists(st.tuples(st.sampled_from(AGENTS), st.sampled_from(list(HAAK.states))),
                     max_size=40).map(
    lambda steps: [(f"c{i}", 1000 + i, "me", a, s, "") for i, (a, s) in enumerate(steps)])


@settings(max_examples=300, deadline=None)
@given(events_st, st.integers(0, 40))
def test_fold_equals_replaying_step_by_step_and_can_resume_anywhere(events, cut):
    whole = fold({}, events)
    assert whole == replay(events)
    resumed = {a: track_from_plain(track_to_plain(t))        # through the saved form
               for a, t in fold({}, events[:cut]).items()}
    assert fold(resumed, events[cut:]) == whole


@settings(max_examples=300, deadline=None)
@given(events_st)
def test_folding_the_events_newest_first_equals_the_fold_of_them_oldest_first(events):
    """A whole history is folded as git gives it, newest first, without holding it."""
    from gitstate.history.fold import fold_newest
    newest = fold_newest(reversed(events))
    assert newest == fold({}, events)
    assert list(newest) == list(fold({}, events))     # agents in the order they were born


def record(agent, state, role=None, entered=100, **front):
    track = AgentTrack(("c0", 1), ("c9", entered), state, (f"e-{agent}", entered), 2, None)
    return agent_record(agent, f"agent/{agent}/_state.md",
                        {"agent": agent, "state": state, "role": role, **front}, None, track,
                        HAAK, now=1000)


def test_agent_record_and_roster_groups():
    recs = [record("alice", "deep_work", "architect", context_pct=80, thread="t"),
            record("carol", "frozen", "steward", freeze_state="data/freeze-states/carol.md"),
            record("dave", "dead", final_summary="done")]
    view = roster_view(recs)
    assert [r["agent"] for r in view["living"]] == ["alice"]
    assert view["living"][0]["phase"] == "legacy" and view["living"][0]["seconds_in_state"] == 900
    assert view["freezer"][0]["freeze_state"] == "data/freeze-states/carol.md"
    assert view["cemetery"][0]["final_summary"] == "done"


def test_vacancies():
    recs = [record("alice", "dead", "architect", entered=50, final_summary="x"),
            record("al2", "frozen", "architect", entered=70),
            record("bob", "inbox", "librarian"),
            record("zed", "dead", "custom-role", final_summary="y")]
    found = {v["role"]: v for v in vacancies(recs, HAAK)}
    assert "librarian" not in found                      # bob, living, holds it
    arch = found["architect"]
    assert arch["status"] == "vacant" and arch["last_holder"] == "al2"
    assert arch["frozen_holders"] == ["al2"]
    assert "Mandate: patterns/methods/23-architect-mandate.md" in vacancy_notice(arch)
    assert found["strategist"]["status"] == "unfilled"
    assert found["custom-role"]["last_holder"] == "zed"  # undeclared roles count too


def test_vacancies_order_holders_by_history_when_their_clocks_tie():
    def rec(agent, place):
        track = AgentTrack(("c0", 1, 1), ("c9", 500, place), "dead", ("c9", 500, place), 2, None)
        return agent_record(agent, f"agent/{agent}/_state.md",
                            {"agent": agent, "state": "dead", "role": "steward",
                             "final_summary": "x"}, None, track, HAAK, now=1000)
    found = {v["role"]: v for v in vacancies([rec("zed", 7), rec("aaron", 9)], HAAK)}
    assert found["steward"]["last_holder"] == "aaron"
    found = {v["role"]: v for v in vacancies([rec("aaron", 7), rec("zed", 9)], HAAK)}
    assert found["steward"]["last_holder"] == "zed"


def test_a_row_holds_the_fields_its_declaration_names_in_their_place():
    """`RosterRow` declares the row: every key a row holds is one of its fields; the keys every
    row holds come first, in the declared order; the others only when they are known."""
    from gitstate.history.fold import RosterRow
    always = [k for k in RosterRow._fields if k not in RosterRow._sometimes]
    alive = record("alice", "deep_work", "architect", context_pct=80)
    unread = agent_record("zed", "agent/zed/_state.md", None, None, None, HAAK, now=1000)
    frozen = record("carol", "frozen", freeze_state="data/freeze-states/carol.md")
    roster_view([alive, unread, frozen])
    for row in (alive, unread, frozen):
        assert set(row) <= set(RosterRow._fields)
        assert list(row)[:len(always)] == always
    assert list(unread) == always and unread["phase"] == "unknown"
    assert "freeze_state" in frozen and "freeze_state" not in alive
    assert alive["instance"] == 1 and "instance" not in frozen


@given(events_st, st.integers(0, 40))
def test_folding_plain_tracks_from_any_cut_equals_the_whole_fold(events, cut):
    from gitstate.history.fold import fold_plain
    first, rest = events[:cut], events[cut:]
    plain = {a: track_to_plain(t) for a, t in fold({}, first).items()}
    seq = fold_plain(plain, rest, sum(p[4] for p in plain.values()))
    whole = fold({}, events)
    assert seq == len(events)
    assert {a: track_from_plain(p) for a, p in plain.items()} == whole
    assert list(plain) == list(whole)      # agents in the order they were born
