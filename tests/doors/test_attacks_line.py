"""Ways past the one judge and the one line, made as an attacker makes them (plumbing, hooks
off, a second clone), each asked of every door it names: the local ref guard, a real hub
(`init --server`), `verify --no-cache`, and the views that read what the judge checked."""

from __future__ import annotations

import time

import pytest
from conftest import git, gitstate, make_repo, moves_on_this_branch, state_path, walk
from trusthelp import (
    alice_in_inbox,
    assert_local_refusal,
    assert_push_refused,
    assert_verify_flags,
    cached_hub,
    date_env,
    gs,
    make_hub,
    move_branch,
    nohooks,
    now,
    out,
    push_lawful,
    run_git,
    sha,
    sneak_state,
)


def _raw_commit(work, headers: bytes, message: bytes) -> str:
    """A commit object written byte for byte: on HEAD's tree and parent, with `headers`
    after the committer."""
    stamp = now()
    raw = (f"tree {sha(work, 'HEAD^{tree}')}\nparent {sha(work)}\n"
           f"author a <a@x> {stamp} +0000\ncommitter a <a@x> {stamp} +0000\n").encode() \
        + headers + b"\n" + message
    obj = work.parent / "commit.raw"
    obj.write_bytes(raw)
    return run_git(work, "hash-object", "-t", "commit", "-w", str(obj)).stdout.strip()


# --- two `encoding` headers: git reads the first --------------------------------------------

def test_a_second_encoding_header_does_not_make_a_message_read_two_ways(tmp_path):
    """git re-encodes a message by its first `encoding` header. A commit whose first header
    says ISO-2022-JP and whose second says UTF-8 shows `@alice: [STATE:dead] gone` to git (and
    so to `gitstate log` and the timer), while its bytes, read as UTF-8, hold no tag: every
    door must read the header git reads, and refuse it."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    commit = _raw_commit(work, b"encoding ISO-2022-JP\nencoding UTF-8\n",
                         b"@alice: [ST\x1b$B\x1b(BATE:dead] gone\n")
    shown = git(work, "log", "-1", "--format=%s", commit).stdout
    if shown != "@alice: [STATE:dead] gone\n":
        pytest.skip(f"this git does not re-encode ISO-2022-JP (it shows {shown!r})")
    before = sha(work)
    res = run_git(work, "update-ref", "refs/heads/main", commit, before, check=False)
    assert_local_refusal(work, res, "encoding", "main", before)
    move_branch(work, commit)
    assert_push_refused(work, hub, "encoding")
    assert_verify_flags(work, (commit, "encoding"))



def test_a_clone_whose_commits_declare_another_encoding_is_told_by_its_own_doors(tmp_path):
    """With i18n.commitEncoding ISO-8859-1, git writes `encoding ISO-8859-1` into every
    commit. The commit hooks judged the message, and the ref guard took their word for the
    rest: the commit reached main, for the hub to refuse. gitstate's own moves wrote the
    header too, so every move was refused at the hub."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    git(work, "config", "i18n.commitEncoding", "ISO-8859-1")
    before = sha(work)
    edit = state_path(work, "alice")
    edit.write_text(edit.read_text().replace("state: inbox", "state: distill"))
    git(work, "add", "agent/alice/_state.md")
    res = git(work, "commit", "-q", "-m", "@alice: [STATE:distill] on", check=False)
    assert_local_refusal(work, res, "encoding", "main", before)
    git(work, "reset", "-q", "--hard")
    walk(work, "alice", "distill")
    assert "encoding" not in git(work, "cat-file", "commit", "HEAD").stdout.split("\n\n")[0]
    push_lawful(work)

# --- the team line is the line: not deleted, not made again ---------------------------------

def _trunk_with_dead_alice(root):
    """A hub whose HEAD is main, and a clone managed on `trunk` (the law's `line: trunk`):
    alice lived and died there. Returns (hub, work, the commit where alice was in inbox)."""
    hub = make_hub(root / "hub.git")
    work = make_repo(root / "work")
    git(work, "checkout", "-q", "-b", "trunk")
    (work / "README").write_text("hello\n")
    git(work, "add", "README")
    git(work, "commit", "-q", "-m", "first")
    gs(work, "init")
    assert "line: trunk" in (work / "protocols/lifecycle.yaml").read_text()
    git(work, "remote", "add", "origin", str(hub))
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox")
    alive = sha(work)
    gs(work, "bury", "alice", "--summary", "done")
    push_lawful(work, "trunk")
    return hub, work, alive


def test_the_team_line_cannot_be_deleted_at_the_hub_and_made_again(tmp_path):
    """A team line that is not main, master or the hub's HEAD: deleting it and pushing it
    again from a commit before alice's death would bring her back to life."""
    hub, work, alive = _trunk_with_dead_alice(tmp_path)
    before = git(hub, "rev-parse", "trunk").stdout
    res = git(work, "push", "origin", ":trunk", check=False)
    assert res.returncode != 0 and "[protected-ref]" in res.stderr, out(res)
    assert git(hub, "rev-parse", "trunk").stdout == before
    # and the line is not rewritten by a push either
    git(work, "checkout", "-q", "-b", "again", alive)
    with moves_on_this_branch(work, "again"):
        walk(work, "alice", "distill")
    assert_push_refused(work, hub, "non-fast-forward", "+again:trunk")


# --- time travel reads the line -------------------------------------------------------------

def test_a_date_in_time_travel_never_lands_on_a_commit_off_the_line(tmp_path):
    """`--at DATE` names the line as it stood then. A commit off the line (never judged as
    one of it, dated by whoever made it) that kills alice is not what `roster --at` shows."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    spawned = int(git(work, "log", "-1", "--format=%ct").stdout)
    git(work, "checkout", "-q", "-b", "x")
    sneak_state(work, "alice", "@alice: [STATE:dead] gone", env=date_env(spawned + 10),
                state="dead", final_summary="x")
    git(work, "checkout", "-q", "main")
    nohooks(work, "merge", "-q", "--no-edit", "-s", "ours", "x", env=date_env(spawned + 20))
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(spawned + 15))
    res = gitstate(work, "roster", "--at", at, "--json")
    assert res.returncode == 0, out(res)
    assert '"dead"' not in res.stdout and '"inbox"' in res.stdout, res.stdout


# --- caches kept before the line rule ---------------------------------------------------------

def test_the_views_caches_kept_before_the_line_rule_are_not_read():
    """Before the line rule the kept moves, tracks, contexts, hand-overs and printed log read
    every commit (a move on a branch merged in was a move), under the same gitstate version:
    their identities must differ from those, or an upgraded clone goes on showing moves no
    door judged as the line's (until its tip moves)."""
    from gitstate.cli import printed
    from gitstate.history import contexts, handovers, index, movelog
    before_the_line = {movelog: 3, index: 6, contexts: 1, handovers: 1, printed: 2}
    for module, kept_then in before_the_line.items():
        assert module.FORMAT > kept_then, module.__name__


# --- a state file made a symbolic link, its bytes unchanged -----------------------------------

def _linked_tree(work, base: str, path: str = "agent/alice/_state.md") -> str:
    """The tree of `base` with `path` committed as a symbolic link (mode 120000) to its own
    bytes: the same blob, another mode."""
    blob = sha(work, f"{base}:{path}")
    index = work.parent / "link.index"
    env = {"GIT_INDEX_FILE": str(index)}
    run_git(work, "read-tree", base, env=env)
    run_git(work, "update-index", "--cacheinfo", f"120000,{blob},{path}", env=env)
    tree = run_git(work, "write-tree", env=env).stdout.strip()
    index.unlink()
    return tree


def test_a_state_file_made_a_link_to_its_own_bytes_is_refused_at_every_door(tmp_path):
    """Only the mode changes: the blob is the same, so a judge that compares bytes alone sees
    no change. Checked out, the link's target is the file's text; gitstate's moves of alice
    then failed with an internal error."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    before = sha(work)
    commit = run_git(work, "commit-tree", _linked_tree(work, before), "-p", before, "-m",
                     "notes").stdout.strip()
    res = run_git(work, "update-ref", "refs/heads/main", commit, before, check=False)
    assert_local_refusal(work, res, "symlink", "main", before)
    move_branch(work, commit)
    assert (work / "agent/alice/_state.md").is_symlink()
    assert_push_refused(work, hub, "symlink")
    assert_verify_flags(work, (commit, "symlink"))
    res = gitstate(work, "transition", "alice", "distill", "-m", "on")
    assert res.returncode == 1 and "internal error" not in out(res), out(res)
    assert sha(work) == commit


def test_a_merge_that_makes_a_state_file_a_link_moves_on_the_line(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    tip = sha(work)
    git(work, "checkout", "-q", "-b", "f")
    (work / "work.txt").write_text("work\n")
    git(work, "add", "work.txt")
    git(work, "commit", "-q", "-m", "work")
    merge = run_git(work, "commit-tree", _linked_tree(work, "f"), "-p", tip, "-p", "f", "-m",
                    "Merge branch 'f'").stdout.strip()
    git(work, "checkout", "-q", "main")
    res = run_git(work, "update-ref", "refs/heads/main", merge, tip, check=False)
    assert_local_refusal(work, res, "merge-moves", "main", tip)
    move_branch(work, merge)
    assert_push_refused(work, hub, "merge-moves")
    assert_verify_flags(work, (merge, "merge-moves"))
