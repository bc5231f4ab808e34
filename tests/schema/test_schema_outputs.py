"""Every `--json` output validates against the JSON Schema that `gitstate schema` prints for
it: real commands on a real repository with living, frozen and dead agents, messages and
vacancies. The commands run with `GITSTATE_CHECK_JSON=1`, so their own models check them too."""

from __future__ import annotations

import json
import re

import pytest

from conftest import fill_freeze_state, git, gitstate, walk

jsonschema = pytest.importorskip("jsonschema")

from gitstate.schema.models import json_schema  # noqa: E402


@pytest.fixture(autouse=True)
def checked(monkeypatch):
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")


ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
# keys that hold a moment; every one is an ISO 8601 string in UTC (or null)
TIMES = {"time", "since", "first_commit_at", "last_commit_at", "in_state_since", "started_at",
         "ended_at"}
# mappings keyed by names a user chose (states, roles, front matter), not by the format
NAMED = {"front", "states", "roles", "transitions", "timeouts", "defaults", "roles_for"}


def one_dialect(data, key=None):
    """Objects all the way down; snake_case keys; moments as ISO strings."""
    if isinstance(data, dict):
        for k, v in data.items():
            if key not in NAMED:
                assert re.fullmatch(r"[a-z][a-z0-9_]*", k), f"key {k!r} is not snake_case"
            if k in TIMES and key not in NAMED:
                assert v is None or (isinstance(v, str) and ISO.match(v)), (k, v)
            one_dialect(v, k)
    elif isinstance(data, list):
        for v in data:
            one_dialect(v, key)


def _valid(command, out):
    data = json.loads(out)
    jsonschema.validate(data, json_schema(command))
    assert isinstance(data, dict), f"{command} --json printed no object"
    one_dialect(data)
    return data


READS = [("status", ()), ("status", ("alice",)), ("status", ("--at", "HEAD~3")),
         ("status", ("carol", "--at", "HEAD~2")), ("roster", ()), ("roster", ("--at", "HEAD~2")),
         ("vacancies", ()), ("log", ()), ("log", ("carol",)), ("log", ("--at", "HEAD~2")),
         ("inbox", ("alice",)), ("inbox", ("alice", "--at", "HEAD~1")),
         ("lifecycle", ()), ("check", ()), ("verify", ()), ("verify", ("--no-cache",)),
         ("show", ("carol",)), ("show", ("carol", "--at", "HEAD~1")), ("presets", ()),
         ("situations", ("--no-sqlite",)), ("situations", ("--no-sqlite", "--at", "HEAD~4")),
         ("situations", ()), ("doctor", ()), ("sweep", ("--dry-run",)), ("init", ()),
         ("attention", ())]
VIEWS = {"status", "roster", "vacancies", "log", "inbox", "situations", "show", "verify",
         "attention"}


def test_every_read_output_matches_its_schema(repo):
    for args in (("alice", "--role", "architect"), ("bob", "--role", "librarian"),
                 ("carol", "--role", "steward")):
        assert gitstate(repo, "spawn", *args).returncode == 0
    walk(repo, "alice", "inbox", "distill")
    walk(repo, "bob", "inbox")
    walk(repo, "carol", "inbox", "distill")
    res = gitstate(repo, "transition", "alice", "deep_work", "--body", "@bob read this, @ALL")
    assert res.returncode == 0, res.stderr
    assert gitstate(repo, "freeze", "carol").returncode == 1        # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "carol.md")
    assert gitstate(repo, "freeze", "carol").returncode == 0
    walk(repo, "bob", "distill")
    assert gitstate(repo, "bury", "bob", "--summary", "indexed it").returncode == 0
    seen = []
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    for command, args in READS:
        res = gitstate(repo, command, *args, "--json")
        assert res.returncode in (0, 1), res.stderr   # doctor may find a door open
        seen.append(_valid(command, res.stdout))
        if command in VIEWS:   # each view says which commit it describes
            at = args[args.index("--at") + 1] if "--at" in args else "HEAD"
            assert seen[-1]["commit"] == git(repo, "rev-parse", at).stdout.strip(), args
    roster = seen[4]
    assert roster["commit"] == head
    assert [r["agent"] for r in roster["living"]] == ["alice"]
    assert roster["freezer"][0]["freeze_state"] and roster["cemetery"][0]["final_summary"]
    # context_pct is a number wherever it is known, the same in status and the roster
    pct = seen[1]["context_pct"]
    assert isinstance(pct, float) and roster["living"][0]["context_pct"] == pct
    shown = seen[16]
    assert "key_decisions" in shown["sections"]
    assert shown["titles"]["key_decisions"] == "Key Decisions"


def test_move_outputs_match_their_schema(repo):
    res = gitstate(repo, "spawn", "dave", "--role", "auditor", "--json")
    assert _valid("spawn", res.stdout)["to"] == "bootstrap"
    res = gitstate(repo, "transition", "dave", "inbox", "--json")
    assert _valid("transition", res.stdout)["from"] == "bootstrap"
    walk(repo, "dave", "distill")
    assert gitstate(repo, "freeze", "dave").returncode == 1        # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "dave.md")
    res = gitstate(repo, "freeze", "dave", "--json")
    assert _valid("freeze", res.stdout)["to"] == "frozen"
    res = gitstate(repo, "wake", "dave", "--approved-by", "zach", "--json")
    assert _valid("wake" if res.returncode == 0 else "error", res.stdout)
    gitstate(repo, "spawn", "erin")
    walk(repo, "erin", "inbox", "distill")
    res = gitstate(repo, "bury", "erin", "--summary", "done", "--json")
    assert _valid("bury", res.stdout)["to"] == "dead"
    git(repo, "commit", "-q", "--allow-empty", "-m", "note for @dave")
    res = gitstate(repo, "inbox", "dave", "--mark-read", "--json")
    assert _valid("inbox", res.stdout)["marked_read"]


def test_pushed_move_outputs_match_their_schema(tmp_path):
    """With `--push`, a move prints its own record plus `push`: landed, illegal, gave-up."""
    from hubs import hub_and_clones
    _hub, (a, b) = hub_and_clones(tmp_path)
    res = gitstate(a, "spawn", "arch1", "--role", "architect", "--push", "--json")
    out = _valid("spawn", res.stdout)
    assert res.returncode == 0 and out["push"]["outcome"] == "landed"
    assert out["commit"] == out["push"]["commit"]
    res = gitstate(b, "spawn", "arch2", "--role", "architect", "--push", "--json")  # max: 1
    out = _valid("spawn", res.stdout)
    assert res.returncode == 1 and out["push"]["outcome"] == "illegal"
    assert out["push"]["rule"] == "role-max" and out["push"]["commit"] is None
    for state in ("inbox", "distill"):
        assert gitstate(a, "transition", "arch1", state, "--push").returncode == 0
    res = gitstate(a, "bury", "arch1", "--summary", "done", "--push", "--json")
    assert _valid("bury", res.stdout)["vacancies"]
    git(b, "config", "remote.origin.url", str(tmp_path / "nowhere.git"))
    git(b, "reset", "-q", "--hard", "HEAD")
    res = gitstate(b, "spawn", "bob", "--push", "--json")
    out = _valid("spawn", res.stdout)
    assert res.returncode == 1 and out["push"]["outcome"] == "gave-up", out
    assert out["commit"] == out["push"]["commit"] == git(b, "rev-parse", "HEAD").stdout.strip()


def test_refusals_match_the_error_schema(repo):
    gitstate(repo, "spawn", "alice")
    res = gitstate(repo, "transition", "alice", "deep_work", "--json")
    assert res.returncode == 1
    assert _valid("error", res.stdout)["violations"][0]["rule"] == "illegal-transition"
    res = gitstate(repo, "status", "nobody", "--json")
    assert res.returncode == 1 and _valid("error", res.stdout)["error"]


def test_schema_prints_every_command_and_refuses_an_unknown_one(repo):
    res = gitstate(repo, "schema")
    every = json.loads(res.stdout)
    assert {"status", "roster", "spawn", "bury", "error", "verify"} <= set(every)
    for schema in every.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    assert json.loads(gitstate(repo, "schema", "roster").stdout) == every["roster"]
    res = gitstate(repo, "schema", "nope")
    assert res.returncode == 2 and "known:" in res.stderr


def test_the_schemas_are_exact():
    """A key the model does not declare is refused, and so is a missing one."""
    schema = json_schema("spawn")
    good = {"commit": "c" * 40, "agent": "a", "from": None, "to": "b", "path": "p",
            "subject": "s"}
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "extra": 1}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in good.items() if k != "to"}, schema)


def test_operations_speak_json_with_their_schema(repo):
    """await, reap and shutdown: `--json` prints one object that their schema describes."""
    for agent in ("ann", "ben"):
        assert gitstate(repo, "spawn", agent).returncode == 0
    walk(repo, "ann", "inbox")
    res = gitstate(repo, "reap", "--json")
    assert _valid("reap", res.stdout)["moves"] == []
    res = gitstate(repo, "shutdown", "--json")
    data = _valid("shutdown", res.stdout)
    assert res.returncode == (0 if data["ok"] else 1)
    assert {m["agent"] for m in data["moves"]} | {line.split(":")[0] for line in data["left"]} \
        == {"ann", "ben"}
    assert all(m["from"] for m in data["moves"])
    res = gitstate(repo, "await", "ann", "ben", "--timeout", "0", "--json")
    waited = _valid("await", res.stdout)
    assert res.returncode in (0, 1, 124) and waited["commit"] == git(
        repo, "rev-parse", "HEAD").stdout.strip()
    assert [a["agent"] for a in waited["agents"]] == ["ann", "ben"]


def _properties(schema, where=""):
    """(where, property schema) of every property in a JSON Schema, definitions included."""
    for name, sub in schema.get("$defs", {}).items():
        yield from _properties(sub, f"{name}.")
    for name, prop in schema.get("properties", {}).items():
        yield f"{where}{name}", prop


def test_every_command_has_a_schema_with_every_field_described():
    import click

    from gitstate.cli import main
    from gitstate.cli.app import cli
    from gitstate.schema.models import COMMANDS
    for module in main.FAMILIES:
        __import__(f"gitstate.cli.{module}")

    def with_json(group, prefix=""):
        for name, cmd in group.commands.items():
            if isinstance(cmd, click.Group):
                yield from with_json(cmd, f"{prefix}{name}-")
            elif any(p.name == "as_json" for p in cmd.params):
                yield f"{prefix}{name}"
    missing = {c for c in with_json(cli) if c not in COMMANDS}
    assert not missing, f"commands without a schema: {missing}"
    assert {"await", "reap", "shutdown"} <= set(COMMANDS)
    for command in COMMANDS:
        bare = [w for w, p in _properties(json_schema(command)) if not p.get("description")]
        assert not bare, f"{command}: fields without a description: {bare}"


def test_every_law_field_is_declared_with_what_it_means():
    """The lifecycle's records, an init report and a landing describe each field where it is
    declared (`field(..., about=...)`): no field of their plain forms goes without one."""
    from gitstate.doors.install import InitReport
    from gitstate.git.push import Landing
    from gitstate.law import lifecycle as law
    records = (law.State, law.Role, law.Mortality, law.Timeout, law.Movers, law.Policies,
               law.Layout, law.Grammar, law.Lifecycle, InitReport, Landing)
    bare = [f"{r.__name__}.{f}" for r in records for f in r._fields
            if f not in r._plain_skip and not r._about.get(f)]
    assert bare == []
