"""The hub: a bare repository whose pre-receive hook holds every pushed commit to the law."""

from __future__ import annotations

import sys

from gitstate.git import Git
from gitstate.replay import check_commit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from gitstate.initrepo import InitReport


def pre_receive(git: Git, stdin: BinaryIO) -> int:
    """Refuse the whole push if any new commit breaks the rules (hooks bypassed or not)."""
    bad: list[tuple[str, str, list]] = []
    for line in stdin.read().decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        old, new, ref = parts
        if set(new) == {"0"}:
            continue  # a deletion carries no commits
        args = ["rev-list", "--reverse", "--topo-order", new, "--not", "--all"]
        for sha in git.text(*args).split():
            violations = check_commit(git, sha)
            if violations:
                bad.append((ref, sha, violations))
    if not bad:
        return 0
    print("gitstate: push refused by the hub:", file=sys.stderr)
    for ref, sha, violations in bad:
        subject = git.text("log", "-1", "--format=%s", sha)
        print(f"  {sha[:10]} ({ref}) {subject}", file=sys.stderr)
        for v in violations:
            print(f"    {v}", file=sys.stderr)
    print("Fix these commits (e.g. rebase them) and push again.", file=sys.stderr)
    return 1


def init_server(path: str | None, lifecycle: str | None) -> InitReport:
    """Install the pre-receive shim into a bare hub (the law comes from the pushed history)."""
    from pathlib import Path

    from gitstate.errors import UsageError
    from gitstate.initrepo import InitReport
    from gitstate.shims import install_into
    from gitstate.lifecycle import load_lifecycle
    from gitstate.resources import preset_dir

    git = Git(path)
    if not git.is_bare():
        raise UsageError("--server is for a bare hub repository (git init --bare)")
    gdir = Path(git.text("rev-parse", "--absolute-git-dir"))
    lc = load_lifecycle((preset_dir(lifecycle or "haak") / "lifecycle.yaml").read_text("utf-8"))
    actions = install_into(gdir / "hooks", ("pre-receive",), lc)
    git.run("config", "gitstate.python", sys.executable)
    return InitReport(lifecycle="(as committed in each pushed history)",
                        hooks_dir=str(gdir / "hooks"), actions=actions)
