"""Git hook entry points (light imports only) and the installation of the hook shims.

The shims in `.githooks/` decide in shell whether a commit concerns gitstate at all; only then
do they start Python and call `run_hook`. Nothing here imports click, pydantic or GitPython.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

from gitstate.errors import GitstateError
from gitstate.git import Git
from gitstate.lifecycle import Lifecycle, LifecycleInvalid, load_lifecycle
from gitstate.repo import LIFECYCLE_PATH, Managed
from gitstate.rules import Violation, validate
from gitstate import statefile

SHIM_MARK = "# gitstate-shim:"
HOOK_NAMES = ("pre-commit", "commit-msg")
SERVER_HOOK_NAMES = ("pre-receive",)
CHAINED_SUFFIX = ".pre-gitstate"


# ---------------------------------------------------------------------------------------
# Entry points


def run_hook(name: str, args: list[str]) -> int:
    try:
        if name == "pre-commit":
            return _report(_check_staged(Git(), message=None),
                           later="The commit message is checked next, once these are fixed.")
        if name == "commit-msg":
            if not args:
                print("gitstate: commit-msg hook needs the message file", file=sys.stderr)
                return 2
            raw = Path(args[0]).read_bytes().decode("utf-8", "replace")
            return _report(_check_staged(Git(), message=raw))
        if name == "pre-receive":
            from gitstate.server import pre_receive
            return pre_receive(Git(), sys.stdin.buffer)
    except GitstateError as exc:
        print(f"gitstate: {exc}", file=sys.stderr)
        return exc.exit_code
    print(f"gitstate: unknown hook '{name}'", file=sys.stderr)
    return 2


def _report(violations: list[Violation], later: str = "") -> int:
    if not violations:
        return 0
    n = len(violations)
    lines = [f"gitstate: commit refused ({n} problem{'s' if n != 1 else ''}):"]
    lines += [f"  {v}" for v in violations]
    lines.append("Nothing was committed; the index and work tree are as they were.")
    if later:
        lines.append(later)
    print("\n".join(lines), file=sys.stderr)
    return 1


def _commit_base(git: Git) -> str | None:
    """The commit the new one will sit on: HEAD, or HEAD's parent for `git commit --amend`."""
    head = git.head()
    if head and _parent_is_amend():
        return git.rev("HEAD^")
    return head


def _parent_is_amend() -> bool:
    # git tells hooks nothing about --amend; on Linux the command line of the `git commit`
    # that runs us (our parent's parent: the shim's shell sits between) says it.
    pid = os.getppid()
    for _ in range(4):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat_line = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        args = raw.split(b"\0")
        if args and args[0].rsplit(b"/", 1)[-1] == b"git" or b"commit" in args[:3]:
            return b"--amend" in args
        pid = int(stat_line.rsplit(")", 1)[1].split()[1])
        if pid <= 1:
            return False
    return False


def _check_staged(git: Git, message: str | None) -> list[Violation]:
    """Every violation of the commit being made from the index (and message, if given)."""
    repo = Managed(git, None)
    base = _commit_base(git)
    out: list[Violation] = []
    staged = git.staged_changes(base)
    if LIFECYCLE_PATH in staged:
        out += _check_new_lifecycle(git)
    try:
        lc = repo.lifecycle(base, worktree=False)
    except LifecycleInvalid as exc:
        return out or [Violation("lifecycle", exc.message, LIFECYCLE_PATH)]
    except GitstateError:
        return out  # not managed (yet): nothing to enforce
    rx = lc.state_path_regex()
    paths = [p for p in staged if rx.match(p)]
    changes = repo.changes_between(paths, base, None)
    inherited = _inherited_from_merge(git, changes)
    out += validate(changes, lc, message, inherited=inherited)
    return out


def _check_new_lifecycle(git: Git) -> list[Violation]:
    data = git.cat_files([f":{LIFECYCLE_PATH}"])[0]
    if data is None:
        return [Violation("lifecycle", "the lifecycle is being deleted; a managed repository "
                          "needs one", LIFECYCLE_PATH)]
    try:
        load_lifecycle(statefile.decode(data, LIFECYCLE_PATH), LIFECYCLE_PATH)
    except GitstateError as exc:
        return [Violation("lifecycle", exc.message, exc.where or LIFECYCLE_PATH)]
    return []


def _inherited_from_merge(git: Git, changes) -> set[str]:
    """Paths a merge takes unchanged from its other parent(s): they were judged there."""
    git_dir = Path(git.text("rev-parse", "--absolute-git-dir"))
    merge_head = git_dir / "MERGE_HEAD"
    if not changes or not merge_head.is_file():
        return set()
    others = [ln.strip() for ln in merge_head.read_text().splitlines() if ln.strip()]
    inherited = set()
    for other in others:
        versions = git.cat_files(f"{other}:{c.path}" for c in changes)
        inherited |= {c.path for c, v in zip(changes, versions) if v == c.new}
    return inherited


# ---------------------------------------------------------------------------------------
# Installing the shims


def paths_pattern(lc: Lifecycle) -> str:
    """A loose ERE that matches (at least) every state file path and the lifecycle, as
    printed by `git diff --name-only` (which may quote unusual paths)."""
    head, _, tail = lc.state_file.partition("{id}")
    state = f"{_ere(tail)}\"?$" if tail else f"^\"?{_ere(head)}"
    return f"{state}|{_ere(LIFECYCLE_PATH)}\"?$"


def _ere(text: str) -> str:
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def render_shim(name: str, lc: Lifecycle) -> str:
    from gitstate.resources import read_shipped
    template = read_shipped("githooks", name)
    return template.replace("@GITSTATE_PATHS@", paths_pattern(lc).replace("'", "'\\''"))


def is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return SHIM_MARK.encode() in fh.read(400)
    except OSError:
        return False


def write_executable(path: Path, text: str) -> bool:
    """Write `text` (atomically) unless the file already says exactly that. True if written."""
    if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)
    os.replace(tmp, path)
    return True


def install_into(hook_dir: Path, names: tuple[str, ...], lc: Lifecycle) -> list[str]:
    """Put our shims into a live hooks folder, keeping any user hook as `<name>.pre-gitstate`,
    which the shim runs after its own check. Returns what was done, for the user."""
    done = []
    for name in names:
        target = hook_dir / name
        if target.exists() and not is_ours(target):
            kept = target.with_name(name + CHAINED_SUFFIX)
            if kept.exists():
                raise GitstateError(f"both {target} and {kept} exist and neither is gitstate's; "
                                    "gitstate will not overwrite a hook of yours",
                                    hint=f"merge them by hand, or remove {kept}")
            os.replace(target, kept)
            done.append(f"kept your {name} hook as {kept.name}; gitstate runs it after its check")
        if write_executable(target, render_shim(name, lc)):
            done.append(f"installed {target}")
    return done
