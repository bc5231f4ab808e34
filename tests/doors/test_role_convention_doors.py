"""A role's max is law at every door unless the lifecycle makes it the seed's convention
(`max_advisory: true`): then the hub lets a second living holder land too, as the hooks and
`verify` do, while a role without it is still refused there."""

from __future__ import annotations

from conftest import git
from trusthelp import assert_push_refused, cached_hub, gs, push_lawful, sneak


def _steward_by_convention(work) -> None:
    """A build for `cached_hub`: haak with `max_advisory: true` on steward, carol the steward
    and erin the architect, pushed."""
    life = work / "protocols" / "lifecycle.yaml"
    life.write_text(life.read_text().replace("  steward:\n    max: 1\n",
                                             "  steward:\n    max: 1\n    max_advisory: true\n"))
    git(work, "commit", "-qam", "one steward is our convention", "-m", "Approved-by: zach")
    gs(work, "spawn", "carol", "--role", "steward")
    gs(work, "spawn", "erin", "--role", "architect")
    push_lawful(work)


def _spawn_by_hand(work, agent: str, role: str) -> None:
    """A second holder's birth committed with every hook off, from `carol`'s own file."""
    theirs = (work / "agent" / "carol" / "_state.md").read_text()
    mine = work / "agent" / agent / "_state.md"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(theirs.replace("agent: carol", f"agent: {agent}")
                    .replace("role: steward", f"role: {role}"))
    sneak(work, f"@{agent}: [STATE:bootstrap] spawned by hand", f"agent/{agent}")


def test_the_hub_lets_a_second_holder_of_a_convention_role_land(tmp_path):
    hub, work = cached_hub(tmp_path, "steward-by-convention", _steward_by_convention)
    _spawn_by_hand(work, "dave", "steward")
    push_lawful(work)
    assert gs(work, "verify").returncode == 0


def test_the_hub_still_refuses_a_second_holder_of_a_role_of_law(tmp_path):
    hub, work = cached_hub(tmp_path, "steward-by-convention", _steward_by_convention)
    _spawn_by_hand(work, "fay", "architect")
    assert_push_refused(work, hub, "role-max")


def _pm_and_bob(work) -> None:
    """A build for `cached_hub`: maos, alice the pm and bob with no role, pushed."""
    gs(work, "spawn", "alice", "--role", "pm")
    gs(work, "spawn", "bob")
    push_lawful(work)


def test_a_giver_that_takes_another_role_in_its_hand_over_is_refused_at_every_door(tmp_path):
    """A hand-over sets the giver's role to null: a role taken there would pass by
    `Assumes-role:` (a vacancy) and `New-role:` (a role the lifecycle does not declare)."""
    from conftest import gitstate
    from trusthelp import assert_verify_flags, edit_state
    hub, work = cached_hub(tmp_path, "maos-pm-and-bob", _pm_and_bob, preset="maos")
    edit_state(work, "alice", role="overlord")
    edit_state(work, "bob", role="pm")
    git(work, "add", "-A")
    message = "@alice: [STATE:pending] hand over\n\nRole-transfer: pm -> bob"
    res = git(work, "commit", "-q", "-m", message, check=False)
    assert res.returncode == 1 and "[assume-role]" in res.stderr, res.stderr
    assert "alice hands over 'pm' and takes 'overlord'" in res.stderr
    commit = sneak(work, message, "agent")
    assert_push_refused(work, hub, "assume-role")
    assert_verify_flags(work, (commit, "assume-role"))
    assert gitstate(work, "verify", "--no-cache").returncode == 1
