"""haak's `max: 1` on architect, steward and strategist is law; the seed calls it a convention:
"For the architect, steward, and strategist roles, single-holder is the convention but not an
enforced constraint." A team that wants the seed's way writes `max_advisory: true` on the
role: a second holder is then let be by every door, and `gitstate doctor`, `gitstate status`
(the team view) and `gitstate check` warn of it; the roster shows it as any holder."""

from __future__ import annotations

import json

from conftest import git, gitstate
from test_presets import managed, ok, refused_commit


def _doctor_roles(repo) -> list[dict]:
    found = json.loads(gitstate(repo, "doctor", "--json").stdout)["findings"]
    return [f for f in found if f["check"] == "roles"]


def test_one_holder_per_role_is_law_in_haak_by_default(tmp_path):
    repo = managed(tmp_path, "haak")
    ok(repo, "spawn", "carol", "--role", "steward")
    res = gitstate(repo, "spawn", "dave", "--role", "steward")
    assert res.returncode == 1 and "[role-max]" in res.stderr
    assert "role 'steward' may have 1 living holder" in res.stderr
    assert _doctor_roles(repo) == []
    assert json.loads(ok(repo, "status", "--json").stdout)["warnings"] == []
    assert json.loads(ok(repo, "check", "--json").stdout)["warnings"] == []


def test_the_seeds_convention_lets_a_second_holder_be_and_doctor_warns(tmp_path):
    repo = managed(tmp_path, "haak")
    life = repo / "protocols" / "lifecycle.yaml"
    text = life.read_text()
    assert "  steward:\n    max: 1\n" in text
    life.write_text(text.replace("  steward:\n    max: 1\n",
                                 "  steward:\n    max: 1\n    max_advisory: true\n"))
    git(repo, "commit", "-qam", "one steward is our convention, not law",
        "-m", "Approved-by: zach")
    ok(repo, "spawn", "carol", "--role", "steward")
    ok(repo, "spawn", "dave", "--role", "steward")            # the command line lets it be
    [warning] = _doctor_roles(repo)
    assert warning["status"] == "warn"
    assert "role 'steward' has 2 living holders (carol, dave)" in warning["detail"]
    assert "max_advisory: true" in warning["detail"]
    # the hooks let the spawns be (each commit went through them); verify and check too
    assert ok(repo, "verify").returncode == 0
    said = "role 'steward' has 2 living holders (carol, dave); its max of 1 is a convention"
    # status (the team view) and check say it too, a warning and no failure
    res = ok(repo, "status")
    assert f"warning: {said}" in res.stdout, res.stdout
    [warned] = json.loads(ok(repo, "status", "--json").stdout)["warnings"]
    assert warned.startswith(said) and "gitstate handover steward" in warned
    res = ok(repo, "check")
    assert f"warning: {said}" in res.stdout and "ok: lifecycle and state files are valid" \
        in res.stdout, res.stdout
    checked = json.loads(ok(repo, "check", "--json").stdout)
    assert checked["ok"] is True and checked["warnings"][0].startswith(said)
    # the roster shows nothing different: two stewards, as any two holders
    roster = ok(repo, "roster").stdout
    assert "warning" not in roster and "carol" in roster and "dave" in roster
    assert "warning" not in ok(repo, "status", "carol").stdout   # one agent's view: its own
    # the other roles keep their law
    ok(repo, "spawn", "erin", "--role", "architect")
    res = gitstate(repo, "spawn", "fay", "--role", "architect")
    assert res.returncode == 1 and "[role-max]" in res.stderr


def test_a_max_advisory_that_is_not_true_or_false_is_refused_with_its_line(tmp_path):
    repo = managed(tmp_path, "haak")
    life = repo / "protocols" / "lifecycle.yaml"
    life.write_text(life.read_text().replace("  steward:\n    max: 1\n",
                                             "  steward:\n    max: 1\n    max_advisory: maybe\n"))
    res = gitstate(repo, "check")
    assert res.returncode != 0 and "max_advisory must be true or false" in res.stdout + res.stderr
    refused_commit(repo, "law: a convention?\n\nApproved-by: zach", "lifecycle")
