"""Errors as a newcomer meets them: once, in the form asked for, with the right exit code."""

from __future__ import annotations

import json

from conftest import gitstate


def test_usage_errors_under_json_are_json(repo):
    res = gitstate(repo, "roster", "--json", "--bogus")
    assert res.returncode == 2
    data = json.loads(res.stdout)
    assert data["error"] == "UsageError" and "--bogus" in data["message"]


def test_an_error_under_json_is_printed_once(repo):
    res = gitstate(repo, "status", "ghost", "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["error"] == "GitstateError"
    assert res.stderr == ""
    text = gitstate(repo, "status", "ghost")
    assert text.stdout == "" and "unknown agent 'ghost'" in text.stderr


def test_a_bad_revision_is_a_usage_error_everywhere(repo):
    assert gitstate(repo, "verify", "bogus..HEAD").returncode == 2
    assert gitstate(repo, "roster", "--at", "bogus").returncode == 2
    assert gitstate(repo, "verify", "HEAD~1..HEAD").returncode == 0


def test_read_commands_refuse_an_unmanaged_repository(empty_repo):
    from conftest import git
    git(empty_repo, "commit", "-q", "--allow-empty", "-m", "first")
    for args in (("verify",), ("roster",), ("status",), ("log",), ("vacancies",)):
        res = gitstate(empty_repo, *args)
        assert res.returncode == 1 and "not managed" in res.stderr, args


def test_h_and_a_missing_directory(repo, tmp_path):
    assert "Usage:" in gitstate(repo, "roster", "-h").stdout
    res = gitstate(repo, "-C", str(tmp_path / "nowhere"), "roster")
    assert res.returncode == 2 and "no such directory" in res.stderr


def test_set_keeps_text_as_text(repo):
    from conftest import state_path
    assert gitstate(repo, "spawn", "alice", "--set", "thread=007", "--set", "model=4.10",
                    "--set", "summary=0x1F", "--set", "context_pct=62").returncode == 0
    assert "context_pct: 62\n" in state_path(repo, "alice").read_text()
    status = json.loads(gitstate(repo, "status", "alice", "--json").stdout)
    assert status["thread"] == "007" and status["model"] == "4.10"
    assert status["summary"] == "0x1F" and status["context_pct"] == 62


def test_a_multi_line_message_is_a_subject_and_a_body(repo):
    from conftest import git
    assert gitstate(repo, "spawn", "alice", "-m", "born\nwith a longer story").returncode == 0
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "@alice: [STATE:bootstrap] born"
    assert "with a longer story" in git(repo, "log", "-1", "--format=%b").stdout


def test_mark_read_with_nothing_to_read_commits_nothing(repo):
    from conftest import git
    assert gitstate(repo, "spawn", "bob").returncode == 0
    before = git(repo, "rev-parse", "HEAD").stdout
    res = gitstate(repo, "inbox", "bob", "--mark-read", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["messages"] == []
    assert git(repo, "rev-parse", "HEAD").stdout == before


def _frozen_alice(repo):
    from conftest import fill_freeze_state, walk
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox")
    assert gitstate(repo, "freeze", "alice").returncode == 1      # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "alice.md")
    assert gitstate(repo, "freeze", "alice").returncode == 0


def test_refusals_name_the_command_and_its_option_not_trailers(repo):
    _frozen_alice(repo)
    res = gitstate(repo, "transition", "alice", "bootstrap")
    assert res.returncode == 1 and "transition refused (1 problem)" in res.stderr
    assert "pass --approved-by HUMAN, one of zach" in res.stderr
    assert "trailer" not in res.stderr and "commit message" not in res.stderr
    res = gitstate(repo, "bury", "alice", "--summary", "gone")
    assert res.returncode == 1 and "bury refused" in res.stderr
    assert "--approved-by" in res.stderr
    res = gitstate(repo, "wake", "alice", "--approved-by", "mallory")
    assert res.returncode == 1 and "wake refused" in res.stderr
    assert "('mallory' is not one of them)" in res.stderr
    data = json.loads(gitstate(repo, "bury", "alice", "--summary", "x", "--json").stdout)
    assert data["violations"][0]["rule"] == "needs-approval"
    assert "--approved-by" in data["violations"][0]["message"]


def test_plain_git_commit_keeps_the_trailer_wording(repo):
    from conftest import git, set_state_line
    _frozen_alice(repo)
    set_state_line(repo, "alice", "state", "bootstrap")
    git(repo, "add", "-A")
    res = git(repo, "commit", "-qm", "@alice: [STATE:bootstrap] back", check=False)
    assert res.returncode == 1 and "add the trailer 'Approved-by: <human>'" in res.stderr


def test_did_you_mean_for_a_mistyped_state_agent_role_or_command(repo):
    from conftest import walk
    assert gitstate(repo, "spawn", "alice").returncode == 0
    walk(repo, "alice", "inbox")
    res = gitstate(repo, "transition", "alice", "distil")
    assert res.returncode == 1 and "(did you mean 'distill'?)" in res.stderr
    for args in (("transition", "alcie", "distill"), ("status", "alcie"), ("inbox", "alcie"),
                 ("log", "alcie")):
        res = gitstate(repo, *args)
        assert res.returncode == 1 and "did you mean 'alice'?" in res.stderr, args
    data = json.loads(gitstate(repo, "status", "alcie", "--json").stdout)
    assert "did you mean 'alice'?" in data["message"]
    res = gitstate(repo, "spawn", "bob", "--role", "architekt")
    assert res.returncode == 1 and "[unknown-role]" in res.stderr
    assert "(did you mean 'architect'?)" in res.stderr and "`--new-role`" in res.stderr
    res = gitstate(repo, "spawn", "bob", "--role", "architekt", "--new-role")
    assert res.returncode == 0 and "did you mean 'architect'?" in res.stderr
    res = gitstate(repo, "sapwn", "carol")
    assert res.returncode == 2 and "Did you mean 'spawn'?" in res.stderr
    res = gitstate(repo, "transition", "alice", "zzzz")
    assert res.returncode == 1 and "did you mean" not in res.stderr    # nothing close


def test_did_you_mean_for_a_role_where_custom_roles_are_refused(tmp_path):
    from conftest import git, make_repo
    repo = make_repo(tmp_path / "r")
    assert gitstate(repo, "init", "--lifecycle", "maos").returncode == 0
    law = repo / "protocols" / "lifecycle.yaml"
    law.write_text(law.read_text().replace("custom_roles: true", "custom_roles: false"))
    git(repo, "commit", "-qam", "no custom roles", "-m", "Approved-by: zach")
    res = gitstate(repo, "spawn", "e1", "--role", "enginer")
    assert res.returncode == 1 and "[unknown-role]" in res.stderr
    assert "(did you mean 'engineer'?)" in res.stderr


def test_a_move_carrying_a_staged_change_of_the_law_needs_approval(repo):
    from conftest import git
    assert gitstate(repo, "spawn", "alice").returncode == 0
    law = repo / "protocols" / "lifecycle.yaml"
    law.write_text(law.read_text().replace("max: 1", "max: 5", 1))
    git(repo, "add", "protocols/lifecycle.yaml")
    head = git(repo, "rev-parse", "HEAD").stdout
    res = gitstate(repo, "transition", "alice", "inbox")
    assert res.returncode == 1 and "[needs-approval]" in res.stderr
    assert "this commit changes the law (protocols/lifecycle.yaml)" in res.stderr
    assert "pass --approved-by HUMAN, one of zach" in res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == head                 # nothing committed
    assert "protocols/lifecycle.yaml" in git(repo, "diff", "--cached", "--name-only").stdout
    res = gitstate(repo, "transition", "alice", "inbox", "--approved-by", "zach")
    assert res.returncode == 0 and "(a change of the law)" in res.stdout
    assert json.loads(gitstate(repo, "verify", "--json").stdout)["ok"]
