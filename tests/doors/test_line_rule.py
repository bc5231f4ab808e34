"""One judge, one line: the ways past the law that came from merges judged by the law of the
line they came from, from subjects the judge never read, and from encodings. Each is made as an
attacker would (hooks off, plumbing, or gitstate's own commands), then asked of every door it
names: the local hooks, a real hub (`init --server`) and `verify --no-cache`."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import git, gitstate, moves_on_this_branch, state_path, walk
from trusthelp import (
    alice_in_inbox,
    assert_local_refusal,
    assert_push_refused,
    assert_verify_flags,
    cached_hub,
    commit_tree,
    date_env,
    gs,
    move_branch,
    nohooks,
    now,
    out,
    push_lawful,
    run_git,
    sha,
    sneak,
    sneak_state,
    tree_with,
    verify_json,
)

LAW = "protocols/lifecycle.yaml"
SIGNERS = "protocols/allowed_signers"


def _log_of(work, agent: str) -> str:
    res = gitstate(work, "log", agent, "--json")
    assert res.returncode == 0, out(res)
    return res.stdout


# --- 1. a move the law in force forbids, made on a branch forked before the law changed ----

def _dead_gated(work) -> str:
    """alice in distill on a branch `old` forked now; then main's law gates every death
    (approved). Returns the lifecycle text main now has."""
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox", "distill")
    git(work, "branch", "old")
    text = (work / LAW).read_text().replace('approval: ["frozen -> *", law]',
                                           'approval: ["frozen -> *", "* -> dead", law]')
    (work / LAW).write_text(text)
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: a death needs a human", "-m", "Approved-by: zach")
    push_lawful(work)
    git(work, "checkout", "-q", "old")
    with moves_on_this_branch(work, "old"):
        gs(work, "bury", "alice", "--summary", "done")   # legal by the old branch's law
    git(work, "checkout", "-q", "main")
    return text


def test_a_move_from_a_branch_older_than_the_law_is_refused_by_the_hooks(tmp_path):
    _hub, work = cached_hub(tmp_path, "dead-gated", _dead_gated)
    before = sha(work)
    res = git(work, "merge", "--no-edit", "old", check=False)
    assert_local_refusal(work, res, "merge-moves", "main", before)


def test_a_move_from_a_branch_older_than_the_law_is_refused_by_the_hub_and_verify(tmp_path):
    hub, work = cached_hub(tmp_path, "dead-gated", _dead_gated)
    nohooks(work, "merge", "-q", "--no-edit", "old")
    merge = sha(work)
    assert "state: dead" in state_path(work, "alice").read_text()
    assert_push_refused(work, hub, "merge-moves")
    assert_verify_flags(work, (merge, "merge-moves"))


# --- 2. a key rotated away approves nothing after its removal -------------------------------

def _keys(tmp_path):
    keys = []
    for name in ("k1", "k2"):
        key = tmp_path / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zach", "-f",
                        str(key)], check=True, capture_output=True)
        keys.append(key)
    return keys


def _signed(key) -> tuple[str, ...]:
    return ("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}")


@pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                    reason="ssh-keygen is missing (install openssh-client)")
def test_a_rotated_key_approves_nothing_whatever_parent_it_signs_on(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    k1, k2 = _keys(tmp_path)
    pub = {k: (tmp_path / f"{k.name}.pub").read_text().strip() for k in (k1, k2)}
    (work / SIGNERS).write_text(f"zach {pub[k1]}\n")
    git(work, "add", SIGNERS)
    git(work, *_signed(k1), "commit", "-q", "-S", "-m", "law: zach's key", "-m",
        "Approved-by: zach")
    push_lawful(work)
    before_rotation = sha(work)
    (work / SIGNERS).write_text(f"zach {pub[k2]}\n")
    git(work, "add", SIGNERS)
    git(work, *_signed(k1), "commit", "-q", "-S", "-m", "law: zach's new key", "-m",
        "Approved-by: zach")
    push_lawful(work)
    rotated = sha(work)
    # a move signed on a parent from before the rotation: the queue does not merge it in
    git(work, "checkout", "-q", "-b", "stale", before_rotation)
    walk_file = state_path(work, "alice")
    walk_file.write_text(walk_file.read_text().replace("state: inbox", "state: distill"))
    git(work, "add", "agent/alice/_state.md")
    nohooks(work, *_signed(k1), "commit", "-q", "-S", "--no-verify", "-m",
            "@alice: [STATE:distill] signed long ago")
    res = git(work, "push", "--porcelain", "origin", "HEAD:refs/gitstate/queue/main",
              check=False)
    assert res.returncode != 0 and "queue-stale" in out(res) and "signed" in out(res), out(res)
    assert git(hub, "rev-parse", "main").stdout.strip() == rotated
    git(work, "reset", "-q", "--hard", before_rotation)
    # k1's holder approves a change of the law on a parent from before the rotation ...
    (work / LAW).write_text((work / LAW).read_text().replace("max_living: 20",
                                                             "max_living: 200"))
    git(work, "add", LAW)
    nohooks(work, *_signed(k1), "commit", "-q", "-S", "--no-verify", "-m", "law: more agents",
            "-m", "Approved-by: zach")
    stale = sha(work)
    # ... merged and pushed straight to main: refused, and verify flags it
    git(work, "checkout", "-q", "main")
    nohooks(work, "merge", "-q", "--no-edit", "stale")
    merge = sha(work)
    assert_push_refused(work, hub, "merge-moves")
    assert_verify_flags(work, (merge, "merge-moves"))
    # ... and made again on the tip, k1's signature is judged by the signers in force there
    move_branch(work, rotated)
    git(work, "cherry-pick", "--no-commit", stale)
    nohooks(work, *_signed(k1), "commit", "-q", "-S", "--no-verify", "-m",
            "law: more agents", "-m", "Approved-by: zach")
    assert_push_refused(work, hub, "unsigned-approval")
    assert_verify_flags(work, (sha(work), "unsigned-approval"))


# --- 3. a merge's subject is no move; the timer reads the line --------------------------------

def test_a_merge_tagged_as_a_move_is_refused_and_never_read_as_one(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    git(work, "checkout", "-q", "-b", "side")
    (work / "side.txt").write_text("side\n")
    git(work, "add", "side.txt")
    git(work, "commit", "-q", "-m", "side work")
    git(work, "checkout", "-q", "main")
    before = sha(work)
    res = git(work, "merge", "--no-ff", "-m", "@alice: [STATE:cleanup] merged", "side",
              check=False)
    assert_local_refusal(work, res, "tag-on-merge", "main", before)
    git(work, "merge", "--abort")
    nohooks(work, "merge", "-q", "--no-ff", "-m", "@alice: [STATE:cleanup] merged", "side")
    merge = sha(work)
    assert_push_refused(work, hub, "tag-on-merge")
    assert_verify_flags(work, (merge, "tag-on-merge"))
    assert "cleanup" not in _log_of(work, "alice")


def _bob_active(work):
    gs(work, "spawn", "bob")
    walk(work, "bob", "active")
    push_lawful(work)


def test_a_tagged_merge_off_the_line_does_not_start_the_hubs_timer(tmp_path):
    """Pushed early on a side branch (not judged there: it is no move), a merge tagged
    `@bob: [STATE:idle]` is later merged into main as work. The hub's timer reads the line:
    bob entered idle when he really did, so an early suspension is still refused."""
    hub, work = cached_hub(tmp_path, "bob-active", _bob_active, "squad")
    tip = sha(work)
    early = now() - 7200
    other = commit_tree(work, tree_with(work, tip, {"notes.txt": "x\n"}), "notes", tip,
                        env=date_env(early))
    tagged = commit_tree(work, f"{tip}^{{tree}}", "@bob: [STATE:idle] early", tip, other,
                         env=date_env(early))
    push_lawful(work, f"{tagged}:refs/heads/side")
    # received two hours ago, by the hub's own record
    git(hub, "notes", "--ref=refs/notes/gitstate-received", "add", "-f", "-m",
        f"received {early}", tagged)
    walk(work, "bob", "idle")
    push_lawful(work)
    git(work, "fetch", "-q", "origin", "side")
    git(work, "merge", "-q", "--no-ff", "--no-edit", "origin/side")
    push_lawful(work)
    assert "early" not in _log_of(work, "bob")
    sneak_state(work, "bob", "@bob: [STATE:suspended] swept\n\nMoved-by: gitstate sweep",
                state="suspended")
    assert_push_refused(work, hub, "timeout")


# --- 4. messages as git reads them -------------------------------------------------------------

def _encoded(work, message: bytes, encoding: str, files: dict | None = None) -> str:
    tree = tree_with(work, "HEAD", files or {"work.txt": "w\n"})
    raw = (f"tree {tree}\nparent {sha(work)}\n"
           f"author a <a@x> {now()} +0000\ncommitter a <a@x> {now()} +0000\n"
           f"encoding {encoding}\n\n").encode() + message
    obj = work.parent / "commit.raw"
    obj.write_bytes(raw)
    return run_git(work, "hash-object", "-t", "commit", "-w", str(obj)).stdout.strip()


def test_a_commit_in_another_encoding_is_refused_at_every_door(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    # a commit that declares another encoding is read by git in that encoding (`git log`
    # re-encodes it for every view and timer), by a reader of bytes as UTF-8: whatever its
    # bytes, it is refused, so that no door reads it one way and another door the other
    commit = _encoded(work, b"@alice: [STATE:dead] gone\n", "ISO-8859-1")
    assert git(work, "log", "-1", "--format=%s", commit).stdout == "@alice: [STATE:dead] gone\n"
    before = sha(work)
    res = run_git(work, "update-ref", "refs/heads/main", commit, before, check=False)
    assert_local_refusal(work, res, "encoding", "main", before)
    move_branch(work, commit)
    assert_push_refused(work, hub, "encoding")
    assert_verify_flags(work, (commit, "encoding"))


# --- 5. an octopus merge that rolls the law back ---------------------------------------------

def test_a_three_parent_merge_rolling_the_law_back_is_refused(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    first = sha(work)
    text = (work / LAW).read_text()
    (work / LAW).write_text(text.replace("max_living: 20", "max_living: 10"))
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: fewer agents", "-m", "Approved-by: zach")
    older = sha(work)
    (work / LAW).write_text(text.replace("max_living: 20", "max_living: 5"))
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: fewer still", "-m", "Approved-by: zach")
    push_lawful(work)
    tip = sha(work)
    merge = commit_tree(work, tree_with(work, tip, {LAW: text}), "Merge", tip, older, first)
    move_branch(work, merge)
    assert_push_refused(work, hub, "merge-moves")
    assert_verify_flags(work, (merge, "merge-moves"))


# --- 9. after the law, an accepted form is no way to make a move ----------------------------

def _accepting(work):
    text = (work / LAW).read_text() + ("grammar:\n  accept:\n"
                                       "    - '^@(?P<id>[\\w-]+)\\s*\\[(?P<state>\\w+)\\]:'\n")
    (work / LAW).write_text(text)
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: read the old subjects", "-m", "Approved-by: zach")
    gs(work, "init", "--approved-by", "zach")   # the hooks read every subject now
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox")
    push_lawful(work)


def test_a_subject_in_an_accepted_form_after_the_law_is_refused_at_every_door(tmp_path):
    hub, work = cached_hub(tmp_path, "accepting", _accepting)
    before = sha(work)
    res = git(work, "commit", "--allow-empty", "-m", "@alice [dead]: gone", check=False)
    assert_local_refusal(work, res, "tag-form", "main", before)
    nohooks(work, "commit", "-q", "--allow-empty", "--no-verify", "-m", "@alice [dead]: gone")
    empty = sha(work)
    assert_push_refused(work, hub, "tag-form")
    assert_verify_flags(work, (empty, "tag-form"))


def test_verify_says_where_the_line_rule_begins(tmp_path):
    """An upgraded history: a state-carrying merge made before the law declared the line is
    read, not judged; the law that declares it is where the rule begins."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    text = (work / LAW).read_text()
    undeclared = "".join(ln for ln in text.splitlines(keepends=True)
                         if not ln.startswith("line:"))
    (work / LAW).write_text(undeclared)
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: as an older gitstate wrote it", "-m",
        "Approved-by: zach")
    git(work, "checkout", "-q", "-b", "side")
    walk(work, "alice", "distill")
    git(work, "checkout", "-q", "main")
    (work / "main.txt").write_text("main\n")
    git(work, "add", "main.txt")
    git(work, "commit", "-q", "-m", "work")
    res = git(work, "merge", "--no-edit", "side", check=False)     # before the rule: fine
    assert res.returncode == 0, out(res)
    assert "state: distill" in state_path(work, "alice").read_text()
    (work / LAW).write_text(text)
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: the team line", "-m", "Approved-by: zach")
    declared = sha(work)
    res = gitstate(work, "verify", "--no-cache")
    assert res.returncode == 0, out(res)
    assert f"in force from {declared[:10]}" in res.stdout and "1 merge before it" in res.stdout
    report = json.loads(gitstate(work, "verify", "--no-cache", "--json").stdout)
    assert report["merges_not_judged"] == 1 and report["line_from"] == declared
    push_lawful(work)


def test_a_team_line_made_anew_at_the_hub_is_judged_whole(tmp_path):
    """A merge that carried a move on a branch (work there, not judged) is judged as the
    line's when that branch's commits become the team line: here, pushed as the branch the
    law names as the line, which the hub does not have yet."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    text = (work / LAW).read_text().replace("line: main", "line: trunk")
    (work / LAW).write_text(text)
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: the team line is trunk", "-m", "Approved-by: zach")
    push_lawful(work)
    git(work, "checkout", "-q", "-b", "side")
    walk(work, "alice", "distill")
    git(work, "checkout", "-q", "-b", "feat", "main")
    (work / "f.txt").write_text("f\n")
    git(work, "add", "f.txt")
    git(work, "commit", "-q", "-m", "work")
    nohooks(work, "merge", "-q", "--no-edit", "side")        # carries alice's move
    assert "state: distill" in state_path(work, "alice").read_text()
    push_lawful(work, "feat")                                # off the line: work
    assert_push_refused(work, hub, "merge-moves", "feat:refs/heads/trunk")
