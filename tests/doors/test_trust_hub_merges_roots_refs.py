"""The hub holds against merges, roots and refs. Every illegal history here is made by a
clone without hooks (or by plumbing) and pushed to a real hub (`init --server`); `verify
--no-cache` is asked the same question, and the local doors where they apply."""

from __future__ import annotations

import shutil
import subprocess
import threading

import pytest

from conftest import git, gitstate, state_path, walk
from trusthelp import (alice_dead, alice_in_inbox, assert_local_refusal, assert_push_refused,
                       assert_verify_flags, cached_hub, commit_tree, date_env, gs, make_hub,
                       managed, move_branch, nohooks, now, out, push_lawful, refs, run_git, sha,
                       sneak, sneak_state, subjects, tree_with, verify_json)

LAW = "protocols/lifecycle.yaml"


def _lenient(text: str, human: str = "mallory") -> str:
    """The attacker's law: dead is no end, nothing needs approval, another human."""
    text = text.replace("    terminal: true\n    requires: [final_summary]",
                        "    requires: [final_summary]")
    text = text.replace("  frozen: [bootstrap, dead]\n",
                        "  frozen: [bootstrap, dead]\n  dead: [bootstrap]\n")
    text = text.replace('approval: ["frozen -> *", law]', "approval: []")
    text = text.replace("humans: [zach]", f"humans: [{human}]")
    assert "approval: []" in text and "dead: [bootstrap]" in text
    return text


def _born(work, agent: str, state: str, role: str = "architect") -> str:
    """A state file for `agent` in `state`, shaped like alice's."""
    text = state_path(work, "alice").read_text()
    lines = []
    for line in text.splitlines(keepends=True):
        key = line.split(":", 1)[0]
        if key == "agent":
            line = f"agent: {agent}\n"
        elif key == "state":
            line = f"state: {state}\n"
        elif key == "role":
            line = f"role: {role}\n"
        lines.append(line)
    return "".join(lines)


# --- 1. a merge whose own tree rewrites the law ------------------------------------------------

def _merge_rewriting_the_law(work) -> tuple[str, str]:
    """main and `side` each did ordinary work; the merge of the two edits the lifecycle in its
    own tree (neither parent changed it), then alice, dead, is revived under that law."""
    git(work, "checkout", "-q", "-b", "side")
    (work / "side.txt").write_text("side\n")
    sneak(work, "work on side", "side.txt")
    git(work, "checkout", "-q", "main")
    (work / "main.txt").write_text("main\n")
    sneak(work, "work on main", "main.txt")
    nohooks(work, "merge", "-q", "--no-ff", "--no-commit", "side")
    (work / LAW).write_text(_lenient((work / LAW).read_text()))
    merge = sneak(work, "Merge branch 'side'", LAW)
    assert len(git(work, "rev-list", "--parents", "-n", "1", merge).stdout.split()) == 3
    revived = sneak_state(work, "alice", "@alice: [STATE:bootstrap] back from the dead",
                          state="bootstrap")
    return merge, revived


def test_trust_a_merge_rewriting_the_law_needs_approval_at_the_hub_and_in_verify(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-dead", alice_dead)
    merge, _revived = _merge_rewriting_the_law(work)
    assert_push_refused(work, hub, "merge-moves")
    assert_verify_flags(work, (merge, "merge-moves"))


def test_trust_a_merge_taking_an_approved_law_change_from_a_branch_is_refused(tmp_path):
    """The law changed (with approval) on `side` and main did other work: under the line rule
    the change reaches the team line by itself, never inside a merge (before, the merge took
    side's lifecycle as judged where it was made). Landed on main by itself, it needs only its
    own approval, and the side's work then merges."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    git(work, "checkout", "-q", "-b", "side")
    (work / LAW).write_text((work / LAW).read_text() + "# reviewed\n")
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: a note", "-m", "Approved-by: zach")
    change = sha(work)
    git(work, "checkout", "-q", "main")
    (work / "main.txt").write_text("main\n")
    git(work, "add", "main.txt")
    git(work, "commit", "-q", "-m", "work")
    before = sha(work)
    res = git(work, "merge", "--no-edit", "side", check=False)
    assert res.returncode != 0 and "[merge-moves]" in out(res), out(res)
    git(work, "merge", "--abort")
    assert sha(work) == before
    git(work, "cherry-pick", change)            # the change of the law, on the line itself
    res = git(work, "merge", "--no-edit", "side", check=False)
    assert res.returncode == 0, out(res)
    rc, problems = verify_json(work, "--no-cache")
    assert (rc, problems) == (0, [])
    push_lawful(work)


def test_trust_a_merge_rolling_the_law_back_to_an_older_version_needs_approval(tmp_path):
    """`side` forked before an approved change of the law; a merge that keeps side's (older,
    unchanged) lifecycle undoes that change without anyone's approval."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    git(work, "branch", "side")
    (work / LAW).write_text((work / LAW).read_text() + "# stricter\n")
    git(work, "add", LAW)
    git(work, "commit", "-q", "-m", "law: stricter", "-m", "Approved-by: zach")
    push_lawful(work)
    git(work, "checkout", "-q", "side")
    (work / "side.txt").write_text("side\n")
    sneak(work, "work on side", "side.txt")
    git(work, "checkout", "-q", "main")
    nohooks(work, "merge", "-q", "--no-ff", "--no-commit", "side")
    git(work, "checkout", "side", "--", LAW)
    merge = sneak(work, "Merge branch 'side'", LAW)
    assert_push_refused(work, hub, "merge-moves")
    assert_verify_flags(work, (merge, "merge-moves"))


# --- 2. replace refs and grafts ---------------------------------------------------------------

def _revival_through_a_replacement(work) -> tuple[str, str, str]:
    """(dead tip, the commit it would be replaced by, a revival on the dead tip). Read through
    `refs/replace/<dead tip>` -> the commit before the death, alice's move is distill ->
    deep_work (legal); read as the commits say, it is dead -> deep_work."""
    dead = sha(work)
    alive = sha(work, "HEAD~1")
    assert "state: distill" in git(work, "show", f"{alive}:agent/alice/_state.md").stdout
    alive_file = git(work, "show", f"{alive}:agent/alice/_state.md").stdout
    (state_path(work, "alice")).write_text(alive_file.replace("state: distill",
                                                              "state: deep_work"))
    revival = sneak(work, "@alice: [STATE:deep_work] never died", "agent/alice/_state.md")
    nohooks(work, "replace", dead, alive)
    return dead, alive, revival


def test_trust_the_hub_refuses_replace_refs_and_reads_none(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-dead", alice_dead)
    dead, alive, _revival = _revival_through_a_replacement(work)
    assert_push_refused(work, hub, "ref-namespace", f"refs/replace/{dead}")
    # even a replace ref put on the hub by other means is never read by its judge
    git(hub, "update-ref", f"refs/replace/{dead}", alive)
    assert_push_refused(work, hub, [{"terminal", "illegal-transition"}], "main")


def test_trust_verify_in_a_mirror_reads_no_replace_refs_or_grafts(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-dead", alice_dead)
    dead, alive, revival = _revival_through_a_replacement(work)
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "-q", "--mirror", str(work), str(mirror))
    git(mirror, "fetch", "-q", str(work), "refs/replace/*:refs/replace/*")
    assert git(mirror, "replace", "-l").stdout.strip() == dead
    rc, problems = verify_json(mirror, "--no-cache")
    assert rc == 1 and any(p["commit"] == revival and p["rule"] == "terminal"
                           for p in problems), problems
    # a graft that makes the revival's parent the living commit is not read either
    git(mirror, "replace", "-d", dead)
    (mirror / "info").mkdir(exist_ok=True)
    (mirror / "info" / "grafts").write_text(f"{revival} {alive}\n")
    rc, problems = verify_json(mirror, "--no-cache")
    assert rc == 1 and any(p["commit"] == revival and p["rule"] == "terminal"
                           for p in problems), problems


# --- 3. a lawless parent, 4. which root is first -----------------------------------------------

def _attackers_line(work) -> tuple[str, str, str]:
    """An orphan line: a README; then its own lifecycle (initial deep_work, no approval);
    then eve, born in deep_work as architect. (root, law, birth) by plumbing."""
    honest_law = (work / LAW).read_text()
    own = _lenient(honest_law).replace("initial: bootstrap", "initial: deep_work")
    root = commit_tree(work, tree_with(work, None, {"README": "mine\n"}), "start")
    law = commit_tree(work, tree_with(work, root, {LAW: own}), "my rules", root)
    birth = commit_tree(work, tree_with(work, law, {"agent/eve/_state.md":
                                                   _born(work, "eve", "deep_work")}),
                        "@eve: [STATE:deep_work] born working", law)
    return root, law, birth


def test_trust_a_line_without_law_is_judged_by_the_law_it_joins_at_the_hub(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    root, law, birth = _attackers_line(work)
    push_lawful(work, f"{root}:refs/heads/x")            # an ordinary commit: fine
    assert_push_refused(work, hub, "needs-approval", f"{law}:refs/heads/x")
    assert_push_refused(work, hub, "needs-approval", f"{birth}:refs/heads/x")
    # a merge that takes nothing of that line is work: eve never reaches the team line
    honest = sha(work)
    merge = commit_tree(work, f"{honest}^{{tree}}", "Merge branch 'x'", honest, birth)
    move_branch(work, merge)
    push_lawful(work)
    roster = gitstate(work, "roster", "--json")
    assert roster.returncode == 0 and '"eve"' not in roster.stdout, out(roster)
    # one that takes its law or its agent is refused
    for files in ({LAW: git(work, "show", f"{birth}:{LAW}").stdout},
                  {"agent/eve/_state.md": git(work, "show",
                                              f"{birth}:agent/eve/_state.md").stdout}):
        taking = commit_tree(work, tree_with(work, merge, files), "Merge branch 'x'", merge,
                             birth)
        move_branch(work, taking)
        assert_push_refused(work, hub, "merge-moves", "main")
        assert_verify_flags(work, ({taking}, "merge-moves"))


@pytest.mark.parametrize("first", ["attacker", "honest"])
def test_trust_whichever_root_comes_first_lines_with_two_laws_do_not_merge(tmp_path, first):
    """The attacker's orphan line merged with `-s ours`: as the merge's first parent it
    rewrites the team line (the hub refuses that; verify, reading that line, refuses the merge
    that brings the honest history's law and agents onto it); as its second parent it brings
    nothing onto the line, so it is work, and no move or law of that line counts."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    _root, _law, birth = _attackers_line(work)
    honest = sha(work)
    parents = (birth, honest) if first == "attacker" else (honest, birth)
    merge = commit_tree(work, f"{honest}^{{tree}}", "Merge", *parents)
    move_branch(work, merge)
    if first == "attacker":
        assert_verify_flags(work, (merge, "merge-moves"))
        assert_push_refused(work, hub, "non-fast-forward", "main")
        return
    rc, problems = verify_json(work, "--no-cache")
    assert (rc, problems) == (0, [])
    push_lawful(work)
    lifecycle = gitstate(work, "lifecycle", "--json")
    assert '"initial":"bootstrap"' in lifecycle.stdout.replace(" ", ""), out(lifecycle)


def test_trust_a_line_without_law_merged_into_a_managed_history_is_judged_by_its_law(tmp_path):
    """An orphan holding only eve's state file in deep_work (no lifecycle, no tag), merged
    into main: verify judges that line by main's law, whatever order git lists the roots."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    files = {"agent/eve/_state.md": _born(work, "eve", "deep_work")}
    root = commit_tree(work, tree_with(work, None, files), "notes")
    honest = sha(work)
    for parents in ((root, honest), (honest, root)):
        merge = commit_tree(work, tree_with(work, honest, files), "Merge", *parents)
        move_branch(work, merge)
        rc, problems = verify_json(work, "--no-cache")
        assert rc == 1 and any(p["commit"] in (root, merge) for p in problems), problems
        move_branch(work, honest)


# --- 5. the hub's clock is its own ------------------------------------------------------------

def _keaton_idle(work):
    gs(work, "spawn", "keaton")
    walk(work, "keaton", "active", "idle")
    push_lawful(work)


def test_trust_no_client_can_push_or_delete_the_hubs_reception_notes(tmp_path):
    hub, work = cached_hub(tmp_path, "keaton-idle", _keaton_idle, "squad")
    notes = git(hub, "rev-parse", "refs/notes/gitstate-received").stdout.strip()
    assert notes
    git(work, "fetch", "-q", "origin", "refs/notes/gitstate-received:refs/notes/theirs")
    forged = run_git(work, "notes", "--ref=refs/notes/theirs", "add", "-f", "-m",
                     "received 0", sha(work), env=date_env(now()))
    assert forged.returncode == 0
    assert_push_refused(work, hub, "ref-namespace",
                        "+refs/notes/theirs:refs/notes/gitstate-received")
    assert_push_refused(work, hub, "ref-namespace", ":refs/notes/gitstate-received")
    assert git(hub, "rev-parse", "refs/notes/gitstate-received").stdout.strip() == notes
    # and the suspension is still not due by the hub's own record
    sneak_state(work, "keaton", "@keaton: [STATE:suspended] swept", state="suspended")
    assert_push_refused(work, hub, "timeout")


# --- 6. a '#' first line is the subject -------------------------------------------------------

def _keaton_active(work):
    gs(work, "spawn", "keaton")
    walk(work, "keaton", "active")
    push_lawful(work)


def test_trust_a_hash_first_line_is_the_subject_at_every_door(tmp_path):
    hub, work = cached_hub(tmp_path, "keaton-active", _keaton_active, "squad")
    hidden = sneak_state(work, "keaton", "# new task\n\n@keaton: [STATE:idle] done\n",
                         state="idle")
    assert git(work, "log", "-1", "--format=%s").stdout.strip() == "# new task"
    assert_push_refused(work, hub, "change-without-tag")
    assert_verify_flags(work, (hidden, "change-without-tag"))


def test_trust_a_hash_first_line_kept_by_commit_m_is_refused_locally(tmp_path):
    repo = managed(tmp_path / "repo", "squad")
    gs(repo, "spawn", "keaton")
    walk(repo, "keaton", "active")
    before = sha(repo)
    text = state_path(repo, "keaton").read_text().replace("state: active", "state: idle")
    state_path(repo, "keaton").write_text(text)
    git(repo, "add", "-A")
    res = git(repo, "-c", "commit.cleanup=default", "commit", "-q", "-m", "# new task", "-m",
              "@keaton: [STATE:idle] done", check=False)
    assert_local_refusal(repo, res, "change-without-tag", "main", before)


# --- 7. parentless commits and signatures -----------------------------------------------------

@pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                    reason="ssh-keygen is missing (install openssh-client)")
def test_trust_a_parentless_law_change_needs_a_signature_where_keys_are_known(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    key = tmp_path / "zach_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zach", "-f",
                    str(key)], check=True, capture_output=True)
    signers = work / "protocols" / "allowed_signers"
    signers.write_text(f"zach {(tmp_path / 'zach_key.pub').read_text().strip()}\n")
    git(work, "add", "protocols/allowed_signers")
    git(work, "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q", "-S",
        "-m", "law: the humans' keys", "-m", "Approved-by: zach")
    push_lawful(work)
    lenient = _lenient((work / LAW).read_text(), human="zach")
    root = commit_tree(work, tree_with(work, "HEAD", {LAW: lenient}), "law: lenient\n\n"
                       "Approved-by: zach")
    assert_push_refused(work, hub, "unsigned-approval", f"{root}:refs/heads/evil")
    # merged in as a second parent, it changes the team line's law only by the merge's own
    # tree: refused; a merge that keeps the line's law takes nothing of it
    merge = commit_tree(work, tree_with(work, "HEAD", {LAW: lenient}), "Merge", sha(work), root)
    move_branch(work, merge)
    assert_push_refused(work, hub, "merge-moves", "main")
    assert_verify_flags(work, ({merge}, "merge-moves"))


# --- 8. the branch a team pushes is protected -------------------------------------------------

def test_trust_a_hub_made_without_naming_a_branch_protects_the_one_the_team_pushes(tmp_path):
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", str(hub))     # HEAD names master on git 2.39
    gs(hub, "init", "--server")
    work = managed(tmp_path / "work")
    git(work, "remote", "add", "origin", str(hub))
    gs(work, "spawn", "alice")
    walk(work, "alice", "inbox", "distill")
    gs(work, "bury", "alice", "--summary", "done")
    push_lawful(work)
    assert git(hub, "symbolic-ref", "HEAD").stdout.strip() == "refs/heads/main"
    assert_push_refused(work, hub, "non-fast-forward", "+HEAD~1:refs/heads/main")
    git(hub, "config", "receive.denyDeleteCurrent", "warn")
    assert_push_refused(work, hub, "protected-ref", ":refs/heads/main")
    assert "[STATE:dead]" in subjects(hub, "main")[0]
    res = gitstate(hub, "doctor")
    assert res.returncode == 0, out(res)
    assert "refs/heads/main" in res.stdout and "refs/heads/master" in res.stdout
    assert "refs/heads/, refs/tags/, refs/gitstate/" in res.stdout


# --- many refs, long refusals -----------------------------------------------------------------

def test_trust_many_refs_naming_one_commit_are_judged_once_and_bounded(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    bad = sneak_state(work, "alice", "@alice: [STATE:deep_work] skipping", state="deep_work")
    specs = [f"{bad}:refs/heads/b{i}" for i in range(300)]
    text = assert_push_refused(work, hub, "illegal-transition", *specs)
    assert text.count("[illegal-transition]") == 1, text
    git(hub, "config", "gitstate.maxRefsPerPush", "100")
    assert_push_refused(work, hub, "too-many-refs", *specs[:101])
    git(work, "reset", "-q", "--hard", "HEAD~1")
    gs(work, "transition", "alice", "distill", "-m", "on")
    good = sha(work)
    push_lawful(work, *[f"{good}:refs/heads/c{i}" for i in range(100)])
    # the reception of the one new state commit was recorded once, in one pass
    assert git(hub, "notes", "--ref=refs/notes/gitstate-received", "show", good).returncode == 0


def test_a_hub_refusing_two_thousand_commits_returns_to_the_pusher_with_the_refusal(tmp_path):
    """A refusal far longer than a pipe's buffer reaches a push made through gitstate's door to
    git (which once read stdout to its end before stderr, and hung)."""
    from gitstate.git.runner import Git
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    base = state_path(work, "alice").read_text()
    stream = [f"reset refs/heads/main\nfrom {sha(work)}\n"]
    for i in range(2000):
        data = f"{base}- note {i}\n".encode()
        msg = f"note {i}".encode()
        stream.append(f"commit refs/heads/main\ncommitter T <t@example.invalid> {now()} +0000\n"
                      f"data {len(msg)}\n{msg.decode()}\n"
                      f"M 100644 inline agent/alice/_state.md\ndata {len(data)}\n"
                      f"{data.decode()}\n")
    run_git(work, "-c", "core.hooksPath=/dev/null", "fast-import", "--quiet",
            input="".join(stream))
    git(work, "reset", "-q", "--hard", "main")
    result: list = []
    pusher = threading.Thread(target=lambda: result.append(
        Git(work).call("push", "origin", "main")), daemon=True)
    pusher.start()
    pusher.join(300)
    assert result, "the push never returned"
    code, _out, err = result[0]
    assert code != 0
    text = err.decode("utf-8", "replace")
    assert len(err) > 64 * 1024 and text.count("[change-without-tag]") >= 1000, len(err)
    assert "refs/heads/main" in refs(hub)
    assert sha(hub, "main") != sha(work, "main")


# --- the other refs a hub accepts are judged like branches ------------------------------------

@pytest.mark.parametrize("ref", ["refs/gitstate/queue/main", "refs/gitstate/x", "refs/tags/v1"])
def test_trust_a_tag_or_a_gitstate_ref_brings_no_illegal_commit(tmp_path, ref):
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    bad = sneak_state(work, "alice", "@alice: [STATE:deep_work] skipping", state="deep_work")
    assert_push_refused(work, hub, "illegal-transition", f"{bad}:{ref}")
    nohooks(work, "tag", "-a", "-m", "annotated", "v2", bad)
    assert_push_refused(work, hub, "illegal-transition", "refs/tags/v2")


def test_trust_a_merge_whose_own_tree_edits_a_hook_shim_needs_approval(tmp_path):
    """Every file of the law, not the lifecycle alone: a merge that writes its own version of
    a committed shim changes the law."""
    hub, work = cached_hub(tmp_path, "alice-inbox", alice_in_inbox)
    git(work, "checkout", "-q", "-b", "side")
    (work / "side.txt").write_text("side\n")
    sneak(work, "work on side", "side.txt")
    git(work, "checkout", "-q", "main")
    nohooks(work, "merge", "-q", "--no-ff", "--no-commit", "side")
    shim = work / ".githooks" / "pre-commit"
    shim.write_text("#!/bin/sh\nexit 0\n")
    merge = sneak(work, "Merge branch 'side'", ".githooks/pre-commit")
    assert_push_refused(work, hub, "merge-moves")
    assert_verify_flags(work, (merge, "merge-moves"))
