"""Attacks on the hub's newest doors: the pre-receive and post-receive shims that read the
pushed refs with shell builtins, and the lander's record of when each move arrived (its
notes commit and its marks). Real hubs (`git init --bare` + `gitstate init --server`), real
pushes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import time

import pytest

from conftest import git, gitstate
from hubs import hub_and_clones

NOTES = "refs/notes/gitstate-received"


def note_of(hub, sha: str) -> str | None:
    res = git(hub, "notes", f"--ref={NOTES}", "show", sha, check=False)
    return res.stdout.strip() if res.returncode == 0 else None


def test_a_push_naming_more_queue_refs_than_the_hub_takes_is_refused_whole_by_pre_receive(
        tmp_path):
    """The shim reads at most what one push may queue; past that, the refs go to the full
    judgement, which bounds a push by `gitstate.maxRefsPerPush` (reading a huge push line
    by line into a shell variable costs the hub time that grows with the square of its
    size: 20,000 refs took 42 s of a core)."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    git(hub, "config", "gitstate.maxRefsPerPush", "20")
    refspecs = [f"HEAD:refs/gitstate/queue/b{i}" for i in range(21)]
    res = git(a, "push", "origin", *refspecs, check=False)
    assert res.returncode != 0
    assert "this push updates 21 refs" in res.stderr and "[too-many-refs]" in res.stderr
    assert not (hub / "gitstate" / "queue").exists() or not [
        p for p in (hub / "gitstate" / "queue").iterdir() if p.name[0].isdigit()]


def test_a_landing_finished_after_the_lander_died_is_noted_with_its_arrival(tmp_path):
    """A lander killed after the branch moved, before its notes commit: the pass that
    finishes its requests notes the moves with the time each arrived. Unnoted, the hub's
    clock would read the committer's own date for them, which a pusher may set years back."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "alice").returncode == 0
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    git(hub, "-c", "core.hooksPath=/dev/null", "fetch", "-q", str(a),
        "HEAD:refs/heads/objects")                             # the hub has its objects
    git(hub, "update-ref", "-d", "refs/heads/objects")
    tip = git(hub, "rev-parse", "main").stdout.strip()
    # the lander marks the tip it sets (its hooks leave the noting to it), moves the branch...
    (hub / "gitstate" / "queue" / "landed").mkdir(parents=True, exist_ok=True)
    (hub / "gitstate" / "queue" / "landed" / move).touch()
    git(hub, "update-ref", "refs/heads/main", move, tip)
    assert note_of(hub, move) is None                      # ...and then it was killed
    queue = hub / "gitstate" / "queue"
    arrived = time.time_ns()
    (queue / f"{arrived:020d}-1-{move[:12]}").write_text(json.dumps(
        {"branch": "refs/heads/main", "move": move, "landing": {"commit": move, "old": tip}}))
    res = gitstate(hub, "hub", "drain", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["moves"][0]["landed"] == move
    assert note_of(hub, move) == f"received {arrived // 10**9}"


def test_a_merge_that_brings_an_agents_birth_is_noted_when_the_hub_receives_it(
        tmp_path, monkeypatch):
    """Off the team line a merge may bring an agent's state file: on the branch's first-parent
    line the merge is then the agent's birth, which timed moves (`sweep`) count from by the
    hub's clock. The hub notes it when it receives it; unnoted, the clock would read the
    merge's own committer date, which the pusher backdated to 2001."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "carol").returncode == 0
    git(a, "branch", "side")                  # carol's birth, on a side branch only
    git(a, "switch", "-q", "-c", "work", "origin/main")
    (a / "notes.txt").write_text("work\n")
    git(a, "add", "notes.txt")
    git(a, "commit", "-q", "-m", "notes")
    with monkeypatch.context() as m:
        m.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00Z")
        git(a, "merge", "-q", "--no-ff", "--no-edit", "side")
    merge = git(a, "rev-parse", "HEAD").stdout.strip()
    res = git(a, "push", "origin", "work", check=False)
    assert res.returncode == 0, res.stderr
    born = git(hub, "log", "-1", "--first-parent", "--diff-filter=A", "--format=%H", "work",
               "--", "agent/carol/_state.md").stdout.strip()
    assert born == merge
    note = note_of(hub, merge)
    assert note is not None and int(note.split()[-1]) > time.time() - 600


def test_a_queued_move_whose_message_is_larger_than_a_move_may_carry_is_refused(tmp_path):
    """The queue's bound on what one move carries counts the commit itself: a message of
    many megabytes is read, copied and judged by the lander like any file."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    git(hub, "config", "gitstate.queueMaxBytes", "65536")
    assert gitstate(a, "spawn", "alice").returncode == 0
    message = tmp_path / "message"
    message.write_text("@alice: [STATE:bootstrap] spawned\n\n"
                       + ("padding " * 16 + "\n") * 2000)     # ~260 KB of message, no file
    git(a, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--amend", "-F", str(message))
    before = git(hub, "rev-parse", "main").stdout.strip()
    res = git(a, "push", "--porcelain", "origin", "HEAD:refs/gitstate/queue/main", check=False)
    assert res.returncode != 0 and "gitstate:queue-move" in res.stdout, res.stdout
    assert git(hub, "rev-parse", "main").stdout.strip() == before


def raw_push(hub, ref: bytes, new: str) -> bytes:
    """What `git receive-pack` reports for one command naming `ref` as sent, byte for byte, by
    a client that speaks the protocol itself (git's own client checks the name first)."""
    proc = subprocess.Popen(["git", "receive-pack", str(hub)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    while (size := int(proc.stdout.read(4), 16)) != 0:   # the refs advertised
        proc.stdout.read(size - 4)
    command = b"0" * 40 + b" " + new.encode() + b" " + ref + b"\0report-status"
    pack = b"PACK" + (2).to_bytes(4, "big") + (0).to_bytes(4, "big")   # no object: the hub has it
    out, _ = proc.communicate(b"%04x" % (len(command) + 4) + command + b"0000" + pack
                              + hashlib.sha1(pack).digest())
    return out


@pytest.mark.parametrize("name", [b"main~1", b"main^0", b"main\x0b", b"main@{1}",
                                  b"main..x", b"main.lock"])
def test_a_queue_ref_that_names_no_branch_is_refused_by_name(tmp_path, name):
    """git hands proc-receive the queue's refs without checking their names: one that names
    a commit (`main~1`) had a pass plan on it twenty times, none of which could move a
    branch. Each is refused at once, by its name."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "alice").returncode == 0
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    git(hub, "fetch", "-q", str(a), "HEAD:refs/heads/objects")   # the hub has its objects
    git(hub, "update-ref", "-d", "refs/heads/objects")
    before = git(hub, "for-each-ref").stdout
    ref = b"refs/gitstate/queue/" + name
    out = raw_push(hub, ref, move)
    assert b"ng " + ref + b" gitstate:queue-move " in out, out
    assert b"is no branch name" in out
    assert git(hub, "for-each-ref").stdout == before


def test_one_move_queued_for_two_branches_at_once_each_pusher_is_told_its_own(tmp_path):
    """The same move queued for `main` and for `other` in one pass: it lands on main and is
    refused on other (built off it). Each pusher is told how its own request ended: the
    outcome kept by the move alone was the last branch's, and main's pusher was told
    `refused` for a move that had landed."""
    import fcntl
    hub, (a, _b) = hub_and_clones(tmp_path)
    first = git(hub, "rev-list", "--max-parents=0", "main").stdout.split()[0]
    git(hub, "update-ref", "refs/heads/other", first)
    assert gitstate(a, "spawn", "alice").returncode == 0
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    (hub / "gitstate").mkdir(exist_ok=True)
    queue = hub / "gitstate" / "queue"
    with open(hub / "gitstate" / "lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)            # no pass until both are filed
        procs = []
        for n, branch in enumerate(("main", "other"), 1):
            procs.append(subprocess.Popen(
                ["git", "-c", "core.abbrev=no", "push", "--porcelain", "origin",
                 f"{move}:refs/gitstate/queue/{branch}"], cwd=a, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True))
            deadline = time.monotonic() + 60
            while len([p for p in queue.iterdir() if p.name[0].isdigit()]
                       if queue.is_dir() else []) < n:
                assert time.monotonic() < deadline, "the request was never filed"
                time.sleep(0.02)
    lines = [next(ln for ln in p.communicate()[0].splitlines() if "\t" in ln) for p in procs]
    assert git(hub, "rev-parse", "main").stdout.strip() == move
    assert lines[0].startswith(" \t") and lines[0].endswith(f"..{move}"), lines
    assert lines[1].startswith("!\t") and "gitstate:queue-move" in lines[1], lines



def test_a_pusher_that_hangs_up_before_the_report_leaves_its_commits_noted(tmp_path):
    """git's receive-pack tells the pusher how each ref went, then runs post-receive: a
    pusher that hangs up first kills it there (SIGPIPE), with the refs already moved. Its
    commits must be noted all the same, or the hub's clock reads their committer dates."""
    hub, (a, _b) = hub_and_clones(tmp_path)
    assert gitstate(a, "spawn", "alice").returncode == 0
    move = git(a, "rev-parse", "HEAD").stdout.strip()
    old = git(hub, "rev-parse", "main").stdout.strip()
    pack = subprocess.run(["git", "pack-objects", "--stdout", "--revs", "-q"], cwd=a,
                          input=f"{move}\n^{old}\n".encode(), capture_output=True,
                          check=True).stdout
    proc = subprocess.Popen(["git", "receive-pack", str(hub)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    while (size := int(proc.stdout.read(4), 16)) != 0:   # the refs advertised
        proc.stdout.read(size - 4)
    command = f"{old} {move} refs/heads/main".encode() + b"\0report-status"
    proc.stdout.close()                          # hung up: the report has nowhere to go
    proc.stdin.write(b"%04x" % (len(command) + 4) + command + b"0000" + pack)
    proc.stdin.close()
    assert proc.wait() != 0                      # receive-pack died before post-receive
    assert git(hub, "rev-parse", "main").stdout.strip() == move
    note = note_of(hub, move)
    assert note is not None and int(note.split()[-1]) > time.time() - 600


def test_doctor_on_a_hub_without_its_reference_transaction_hook_says_what_it_risks(tmp_path):
    """A hub made before the hook noted as the refs move: pushes are still judged (not a
    failure), but a pusher may skip the record; `init --server` again installs it."""
    hub, _clones = hub_and_clones(tmp_path, 1)
    (hub / "hooks" / "reference-transaction").unlink()
    found = {f["check"]: f for f in json.loads(gitstate(hub, "doctor", "--json").stdout)
             ["findings"]}
    assert found["hooks"]["status"] == "warn" and "hangs up" in found["hooks"]["detail"]
    assert "init --server" in found["hooks"]["fix"]
    assert gitstate(hub, "init", "--server").returncode == 0
    found = {f["check"]: f for f in json.loads(gitstate(hub, "doctor", "--json").stdout)
             ["findings"]}
    assert found["hooks"]["status"] == "ok"
