"""Rules that keep each preset to its seed (round three), pure: file contents + lifecycle +
message -> violations, the rest of the repository seen through plain data."""

from __future__ import annotations

from gitstate.law.load import load_lifecycle
from gitstate.law.rules import FileChange, validate
from gitstate.law.verdict import Context
from gitstate.resources import shipped


def preset(name: str):
    return load_lifecycle(shipped("protocols", name, "lifecycle.yaml").read_text())


SQUAD, MAOS, HAAK, ERA = preset("squad"), preset("maos"), preset("haak"), preset("era")


def doc(agent: str, state: str, **fields) -> bytes:
    lines = [f"agent: {agent}", f"state: {state}"] + [f"{k}: {v}" for k, v in fields.items()]
    return ("---\n" + "\n".join(lines) + "\n---\nnotes\n").encode()


class Plain(Context):
    """The commit as the rules see it: every agent's front matter after the change."""

    base = None

    def __init__(self, agents: dict[str, dict] | None = None, files=None, now=0.0,
                 entered=None):
        self._agents, self._files = agents or {}, files or {}
        self._now, self._entered = now, entered

    def agents(self):
        return self._agents

    def tree_file(self, path):
        return self._files.get(path)

    def base_file(self, path):
        return None

    def now(self):
        return self._now

    def entered(self, agent, state):
        return self._entered


def judge(lc, agent, old, new, message, agents=None, **ctx):
    path = lc.state_path(agent)
    return validate([FileChange(path, old, new)], lc, message,
                    context=Plain(agents or {}, **ctx))


def test_a_core_session_never_enters_suspended():
    [v] = judge(SQUAD, "keaton", doc("keaton", "idle", role="core"),
                doc("keaton", "suspended", role="core"), "@keaton: [STATE:suspended] nap",
                now=10_000.0, entered=0.0)
    assert v.rule == "role-forbids" and "keaton holds role 'core', which never enters " \
        "suspended" in v.message
    assert "from idle it may go to: active, cleanup, error, idle" in v.message
    # a specialist may, once due; a core session may go anywhere else
    assert judge(SQUAD, "temp", doc("temp", "idle", role="specialist"),
                 doc("temp", "suspended", role="specialist"), "@temp: [STATE:suspended] due",
                 now=10_000.0, entered=0.0) == []
    assert judge(SQUAD, "keaton", doc("keaton", "spawning", role="core"),
                 doc("keaton", "idle", role="core"), "@keaton: [STATE:idle] loaded") == []


def test_next_moves_are_those_the_hooks_accept_now():
    # squad: suspended only once due, and never for a core session
    assert "suspended" not in SQUAD.open_moves("idle", role="specialist", waited=60)
    assert "suspended" in SQUAD.open_moves("idle", role="specialist", waited=1800)
    assert "suspended" not in SQUAD.open_moves("idle", role="core", waited=1e9)
    assert "suspended" not in SQUAD.open_moves("idle")          # how long: unknown
    # era: a sooner move is open at once
    assert "inbox" in ERA.open_moves("idle", waited=0)
    # haak at urgent context: no deep_work; idle is still open
    assert HAAK.open_moves("distill", context_pct=92) == ["idle", "frozen", "dead", "distill"]
    assert "deep_work" in HAAK.open_moves("distill", context_pct=89)


def test_the_urgent_refusal_lists_every_move_it_would_accept():
    [v] = validate([FileChange("agent/a/_state.md", doc("a", "distill"),
                               doc("a", "deep_work", context_pct=93))], HAAK,
                   "@a: [STATE:deep_work] more")
    assert v.rule == "urgent"
    assert "from distill the lifecycle allows at urgent context: idle, frozen, dead, " \
        "distill" in v.message
    assert validate([FileChange("agent/a/_state.md", doc("a", "distill"),
                                doc("a", "idle", context_pct=93))], HAAK,
                    "@a: [STATE:idle] waiting") == []


def test_mortality_advice_names_the_lifecycles_own_ways_out():
    assert HAAK.phase_advice("urgent", "a") == (
        "urgent: externalize now, then freeze or die (`gitstate freeze a`, "
        "`gitstate bury a --summary TEXT`); no new work")
    assert "freeze-state" in HAAK.phase_advice("legacy", "a")
    era = with_mortality("era").phase_advice("urgent", "a")
    assert "log out (`gitstate logout a --note TEXT`)" in era and "freeze" not in era
    assert "freeze" not in with_mortality("era").phase_advice("legacy", "a")
    registry = with_mortality("registry").phase_advice("urgent", "a")
    assert "end (`gitstate transition a done`)" in registry and "freeze" not in registry
    assert "freeze" not in (with_mortality("squad").phase_advice("urgent", "a")
                            + with_mortality("maos").phase_advice("urgent", "a"))


def with_mortality(name: str):
    """A shipped preset with a mortality clock added to its policies."""
    text = shipped("protocols", name, "lifecycle.yaml").read_text()
    return load_lifecycle(text.replace(
        "\npolicies:\n", "\npolicies:\n  mortality: {midlife: 50, legacy: 75, urgent: 90}\n", 1))


def test_no_mortality_advice_where_the_lifecycle_declares_no_mortality_clock():
    """squad, maos, registry and era declare no mortality policy: no phase asks anything of
    their agents (haak's "legacy: consolidate ..." is seed 000's, not theirs)."""
    for lc in (SQUAD, MAOS, ERA, preset("registry")):
        assert lc.policies.mortality is None
        assert [lc.phase_advice(p, "a") for p in ("midlife", "legacy", "urgent")] == \
            [None, None, None]
    assert HAAK.phase_advice("midlife", "a") == \
        "midlife: make sure key decisions are written down"


def test_a_role_not_declared_is_taken_only_when_the_commit_says_so():
    born = doc("carol", "bootstrap", role="stewrad")
    [v] = judge(HAAK, "carol", None, born, "@carol: [STATE:bootstrap] born")
    assert v.rule == "unknown-role" and "(did you mean 'steward'?)" in v.message
    assert "`--new-role` (trailer 'New-role: stewrad')" in v.message
    assert judge(HAAK, "carol", None, born,
                 "@carol: [STATE:bootstrap] born\n\nNew-role: stewrad\n") == []
    # the files alone (pre-commit) cannot tell: judged once the message is there
    assert judge(HAAK, "carol", None, born, None) == []
    # later moves of an agent of a custom role need nothing more
    assert judge(HAAK, "carol", born, doc("carol", "inbox", role="stewrad"),
                 "@carol: [STATE:inbox] on") == []


def test_roles_without_a_max_share_the_default_limit():
    two = {a: {"agent": a, "state": "pending", "role": "chemist"} for a in ("c1", "c2", "c3")}
    [v] = judge(MAOS, "c3", None, doc("c3", "pending", role="chemist"),
                "@c3: [STATE:pending] born\n\nNew-role: chemist\n", agents=two)
    assert v.rule == "role-max" and "may have 2 living holders (policies.role_max" in v.message
    assert MAOS.max_of("chemist") == 2 and MAOS.max_of("engineer") == 4


def test_deep_work_ends_at_the_token_limit():
    before = doc("e", "deep_work", max_tokens=50000, tokens=40000)
    [v] = judge(ERA, "e", before, doc("e", "deep_work", max_tokens=50000, tokens=50000),
                "@e: [STATE:deep_work] more")
    assert v.rule == "token-limit" and "deep_work ends at the token limit; go to inbox" \
        in v.message
    assert judge(ERA, "e", before, doc("e", "inbox", max_tokens=50000, tokens=50000),
                 "@e: [STATE:inbox] budget spent") == []
    assert judge(ERA, "e", before, doc("e", "deep_work", max_tokens=50000, tokens=49999),
                 "@e: [STATE:deep_work] nearly") == []
    [v] = judge(ERA, "e", doc("e", "deep_work"), doc("e", "deep_work", max_tokens="lots"),
                "@e: [STATE:deep_work] x")
    assert v.rule == "bad-field"
    assert ERA.states["idle"].stamp == "idle_since"


def test_a_vacant_role_is_assumed_by_a_living_agent_without_one():
    before, after = doc("bob", "inbox"), doc("bob", "inbox", role="architect")
    msg = "@bob: [STATE:inbox] assumes architect\n\nAssumes-role: architect\n"
    alone = {"bob": {"agent": "bob", "state": "inbox", "role": "architect"}}
    assert judge(HAAK, "bob", before, after, msg, agents=alone) == []
    held = {**alone, "alice": {"agent": "alice", "state": "deep_work", "role": "architect"}}
    rules = [v.rule for v in judge(HAAK, "bob", before, after, msg, agents=held)]
    assert "assume-role" in rules and "role-max" in rules
    [v] = judge(HAAK, "bob", doc("bob", "inbox", role="auditor"), after, msg, agents=alone)
    assert v.rule == "assume-role" and "holds role 'auditor'" in v.message
    # without the trailer the role is a fixed field
    [v] = judge(HAAK, "bob", before, after, "@bob: [STATE:inbox] mine", agents=alone)
    assert v.rule == "fixed-field" and "`gitstate assume ID ROLE`" in v.message


FS = "data/freeze-states/a.md"
WRITTEN = ("---\nsession_id: a\nfrozen_at: '2026-11-22T10:00:00Z'\nrole: null\n"
           "primary_situation: y\nwake_if: the hub is back\n---\n"
           + "".join(f"## {s}\n- written\n" for s in ("Key Decisions", "Accumulated Knowledge",
                                                      "Open Questions", "Files Changed",
                                                      "Handoff Notes"))).encode()


FROZE = 1_795_345_200.0   # 2026-11-22T11:00:00Z: when the freezes judged here are made


class Files(Plain):
    def __init__(self, base: bytes | None, tree: bytes | None, now: float = FROZE):
        super().__init__({}, {FS: tree}, now=now)
        self._base = base

    def base_file(self, path):
        return self._base if path == FS else None


def test_a_woken_agent_refreezes_with_an_updated_freeze_state():
    woken = doc("a", "inbox", freeze_state=FS)
    frozen = doc("a", "frozen", freeze_state=FS)
    msg = "@a: [STATE:frozen] again"
    [v] = validate([FileChange("agent/a/_state.md", woken, frozen)], HAAK, msg,
                   context=Files(WRITTEN, WRITTEN))
    assert v.rule == "freeze-state" and "a froze before and was woken" in v.message
    updated = WRITTEN.replace(b"- written\n## Files", b"- asked since\n## Files")
    assert validate([FileChange("agent/a/_state.md", woken, frozen)], HAAK, msg,
                    context=Files(WRITTEN, updated)) == []
    # a new frozen_at alone is no update
    stamped = WRITTEN.replace(b"10:00:00Z", b"11:00:00Z")
    [v] = validate([FileChange("agent/a/_state.md", woken, frozen)], HAAK, msg,
                   context=Files(WRITTEN, stamped))
    assert "but its frozen_at" in v.message
    # a first freeze is no re-freeze
    assert validate([FileChange("agent/a/_state.md", doc("a", "inbox"), frozen)], HAAK, msg,
                    context=Files(None, WRITTEN)) == []
    # a `written_by:` line the agent types spares it nothing: the file changes or is refused
    marked = WRITTEN.replace(b"---\nsession_id", b"---\nwritten_by: gitstate shutdown\n"
                                                 b"session_id")
    [v] = validate([FileChange("agent/a/_state.md", woken, frozen)], HAAK, msg,
                   context=Files(marked, marked.replace(b"10:00:00Z", b"11:00:00Z")))
    assert "a froze before and was woken" in v.message


def test_a_freeze_stamped_later_than_its_commit_is_refused_with_its_line():
    frozen = doc("a", "frozen", freeze_state=FS)
    msg = "@a: [STATE:frozen] ok"
    change = [FileChange("agent/a/_state.md", doc("a", "inbox"), frozen)]
    assert validate(change, HAAK, msg, context=Files(None, WRITTEN)) == []
    ahead = WRITTEN.replace(b"2026-11-22T10:00:00Z", b"2099-01-01T00:00:00Z")
    [v] = validate(change, HAAK, msg, context=Files(None, ahead))
    assert v.rule == "freeze-state" and v.where == f"{FS}:3"
    assert "frozen_at 2099-01-01T00:00:00Z is later than this freeze" in v.message
    # within the clock tolerance of the commit's time: the committer's clock ran a little ahead
    assert validate(change, HAAK, msg, context=Files(None, WRITTEN, now=FROZE - 3600 - 60)) == []


def test_every_change_to_a_frozen_agent_needs_approval():
    old = doc("c", "frozen", freeze_state=FS, summary="before")
    new = doc("c", "frozen", freeze_state=FS, summary="after")
    [v] = validate([FileChange("agent/c/_state.md", old, new)], HAAK, "@c: [STATE:frozen] x")
    assert v.rule == "needs-approval" and "c is frozen: every change to it" in v.message
    assert validate([FileChange("agent/c/_state.md", old, new)], HAAK,
                    "@c: [STATE:frozen] x\n\nApproved-by: zach\n") == []
    assert HAAK.held("frozen") and not HAAK.held("inbox") and not SQUAD.held("suspended")
    assert HAAK.gated("frozen", "frozen") and HAAK.gated("frozen", "dead")


def test_frozen_at_is_judged_as_a_moment_with_its_line():
    """The seed's template: `frozen_at: <ISO timestamp>`."""
    from gitstate.law.freezestate import freeze_file_findings, is_moment
    for good in ("2026-11-22T10:00:00Z", "2026-11-22T10:00:00.5+01:00", "2026-11-22 10:00:00Z"):
        assert is_moment(good), good
    for bad in ("now", "", "2026-11-22", "2026-13-45T10:00:00Z", "10:00", None, 1764000000):
        assert not is_moment(bad), bad
    text = WRITTEN.decode().replace("frozen_at: '2026-11-22T10:00:00Z'", "frozen_at: now")
    [(problem, line)] = freeze_file_findings(text)
    assert line == 3 and problem.startswith("frozen_at 'now' is not an ISO-8601 time")
    [(problem, line)] = freeze_file_findings(text.replace("frozen_at: now\n", "frozen_at: "
                                                          "'2026-11-22T10:00:00Z'\n")
                                             .replace("wake_if: the hub is back\n", ""))
    assert line is None and "says no `wake_if`" in problem
