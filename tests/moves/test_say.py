"""`gitstate say`: a message to agents in one commit that changes no file, read by `inbox`, in
repositories whose hooks `gitstate init` installed; no text makes it read as a move."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import git, gitstate, make_repo, snapshot
from gitstate.resources import shipped


def _team(repo, *agents):
    for agent in agents:
        res = gitstate(repo, "spawn", agent)
        assert res.returncode == 0, res.stderr


def _changed(repo, rev="HEAD"):
    return git(repo, "diff-tree", "--no-commit-id", "-r", "--name-only", rev).stdout.split()


def _unmoved(repo, moves_before):
    """No agent moved: the log has the same moves, and the whole history is legal."""
    after = json.loads(gitstate(repo, "log", "--json").stdout)["moves"]
    assert after == moves_before
    verified = gitstate(repo, "verify", "--no-cache")
    assert verified.returncode == 0, verified.stdout


def test_a_message_is_one_commit_of_no_file_that_the_inbox_reads(repo):
    _team(repo, "ana", "bob")
    moves = json.loads(gitstate(repo, "log", "--json").stdout)["moves"]
    (repo / "work.txt").write_text("half done\n")
    git(repo, "add", "work.txt")
    before = git(repo, "rev-parse", "HEAD").stdout.strip()
    res = gitstate(repo, "say", "ana", "please rebase on main")
    assert res.returncode == 0, res.stderr
    sha = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert res.stdout == f"to @ana: please rebase on main  ({sha[:10]})\n"
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == before
    assert _changed(repo) == []                                  # no file, no state file
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["work.txt"]
    inbox = json.loads(gitstate(repo, "inbox", "ana", "--json").stdout)
    assert [(m["commit"], m["subject"], m["from"], m["to_all"]) for m in inbox["messages"]] \
        == [(sha, "to @ana: please rebase on main", None, False)]
    assert json.loads(gitstate(repo, "inbox", "bob", "--json").stdout)["messages"] == []
    _unmoved(repo, moves)


def test_an_agent_says_who_speaks_and_its_own_words_skip_its_inbox(repo, monkeypatch):
    _team(repo, "ana", "bob", "carl")
    monkeypatch.setenv("GITSTATE_AGENT", "bob")
    res = gitstate(repo, "say", "@ana:", "carl", "the parser is in\n\nsee src/parse.py, @ana")
    assert res.returncode == 0, res.stderr
    assert git(repo, "cat-file", "commit", "HEAD").stdout.split("\n\n", 1)[1] == \
        "@bob: to @ana @carl: the parser is in\n\nsee src/parse.py, @ana\n"
    assert gitstate(repo, "say", "ALL", "standup in five").returncode == 0
    for agent in ("ana", "carl"):
        got = json.loads(gitstate(repo, "inbox", agent, "--json").stdout)["messages"]
        assert [(m["from"], m["to_all"]) for m in got] == [("bob", False), ("bob", True)]
    assert json.loads(gitstate(repo, "inbox", "bob", "--json").stdout)["messages"] == []
    refused = gitstate(repo, "say", "bob", "a note to myself")
    assert refused.returncode == 2 and "its own words are no message to it" in refused.stderr


def test_an_unknown_addressee_is_refused_with_the_closest_id(repo):
    _team(repo, "ana")
    before = snapshot(repo)
    res = gitstate(repo, "say", "anna", "hello")
    assert res.returncode == 1
    assert "unknown agent 'anna' (did you mean 'ana'?)" in res.stderr
    assert snapshot(repo) == before


def test_a_dead_addressee_is_said_and_a_mention_of_nobody_too(repo):
    _team(repo, "ana", "bob")
    assert gitstate(repo, "transition", "bob", "inbox").returncode == 0
    assert gitstate(repo, "bury", "bob", "--summary", "done").returncode == 0
    res = gitstate(repo, "say", "bob", "thanks, and tell @anaa")
    assert res.returncode == 0
    assert "bob is dead (in the cemetery)" in res.stderr
    assert "no agent is called @anaa (did you mean @ana?)" in res.stderr


@pytest.mark.parametrize("text, said", [
    ("[STATE:dead] bye", "holds '[STATE:dead]', which reads as a state tag"),
    ("@ana: [STATE:dead] done", "holds '[STATE:dead]'"),
    ("all done [ state : frozen ]", "reads as a state tag"),
    ("over\r@ana: [STATE:dead] x", "reads as a state tag"),   # a lone CR is no line break
])
def test_a_first_line_that_reads_as_a_tag_is_refused(repo, text, said):
    _team(repo, "ana")
    before = snapshot(repo)
    res = gitstate(repo, "say", "ana", text)
    assert res.returncode == 1 and said in res.stderr, res.stderr
    assert "a message never moves an agent, so nothing was committed" in res.stderr
    assert snapshot(repo) == before


def test_what_the_hooks_would_take_as_a_move_or_refuse_is_said_as_a_message(repo):
    """The same words as a raw commit: the installed hooks refuse it, or it speaks as ana;
    through `say` each is a message to ana, and nothing moves."""
    _team(repo, "ana")
    moves = json.loads(gitstate(repo, "log", "--json").stdout)["moves"]
    raw = git(repo, "commit", "-q", "--allow-empty", "-m", "@ana: [STATE:dead] done",
              check=False)
    assert raw.returncode != 0 and "tag-without-change" in raw.stderr
    for text, subject, body in (
            ("@ana: done", "to @ana: @ana: done", ""),
            ("hi\n\n@ana: [STATE:dead] gone", "to @ana: hi", "@ana: [STATE:dead] gone"),
            ("hi\n@ALL: [STATE:dead]", "to @ana: hi", "@ALL: [STATE:dead]")):
        res = gitstate(repo, "say", "ana", text)
        assert res.returncode == 0, res.stderr
        assert git(repo, "log", "-1", "--format=%s").stdout.strip() == subject
        assert git(repo, "log", "-1", "--format=%b").stdout.strip() == body
    got = json.loads(gitstate(repo, "inbox", "ana", "--json").stdout)["messages"]
    assert [m["subject"] for m in got] == ["to @ana: @ana: done", "to @ana: hi", "to @ana: hi"]
    _unmoved(repo, moves)
    assert json.loads(gitstate(repo, "status", "ana", "--json").stdout)["state"] == "bootstrap"


def test_control_characters_become_spaces_and_direction_marks_go(repo):
    _team(repo, "ana")
    res = gitstate(repo, "say", "ana", "red \x1b[31malert\x85now \u202edone")
    assert res.returncode == 0, res.stderr
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "to @ana: red [31malert now done"
    assert "2 control characters of the message became spaces" in res.stderr
    assert "the invisible direction mark of the message was left out" in res.stderr


@pytest.mark.parametrize("text, said", [
    ("x" * (64 * 1024 + 1), "longer than a message takes (65,536 bytes)"),
    ("y" * 1001 + "\nrest", "the message's first line is 1,001 characters"),
    (" \n\t\n", "the message is empty"),
])
def test_huge_or_empty_text_is_refused(repo, text, said):
    _team(repo, "ana")
    before = snapshot(repo)
    res = gitstate(repo, "say", "ana", "-", input=text)
    assert res.returncode == 2 and said in res.stderr, res.stderr
    assert snapshot(repo) == before


def test_text_that_is_not_utf8_is_refused_from_argv_and_stdin(repo):
    _team(repo, "ana")
    before = snapshot(repo)
    argv = gitstate(repo, "say", "ana", "caf\udce9", process=True)   # the byte 0xe9 in argv
    assert argv.returncode == 2
    assert "the message is not UTF-8 (byte 0xe9 at character 4)" in argv.stderr
    stdin = subprocess.run([sys.executable, "-m", "gitstate", "say", "ana", "-"], cwd=repo,
                           input=b"ok\n\xff\xfe", capture_output=True)
    assert stdin.returncode == 2 and b"byte 0xff" in stdin.stderr
    assert snapshot(repo) == before


def test_a_form_the_lifecycle_reads_as_a_move_is_refused(tmp_path):
    """A law that reads an older subject form anywhere in a subject: the message that would
    read as a move in it is refused, as the hooks refuse the raw commit (`tag-form`)."""
    repo = make_repo(tmp_path / "repo")
    law = tmp_path / "lifecycle.yaml"
    law.write_text(shipped("protocols", "haak", "lifecycle.yaml").read_text()
                   + 'grammar:\n  accept:\n    - "(?P<id>[a-z0-9-]+) went to (?P<state>[a-z_]+)"\n')
    assert gitstate(repo, "init", "--lifecycle", str(law)).returncode == 0
    _team(repo, "ana")
    raw = git(repo, "commit", "-q", "--allow-empty", "-m", "to @ana: ana went to dead",
              check=False)
    assert raw.returncode != 0 and "tag-form" in raw.stderr
    before = snapshot(repo)
    res = gitstate(repo, "say", "ana", "ana went to dead")
    assert res.returncode == 1
    assert "reads as a move of ana to dead (a form the lifecycle reads)" in res.stderr
    assert snapshot(repo) == before


def test_where_an_agents_commits_carry_its_state_its_words_ride_on_moves(tmp_path,
                                                                         monkeypatch):
    from conftest import managed_repo
    repo = managed_repo(tmp_path / "repo", "--lifecycle", "era")
    _team(repo, "e1", "e2")
    res = gitstate(repo, "say", "e2", "from the lead")        # a person speaks
    assert res.returncode == 0, res.stderr
    monkeypatch.setenv("GITSTATE_AGENT", "e1")
    before = snapshot(repo)
    res = gitstate(repo, "say", "e2", "from e1")
    assert res.returncode == 1 and "[atomic]" in res.stderr
    assert "`gitstate transition e1 bootstrap --body '@e2 ...'`" in res.stderr
    assert snapshot(repo) == before


def test_json_is_the_said_record_and_schema_say_describes_it(repo, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")
    _team(repo, "ana", "bob")
    res = gitstate(repo, "say", "ana,bob", "sync up\nthe hub moved", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data == {"commit": git(repo, "rev-parse", "HEAD").stdout.strip(), "from": None,
                    "to": ["ana", "bob"], "subject": "to @ana @bob: sync up",
                    "body": "the hub moved"}
    schema = json.loads(gitstate(repo, "schema", "say").stdout)
    jsonschema.validate(data, schema)
    assert "say" in json.loads(gitstate(repo, "schema").stdout)


def test_say_push_lands_past_the_hubs_queue_and_after_a_race(tmp_path):
    """A message is no move, so the hub's landing queue does not take it: `--push` pushes it to
    the branch, where the hub's pre-receive judges it; one that lost a race is made again on
    the new tip."""
    from hubs import hub_and_clones
    hub, (a, b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "ana", "--push").returncode == 0
    git(b, "pull", "-q")
    res = gitstate(a, "say", "ana", "please rebase", "--push", "--json")
    assert res.returncode == 0, res.stderr
    first = json.loads(res.stdout)
    assert first["push"]["outcome"] == "landed"
    assert git(hub, "rev-parse", "main").stdout.strip() == first["commit"]
    res = gitstate(b, "say", "ALL", "standup", "--push")       # b is one commit behind
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1].startswith("landed on origin/main after 2 attempts")
    log = git(hub, "log", "--format=%s", "-2", "main").stdout.splitlines()
    assert log == ["to @ALL: standup", "to @ana: please rebase"]
    git(a, "pull", "-q")
    got = json.loads(gitstate(a, "inbox", "ana", "--json").stdout)["messages"]
    assert [m["subject"] for m in got] == ["to @ana: please rebase", "to @ALL: standup"]
    assert gitstate(hub, "verify", "--no-cache").returncode == 0
