"""`--push`: a move lands on the hub, is replayed when another agent got there first, and ends
in exactly one of landed / illegal / gave up, never losing the agent's work.

Each test runs against a hub made by `gitstate init --server` (a landing queue: the hub lands
the move on its tip) and, where the two differ, against a hub without the queue (`--push`
fetches, replays and pushes again), as with a hub that cannot run hooks."""

from __future__ import annotations

import json

import pytest
from conftest import fill_freeze_state, git, gitstate
from hubs import hub_and_clones, hub_subjects, pushed, without_queue


@pytest.fixture(params=["queue", "retry"])
def kind(request) -> str:
    return request.param


def test_a_move_lands_on_the_hub(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    code, out = pushed(a, "spawn", "alice")
    assert code == 0 and out["outcome"] == "landed" and out["attempts"] == 1, out
    assert git(hub, "rev-parse", "main").stdout.strip() == out["commit"]
    res = gitstate(a, "transition", "alice", "inbox", "--push")
    assert res.returncode == 0 and "landed on origin/main" in res.stdout
    assert hub_subjects(hub)[0] == "@alice: [STATE:inbox] bootstrap -> inbox"


def test_a_lost_race_is_replayed_on_the_new_tip_with_the_staged_work(tmp_path, kind):
    hub, (a, b) = hub_and_clones(tmp_path, queue=kind == "queue")
    assert pushed(a, "spawn", "alice")[0] == 0
    (b / "notes.txt").write_text("bob's work\n")
    git(b, "add", "notes.txt")
    code, out = pushed(b, "spawn", "bob")        # b is behind: a's spawn landed first
    # the queue lands it on the new tip at once; without it, b pushes again
    attempts = 1 if kind == "queue" else 2
    assert code == 0 and out["outcome"] == "landed" and out["attempts"] == attempts, out
    tip = git(hub, "rev-parse", "main").stdout.strip()
    assert tip == out["commit"] == git(b, "rev-parse", "HEAD").stdout.strip()
    files = git(hub, "show", "--name-only", "--format=", tip).stdout.split()
    assert sorted(files) == ["agent/bob/_state.md", "notes.txt"]   # work and state together
    assert hub_subjects(hub)[1] == "@alice: [STATE:bootstrap] spawned"
    assert git(b, "status", "--porcelain").stdout == ""
    assert gitstate(tmp_path / "c0", "verify", "--no-cache").returncode == 0


def test_a_move_no_longer_legal_on_the_new_tip_is_kept_aside(tmp_path, kind):
    hub, (a, b) = hub_and_clones(tmp_path, queue=kind == "queue")
    assert pushed(a, "spawn", "arch1", "--role", "architect")[0] == 0
    (b / "plan.md").write_text("my plan\n")
    git(b, "add", "plan.md")
    code, out = pushed(b, "spawn", "arch2", "--role", "architect")   # max: 1
    assert code == 1 and out["outcome"] == "illegal", out
    assert out["rule"] == "role-max" and "architect" in out["reason"]
    assert out["kept"] == "gitstate/unlanded/arch2-1" and out["staged"] == ["plan.md"]
    # the branch is in step with the hub; the work is staged and on the side branch
    assert git(b, "rev-parse", "HEAD").stdout == git(hub, "rev-parse", "main").stdout
    assert git(b, "diff", "--cached", "--name-only").stdout.split() == ["plan.md"]
    assert "plan.md" in git(b, "show", "--name-only", "gitstate/unlanded/arch2-1").stdout
    assert "arch2" not in "".join(hub_subjects(hub))
    # in step now, the same move is refused here before anything is committed
    res = gitstate(b, "spawn", "arch3", "--role", "architect", "--push")
    assert res.returncode == 1 and "[role-max]" in res.stderr
    assert git(b, "rev-parse", "HEAD").stdout == git(hub, "rev-parse", "main").stdout


def test_a_refusal_by_the_hubs_law_is_reported_with_its_words(tmp_path, kind):
    hub, (a, _b) = hub_and_clones(tmp_path, queue=kind == "queue")
    assert pushed(a, "spawn", "alice")[0] == 0
    git(hub, "config", "gitstate.protect", "main")
    # a commit the hub refuses though the clone accepted it: dated far in the hub's future
    import os
    env = dict(os.environ, GIT_COMMITTER_DATE="2099-01-01T00:00:00Z")
    import subprocess
    import sys
    res = subprocess.run([sys.executable, "-m", "gitstate", "transition", "alice", "inbox",
                          "--push", "--json"], cwd=a, capture_output=True, text=True, env=env)
    out = json.loads(res.stdout)["push"]
    assert res.returncode == 1 and out["outcome"] == "illegal", out
    assert "future-date" in out["reason"] and out["kept"] == "gitstate/unlanded/alice-1"
    if kind == "queue":   # the rule comes from the hub's push report, not from its prose
        assert out["rule"] == "future-date"
    assert git(a, "rev-parse", "HEAD").stdout == git(hub, "rev-parse", "main").stdout


def test_gave_up_keeps_the_move_committed(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path, queue=False)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "config", "gitstate.pushAttempts", "1")
    code, out = pushed(b, "spawn", "bob")
    assert code == 1 and out["outcome"] == "gave-up" and "1 attempts" in out["reason"], out
    assert git(b, "log", "-1", "--format=%s").stdout.startswith("@bob: [STATE:bootstrap]")
    git(b, "config", "gitstate.pushAttempts", "8")


def test_a_hub_that_does_not_answer_costs_the_landing_not_a_hang(tmp_path):
    """The hub's receive waits forever (its hook blocks on a pipe nobody writes): the move
    gives up within its time (`gitstate.pushSeconds`), committed here, the reason said."""
    import os
    hub, (a, _b) = hub_and_clones(tmp_path)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    hook = hub / "hooks" / "pre-receive"
    hook.rename(hook.with_name("pre-receive.real"))
    hook.write_text(f"#!/bin/sh\nread line < {gate}\nexec \"$0.real\"\n")
    hook.chmod(0o755)
    git(a, "config", "gitstate.pushSeconds", "2")
    try:
        code, out = pushed(a, "spawn", "alice")
    finally:
        try:   # let the waiting hook go
            fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"go\n")
            os.close(fd)
        except OSError:
            pass
    assert code == 1 and out["outcome"] == "gave-up", out
    assert "got no answer in time" in out["reason"], out
    assert git(a, "log", "-1", "--format=%s").stdout.startswith("@alice: [STATE:bootstrap]")


def test_push_needs_an_upstream_and_commits_nothing_without_one(repo):
    before = git(repo, "rev-parse", "HEAD").stdout
    res = gitstate(repo, "spawn", "alice", "--push")
    assert res.returncode == 1 and "upstream" in res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_every_committing_command_takes_push(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    for args in (("spawn", "alice"), ("transition", "alice", "inbox"),
                 ("transition", "alice", "distill"), ("freeze", "alice"),
                 ("wake", "alice", "--approved-by", "zach"),
                 ("inbox", "alice", "--mark-read"), ("transition", "alice", "inbox"),
                 ("transition", "alice", "distill"), ("bury", "alice", "--summary", "done")):
        if args[0] == "freeze":
            assert gitstate(a, "freeze", "alice").returncode == 1   # writes the template
            fill_freeze_state(a / "data" / "freeze-states" / "alice.md")
        res = gitstate(a, *args, "--push")
        assert res.returncode == 0, (args, res.stderr)
    assert git(a, "rev-parse", "HEAD").stdout == git(hub, "rev-parse", "main").stdout


def test_the_retry_bounds_come_from_git_config(repo):
    from gitstate.git.repo import open_managed
    from gitstate.moves.landing import policy_of
    git(repo, "config", "gitstate.pushAttempts", "3")
    git(repo, "config", "gitstate.pushSeconds", "5.5")
    git(repo, "config", "gitstate.pushBackoffMax", "0.2")
    policy = policy_of(open_managed(str(repo)))
    assert (policy.attempts, policy.seconds, policy.cap) == (3, 5.5, 0.2)
    assert all(0 <= policy.pause(n) <= 0.2 for n in range(1, 20))


def test_shutdown_lands_each_move_on_the_hub(tmp_path, kind):
    hub, (a, b) = hub_and_clones(tmp_path, queue=kind == "queue")
    assert gitstate(a, "spawn", "alice", "--push").returncode == 0
    git(b, "pull", "-q", "--ff-only")
    assert gitstate(a, "transition", "alice", "inbox", "--push").returncode == 0   # b is behind
    res = gitstate(b, "shutdown", "--push")
    assert res.returncode == 0, res.stderr
    assert git(b, "rev-parse", "HEAD").stdout == git(hub, "rev-parse", "main").stdout
    status = json.loads(gitstate(b, "status", "alice", "--json").stdout)
    assert status["state"] == "frozen"
    assert gitstate(b, "verify", "--no-cache").returncode == 0


def _plain(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "push"}


def test_a_pushed_move_prints_the_plain_move_with_the_landed_commit(tmp_path):
    """`--push` says what the move says without it (the commit being the landed one, the work
    it also committed) and then where it landed; `--json` is the plain move's object plus
    `push`."""
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (b / "notes.txt").write_text("bob's work\n")
    git(b, "add", "notes.txt")
    local = git(b, "rev-parse", "HEAD").stdout.strip()   # b is behind: its move is made
    res = gitstate(b, "spawn", "bob", "--push")
    assert res.returncode == 0, res.stderr
    tip = git(hub, "rev-parse", "main").stdout.strip()
    # the hub made it again on a's move: the landed commit is not the one made here
    assert git(hub, "rev-parse", "main~2").stdout.strip() == local
    assert res.stdout.splitlines() == [f"bob: bootstrap  ({tip[:10]})",
                                       "  also committed: notes.txt",
                                       "landed on origin/main"]

    git(a, "pull", "-q", "--ff-only")
    (a / "more.txt").write_text("alice's work\n")
    git(a, "add", "more.txt")
    res = gitstate(b, "transition", "bob", "inbox", "--push", "--json")   # b moves on the hub
    assert res.returncode == 0, res.stderr
    res = gitstate(a, "transition", "alice", "inbox", "--push", "--json")  # a is behind
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    tip = git(hub, "rev-parse", "main").stdout.strip()
    assert out["commit"] == tip and out["push"]["commit"] == tip
    assert out["push"]["outcome"] == "landed" and out["push"]["attempts"] == 1
    assert out["push"]["upstream"] == "origin/main"
    plain = json.loads(gitstate(a, "transition", "alice", "distill", "--json").stdout)
    assert set(_plain(out)) == set(plain)          # the plain move's keys, no fewer, no more
    assert out["also_committed"] == ["more.txt"]
    assert (out["agent"], out["from"], out["to"]) == ("alice", "bootstrap", "inbox")
    assert out["subject"] == git(hub, "log", "-1", "--format=%s", "main").stdout.strip()


def test_a_pushed_burial_names_the_landed_commit_in_its_vacancy_notice(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "arch", "--role", "architect")[0] == 0
    for state in ("inbox", "distill"):
        assert pushed(a, "transition", "arch", state)[0] == 0
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "spawn", "dave")[0] == 0                 # b is behind again
    local = git(b, "rev-parse", "HEAD").stdout.strip()   # its burial is made on this
    res = gitstate(b, "bury", "arch", "--summary", "designed it", "--push")
    assert res.returncode == 0, res.stderr
    tip = git(hub, "rev-parse", "main").stdout.strip()
    assert git(hub, "rev-parse", "main~2").stdout.strip() == local   # made again on dave's
    assert res.stdout.splitlines() == [
        f"arch: distill -> dead  ({tip[:10]})", "landed on origin/main",
        f"Role 'architect' is vacant. Last held by arch (dead since {tip[:10]}). Mandate: "
        "patterns/methods/23-architect-mandate.md."]

    assert pushed(b, "spawn", "arch2", "--role", "architect")[0] == 0
    for state in ("inbox", "distill"):
        assert pushed(b, "transition", "arch2", state)[0] == 0
    git(a, "pull", "-q", "--ff-only")
    assert pushed(b, "spawn", "erin")[0] == 0                 # a is behind again
    code, out = pushed(a, "bury", "arch2", "--summary", "done")
    tip = git(hub, "rev-parse", "main").stdout.strip()
    assert code == 0 and out["commit"] == tip == out["move"]["commit"], out
    assert out["move"]["vacancies"] == [
        f"Role 'architect' is vacant. Last held by arch2 (dead since {tip[:10]}). Mandate: "
        "patterns/methods/23-architect-mandate.md."]


def test_a_handover_lands_with_push(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    for args in (("spawn", "arch1", "--role", "architect"), ("spawn", "bob")):
        assert pushed(a, *args)[0] == 0
    code, out = pushed(a, "handover", "architect", "--to", "bob")
    assert code == 0 and out["outcome"] == "landed", out
    assert git(hub, "rev-parse", "main").stdout.strip() == out["commit"]
    assert "Role-transfer: architect -> bob" in git(hub, "log", "-1", "--format=%B",
                                                    "main").stdout


def test_a_move_in_step_with_its_hub_asks_this_clone_s_facts_once(tmp_path, monkeypatch):
    """A `--push` of a branch in step with its hub: git's config is listed once, the upstream
    and how far ahead the branch is are asked once, and the landed move is not fetched back
    (the hub's report names it). The hub's own processes (under receive-pack and
    upload-pack) are not this clone's."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    code, out = pushed(a, "spawn", "carol")
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert code == 0 and out["outcome"] == "landed", out
    mine = _my_git(trace)
    assert sum("config" in argv for argv in mine) == 1, mine
    assert sum("rev-list" in argv for argv in mine) == 1, mine   # how far ahead: once
    assert not any("fetch" in argv for argv in mine), mine


def _my_git(trace) -> list[list[str]]:
    starts = [e for e in map(json.loads, trace.read_text().splitlines())
              if e["event"] == "start"]
    hub_sids = [e["sid"] for e in starts
                if any(w in " ".join(e["argv"][:2]) for w in ("receive-pack", "upload-pack"))]
    return [e["argv"] for e in starts if not any(e["sid"].startswith(s) for s in hub_sids)
            and "--no-replace-objects" in e["argv"]]


@pytest.mark.parametrize("hub_now", ["judging", "plain"])
def test_a_hub_remembered_as_queueing_that_no_longer_queues_is_pushed_to(tmp_path, hub_now,
                                                                          monkeypatch):
    """A clone remembers that its hub keeps a landing queue, and asks no more; when the hub no
    longer does (made again without one, or a bare repository with no hooks at all, which
    writes the queued move as a ref of its own), the move is pushed to the branch as to any
    hub, lands, and the clone forgets (or remembers the plain hub as one); nothing stray is
    left on the hub."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    memory = a / ".git" / "gitstate" / "queueing-hubs"
    url = git(a, "config", "remote.origin.url").stdout.strip()
    assert memory.read_text().splitlines() == [url]
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    assert pushed(a, "spawn", "bob")[0] == 0
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert not any("ls-remote" in argv for argv in _my_git(trace))   # remembered: not asked
    trace.unlink()
    without_queue(hub)
    if hub_now == "plain":
        for name in ("pre-receive", "proc-receive", "post-receive", "reference-transaction"):
            (hub / "hooks" / name).unlink()
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    code, out = pushed(a, "transition", "alice", "inbox")
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert code == 0 and out["outcome"] == "landed", out
    assert hub_subjects(hub)[0] == "@alice: [STATE:inbox] bootstrap -> inbox"
    # asked again, once; a hub that wrote the queued move as a ref of its own is not asked:
    # it keeps no queue, and is remembered so
    asked = sum("ls-remote" in argv for argv in _my_git(trace))
    assert asked == (1 if hub_now == "judging" else 0), asked
    assert memory.read_text() == ("" if hub_now == "judging" else f"plain {url}\n")
    assert git(hub, "for-each-ref", "refs/gitstate/").stdout == ""
    code, out = pushed(a, "transition", "alice", "distill")   # and pushed to from now on
    assert code == 0 and out["outcome"] == "landed" and out["attempts"] == 1, out


def test_a_remote_whose_pushes_go_elsewhere_asks_the_hub_it_pushes_to(tmp_path):
    """A remote read from a plain mirror (`url`) and pushed to a queueing hub (`pushurl`):
    the clone asks the hub it pushes to whether it keeps a queue, and remembers that one."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(hub), str(mirror))
    hub_url = git(a, "config", "remote.origin.url").stdout.strip()
    git(a, "config", "remote.origin.url", str(mirror))
    git(a, "config", "remote.origin.pushurl", hub_url)
    memory = a / ".git" / "gitstate" / "queueing-hubs"
    memory.unlink(missing_ok=True)
    code, out = pushed(a, "spawn", "alice")
    assert code == 0 and out["outcome"] == "landed", out
    assert hub_subjects(hub)[0].startswith("@alice: [STATE:")
    assert memory.read_text().splitlines() == [hub_url]
