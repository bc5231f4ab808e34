"""haak's freeze-state at every door (seed 000): "Before freezing, the agent writes a
structured summary to data/freeze-states/<session-id>.md", its front matter saying when it
froze (`frozen_at: <ISO timestamp>`), and its board post says "Wake me if <condition>". A
freeze that names another agent's freeze-state, one that says no `wake_if`, or one whose
`frozen_at` is no time is refused by the commit hooks, the hub and `verify`."""

from __future__ import annotations

from conftest import fill_freeze_state, git, gitstate, walk
from gitstate.law.times import parse_iso
from trusthelp import (
    assert_push_refused,
    assert_verify_flags,
    cached_hub,
    edit_state,
    gs,
    push_lawful,
    sha,
    sneak,
)


def _bob_frozen(work) -> None:
    """A build for `cached_hub`: alice in inbox, bob frozen with his freeze-state, pushed."""
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox")
    gs(work, "spawn", "bob")
    walk(work, "bob", "inbox")
    gitstate(work, "freeze", "bob")      # writes the template, and refuses
    fill_freeze_state(work / "data" / "freeze-states" / "bob.md")
    gs(work, "freeze", "bob")
    push_lawful(work)


def _refused_by_the_hook(work, message: str, rule: str) -> str:
    git(work, "add", "-A")
    res = git(work, "commit", "-q", "-m", message, check=False)
    assert res.returncode == 1 and f"[{rule}]" in res.stderr, res.stderr
    return res.stderr


def test_a_freeze_naming_another_agents_freeze_state_is_refused_at_every_door(tmp_path):
    hub, work = cached_hub(tmp_path, "bob-frozen", _bob_frozen)
    edit_state(work, "alice", state="frozen", freeze_state="data/freeze-states/bob.md")
    err = _refused_by_the_hook(work, "@alice: [STATE:frozen] borrowing bob's", "freeze-state")
    assert "names data/freeze-states/bob.md, which is not its own" in err
    assert "freeze_state: data/freeze-states/alice.md" in err
    commit = sneak(work, "@alice: [STATE:frozen] borrowing bob's")
    assert_push_refused(work, hub, "freeze-state")
    assert_verify_flags(work, (commit, "freeze-state"))


def test_a_freeze_with_its_own_freeze_state_unchanged_is_refused_at_every_door(tmp_path):
    """Written before and committed as a progress update, the freeze-state is still written
    by the freeze: at least its frozen_at."""
    hub, work = cached_hub(tmp_path, "bob-frozen", _bob_frozen)
    mine = work / "data" / "freeze-states" / "alice.md"
    mine.write_text((work / "data" / "freeze-states" / "bob.md").read_text()
                    .replace("session_id: bob", "session_id: alice"))
    edit_state(work, "alice", summary="progress")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "@alice: [STATE:inbox] my freeze-state, drafted")
    push_lawful(work)
    edit_state(work, "alice", state="frozen", freeze_state="data/freeze-states/alice.md")
    err = _refused_by_the_hook(work, "@alice: [STATE:frozen] as drafted", "freeze-state")
    assert "data/freeze-states/alice.md is unchanged by this commit" in err
    commit = sneak(work, "@alice: [STATE:frozen] as drafted")
    assert_push_refused(work, hub, "freeze-state")
    assert_verify_flags(work, (commit, "freeze-state"))


def test_a_freeze_without_a_wake_condition_is_refused_at_every_door(tmp_path):
    hub, work = cached_hub(tmp_path, "bob-frozen", _bob_frozen)
    res = gitstate(work, "freeze", "alice")                 # the template first
    assert res.returncode == 1 and "`wake_if:` (when to wake it)" in res.stderr
    mine = work / "data" / "freeze-states" / "alice.md"
    fill_freeze_state(mine)
    mine.write_text(mine.read_text().replace("wake_if: the test asks\n", "wake_if: ''\n"))
    res = gitstate(work, "freeze", "alice")
    assert res.returncode == 1 and "says no `wake_if`" in res.stderr and "--wake-if" in res.stderr
    edit_state(work, "alice", state="frozen", freeze_state="data/freeze-states/alice.md")
    err = _refused_by_the_hook(work, "@alice: [STATE:frozen] no condition", "freeze-state")
    assert "data/freeze-states/alice.md:" in err and "Wake me if" in err
    commit = sneak(work, "@alice: [STATE:frozen] no condition")
    assert_push_refused(work, hub, "freeze-state")
    assert_verify_flags(work, (commit, "freeze-state"))


def test_a_frozen_at_that_is_no_time_is_refused_with_its_file_and_line(tmp_path):
    hub, work = cached_hub(tmp_path, "bob-frozen", _bob_frozen)
    gitstate(work, "freeze", "alice")
    mine = work / "data" / "freeze-states" / "alice.md"
    fill_freeze_state(mine)
    text = mine.read_text()
    line = text.splitlines().index(next(ln for ln in text.splitlines()
                                        if ln.startswith("frozen_at:"))) + 1
    mine.write_text("".join(ln if not ln.startswith("frozen_at:") else "frozen_at: now\n"
                            for ln in text.splitlines(keepends=True)))
    edit_state(work, "alice", state="frozen", freeze_state="data/freeze-states/alice.md")
    err = _refused_by_the_hook(work, "@alice: [STATE:frozen] now", "freeze-state")
    assert f"data/freeze-states/alice.md:{line}" in err
    assert "frozen_at 'now' is not an ISO-8601 time" in err
    commit = sneak(work, "@alice: [STATE:frozen] now")
    assert_push_refused(work, hub, "freeze-state")
    assert_verify_flags(work, (commit, "freeze-state"))


def test_the_freeze_stamps_frozen_at_and_posts_the_seeds_line(tmp_path):
    hub, work = cached_hub(tmp_path, "bob-frozen", _bob_frozen)
    gs(work, "transition", "alice", "inbox", "--set", "context_pct=85")
    gitstate(work, "freeze", "alice", "--situation", "the fold")
    mine = work / "data" / "freeze-states" / "alice.md"
    assert "frozen_at: null" in mine.read_text()              # not stamped by the template
    fill_freeze_state(mine)
    mine.write_text(mine.read_text().replace("wake_if: the test asks\n", "wake_if: null\n")
                    .replace("frozen_at: '", "frozen_at: '1999"))
    before = sha(work)
    res = gitstate(work, "freeze", "alice", "--wake-if", "the parser's tests pass again")
    assert res.returncode == 0, res.stderr
    body = git(work, "log", "-1", "--format=%b").stdout
    assert "Frozen at 85% context. Freeze-state at data/freeze-states/alice.md. Working on " \
           "the fold. Wake me if the parser's tests pass again." in body
    committed = git(work, "show", "HEAD:data/freeze-states/alice.md").stdout
    assert "wake_if: the parser's tests pass again" in committed
    stamp = next(ln for ln in committed.splitlines() if ln.startswith("frozen_at:"))
    when = git(work, "log", "-1", "--format=%cd", "--date=iso-strict-local").stdout
    assert "1999" not in stamp and stamp.startswith("frozen_at: '20")
    assert abs(parse_iso(stamp.split("'")[1]) - parse_iso(when.strip())) < 120
    assert sha(work) != before
    push_lawful(work)
    assert gitstate(work, "verify").returncode == 0


def test_a_freeze_state_committed_as_a_symbolic_link_is_refused_at_every_door(tmp_path):
    """A link's text is a complete freeze-state to a reader of blobs, and a dangling link with
    a name of many lines in every work tree."""
    hub, work = cached_hub(tmp_path, "bob-frozen", _bob_frozen)
    gitstate(work, "freeze", "alice")                        # the template first
    mine = work / "data" / "freeze-states" / "alice.md"
    fill_freeze_state(mine)
    blob = git(work, "hash-object", "-w", str(mine)).stdout.strip()
    mine.unlink()
    edit_state(work, "alice", state="frozen", freeze_state="data/freeze-states/alice.md")
    git(work, "add", "-A")
    git(work, "update-index", "--add", "--cacheinfo",
        f"120000,{blob},data/freeze-states/alice.md")
    res = git(work, "commit", "-q", "-m", "@alice: [STATE:frozen] linked", check=False)
    assert res.returncode == 1 and "[freeze-state]" in res.stderr, res.stderr
    assert "data/freeze-states/alice.md is a symbolic link" in res.stderr
    commit = sneak(work, "@alice: [STATE:frozen] linked", "agent/alice/_state.md")
    assert git(work, "ls-tree", commit, "data/freeze-states/alice.md").stdout.startswith(
        "120000 ")
    assert_push_refused(work, hub, "freeze-state")
    assert_verify_flags(work, (commit, "freeze-state"))
