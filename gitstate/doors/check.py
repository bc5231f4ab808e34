"""`gitstate check`: the lifecycle and every state file in the work tree, as they are now."""

from __future__ import annotations

import os
import re
from pathlib import Path

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed, read_limited
from gitstate.law.lifecycle import LIFECYCLE_PATH
from gitstate.law.load import LifecycleInvalid
from gitstate.law.rule_ids import Rule
from gitstate.law.rules import Violation, file_violations
from gitstate.law.society import society_violations
from gitstate.law.statefile import MAX_STATE_FILE_BYTES, parse_bytes


def check_worktree(repo: Managed) -> list[Violation]:
    """Every problem of the lifecycle, the hook shims and the state files in the work tree,
    judged by the validator's own per-file rules."""
    return _checked(repo)[1]


def _checked(repo: Managed) -> tuple:
    """(the work tree's lifecycle, or None where it does not load; its problems): the
    lifecycle read once for all that `check` says."""
    try:
        lc = repo.lifecycle(rev=None, index=False)
    except LifecycleInvalid as exc:
        return None, [Violation(Rule.LIFECYCLE, msg,
                                f"{LIFECYCLE_PATH}:{ln}" if ln else LIFECYCLE_PATH)
                      for ln, msg in exc.problems]
    except GitstateError as exc:
        return None, [Violation(getattr(exc, "rule", Rule.LIFECYCLE), exc.message,
                                exc.where or LIFECYCLE_PATH)]
    return lc, _check_hooks(repo, lc) + _check_files(repo.work_tree, lc)


def _check_files(top: Path, lc) -> list[Violation]:
    """The state files in the work tree, each judged, and the society they make."""
    rx = lc.state_path_regex()
    fronts: dict[str, dict] = {}
    out: list[Violation] = []
    for f in _candidates(top, lc):
        rel = f.relative_to(top).as_posix()
        if rx.match(rel):
            out += _check_file(f, rel, lc, fronts)
    return out + society_violations(lc, fronts)


def _candidates(top, lc) -> list:
    """The files under the layout's folder named as its state files are."""
    head_dir = lc.state_file.split("{id}")[0]
    root = top / head_dir if head_dir else top
    return sorted(root.rglob(lc.state_file.split("/")[-1].replace("{id}", "*"))) \
        if root.is_dir() else []


def _check_file(f, rel: str, lc, fronts: dict[str, dict]) -> list[Violation]:
    """A state file's problems; its front matter kept in `fronts` when it has none."""
    if f.is_symlink():
        return [Violation(Rule.SYMLINK, f"a symbolic link (to {os.readlink(f)!r}); a state "
                          "file must be a plain file", rel)]
    if not f.is_file():
        return [Violation(Rule.UNREADABLE, "not a plain file", rel)]
    data = read_limited(f, MAX_STATE_FILE_BYTES)
    found = file_violations(rel, data, lc)
    if not found:
        fronts[rel] = parse_bytes(data, rel).front
    return found


def hooks_dir(repo: Managed) -> Path:
    """The folder whose hooks git runs in this clone."""
    configured = repo.git.config("core.hooksPath")
    path = Path(configured).expanduser() if configured else \
        Path(repo.git.text("rev-parse", "--git-path", "hooks"))
    return path if path.is_absolute() else repo.work_tree / path


def _check_hooks(repo: Managed, lc) -> list[Violation]:
    """The shims must be installed, current for this lifecycle's layout, and used by git."""
    from gitstate.doors.shims import HOOK_NAMES

    where = hooks_dir(repo)
    return [v for name in HOOK_NAMES if (v := _hook_problem(repo, lc, where / name, name))]


def _hook_problem(repo: Managed, lc, path: Path, name: str) -> Violation | None:
    """What keeps the hook at `path` from running gitstate's current shim, if anything."""
    from gitstate.doors.shims import render_shim
    if _framework_runs(repo, lc, path, name):
        return None
    if not path.is_file():
        return Violation(Rule.HOOKS, f"the {name} hook is not installed, so commits are "
                         "not checked; run `gitstate init`", str(path))
    if (text := path.read_text(encoding="utf-8", errors="replace")) != \
            (current := render_shim(name, lc)):
        return Violation(Rule.HOOKS, _outdated(name, text, current), str(path))
    if not os.access(path, os.X_OK):
        return Violation(Rule.HOOKS, f"the {name} hook is not executable, so git skips it; "
                         "run `gitstate init`", str(path))
    return None


def _framework_runs(repo: Managed, lc, path: Path, name: str) -> bool:
    """Does the pre-commit framework's hook at `path` run gitstate's check?"""
    from gitstate.doors import precommit
    from gitstate.doors.shims import render_shim
    if precommit.runs_gitstate(path, name, repo.work_tree):
        return True   # pre-commit's hook, running gitstate's check (doctor says which)
    kept = precommit.legacy(path)
    # pre-commit's migration mode runs gitstate's shim, kept as NAME.legacy
    return precommit.managed(path) and kept.is_file() and \
        kept.read_text(encoding="utf-8", errors="replace") == render_shim(name, lc)


# the module a shim hands a state commit to: `gitstate.hooks` in gitstate 0.1's shims
_ENTRY = re.compile(r"from (gitstate[\w.]*) import main")


def _outdated(name: str, text: str, current: str) -> str:
    """Why an installed hook is not the shim `gitstate init` writes now."""
    from gitstate.doors.shims import SHIM_MARK

    retired = sorted(set(_ENTRY.findall(text)) - set(_ENTRY.findall(current)))
    if SHIM_MARK in text and retired:
        return (f"the {name} hook was written by an older gitstate: it runs {retired[0]}, "
                "which gitstate has retired, so every state commit is refused; run `gitstate init`")
    return (f"the {name} hook is not gitstate's current shim for this lifecycle (an older "
            "gitstate wrote it, or it was edited); run `gitstate init`")


def check(repo: Managed) -> dict:
    """`gitstate check`: every problem, each with its file and line apart, and what the law
    lets be that the team should know (warnings)."""
    lc, found = _checked(repo)
    problems = [_problem(v) for v in found]
    return {"ok": not problems, "problems": problems,
            "warnings": warnings(repo, lc) if lc is not None else []}


def warnings(repo: Managed, lc) -> list[str]:
    """A convention role (`max_advisory`) held by more living agents in the work tree than
    its max (none where the lifecycle does not load: a problem `check` names)."""
    if not any(lc.max_advisory(r) for r in lc.roles):
        return []
    from gitstate.law.roles import over_advisory_max
    return over_advisory_max(lc, _fronts(repo.work_tree, lc))


def _fronts(top: Path, lc) -> list[dict]:
    """Each state file's front matter in the work tree, with its agent (those that read)."""
    rx, fronts = lc.state_path_regex(), []
    for f in _candidates(top, lc):
        m = rx.match(f.relative_to(top).as_posix())
        if m and f.is_file() and not f.is_symlink():
            try:
                front = parse_bytes(read_limited(f, MAX_STATE_FILE_BYTES), str(f)).front
            except GitstateError:
                continue
            fronts.append({**front, "agent": m.group("id")})
    return fronts


def _problem(v: Violation) -> dict:
    """A rule's violation, its `where` ("file:line" or "file") split in two."""
    where = v.where or ""
    path, _, line = where.rpartition(":")
    if path and line.isdigit():
        return {"file": path, "line": int(line), "rule": v.rule, "message": v.message}
    return {"file": where, "line": None, "rule": v.rule, "message": v.message}
