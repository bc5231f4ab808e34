"""Every `--json` output validates against the JSON Schema that `gitstate schema` prints for
it: real commands on a real repository with living, frozen and dead agents, messages and
vacancies. The commands run with `GITSTATE_CHECK_JSON=1`, so their own models check them too."""

from __future__ import annotations

import json

import pytest

from conftest import git, gitstate, walk

jsonschema = pytest.importorskip("jsonschema")

from gitstate.schema.models import json_schema  # noqa: E402


@pytest.fixture(autouse=True)
def checked(monkeypatch):
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")


def _valid(command, out):
    data = json.loads(out)
    jsonschema.validate(data, json_schema(command))
    return data


READS = [("status", ()), ("status", ("alice",)), ("roster", ()), ("roster", ("--at", "HEAD~2")),
         ("vacancies", ()), ("log", ()), ("log", ("carol",)), ("inbox", ("alice",)),
         ("lifecycle", ()), ("check", ()), ("verify", ()), ("verify", ("--no-cache",)),
         ("show", ("carol",)), ("presets", ()), ("situations", ("--no-sqlite",)),
         ("situations", ()), ("doctor", ()), ("sweep", ("--dry-run",)), ("init", ())]


def test_every_read_output_matches_its_schema(repo):
    for args in (("alice", "--role", "architect"), ("bob", "--role", "librarian"),
                 ("carol", "--role", "steward")):
        assert gitstate(repo, "spawn", *args).returncode == 0
    walk(repo, "alice", "inbox", "distill")
    walk(repo, "bob", "inbox")
    walk(repo, "carol", "inbox", "distill")
    res = gitstate(repo, "transition", "alice", "deep_work", "--body", "@bob read this, @ALL")
    assert res.returncode == 0, res.stderr
    assert gitstate(repo, "freeze", "carol").returncode == 0
    walk(repo, "bob", "distill")
    assert gitstate(repo, "bury", "bob", "--summary", "indexed it").returncode == 0
    seen = []
    for command, args in READS:
        res = gitstate(repo, command, *args, "--json")
        assert res.returncode in (0, 1), res.stderr   # doctor may find a door open
        seen.append(_valid(command, res.stdout))
    roster = seen[2]
    assert [r["agent"] for r in roster["living"]] == ["alice"]
    assert roster["freezer"][0]["freeze_state"] and roster["cemetery"][0]["final_summary"]


def test_move_outputs_match_their_schema(repo):
    res = gitstate(repo, "spawn", "dave", "--role", "auditor", "--json")
    assert _valid("spawn", res.stdout)["to"] == "bootstrap"
    res = gitstate(repo, "transition", "dave", "inbox", "--json")
    assert _valid("transition", res.stdout)["from"] == "bootstrap"
    walk(repo, "dave", "distill")
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
