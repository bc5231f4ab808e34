"""The rules about the whole society (role limits, the pool cap, parents) read the agents once
per judgement, however many agents the commit changes: a commit of N changes costs one pass
over the agents, not N. Counted, not timed: the context's `agents()` calls and every pass over
the dict it returns."""

from __future__ import annotations

import pytest

from gitstate.law.load import load_lifecycle
from gitstate.law.rules import FileChange, validate
from gitstate.law.society import NAMED_HOLDERS
from gitstate.law.verdict import Context
from gitstate.resources import shipped

HAAK = load_lifecycle(shipped("protocols", "haak", "lifecycle.yaml").read_text())


def doc(agent: str, state: str = "bootstrap", **fields) -> bytes:
    lines = [f"agent: {agent}", f"state: {state}"] + [f"{k}: {v}" for k, v in fields.items()]
    return ("---\n" + "\n".join(lines) + "\n---\nnotes\n").encode()


def front(agent: str, state: str = "bootstrap", **fields) -> dict:
    return {"agent": agent, "state": state, **fields}


class CountedDict(dict):
    """A dict that counts every pass over it (a lookup by key is not a pass)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passes = 0

    def __iter__(self):
        self.passes += 1
        return super().__iter__()

    def items(self):
        self.passes += 1
        return super().items()

    def values(self):
        self.passes += 1
        return super().values()

    def keys(self):
        self.passes += 1
        return super().keys()


class CountingContext(Context):
    """The commit as the rules see it, in plain data: `agents` is every agent after the
    change. Counts how often the rules ask for the agents."""

    base = None

    def __init__(self, agents: dict[str, dict]):
        self._agents = CountedDict(agents)
        self.calls = 0

    def agents(self) -> dict[str, dict]:
        self.calls += 1
        return self._agents

    @property
    def passes(self) -> int:
        return self._agents.passes


def wide(n: int, **fields) -> tuple[list[FileChange], CountingContext]:
    """A commit spawning n agents at once (children of `boss`, a living steward), and the
    context that sees them."""
    ids = [f"a{i:05d}" for i in range(n)]
    changes = [FileChange(f"agent/{a}/_state.md", None, doc(a, **fields)) for a in ids]
    agents = {"boss": front("boss", "inbox", role="steward", depth=0)}
    agents |= {a: front(a, **fields) for a in ids}
    return changes, CountingContext(agents)


@pytest.mark.parametrize("fields", [
    {"role": "steward", "parent": "boss", "depth": 1},   # role-max, max-living, the parent
    {"role": "librarian"},                                # a role without a limit
    {},
])
def test_the_agents_are_read_once_whatever_the_commit_changes(fields):
    seen = []
    for n in (3, 30, 300):
        changes, ctx = wide(n, **fields)
        found = validate(changes, HAAK, "@a00000: [STATE:bootstrap] many at once",
                         context=ctx)
        assert "multiple-agents" in {v.rule for v in found}
        assert ctx.calls <= 1, f"{n} changes asked for the agents {ctx.calls} times"
        seen.append(ctx.passes)
    assert seen[0] == seen[1] == seen[2] <= 1, \
        f"passes over the agents for 3, 30, 300 changes: {seen}"


def test_nothing_is_read_when_no_rule_about_the_society_applies():
    # a move between living states: no role taken, nobody added to the pool, nobody born
    ctx = CountingContext({"alice": front("alice", "distill")})
    assert validate([FileChange("agent/alice/_state.md", doc("alice", "inbox"),
                                doc("alice", "distill"))], HAAK,
                    "@alice: [STATE:distill] think", context=ctx) == []
    assert ctx.calls == 0


def test_role_max_words_and_the_holder_it_names():
    """The words of today's role-max: every living holder, sorted, and the first other than
    the agent as the one to hand the role over."""
    changes, ctx = wide(2, role="steward")
    found = [v for v in validate(changes, HAAK, None, context=ctx) if v.rule == "role-max"]
    assert [(v.message, v.where) for v in found] == [
        ("role 'steward' may have 1 living holder; with this commit it would have 3 (a00000, "
         "a00001, boss). Spawn a00000 without the role and have a00001 hand it over "
         "(`gitstate handover steward --from a00001 --to a00000`), or wait for a vacancy",
         "agent/a00000/_state.md:4"),
        ("role 'steward' may have 1 living holder; with this commit it would have 3 (a00000, "
         "a00001, boss). Spawn a00001 without the role and have a00000 hand it over "
         "(`gitstate handover steward --from a00000 --to a00001`), or wait for a vacancy",
         "agent/a00001/_state.md:4"),
    ]


def test_max_living_words():
    changes, ctx = wide(20)
    found = [v for v in validate(changes, HAAK, None, context=ctx) if v.rule == "max-living"]
    assert len(found) == 20
    assert found[0].message == ("at most 20 agents may be living at once; this spawn would "
                                "make 21. Let one end, freeze or suspend first")
    assert [v.where for v in found] == [f"agent/a{i:05d}/_state.md:3" for i in range(20)]


def test_a_role_max_names_a_bounded_number_of_holders():
    """Each new holder gets its own role-max; naming every holder in each would make the
    words of N new holders grow as N * N. Past NAMED_HOLDERS the rest are counted."""
    sizes = {}
    for n in (NAMED_HOLDERS, 10 * NAMED_HOLDERS):
        changes, ctx = wide(n, role="steward")
        found = [v for v in validate(changes, HAAK, None, context=ctx) if v.rule == "role-max"]
        assert len(found) == n
        sizes[n] = max(len(v.message) for v in found)
        if n > NAMED_HOLDERS:
            more = n + 1 - NAMED_HOLDERS
            assert f"would have {n + 1} (a00000, a00001, " in found[0].message
            assert f"a{NAMED_HOLDERS - 1:05d} and {more:,} more). " in found[0].message
            # the one asked to hand the role over is still the first holder but itself
            assert "--from a00001 --to a00000" in found[0].message
            assert "--from a00000 --to a00001" in found[1].message
    assert sizes[10 * NAMED_HOLDERS] < sizes[NAMED_HOLDERS] + 40
