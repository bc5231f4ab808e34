"""The lifecycle model and its load-time checks (pure: no git)."""

from __future__ import annotations

import textwrap

import pytest

from gitstate.errors import InvalidFile
from gitstate.law.load import (POLICY_KEYS, STATE_KEYS, TOP_KEYS, LifecycleInvalid,
                               load_lifecycle)
from gitstate.law.diagram import describe, to_mermaid
from gitstate.law.lifecycle import Heartbeat, Lifecycle, Policies, State, Timeout
from gitstate.resources import preset_dir, presets, shipped

GOOD = """\
name: tiny
initial: start
states:
  start: {roster: living}
  work: {roster: living}
  done: {roster: dead, terminal: true, requires: [final_summary]}
transitions:
  start: [work]
  work: [done]
"""


def problems(text: str) -> list[tuple[int | None, str]]:
    with pytest.raises(LifecycleInvalid) as info:
        load_lifecycle(textwrap.dedent(text), "life.yaml")
    return info.value.problems


def test_good_lifecycle_loads_and_answers():
    lc = load_lifecycle(GOOD)
    assert lc.initial == "start"
    assert lc.is_legal("start", "work")
    assert lc.is_legal("work", "work")          # staying put is a progress update
    assert not lc.is_legal("start", "done")
    assert not lc.is_legal("done", "done")      # ... but not in a terminal state
    assert lc.allowed_from("work") == ("done", "work")
    assert lc.roster_of("done") == "dead"
    assert lc.state_path("alice") == "agent/alice/_state.md"


def test_every_problem_is_reported_with_its_line():
    found = problems("""\
        initial: start
        states:
          start: {roster: living}
          lost: {roster: living}
          done: {roster: dead, terminal: true}
        transitions:
          start: [done, nowhere]
          done: [start]
        """)
    messages = " | ".join(m for _, m in found)
    assert "names undeclared state 'nowhere'" in messages
    assert "terminal state 'done' has exits" in messages
    assert "unreachable from 'start': lost" in messages
    assert "trap state 'lost'" in messages
    assert all(ln is not None for ln, _ in found)
    assert (7, "transition 'start -> nowhere' names undeclared state 'nowhere'") in found


@pytest.mark.parametrize("initial, expected", [
    ("", "no initial state"),
    ("initial: [start, work]\n", "exactly one initial state"),
    ("initial: nope\n", "initial state 'nope' is not declared"),
])
def test_exactly_one_declared_initial_state(initial, expected):
    text = GOOD.replace("initial: start\n", initial)
    assert any(expected in m for _, m in problems(text))


def test_a_stopping_state_must_be_reachable():
    found = problems("""\
        initial: a
        states: {a: {}, b: {}}
        transitions: {a: [b], b: [a]}
        """)
    assert any("no terminal or frozen state" in m for _, m in found)


def test_loops_that_cannot_stop_are_named():
    found = problems("""\
        initial: a
        states: {a: {}, b: {}, c: {}, end: {roster: dead, terminal: true}}
        transitions: {a: [b, end], b: [c], c: [b]}
        """)
    assert any("can be reached from: b, c" in m for _, m in found)


def test_yaml_one_one_booleans_stay_state_names():
    lc = load_lifecycle("""\
initial: on
states:
  on: {}
  off: {}
  yes: {roster: dead, terminal: true}
transitions:
  on: [off]
  off: [yes]
""")
    assert set(lc.states) == {"on", "off", "yes"}
    assert lc.targets("on") == ("off",)


def test_unknown_keys_and_bad_values_are_named():
    found = problems(GOOD + "policies:\n  max_lving: 3\n  approval: ['frozen to work']\n"
                            "  humans: [zach]\n")
    msgs = [m for _, m in found]
    assert any("unknown policies key 'max_lving'" in m and "max_living" in m for m in msgs)
    assert any("must read 'from -> to'" in m for m in msgs)


def test_policy_names_must_exist():
    found = problems(GOOD + "policies:\n  humans: [zach]\n  approval: ['ghost -> *']\n"
                            "  timeouts: {'start -> done': 30m}\n"
                            "  mortality: {urgent_forbids: [nap]}\n")
    msgs = " | ".join(m for _, m in found)
    assert "undeclared state 'ghost'" in msgs
    assert "timeout 'start -> done' is not a declared transition" in msgs
    assert "urgent_forbids names undeclared state 'nap'" in msgs


def test_timeouts_parse_durations():
    lc = load_lifecycle(GOOD + "policies:\n  timeouts: {'work->done': 30m}\n")
    assert lc.policies.timeouts == {"work -> done": Timeout(1800)}
    assert lc.policies.timeout("work", "done").after == 1800
    assert "after 30m" in to_mermaid(lc)


def test_layout_must_be_a_safe_relative_pattern():
    for bad in ("/abs/{id}/_state.md", "agent/../{id}.md", "agent/_state.md", "{id}/{id}.md"):
        found = problems(GOOD + f"layout: {{state_file: '{bad}'}}\n")
        assert any("layout.state_file" in m for _, m in found), bad
    lc = load_lifecycle(GOOD + "layout: {state_file: '{id}/_state.md'}\n")
    assert lc.state_path_regex().match("era-1/_state.md").group("id") == "era-1"


def test_accept_patterns_need_named_groups():
    found = problems(GOOD + "grammar: {accept: ['^@(\\w+)']}\n")
    assert any("named groups" in m for _, m in found)


def test_broken_yaml_names_file_and_line():
    with pytest.raises(InvalidFile) as info:
        load_lifecycle("initial: a\nstates:\n  a: [\n", "life.yaml")
    assert info.value.where.startswith("life.yaml:")


def test_mermaid_draws_every_transition():
    lc = load_lifecycle(GOOD)
    text = to_mermaid(lc)
    assert text.startswith("stateDiagram-v2")
    assert "[*] --> s_start" in text and "s_start --> s_work" in text and "s_done --> [*]" in text


@pytest.mark.parametrize("name", presets())
def test_every_preset_loads_and_documents_its_states(name):
    d = preset_dir(name)
    lc = load_lifecycle((d / "lifecycle.yaml").read_text(), f"{name}/lifecycle.yaml")
    for state in lc.states:
        doc = d / f"{state}.md"
        assert doc.is_file(), f"preset {name} has no protocol doc for state {state}"
        assert doc.read_text().startswith(f"# {state}")


def test_haak_is_shipped_and_default():
    assert "haak" in presets()
    lc = load_lifecycle((shipped("protocols", "haak", "lifecycle.yaml")).read_text())
    assert lc.initial == "bootstrap"
    assert lc.needs_approval("frozen", "bootstrap")
    assert lc.roles["architect"].max == 1


def test_haak_freezer_and_cemetery_are_one_move_from_every_living_state():
    lc = load_lifecycle((shipped("protocols", "haak", "lifecycle.yaml")).read_text())
    for name, spec in lc.states.items():
        if spec.roster == "living":
            assert {"frozen", "dead"} <= set(lc.targets(name)), name


def test_defaults_are_single_values_and_never_birth_fields():
    base = ("initial: a\nstates:\n  a: {roster: living}\n  b: {roster: dead, terminal: true}\n"
            "transitions:\n  a: [b]\n")
    assert load_lifecycle(base + "defaults:\n  person: zach\n").defaults == {"person": "zach"}
    with pytest.raises(LifecycleInvalid) as exc:
        load_lifecycle(base + "defaults:\n  depth: 3\n  person: [a, b]\n")
    text = str(exc.value)
    assert "'depth' is set by gitstate at birth" in text and ":8" in text
    assert "default of 'person' must be a single value" in text


POOL = textwrap.dedent("""\
    initial: idle
    states:
      idle: {roster: living}
      suspended: {roster: frozen}
      gone: {roster: dead, terminal: true}
    transitions:
      idle: [suspended, gone]
      suspended: [idle]
    roles:
      core: {}
      worker: {timeout: 40m}
    policies:
    """)


def test_timeouts_may_exempt_roles_and_roles_may_have_timeouts():
    lc = load_lifecycle(POOL + '  timeouts:\n    "idle -> suspended": {after: 30m, '
                        "except_roles: [core]}\n  role_timeout: 1h\n  heartbeat: 5m\n")
    assert lc.policies.timeouts == {"idle -> suspended": Timeout(1800, ("core",))}
    assert not lc.timeout_applies("idle", "suspended", "core")
    assert lc.timeout_applies("idle", "suspended", "worker")
    assert lc.timeout_applies("idle", "suspended", None)
    assert (lc.role_timeout("worker"), lc.role_timeout("chemist"), lc.role_timeout(None)) == \
        (2400, 3600, None)
    assert lc.policies.heartbeat == Heartbeat(300)
    assert lc.heartbeat_for("core") == lc.heartbeat_for(None) == 300


def test_a_role_may_forbid_states_and_be_exempt_from_the_heartbeat():
    lc = load_lifecycle(POOL.replace("core: {}", "core: {forbids: [suspended], load: idle}")
                        + "  heartbeat: {after: 30m, except_roles: [core]}\n")
    assert lc.forbidden_by_role("core", "suspended") and not lc.forbidden_by_role("worker",
                                                                                 "suspended")
    assert lc.roles["core"].load == "idle"
    assert (lc.heartbeat_for("core"), lc.heartbeat_for("worker")) == (None, 1800)
    with pytest.raises(LifecycleInvalid) as exc:
        load_lifecycle(POOL.replace("core: {}", "core: {forbids: [sleeping], load: suspended}")
                       + "  heartbeat: {after: 30m, except_roles: [lead]}\n")
    text = str(exc.value)
    assert "role 'core': forbids names undeclared state 'sleeping'" in text
    assert "the heartbeat exempts undeclared role 'lead'" in text
    with pytest.raises(LifecycleInvalid) as exc:
        load_lifecycle(POOL.replace("core: {}", "core: {forbids: [suspended], load: suspended}"))
    assert "role 'core' is loaded into 'suspended', a state it forbids" in str(exc.value)


def test_the_heartbeat_judges_the_states_where_an_agent_works():
    """`heartbeat.states`: silence is a crash where an agent works; where it waits by design
    (an idle session, ended by its timeout) the heartbeat says nothing. Without the list, every
    living state is judged (a lifecycle written before it loads as it did)."""
    lc = load_lifecycle(POOL.replace("  idle: {roster: living}\n",
                                     "  idle: {roster: living}\n  busy: {roster: living}\n")
                        .replace("idle: [suspended, gone]", "idle: [busy, suspended, gone]\n"
                                                            "  busy: [idle]")
                        + "  heartbeat: {after: 30m, states: [busy], except_roles: [core]}\n")
    assert lc.policies.heartbeat == Heartbeat(1800, ("core",), ("busy",))
    assert (lc.heartbeat_for("worker", "busy"), lc.heartbeat_for("worker", "idle"),
            lc.heartbeat_for("core", "busy"), lc.heartbeat_for("worker")) == \
        (1800, None, None, 1800)
    assert "heartbeat: silent 30m in busy is a crash (not core)" in describe(lc)
    assert lc.policies.heartbeat.as_plain() == {"after": 1800, "except_roles": ["core"],
                                               "states": ["busy"]}
    old = load_lifecycle(POOL + "  heartbeat: 30m\n")
    assert old.policies.heartbeat.as_plain() == 1800 and old.heartbeat_for(None, "idle") == 1800
    with pytest.raises(LifecycleInvalid) as exc:
        load_lifecycle(POOL + "  heartbeat: {after: 30m, states: [suspended, napping], "
                              "sooner: true}\n")
    text = str(exc.value)
    assert "the heartbeat judges 'suspended', which is not a living state (living states: " \
           "idle)" in text
    assert "the heartbeat judges 'napping', which is not a declared state" in text
    assert "unknown policies.heartbeat key 'sooner'" in text


def test_bad_timeout_exemptions_and_durations_are_located():
    with pytest.raises(LifecycleInvalid) as exc:
        load_lifecycle(POOL + '  timeouts:\n    "idle -> suspended": {except_roles: [lead], '
                       "every: 3}\n  heartbeat: soon\n")
    text = str(exc.value)
    assert "timeout 'idle -> suspended' needs 'after: <duration>'" in text
    assert "exempts undeclared role 'lead'" in text
    assert "every" in text and ":14:" in text
    assert "policies.heartbeat 'soon' must be a duration" in text and ":15:" in text
    with pytest.raises(LifecycleInvalid) as exc:
        load_lifecycle(POOL.replace("timeout: 40m", "timeout: forever"))
    assert "role 'worker': timeout 'forever' must be a duration" in str(exc.value)


def test_sooner_timeouts_and_state_logs():
    lc = load_lifecycle(POOL.replace("suspended: {roster: frozen}",
                                     "suspended: {roster: frozen, log: notes/out.log}")
                        + '  timeouts:\n    "suspended -> idle": {after: 10m, sooner: true}\n')
    assert lc.states["suspended"].log == "notes/out.log"
    assert lc.timeout_applies("suspended", "idle", None)
    assert not lc.timeout_refuses_early("suspended", "idle", None)
    with pytest.raises(LifecycleInvalid) as exc:
        load_lifecycle(POOL.replace("suspended: {roster: frozen}",
                                    "suspended: {roster: frozen, log: ../out.log}")
                       + '  timeouts:\n    "suspended -> idle": {after: 10m, sooner: maybe}\n')
    text = str(exc.value)
    assert "log '../out.log' must be a relative path inside the repository" in text
    assert "sooner must be true or false" in text


@pytest.mark.parametrize("preset", ["haak", "registry", "squad", "maos", "era"])
def test_one_declaration_gives_the_keys_the_json_and_the_cache(preset):
    """The records of gitstate.law.lifecycle are the one declaration of the lifecycle: the
    loader's keys, the `--json` form and the cached form all come from them."""
    import json
    lc = load_lifecycle((preset_dir(preset) / "lifecycle.yaml").read_text())
    plain = json.loads(json.dumps(lc.to_dict()))
    assert set(plain) == TOP_KEYS and set(plain["policies"]) == POLICY_KEYS
    assert all(set(s) == STATE_KEYS for s in plain["states"].values())
    again = Lifecycle.from_plain(plain, source=lc.source)
    assert again == lc and again.to_dict() == plain
    from gitstate.schema.models import validated
    assert validated("lifecycle", plain) == plain


def test_a_record_declared_by_its_fields():
    assert State("x").roster == "living" and State("x", "dead", True).terminal
    assert Policies(approval=("a -> b", "law")).approval_pairs == (("a", "b"),)
    assert Policies(approval=("law",)).law_approval
    assert Timeout(60).as_plain() == 60 and Timeout.from_plain(60) == Timeout(60)
    assert Timeout(60, sooner=True).as_plain() == {"after": 60, "except_roles": [],
                                                    "sooner": True}
    with pytest.raises(TypeError):
        State()


def test_a_retry_policy_is_read_and_its_states_and_roles_checked_with_their_lines():
    """`policies.retry: {max, backoff}` (maos's seed: retries with exponential backoff): its
    durations read as any, its states and roles declared ones, each refusal at its line."""
    from gitstate.law.retry import Retry, from_states, is_retry, to_states, wait
    failing = GOOD.replace("  done: {roster: dead, terminal: true, requires: [final_summary]}",
                           "  done: {roster: dead, terminal: true}\n"
                           "  failed: {roster: dead, terminal: true, outcome: failure}") \
        .replace("  work: [done]", "  work: [done, failed]")
    lc = load_lifecycle(failing + "policies:\n  retry: {max: 2, backoff: 30s}\n")
    assert lc.policies.retry == Retry(max=2, backoff=30)
    assert (from_states(lc), to_states(lc)) == (("failed",), ("start",))
    assert is_retry(lc, "failed", "start", None) and not is_retry(lc, "failed", "work", None)
    assert not is_retry(lc, "done", "start", None)       # a success is never retried
    assert [wait(lc, n) for n in range(3)] == [30, 60, 120]
    found = problems(failing + "policies:\n  retry: {max: 0, backoff: soon}\n")
    assert any("retry.max must be a whole number >= 1" in m for _, m in found), found
    assert any("retry.backoff 'soon' must be a duration" in m for _, m in found), found
    found = problems(failing + "policies:\n  retry:\n    max: 2\n    backoff: 1m\n"
                     "    states: [work]\n    to: [done]\n    except_roles: [ghost]\n")
    said = {m: line for line, m in found}
    assert said["retry.states names 'work', which is not a terminal state"] == 15
    assert said["retry.to names 'done', which is not a living state"] == 16
    assert any("retry exempts undeclared role 'ghost'" in m for m in said), found
