"""The hub: a bare repository whose pre-receive hook holds every pushed commit to the law."""

from __future__ import annotations

import sys

from gitstate.git.runner import Git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from gitstate.doors.install import InitReport


def pre_receive(git: Git, stdin: BinaryIO) -> int:
    """Refuse the whole push if any new commit breaks the rules (hooks bypassed or not):
    the new commits of every ref are replayed exactly as `gitstate verify` replays history."""
    from gitstate.history.verify import verify

    bad: list[tuple[str, dict]] = []
    for line in stdin.read().decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        _old, new, ref = parts
        if set(new) == {"0"}:
            continue  # a deletion carries no commits
        problems, _ = verify(git, [new, "--not", "--all"], None)
        bad += [(ref, p) for p in problems]
    if not bad:
        return 0
    print("gitstate: push refused by the hub:", file=sys.stderr)
    shown = None
    for ref, p in bad:
        if p["commit"] != shown:
            shown = p["commit"]
            print(f"  {p['commit'][:10]} ({ref}) {p['subject']}", file=sys.stderr)
        where = f"{p['where']}: " if p.get("where") else ""
        print(f"    [{p['rule']}] {where}{p['message']}", file=sys.stderr)
    print("Fix these commits (e.g. rebase them) and push again.", file=sys.stderr)
    return 1


def init_server(path: str | None, lifecycle: str | None) -> InitReport:
    """Install the pre-receive shim into a bare hub (the law comes from the pushed history)."""
    from pathlib import Path

    from gitstate.errors import UsageError
    from gitstate.doors.install import InitReport
    from gitstate.doors.shims import install_into
    from gitstate.law.load import load_lifecycle
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
