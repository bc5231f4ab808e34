"""Caches under .git/gitstate only ever make gitstate faster. A forged, well-formed
cache file (a verified.json with no problems, a relaxed cached lifecycle) is detected and
rebuilt; `verify --no-cache` and the hub never read one.

The forgeries are made from the files gitstate itself wrote, edited the way an attacker would:
every mention of the old tip becomes the new one and every list of problems is emptied; every
cached `transitions` table lets inbox go to deep_work.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import git, gitstate, snapshot, walk
from trusthelp import (assert_push_refused, assert_verify_flags, cached_hub, edit_state, gs,
                       push_lawful, sha, sneak_state)


def _cache_files(git_dir: Path) -> list[Path]:
    root = git_dir / "gitstate"
    return sorted(p for p in root.rglob("*.json") if p.is_file()) if root.is_dir() else []


def _rewrite(path: Path, edit) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    new = edit(data)
    if new == data:
        return False
    path.write_text(json.dumps(new, separators=(",", ":")), encoding="utf-8")
    return True


def forge_verified(git_dir: Path, old_tip: str, new_tip: str) -> list[Path]:
    """Claim that the history up to `new_tip` was judged and had no problems."""
    def edit(x):
        if isinstance(x, dict):
            return {k: [] if k == "problems" and isinstance(v, list) else edit(v)
                    for k, v in x.items()}
        if isinstance(x, list):
            return [edit(v) for v in x]
        return new_tip if x == old_tip else x
    return [p for p in _cache_files(git_dir) if old_tip in p.read_text() and _rewrite(p, edit)]


def forge_lifecycles(git_dir: Path) -> list[Path]:
    """Let inbox go to deep_work in every cached lifecycle."""
    def edit(x):
        if isinstance(x, dict):
            out = {k: edit(v) for k, v in x.items()}
            t = out.get("transitions")
            if isinstance(t, dict) and isinstance(t.get("inbox"), list):
                out["transitions"] = {**t, "inbox": [*t["inbox"], "deep_work"]}
            return out
        if isinstance(x, list):
            return [edit(v) for v in x]
        return x
    return [p for p in _cache_files(git_dir) if _rewrite(p, edit)]


def _alice_in_inbox(repo) -> None:
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    # one state commit through the real hooks, so that they have cached what they read too
    edit_state(repo, "alice", thread="caches")
    res = git(repo, "commit", "-q", "-am", "@alice: [STATE:inbox] progress", check=False)
    assert res.returncode == 0, res.stderr
    assert gitstate(repo, "verify").returncode == 0


def test_trust_forged_verified_cache_is_detected(repo):
    _alice_in_inbox(repo)
    old = sha(repo)
    bad = sneak_state(repo, "alice", "@alice: [STATE:deep_work] skip", state="deep_work")
    forge_verified(repo / ".git", old, bad)
    assert_verify_flags(repo, (bad, "illegal-transition"))


def test_trust_forged_lifecycle_cache_does_not_relax_the_hook(repo):
    _alice_in_inbox(repo)
    forge_lifecycles(repo / ".git")
    edit_state(repo, "alice", state="deep_work")
    before = snapshot(repo)
    res = git(repo, "commit", "-q", "-am", "@alice: [STATE:deep_work] skip", check=False)
    assert res.returncode != 0, "a forged cached lifecycle let the hook accept inbox -> deep_work"
    assert "[illegal-transition]" in res.stderr, res.stderr
    assert snapshot(repo) == before


def test_trust_forged_lifecycle_cache_does_not_relax_verify(repo):
    _alice_in_inbox(repo)
    bad = sneak_state(repo, "alice", "@alice: [STATE:deep_work] skip", state="deep_work")
    forge_lifecycles(repo / ".git")
    assert_verify_flags(repo, (bad, "illegal-transition"))


def test_trust_hub_never_reads_a_cache(tmp_path):
    hub, work = cached_hub(tmp_path, "caches", lambda w: (_alice_in_inbox(w), push_lawful(w)))
    old = sha(work)
    bad = sneak_state(work, "alice", "@alice: [STATE:deep_work] skip", state="deep_work")
    # whatever gitstate caches in a clone, planted (forged) in the hub's own git dir
    forge_verified(work / ".git", old, bad)
    forge_lifecycles(work / ".git")
    shutil.copytree(work / ".git" / "gitstate", hub / "gitstate", dirs_exist_ok=True)
    assert_push_refused(work, hub, "illegal-transition")


def test_a_forged_verdict_does_not_bless_a_merge_past_the_ref_guard(tmp_path):
    from conftest import UNHOOKED, managed_repo, set_state_line, state_path
    repo = managed_repo(tmp_path / "r")
    assert gitstate(repo, "spawn", "alice").returncode == 0
    git(repo, "switch", "-q", "-c", "side")
    set_state_line(repo, "alice", "state", "inbox")
    git(repo, *UNHOOKED, "commit", "-qam", "@alice: [STATE:inbox] bootstrap -> inbox")
    git(repo, "switch", "-q", "main")
    (repo / "w").write_text("work\n")
    git(repo, "add", "w")
    git(repo, "commit", "-qm", "work")
    before = sha(repo, "main")
    # `git merge` runs commit-msg but not pre-commit: a verdict left beside the index, naming
    # both parents and the state file the merge brings, as pre-commit would have written it
    old = git(repo, "rev-parse", "main:agent/alice/_state.md").stdout.strip()
    new = git(repo, "rev-parse", "side:agent/alice/_state.md").stdout.strip()
    raw = f":100644 100644 {old} {new} M\t{state_path(repo, 'alice').relative_to(repo)}"
    (repo / ".git" / "gitstate-expect").write_text(f"{before} {sha(repo, 'side')}\nmerge\n{raw}\n")
    res = git(repo, "merge", "--no-ff", "-m", "merge side", "side", check=False)
    assert res.returncode != 0 and "merge-moves" in res.stdout + res.stderr, res.stderr
    assert sha(repo, "main") == before
