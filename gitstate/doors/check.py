"""`gitstate check`: the lifecycle and every state file in the work tree, as they are now."""

from __future__ import annotations

import os

from gitstate.law import statefile
from gitstate.errors import GitstateError
from gitstate.law.lifecycle import LifecycleInvalid
from gitstate.cli.models import Problem
from gitstate.git.repo import LIFECYCLE_PATH, Managed
from gitstate.law.grammar import is_valid_id


def check_worktree(repo: Managed) -> list[Problem]:
    out: list[Problem] = []
    try:
        lc = repo.lifecycle(rev=None, index=False)
    except LifecycleInvalid as exc:
        return [Problem(file=LIFECYCLE_PATH, line=ln, rule="lifecycle", message=msg)
                for ln, msg in exc.problems]
    except GitstateError as exc:
        return [Problem(file=exc.where or LIFECYCLE_PATH, rule="lifecycle", message=exc.message)]
    out += _check_hooks(repo, lc)
    top = repo.top
    rx = lc.state_path_regex()
    head_dir = lc.state_file.split("{id}")[0]
    root = top / head_dir if head_dir else top
    candidates = sorted(root.rglob(lc.state_file.split("/")[-1].replace("{id}", "*"))) \
        if root.is_dir() else []
    for f in candidates:
        rel = f.relative_to(top).as_posix()
        m = rx.match(rel)
        if not m or f.is_symlink():
            continue
        ident = m.group("id")
        if not is_valid_id(ident) or ident != ident.lower():
            out.append(Problem(file=rel, rule="invalid-id",
                               message=f"'{ident}' is not a valid (lower-case) agent id"))
            continue
        try:
            doc = statefile.parse_bytes(f.read_bytes(), rel)
        except GitstateError as exc:
            line = None
            if exc.where and ":" in exc.where:
                tail = exc.where.rsplit(":", 1)[1]
                line = int(tail) if tail.isdigit() else None
            out.append(Problem(file=rel, line=line, rule="unreadable", message=exc.message))
            continue
        for key, line, problem in statefile.field_problems(doc):
            out.append(Problem(file=rel, line=line, rule="bad-field", message=problem))
        if isinstance(doc.agent, str) and doc.agent.lower() != ident:
            out.append(Problem(file=rel, line=doc.line_of("agent"), rule="agent-mismatch",
                               message=f"'agent: {doc.agent}' but the directory is '{ident}'"))
        state = doc.state
        if isinstance(state, str) and state not in lc.states:
            out.append(Problem(file=rel, line=doc.line_of("state"), rule="unknown-state",
                               message=f"'{state}' is not a state of lifecycle '{lc.name}' "
                                       f"(states: {', '.join(lc.states)})"))
        elif isinstance(state, str):
            for req in lc.states[state].requires:
                if not statefile.is_filled(doc.get(req)):
                    out.append(Problem(file=rel, line=doc.line_of(req) if req in doc.front else 2,
                                       rule="missing-field",
                                       message=f"state '{state}' requires '{req}:'"))
    return out


def _check_hooks(repo: Managed, lc) -> list[Problem]:
    """The shims must be installed, current for this lifecycle's layout, and used by git."""
    from pathlib import Path

    from gitstate.doors.shims import HOOK_NAMES, render_shim

    configured = repo.git.config("core.hooksPath")
    if configured:
        hook_dir = Path(configured).expanduser()
        hook_dir = hook_dir if hook_dir.is_absolute() else repo.top / hook_dir
    else:
        hook_dir = Path(repo.git.text("rev-parse", "--git-path", "hooks"))
        hook_dir = hook_dir if hook_dir.is_absolute() else repo.top / hook_dir
    out = []
    for name in HOOK_NAMES:
        path = hook_dir / name
        if not path.is_file():
            out.append(Problem(file=str(path), rule="hooks", message=f"the {name} hook is not "
                               "installed, so commits are not checked; run `gitstate init`"))
        elif path.read_text(encoding="utf-8", errors="replace") != render_shim(name, lc):
            out.append(Problem(file=str(path), rule="hooks", message=f"the {name} hook is not "
                               "gitstate's current shim for this lifecycle; run `gitstate init`"))
        elif not os.access(path, os.X_OK):
            out.append(Problem(file=str(path), rule="hooks", message=f"the {name} hook is not "
                               "executable, so git skips it; run `gitstate init`"))
    return out
