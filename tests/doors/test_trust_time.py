"""A timed transition is due by the hub's clock and the hub's own record of when it
received the commit that started the wait, never by dates a clone wrote into its commits.

squad: `idle -> suspended` after 30 minutes. Dates are set two hours away from now, far beyond
both the timeout and the 5 minutes of allowed skew.
"""

from __future__ import annotations

from conftest import snapshot, walk
from trusthelp import (assert_push_refused, cached_hub, date_env, edit_state, gs, managed, now,
                       out, push_lawful, run_git, sneak_state)

HOURS_2 = 2 * 3600


def _keaton_active(work):
    gs(work, "spawn", "keaton")
    walk(work, "keaton", "active")
    push_lawful(work)


def _keaton_idle(work):
    _keaton_active(work)
    walk(work, "keaton", "idle")
    push_lawful(work)


def test_trust_hub_refuses_a_commit_dated_in_its_future(tmp_path):
    hub, work = cached_hub(tmp_path, "keaton-idle", _keaton_idle, "squad")
    sneak_state(work, "keaton", "@keaton: [STATE:suspended] swept",
                env=date_env(now() + HOURS_2), state="suspended")
    assert_push_refused(work, hub, "future-date")


def test_trust_hub_times_the_wait_from_when_it_received_it(tmp_path):
    hub, work = cached_hub(tmp_path, "keaton-active", _keaton_active, "squad")
    sneak_state(work, "keaton", "@keaton: [STATE:idle] done", env=date_env(now() - HOURS_2),
                state="idle")
    sneak_state(work, "keaton", "@keaton: [STATE:suspended] swept", state="suspended")
    assert_push_refused(work, hub, "timeout")


def test_trust_hook_refuses_a_suspension_not_yet_due_whatever_the_commit_date(tmp_path):
    repo = managed(tmp_path / "repo", "squad")
    gs(repo, "spawn", "keaton")
    walk(repo, "keaton", "active", "idle")
    edit_state(repo, "keaton", state="suspended")
    before = snapshot(repo)
    res = run_git(repo, "commit", "-q", "-am", "@keaton: [STATE:suspended] swept",
                  env=date_env(now() + HOURS_2), check=False)
    assert res.returncode != 0, f"the hook let a suspension in before it was due:\n{out(res)}"
    assert "[timeout]" in res.stderr or "[future-date]" in res.stderr, res.stderr
    assert snapshot(repo) == before
