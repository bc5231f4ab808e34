"""Repositories of SHA-256 (`git init --object-format=sha256`): ids of 64 hex digits, and an
all-zero id of 64 zeros where a ref is created or deleted. Every door works there as in SHA-1:
the hub (pre-receive, the landing queue, post-receive's record), the commit hooks and the ref
guard of a clone, and the views."""

from __future__ import annotations

from pathlib import Path

from conftest import UNHOOKED, from_template, git, gitstate, set_state_line, walk
from hubs import hub_subjects, pushed

NOTES = "refs/notes/gitstate-received"


def _sha256_hub_and_clones(root: Path) -> None:
    hub = root / "hub.git"
    git(root, "init", "-q", "--bare", "--object-format=sha256", "-b", "main", str(hub))
    res = gitstate(hub, "init", "--server")
    assert res.returncode == 0, res.stderr
    seed = root / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "--object-format=sha256", "-b", "main")
    git(seed, "config", "commit.cleanup", "verbatim")
    (seed / "README").write_text("hello\n")
    git(seed, "add", "README")
    git(seed, "commit", "-q", "-m", "first")
    res = gitstate(seed, "init", "--human", "zach")
    assert res.returncode == 0, res.stderr
    git(seed, "remote", "add", "origin", str(hub))
    for i in range(2):
        c = root / f"c{i}"
        c.mkdir()
        git(c, "init", "-q", "--object-format=sha256", "-b", "main")


def sha256_hub(tmp_path: Path) -> tuple[Path, Path]:
    """(an empty SHA-256 hub made by `gitstate init --server`, a managed SHA-256 repository
    whose `origin` it is, not pushed yet)."""
    from_template(tmp_path, "sha256_hub", _sha256_hub_and_clones)
    return tmp_path / "hub.git", tmp_path / "seed"


def sha256_clones(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A SHA-256 hub with the managed history pushed, and two managed clones of it."""
    hub, seed = sha256_hub(tmp_path)
    git(seed, "push", "-q", "-u", "origin", "main")
    clones = []
    for i in range(2):
        c = tmp_path / f"c{i}"
        git(c, "remote", "add", "origin", str(hub))
        git(c, "fetch", "-q", "origin")
        git(c, "reset", "-q", "--hard", "origin/main")
        git(c, "branch", "-q", "--set-upstream-to=origin/main")
        res = gitstate(c, "init")
        assert res.returncode == 0, res.stderr
        clones.append(c)
    return hub, clones


def oid(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", rev).stdout.strip()


def test_the_repositories_are_sha256(tmp_path):
    hub, seed = sha256_hub(tmp_path)
    for where in (hub, seed):
        assert git(where, "rev-parse", "--show-object-format").stdout.strip() == "sha256"
    assert len(oid(seed, "HEAD")) == 64


def test_a_sha256_hub_takes_the_first_push_and_judges_every_move(tmp_path):
    hub, seed = sha256_hub(tmp_path)
    res = git(seed, "push", "-q", "-u", "origin", "main", check=False)   # old: 64 zeros
    assert res.returncode == 0, res.stderr
    assert oid(hub, "main") == oid(seed, "HEAD")
    assert gitstate(seed, "spawn", "alice").returncode == 0
    walk(seed, "alice", "inbox")
    # the moves reach the hub first on a new branch (its old id: 64 zeros), then on main
    for ref in ("side", "main"):
        res = git(seed, "push", "-q", "origin", f"main:{ref}", check=False)
        assert res.returncode == 0, res.stderr
    assert hub_subjects(hub)[0] == "@alice: [STATE:inbox] to inbox"
    # post-receive recorded when the hub received each state commit, and only those
    noted = git(hub, "notes", f"--ref={NOTES}", "list").stdout.split()[1::2]
    tagged = git(hub, "log", "--format=%H", "--grep=\\[STATE:", "main").stdout.split()
    assert len(tagged) == 2 and sorted(noted) == sorted(tagged)

    set_state_line(seed, "alice", "state", "deep_work")        # illegal: inbox -> deep_work
    git(seed, *UNHOOKED, "commit", "-q", "-am", "@alice: [STATE:deep_work] sneaky")
    res = git(seed, "push", "-q", "origin", "main", check=False)
    assert res.returncode != 0
    assert "push refused by the hub" in res.stderr and "[illegal-transition]" in res.stderr
    assert "sneaky" not in "".join(hub_subjects(hub))

    # the views read 64-digit ids too
    res = gitstate(seed, "log", "alice")
    assert res.returncode == 0 and "bootstrap -> inbox" in res.stdout, res.stdout
    res = gitstate(seed, "verify", "--no-cache")
    assert res.returncode == 1 and "[illegal-transition]" in res.stdout


def test_a_sha256_hub_deletes_an_unprotected_branch_and_never_main(tmp_path):
    hub, (a, _b) = sha256_clones(tmp_path)
    git(a, "push", "-q", "origin", "main:feature")
    assert oid(hub, "feature") == oid(hub, "main")
    res = git(a, "push", "-q", "origin", ":feature", check=False)   # new: 64 zeros
    assert res.returncode == 0, res.stderr
    assert git(hub, "rev-parse", "-q", "--verify", "feature", check=False).returncode != 0
    res = git(a, "push", "origin", ":main", check=False)
    assert res.returncode != 0 and "[protected-ref]" in res.stderr, res.stderr
    assert "cannot be deleted" in res.stderr
    assert oid(hub, "main") == oid(a, "HEAD")


def test_the_landing_queue_lands_moves_in_sha256(tmp_path):
    hub, (a, b) = sha256_clones(tmp_path)
    code, out = pushed(a, "spawn", "alice")
    assert code == 0 and out["outcome"] == "landed", out
    assert len(out["commit"]) == 64 and oid(hub, "main") == out["commit"]
    # b is a move behind: the hub lands its move on the new tip (a three-way merge of trees)
    (b / "notes.txt").write_text("bob's work\n")
    git(b, "add", "notes.txt")
    code, out = pushed(b, "spawn", "bob")
    assert code == 0 and out["outcome"] == "landed" and out["attempts"] == 1, out
    tip = oid(hub, "main")
    assert out["commit"] == tip == oid(b, "HEAD")
    assert sorted(git(hub, "show", "--name-only", "--format=", tip).stdout.split()) == \
        ["agent/bob/_state.md", "notes.txt"]
    # a lands a move on the tip b's landing made, which its clone has not seen
    code, out = pushed(a, "transition", "alice", "inbox")
    assert code == 0 and out["outcome"] == "landed", out
    assert hub_subjects(hub)[:3] == ["@alice: [STATE:inbox] bootstrap -> inbox",
                                     "@bob: [STATE:bootstrap] spawned",
                                     "@alice: [STATE:bootstrap] spawned"]
    noted = git(hub, "notes", f"--ref={NOTES}", "list").stdout.split()[1::2]
    assert tip in noted


def test_a_move_refused_on_the_sha256_hub_is_kept_on_a_side_branch(tmp_path):
    hub, (a, b) = sha256_clones(tmp_path)
    assert pushed(a, "spawn", "arch1", "--role", "architect")[0] == 0
    (b / "plan.md").write_text("my plan\n")
    git(b, "add", "plan.md")
    code, out = pushed(b, "spawn", "arch2", "--role", "architect")   # max: 1
    assert code == 1 and out["outcome"] == "illegal" and out["rule"] == "role-max", out
    assert out["kept"] == "gitstate/unlanded/arch2-1" and out["staged"] == ["plan.md"]
    assert "plan.md" in git(b, "show", "--name-only", "gitstate/unlanded/arch2-1").stdout
    assert oid(b, "HEAD") == oid(hub, "main")
    assert "arch2" not in "".join(hub_subjects(hub))


def test_hooks_and_the_ref_guard_judge_a_sha256_clone(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "--object-format=sha256", "-b", "main")
    git(work, "config", "commit.cleanup", "verbatim")
    res = gitstate(work, "init", "--human", "zach")        # a first commit: no parent
    assert res.returncode == 0, res.stderr
    assert gitstate(work, "spawn", "alice").returncode == 0
    # a legal state commit by plain git: the commit hooks and the guard let it through
    set_state_line(work, "alice", "state", "inbox")
    res = git(work, "commit", "-q", "-am", "@alice: [STATE:inbox] by hand", check=False)
    assert res.returncode == 0, res.stderr
    # an illegal one is refused by the commit hooks...
    before = oid(work, "HEAD")
    set_state_line(work, "alice", "state", "deep_work")
    res = git(work, "commit", "-q", "-am", "@alice: [STATE:deep_work] skip", check=False)
    assert res.returncode != 0 and "[illegal-transition]" in res.stderr
    # ...and with them skipped, by the ref guard
    res = git(work, "commit", "-q", "--no-verify", "-am", "@alice: [STATE:deep_work] skip",
              check=False)
    assert res.returncode != 0 and "[illegal-transition]" in res.stderr, res.stderr
    assert oid(work, "HEAD") == before
    # a branch made at an illegal commit (its old id: 64 zeros) is judged by the guard too
    git(work, *UNHOOKED, "commit", "-q", "-am", "@alice: [STATE:deep_work] skip")
    sneaky = oid(work, "HEAD")
    git(work, *UNHOOKED, "reset", "-q", "--hard", before)
    res = git(work, "branch", "sneaky", sneaky, check=False)
    assert res.returncode != 0 and "[illegal-transition]" in res.stderr, res.stderr
    assert git(work, "rev-parse", "-q", "--verify", "sneaky", check=False).returncode != 0
    git(work, "branch", "fine", before)                     # a lawful one is made
    assert oid(work, "fine") == before
    # a merge of an unrelated history (no merge base: judged against the empty tree)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "--object-format=sha256", "-b", "main")
    (other / "x.txt").write_text("x\n")
    git(other, "add", "x.txt")
    git(other, "commit", "-q", "-m", "other work")
    git(work, "fetch", "-q", str(other), "main:other")
    res = git(work, "merge", "-q", "--allow-unrelated-histories", "-m", "take other", "other",
              check=False)
    assert res.returncode == 0, res.stderr
    assert (work / "x.txt").is_file() and git(work, "log", "-1", "--format=%s").stdout == \
        "take other\n"
    res = gitstate(work, "log", "alice")
    assert res.returncode == 0 and "bootstrap -> inbox" in res.stdout, res.stdout


def test_a_change_of_law_that_removes_files_is_committed_in_sha256(tmp_path):
    """`init --force` to another preset removes the former preset's protocol docs: the index
    is told of each removal with this repository's all-zero id."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "--object-format=sha256", "-b", "main")
    assert gitstate(work, "init", "--human", "ada").returncode == 0
    docs = set(git(work, "ls-files", "protocols").stdout.split())
    res = gitstate(work, "init", "--lifecycle", "squad", "--force", "--approved-by", "ada")
    assert res.returncode == 0, res.stderr
    after = set(git(work, "ls-files", "protocols").stdout.split())
    gone = docs - after
    assert gone and not any((work / p).exists() for p in gone)
    removed = git(work, "show", "--diff-filter=D", "--name-only", "--format=", "HEAD").stdout
    assert set(removed.split()) == gone
    assert git(work, "status", "--porcelain").stdout == ""
