"""The hub's landing queue: moves pushed to `refs/gitstate/queue/<branch>` land on the branch
in order of arrival, each judged on the tip it lands on; the pusher reads the outcome from
git's push report; what is not one move is refused with its rule; nothing piles up, and a
hub killed in the middle lands nothing twice."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git, gitstate
from hubs import hub_and_clones, hub_subjects, pushed

UNHOOKED = ("-c", "core.hooksPath=/dev/null")


def queued_push(clone: Path, rev: str = "HEAD", branch: str = "main") -> tuple[int, list[str]]:
    """Push `rev` to the hub's queue as any git client would: (exit code, porcelain lines)."""
    res = git(clone, "-c", "core.abbrev=no", "push", "--porcelain", "origin",
              f"{rev}:refs/gitstate/queue/{branch}", check=False)
    return res.returncode, [ln for ln in res.stdout.splitlines() if "\t" in ln]


def hub_tip(hub: Path) -> str:
    return git(hub, "rev-parse", "main").stdout.strip()


def assert_queue_empty(hub: Path) -> None:
    assert git(hub, "for-each-ref", "refs/gitstate/queue").stdout == ""
    pending = [p.name for p in (hub / "gitstate" / "queue").iterdir()
               if p.name[0].isdigit()]
    assert pending == []


def state_edit(clone: Path, agent: str, state: str) -> None:
    """Move `agent` to `state` by hand: the state file edited and committed with its tag."""
    path = clone / "agent" / agent / "_state.md"
    text = path.read_text()
    old = next(ln for ln in text.splitlines() if ln.startswith("state:")).split()[1]
    path.write_text(text.replace(f"state: {old}", f"state: {state}", 1))
    git(clone, "add", str(path))
    git(clone, *UNHOOKED, "commit", "-q", "-m", f"@{agent}: [STATE:{state}] {old} -> {state}")


def test_a_hub_says_it_queues_and_a_queued_push_reports_the_landed_commit(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert git(a, "ls-remote", "origin", "refs/gitstate/hub").stdout.strip()
    assert pushed(a, "spawn", "alice")[0] == 0
    assert gitstate(b, "spawn", "bob").returncode == 0      # b is one move behind the hub
    move = git(b, "rev-parse", "HEAD").stdout.strip()
    code, lines = queued_push(b)
    assert code == 0, lines
    flag, refs, summary = lines[0].split("\t")
    # git's own report: the branch, and the commit the hub landed (bob's move on alice's)
    assert refs.endswith(":refs/heads/main") and flag in (" ", "*")
    old, landed = summary.split("..")
    assert landed == hub_tip(hub) != move and old == git(a, "rev-parse", "HEAD").stdout.strip()
    raw_move = git(b, "cat-file", "commit", move).stdout
    raw_landed = git(hub, "cat-file", "commit", landed).stdout
    # the same message, author and committer; only its parent and tree are the hub's
    assert raw_move.split("\n\n", 1)[1] == raw_landed.split("\n\n", 1)[1]
    keep = [ln for ln in raw_move.splitlines() if ln.startswith(("author", "committer"))]
    assert keep == [ln for ln in raw_landed.splitlines() if ln.startswith(("author", "committer"))]
    assert sorted(git(hub, "show", "--name-only", "--format=", landed).stdout.split()) == \
        ["agent/bob/_state.md"]
    assert hub_subjects(hub)[:2] == ["@bob: [STATE:bootstrap] spawned",
                                     "@alice: [STATE:bootstrap] spawned"]
    # the hub's clock: a reception note for the landed commit, none for the queue
    assert git(hub, "notes", "--ref=refs/notes/gitstate-received", "show", landed).stdout
    assert_queue_empty(hub)


@pytest.mark.parametrize("what", ["merge", "root", "no state file", "two agents",
                                  "law without approval", "off the branch", "large file",
                                  "large files"])
def test_what_is_not_one_move_is_refused_with_its_rule_and_lands_nothing(tmp_path, what):
    hub, (a, _b) = hub_and_clones(tmp_path)
    for agent in ("alice", "bob"):
        code, out = pushed(a, "spawn", agent)
        assert code == 0, out
    before = hub_tip(hub)
    rule = "queue-move"
    if what == "merge":
        git(a, "switch", "-q", "-c", "side")
        state_edit(a, "alice", "inbox")
        git(a, "switch", "-q", "main")
        (a / "notes.txt").write_text("x\n")
        git(a, "add", "notes.txt")
        git(a, *UNHOOKED, "commit", "-q", "-m", "notes")
        git(a, *UNHOOKED, "merge", "-q", "--no-edit", "side")
    elif what == "root":
        tree = git(a, "rev-parse", "HEAD^{tree}").stdout.strip()
        root = git(a, "commit-tree", tree, "-m", "@alice: [STATE:inbox] a root",
                   check=False).stdout.strip()
        git(a, *UNHOOKED, "update-ref", "refs/heads/rootless", root)
        git(a, *UNHOOKED, "switch", "-q", "rootless")
    elif what == "no state file":
        (a / "notes.txt").write_text("only work\n")
        git(a, "add", "notes.txt")
        git(a, *UNHOOKED, "commit", "-q", "-m", "notes")
    elif what == "two agents":
        for agent in ("alice", "bob"):
            path = a / "agent" / agent / "_state.md"
            path.write_text(path.read_text().replace("state: bootstrap", "state: inbox", 1))
            git(a, "add", str(path))
        git(a, *UNHOOKED, "commit", "-q", "-m", "@alice: [STATE:inbox] both")
        rule = "multiple-agents"
    elif what == "law without approval":
        law = a / "protocols" / "lifecycle.yaml"
        law.write_text(law.read_text() + "\n# loosened\n")
        state_edit(a, "alice", "inbox")
        git(a, "add", str(law))
        git(a, *UNHOOKED, "commit", "-q", "--amend", "--no-edit")
        rule = "needs-approval"
    elif what == "off the branch":
        (a / "notes.txt").write_text("not on the hub\n")
        git(a, "add", "notes.txt")
        git(a, *UNHOOKED, "commit", "-q", "-m", "notes")
        state_edit(a, "alice", "inbox")                 # built on a commit the hub has not got
    elif what == "large file":
        # 9 MiB of zeros: over the 8 MiB a queued move may carry, and cheap to push
        (a / "big.bin").write_bytes(bytes(9 << 20))
        git(a, "add", "big.bin")
        state_edit(a, "alice", "inbox")
        git(a, *UNHOOKED, "commit", "-q", "--amend", "--no-edit")
    elif what == "large files":
        # 5 MiB each, 10 MiB in all: over what a queued move may carry, though no file is
        for i in (1, 2):
            (a / f"big{i}.bin").write_bytes(bytes([i]) * (5 << 20))
            git(a, "add", f"big{i}.bin")
        state_edit(a, "alice", "inbox")
        git(a, *UNHOOKED, "commit", "-q", "--amend", "--no-edit")
    code, lines = queued_push(a)
    assert code != 0
    flag, _refs, summary = lines[0].split("\t")
    assert flag == "!" and f"(gitstate:{rule} " in summary, summary
    assert hub_tip(hub) == before
    assert_queue_empty(hub)


def test_clients_cannot_write_the_hubs_own_refs(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    mark = git(hub, "rev-parse", "refs/gitstate/hub").stdout.strip()
    res = git(a, "push", "origin", "+HEAD:refs/gitstate/hub", check=False)
    assert res.returncode != 0 and "[protected-ref]" in res.stderr
    res = git(a, "push", "origin", ":refs/gitstate/hub", check=False)
    assert res.returncode != 0
    assert git(hub, "rev-parse", "refs/gitstate/hub").stdout.strip() == mark


def test_a_signed_move_made_on_an_older_tip_is_refused_and_lands_when_signed_on_the_tip(tmp_path):
    """The line rule: a signed move joins the line only on the tip it was signed on, judged by
    the signers in force there (before, the queue merged it in as a second parent). Made
    again on the tip, it lands as itself, its signature as made."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is missing (install openssh-client)")
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "spawn", "bob")[0] == 0                  # b is behind again
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zach", "-f", str(key)],
                   check=True, capture_output=True)
    signing = ("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}")
    state_edit(b, "alice", "inbox")
    git(b, *signing, *UNHOOKED, "commit", "-q", "--amend", "--no-edit", "-S")
    before = hub_tip(hub)
    code, lines = queued_push(b)
    assert code != 0 and any("queue-stale" in ln and "signed" in ln for ln in lines), lines
    assert hub_tip(hub) == before
    # made again on the tip and signed there, it lands as itself
    git(b, "reset", "-q", "--hard", "HEAD~1")
    git(b, "pull", "-q", "--ff-only")
    state_edit(b, "alice", "inbox")
    git(b, *signing, *UNHOOKED, "commit", "-q", "--amend", "--no-edit", "-S")
    move = git(b, "rev-parse", "HEAD").stdout.strip()
    code, lines = queued_push(b)
    assert code == 0, lines
    assert hub_tip(hub) == move
    allowed = tmp_path / "allowed"
    allowed.write_text(f"zach {Path(f'{key}.pub').read_text()}")
    res = git(hub, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", move,
              check=False)
    assert res.returncode == 0, res.stderr
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(hub), str(fresh))
    res = gitstate(fresh, "verify", "--no-cache")
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_move_whose_agent_moved_on_the_hub_is_decided_again(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    git(b, "pull", "-q", "--ff-only")
    assert pushed(a, "transition", "alice", "inbox")[0] == 0
    # b still sees alice in bootstrap; the hub refuses the stale move, b decides it again
    code, out = pushed(b, "transition", "alice", "inbox", "-m", "from b")
    assert code == 0 and out["outcome"] == "landed" and out["attempts"] == 2, out
    assert out["move"]["from"] == "inbox"                      # decided again from the hub's
    assert hub_subjects(hub)[0].startswith("@alice: [STATE:inbox]")
    assert git(b, "rev-parse", "HEAD").stdout.strip() == hub_tip(hub)


def _hold_the_landing_lock(hub: Path):
    (hub / "gitstate").mkdir(exist_ok=True)
    fh = open(hub / "gitstate" / "lock", "a+")
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    return fh


def _wait_for_requests(hub: Path, count: int) -> list[str]:
    """The queue's requests, once `count` are filed (each push files its own at once)."""
    deadline = time.monotonic() + 60
    queue = hub / "gitstate" / "queue"
    while time.monotonic() < deadline:
        names = sorted(p.name for p in queue.iterdir() if p.name[0].isdigit()) \
            if queue.is_dir() else []
        if len(names) >= count:
            return names
        time.sleep(0.02)
    raise AssertionError(f"{count} requests were never filed")


def _background_push(clone: Path, *args: str) -> subprocess.Popen:
    import sys
    return subprocess.Popen([sys.executable, "-m", "gitstate", *args, "--push", "--json"],
                            cwd=clone, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_moves_land_in_order_of_arrival(tmp_path):
    hub, clones = hub_and_clones(tmp_path, 3)
    lock = _hold_the_landing_lock(hub)
    try:
        procs = []
        for i, clone in enumerate(clones):
            procs.append(_background_push(clone, "spawn", f"agent-{i}"))
            _wait_for_requests(hub, i + 1)          # each arrives before the next is sent
    finally:
        lock.close()                                # the queue lands them all now
    outs = [json.loads(p.communicate()[0])["push"] for p in procs]
    assert [o["outcome"] for o in outs] == ["landed"] * 3
    assert hub_subjects(hub)[:3] == [f"@agent-{i}: [STATE:bootstrap] spawned"
                                     for i in (2, 1, 0)]
    assert_queue_empty(hub)


def _proc_receive_pids(hub: Path) -> list[int]:
    """The landers of this hub alone: git runs a hook in the hub's directory, and the tests
    beside this one have landers of their own."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
                where = Path(os.readlink(entry / "cwd"))
            except OSError:
                continue
            if b"proc-receive" in cmd and b"hook" in cmd and where == hub.resolve():
                pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux's /proc")
def test_a_hub_killed_while_a_move_waits_lands_it_once_after(tmp_path):
    hub, (a, b) = hub_and_clones(tmp_path)
    lock = _hold_the_landing_lock(hub)
    try:
        proc = _background_push(a, "spawn", "alice")
        _wait_for_requests(hub, 1)
        landers = _proc_receive_pids(hub)
        assert landers, "no lander of this hub was found to kill"
        for pid in landers:
            os.kill(pid, signal.SIGKILL)            # the hub's lander dies with the move filed
        out = json.loads(proc.communicate()[0])["push"]
    finally:
        lock.close()
    assert out["outcome"] == "gave-up"              # the pusher cannot know: nothing lost
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    assert "alice" not in "".join(hub_subjects(hub))
    # the next push to the queue (here bob's) lands the waiting move first, in order
    assert pushed(b, "spawn", "bob")[0] == 0
    assert hub_subjects(hub)[:2] == ["@bob: [STATE:bootstrap] spawned",
                                     "@alice: [STATE:bootstrap] spawned"]
    # alice's clone pushing the same move again learns how it landed: not landed twice
    code, lines = queued_push(a, move)
    assert code == 0 and lines[0].split("\t")[2].endswith(move)
    subjects = hub_subjects(hub)
    assert subjects.count("@alice: [STATE:bootstrap] spawned") == 1
    assert_queue_empty(hub)


def test_drain_finishes_a_landing_cut_short_after_the_branch_moved(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "alice").returncode == 0
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    git(a, "push", "-q", "origin", "HEAD:refs/heads/main")    # the branch moved to the move...
    queue = hub / "gitstate" / "queue"
    queue.mkdir(parents=True, exist_ok=True)
    tip = git(hub, "rev-parse", "main~1").stdout.strip()
    # ...and the lander was killed before it said so: its request still waits
    (queue / f"{time.time_ns():020d}-1-{move[:12]}").write_text(json.dumps(
        {"branch": "refs/heads/main", "move": move, "landing": {"commit": move, "old": tip}}))
    res = gitstate(hub, "hub", "drain", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["landed"] == 1 and data["moves"][0]["landed"] == move
    assert git(hub, "rev-list", "--count", "main").stdout.strip() == \
        git(a, "rev-list", "--count", "HEAD").stdout.strip()    # landed once
    assert_queue_empty(hub)
    res = gitstate(hub, "hub", "drain")
    assert res.returncode == 0 and "the landing queue is empty" in res.stdout
    res = gitstate(a, "hub", "drain")    # a clone keeps no queue: it says so, not "empty"
    assert res.returncode == 2 and "is for a hub" in res.stderr and "hub drain" in res.stderr
    assert "the landing queue is empty" not in res.stdout


def test_drain_lands_afresh_a_landing_cut_short_before_the_branch_moved(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    assert gitstate(a, "spawn", "bob").returncode == 0
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    git(a, "push", "-q", "origin", "HEAD:refs/heads/objects")   # the hub has its objects
    tip = hub_tip(hub)
    # killed after it wrote the commit it would land, before the branch moved: that commit
    # never reached the branch, so the move is landed again from the start
    orphan = git(hub, "commit-tree", git(hub, "rev-parse", "main^{tree}").stdout.strip(),
                 "-p", tip, "-m", "never landed").stdout.strip()
    queue = hub / "gitstate" / "queue"
    queue.mkdir(parents=True, exist_ok=True)
    (queue / f"{time.time_ns():020d}-1-{move[:12]}").write_text(json.dumps(
        {"branch": "refs/heads/main", "move": move, "landing": {"commit": orphan, "old": tip}}))
    data = json.loads(gitstate(hub, "hub", "drain", "--json").stdout)
    assert data["landed"] == 1 and data["moves"][0]["landed"] == move == hub_tip(hub)
    assert git(hub, "rev-list", "--count", f"{tip}..main").stdout.strip() == "1"


def test_a_move_the_hub_cannot_read_is_refused_and_does_not_block_the_queue(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    queue = hub / "gitstate" / "queue"
    queue.mkdir(parents=True, exist_ok=True)
    (queue / f"{time.time_ns():020d}-1-bogus").write_text(json.dumps(
        {"branch": "refs/heads/main", "move": "f" * 40}))
    (queue / f"{time.time_ns():020d}-2-junk").write_text("{not json")
    (queue / f"{time.time_ns():020d}-3-escape").write_text(json.dumps(
        {"branch": "refs/heads/main", "move": "../../../escaped"}))
    code, out = pushed(a, "spawn", "alice")                     # lands after them
    assert code == 0 and out["outcome"] == "landed", out
    assert json.loads((queue / "done" / ("f" * 40)).read_text())["rule"] == "queue-move"
    assert not (hub / "escaped").exists() and not (tmp_path / "escaped").exists()
    assert_queue_empty(hub)


def test_doctor_on_the_hub_shows_the_queue(tmp_path):
    hub, _clones = hub_and_clones(tmp_path, 1)
    res = gitstate(hub, "doctor", "--json")
    found = {f["check"]: f for f in json.loads(res.stdout)["findings"]}
    assert found["queue"]["status"] == "ok"
    git(hub, "config", "--unset", "receive.procReceiveRefs")
    found = {f["check"]: f for f in json.loads(gitstate(hub, "doctor", "--json").stdout)
             ["findings"]}
    assert found["queue"]["status"] == "warn" and "init --server" in found["queue"]["fix"]


LYING_HOOK = r'''#!/usr/bin/env python3
# A hostile hub: says every queued move landed as the branch's tip, lands nothing.
import subprocess, sys
r, w = sys.stdin.buffer, sys.stdout.buffer
def read():
    lines = []
    while (n := int(r.read(4), 16)):
        lines.append(r.read(n - 4).decode().strip())
    return lines
def pkt(s):
    w.write(b"%04x" % (len(s) + 4) + s.encode())
read(); pkt("version=1\0"); w.write(b"0000"); w.flush()
tip = subprocess.run(["git", "rev-parse", "main"], capture_output=True, text=True).stdout.strip()
old = subprocess.run(["git", "rev-parse", "main~1"], capture_output=True, text=True).stdout.strip()
for line in read():
    pkt(f"ok {line.split()[2]}"); pkt("option refname refs/heads/main")
    pkt(f"option old-oid {old}"); pkt(f"option new-oid {tip}")
w.write(b"0000"); w.flush()
'''


def test_a_hub_that_reports_a_landing_it_did_not_make_is_not_believed(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert pushed(a, "spawn", "alice")[0] == 0
    (hub / "hooks" / "proc-receive").write_text(LYING_HOOK)
    tip = hub_tip(hub)
    code, out = pushed(a, "transition", "alice", "inbox")
    assert code == 1 and out["outcome"] == "gave-up", out
    assert "has no such commit holding it" in out["reason"]
    head = git(a, "rev-parse", "HEAD").stdout.strip()
    assert head != tip and git(a, "log", "-1", "--format=%s").stdout.startswith(
        "@alice: [STATE:inbox]")                       # the move stays here, nothing lost


# -- a batch: every waiting request landed in one pass -------------------------------------

def _queued_push_later(clone: Path) -> subprocess.Popen:
    """`queued_push`, left running: its outcome read when the hub answers."""
    return subprocess.Popen(["git", "-c", "core.abbrev=no", "push", "--porcelain", "origin",
                             "HEAD:refs/gitstate/queue/main"], cwd=clone,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _answer(proc: subprocess.Popen) -> tuple[int, str]:
    """(exit code, the push's porcelain line for its queued ref)."""
    out, _err = proc.communicate()
    return proc.returncode, next((ln for ln in out.splitlines() if "\t" in ln), "")


def _branch_moves(hub: Path) -> int:
    """How many times the hub's main has moved (its reflog, kept from here on)."""
    return len(git(hub, "reflog", "show", "--format=%H", "refs/heads/main",
                   check=False).stdout.split())


def _waiting_batch(tmp_path: Path, agents: list[list[str]]):
    """A hub whose three clones each queue one move made on the same tip (clone i moves
    `agents[i]` to inbox, in one commit), pushed in that order while the landing lock is
    held: (hub, the pushes, each clone's move, the tip they were made on)."""
    hub, clones = hub_and_clones(tmp_path, 3)
    everyone = sorted({a for names in agents for a in names})
    for agent in everyone:
        assert pushed(clones[0], "spawn", agent)[0] == 0
    for clone in clones[1:]:
        git(clone, "pull", "-q", "--ff-only")
    git(hub, "config", "core.logAllRefUpdates", "always")
    tip = hub_tip(hub)
    moves = []
    for clone, names in zip(clones, agents):
        for agent in names:
            path = clone / "agent" / agent / "_state.md"
            path.write_text(path.read_text().replace("state: bootstrap", "state: inbox", 1))
            git(clone, "add", str(path))
        git(clone, *UNHOOKED, "commit", "-q", "-m", f"@{names[0]}: [STATE:inbox] "
            "bootstrap -> inbox")
        moves.append(git(clone, "rev-parse", "HEAD").stdout.strip())
    lock = _hold_the_landing_lock(hub)
    try:
        procs = []
        for i, clone in enumerate(clones):
            procs.append(_queued_push_later(clone))
            _wait_for_requests(hub, i + 1)          # each arrives before the next is sent
    finally:
        lock.close()                                # one lander takes them all now
    return hub, procs, moves, tip


def test_waiting_moves_land_in_one_pass_with_one_ref_update_each_pusher_told_its_own(tmp_path):
    hub, procs, moves, tip = _waiting_batch(tmp_path, [["alice"], ["bob"], ["carol"]])
    before = _branch_moves(hub)
    answers = [_answer(p) for p in procs]
    assert [code for code, _line in answers] == [0, 0, 0], answers
    # in order of arrival, each on the tip the one before made
    chain = git(hub, "rev-list", "--reverse", f"{tip}..main").stdout.split()
    assert len(chain) == 3 and chain[0] == moves[0]        # the first on the tip: itself
    assert hub_subjects(hub)[:3] == [f"@{a}: [STATE:inbox] bootstrap -> inbox"
                                     for a in ("carol", "bob", "alice")]
    # each pusher is told its own landing: the commit before it, and its own
    olds = [tip, *chain[:-1]]
    assert [line.split("\t")[2] for _code, line in answers] == \
        [f"{old}..{new}" for old, new in zip(olds, chain)]
    assert _branch_moves(hub) - before == 1                # the branch moved once
    assert_queue_empty(hub)
    # the hub's clock: the pass noted when each move arrived, in one notes commit, and the
    # pushers' post-receives found them noted and added none
    notes = "refs/notes/gitstate-received"
    added = git(hub, "diff-tree", "-r", "--name-only", "--no-commit-id", f"{notes}^",
                notes).stdout.split()
    assert sorted(p.replace("/", "") for p in added) == sorted(chain)
    stamps = [int(git(hub, "notes", f"--ref={notes}", "show", c).stdout.split()[-1])
              for c in chain]
    assert stamps == sorted(stamps) and stamps[-1] <= time.time()
    assert git(hub, "log", "-1", "--format=%an <%ae>", notes).stdout.strip() == \
        "gitstate hub <hub@gitstate.invalid>"


def test_a_pusher_waiting_for_a_pass_imports_nothing_of_the_law_or_gits_runner():
    """Most pushers of a burst only file their move and wait for a lander's pass: the hook's
    process then costs the interpreter and the queue's files, and the law's rule ids it may
    answer with are the law's own."""
    from gitstate.doors import queue
    from gitstate.law.rule_ids import Rule
    assert (queue.TOO_MANY_REFS, queue.QUEUE_MOVE) == (Rule.TOO_MANY_REFS, Rule.QUEUE_MOVE)
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, gitstate.doors.queue; "
         "print(' '.join(m for m in sys.modules if m.startswith('gitstate')))"],
        capture_output=True, text=True, check=True).stdout.split()
    assert sorted(loaded) == ["gitstate", "gitstate.doors", "gitstate.doors.queue",
                              "gitstate.git"]


def test_a_move_refused_in_the_middle_of_a_batch_holds_none_of_the_others(tmp_path):
    hub, procs, moves, tip = _waiting_batch(tmp_path, [["alice"], ["bob", "carol"], ["dave"]])
    before = _branch_moves(hub)
    answers = [_answer(p) for p in procs]
    assert [code != 0 for code, _line in answers] == [False, True, False], answers
    assert answers[1][1].startswith("!") and "(gitstate:multiple-agents " in answers[1][1]
    # the one after it built on the last good tip
    chain = git(hub, "rev-list", "--reverse", f"{tip}..main").stdout.split()
    assert len(chain) == 2 and chain[0] == moves[0]
    assert answers[2][1].split("\t")[2] == f"{chain[0]}..{chain[1]}"
    assert hub_subjects(hub)[:2] == ["@dave: [STATE:inbox] bootstrap -> inbox",
                                     "@alice: [STATE:inbox] bootstrap -> inbox"]
    assert _branch_moves(hub) - before == 1
    assert_queue_empty(hub)
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(hub), str(fresh))
    assert gitstate(fresh, "verify", "--no-cache").returncode == 0


KILL_THE_LANDER = """#!/bin/sh
# Once, right after the branch moved: the lander (the parent of this hook's git update-ref)
# is killed before it writes any outcome.
input=$(cat)
[ "$1" = committed ] || exit 0
case "$input" in *" refs/heads/main"*) ;; *) exit 0 ;; esac
rm -f "$0"
kill -9 "$(awk '{ print $4 }' /proc/$PPID/stat)"
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_a_lander_killed_after_the_batch_landed_lands_nothing_twice(tmp_path):
    hub, clones = hub_and_clones(tmp_path, 3)
    hook = hub / "hooks" / "reference-transaction"
    hook.write_text(KILL_THE_LANDER)
    hook.chmod(0o755)
    lock = _hold_the_landing_lock(hub)
    try:
        procs = [_background_push(clone, "spawn", f"agent-{i}")
                 for i, clone in enumerate(clones)]
        _wait_for_requests(hub, 3)
    finally:
        lock.close()
    outs = [json.loads(p.communicate()[0])["push"] for p in procs]
    assert not hook.exists()                        # the lander was killed mid-batch
    # the pushers still waiting learn that their moves landed; the lander's own pusher
    # cannot know
    assert sorted(o["outcome"] for o in outs).count("landed") >= 2, outs
    subjects = hub_subjects(hub)
    for i in range(3):
        assert subjects.count(f"@agent-{i}: [STATE:bootstrap] spawned") == 1
    res = gitstate(hub, "hub", "drain")
    assert res.returncode == 0 and "the landing queue is empty" in res.stdout
    for clone, out in zip(clones, outs):            # pushed again: told how it landed
        if out["outcome"] != "landed":
            code, lines = queued_push(clone)
            assert code == 0, lines
    assert hub_subjects(hub) == subjects            # nothing landed twice
    assert_queue_empty(hub)


def test_beyond_the_history_read_in_process_a_move_on_the_branch_is_not_landed_again(
        tmp_path, monkeypatch):
    """The lander reads the newest commits of the branch itself; beyond them git says which
    moves are new (all at once) and whether the rest are on the branch."""
    monkeypatch.setattr("gitstate.doors.pipes.WALK", 1)   # only the tip read in-process
    hub, (a, b) = hub_and_clones(tmp_path)
    for agent in ("alice", "bob"):
        assert pushed(a, "spawn", agent)[0] == 0
    git(b, "pull", "-q", "--ff-only")
    start = hub_tip(hub)
    state_edit(a, "alice", "inbox")
    new = git(a, "rev-parse", "HEAD").stdout.strip()
    git(a, "push", "-q", "origin", "HEAD:refs/heads/objects")    # the hub has its objects
    state_edit(b, "bob", "inbox")
    on_branch = git(b, "rev-parse", "HEAD").stdout.strip()
    git(b, "push", "-q", "origin", "HEAD:main")                  # pushed straight to main...
    assert pushed(b, "spawn", "carol")[0] == 0                   # ...and buried under another
    tip = hub_tip(hub)
    queue = hub / "gitstate" / "queue"
    queue.mkdir(parents=True, exist_ok=True)
    for move in (new, on_branch):                                # ...then queued as well
        (queue / f"{time.time_ns():020d}-1-{move[:12]}").write_text(json.dumps(
            {"branch": "refs/heads/main", "move": move}))
    data = json.loads(gitstate(hub, "hub", "drain", "--json").stdout)
    assert data["landed"] == 2
    landed = {m["move"]: m["landed"] for m in data["moves"]}
    assert git(hub, "rev-parse", "main~1").stdout.strip() == tip  # alice's replayed on it
    assert landed[new] == landed[on_branch] == hub_tip(hub)      # bob's there already
    assert git(hub, "rev-list", "--count", f"{start}..main").stdout.strip() == "3"
    assert_queue_empty(hub)
