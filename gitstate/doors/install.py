"""`gitstate init`: make a repository managed (idempotent).

Writes the lifecycle and its protocol docs, the agent kit and the hook shims, points git at the
shims without ever destroying a hook of the user's, and commits what it wrote (one commit,
touching nothing the user staged).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from gitstate.git.atomic import Plan, commit_atomically
from gitstate.errors import GitstateError, NotManaged, UsageError
from gitstate.git.runner import Git
from gitstate.doors.shims import HOOK_NAMES, install_into, is_ours, render_shim, write_executable
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.limits import LIFECYCLE_BYTES
from gitstate.law.statefile import MAX_STATE_FILE_BYTES, decode
from gitstate.law.load import load_lifecycle, read_lifecycle
from gitstate.resources import preset_dir, presets, read_shipped
from gitstate.law.lifecycle import LIFECYCLE_PATH

SHIM_DIR = ".githooks"
AGENT_GUIDE = "agent/README.md"


@dataclass
class InitReport:
    lifecycle: str
    hooks_dir: str
    actions: list[str] = field(default_factory=list)
    commit: str | None = None


def _open(path: str | None):
    import git as gitpython  # repository discovery and config: plumbing, not the hot path

    try:
        return gitpython.Repo(path or ".", search_parent_directories=True)
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
        raise NotManaged(f"not a git repository: {Path(path or '.').resolve()}",
                         hint="run `git init` first, then `gitstate init`") from None


def _source(lifecycle: str | None) -> tuple[str, dict[str, str], Lifecycle]:
    """(lifecycle text, {state doc name: text}, checked lifecycle) of a preset name or a
    lifecycle file."""
    if lifecycle is None or lifecycle in presets():
        d = preset_dir(lifecycle or "haak")
        docs = {p.name: p.read_text(encoding="utf-8") for p in sorted(d.glob("*.md"))}
        text = (d / "lifecycle.yaml").read_text(encoding="utf-8")
        return text, docs, load_lifecycle(text, lifecycle or "haak")
    f = Path(lifecycle)
    if not f.is_file():
        raise UsageError(f"--lifecycle {lifecycle!r} is neither a lifecycle file nor a shipped "
                         f"preset; shipped presets: {', '.join(presets())}")
    # refused whole (too large, not UTF-8, invalid) before anything is written or committed
    with open(f, "rb") as fh:
        data = fh.read(LIFECYCLE_BYTES + 1)
    lc = read_lifecycle(data, str(f))
    text = data.decode("utf-8")
    docs = {}
    for state in lc.states:
        doc = f.parent / f"{state}.md"
        if doc.is_file() and not doc.is_symlink():
            with open(doc, "rb") as fh:
                docs[doc.name] = decode(fh.read(MAX_STATE_FILE_BYTES + 1), str(doc))
    return text, docs, lc


def init(path: str | None = None, lifecycle: str | None = None, *, force: bool = False,
         commit: bool = True) -> InitReport:
    repo = _open(path)
    if repo.bare:
        raise UsageError("this is a bare repository: use `gitstate init --server` on a hub")
    top = Path(repo.working_tree_dir)
    git = Git(top)
    files: dict[str, bytes] = {}
    actions: list[str] = []

    current = top / LIFECYCLE_PATH
    if current.is_file() and lifecycle is None:
        with open(current, "rb") as fh:
            data = fh.read(LIFECYCLE_BYTES + 1)
        lc = read_lifecycle(data, LIFECYCLE_PATH)
        text = data.decode("utf-8")
        docs: dict[str, str] = {}
        if (top / "protocols").is_dir() and lc.name in presets():
            _, docs, _ = _source(lc.name)
    else:
        text, docs, lc = _source(lifecycle)
        if current.is_file() and current.read_text(encoding="utf-8", errors="replace") != text \
                and not force:
            raise GitstateError(f"{LIFECYCLE_PATH} exists and differs from "
                                f"'{lifecycle}'; gitstate will not overwrite it",
                                hint="pass --force to replace it")
    files[LIFECYCLE_PATH] = text.encode()
    for name, doc in docs.items():
        target = top / "protocols" / name
        if force or not target.exists():
            files[f"protocols/{name}"] = doc.encode()
    if force or not (top / AGENT_GUIDE).exists():
        files[AGENT_GUIDE] = read_shipped("agent", "README.md").encode()

    for rel, data in files.items():
        target = top / rel
        if not target.is_file() or target.read_bytes() != data:
            _write(top, rel, data)
            actions.append(f"wrote {rel}")

    for name in HOOK_NAMES:
        rel = f"{SHIM_DIR}/{name}"
        shim = render_shim(name, lc)
        target = top / rel
        if target.exists() and not is_ours(target):
            actions += install_into(top / SHIM_DIR, (name,), lc)
        elif write_executable(target, shim):
            actions.append(f"wrote {rel}")
        files[rel] = shim.encode()

    hooks_dir = _activate(git, Path(repo.git_dir), top, lc, actions)
    git.run("config", "gitstate.python", sys.executable)

    report = InitReport(lifecycle=lc.name, hooks_dir=hooks_dir, actions=actions)
    if commit:
        report.commit = _commit(git, top, files, lc)
        if report.commit:
            actions.append(f"committed {report.commit[:10]} (gitstate: manage with lifecycle "
                           f"'{lc.name}')")
    return report


def _activate(git: Git, git_dir: Path, top: Path, lc: Lifecycle, actions: list[str]) -> str:
    """Make git run the shims; never disable or destroy a hook the user already has."""
    configured = git.config("core.hooksPath")
    if configured and str(configured).rstrip("/") != SHIM_DIR:
        hook_dir = Path(str(configured)).expanduser()
        hook_dir = hook_dir if hook_dir.is_absolute() else top / hook_dir
        actions += install_into(hook_dir, HOOK_NAMES, lc)
        return str(hook_dir)
    default_dir = git_dir / "hooks"
    users = [p for p in default_dir.glob("*")
             if p.is_file() and not p.name.endswith(".sample") and not is_ours(p)
             and not p.name.endswith(".pre-gitstate")] if default_dir.is_dir() else []
    if users or any(is_ours(default_dir / n) for n in HOOK_NAMES):
        # The user has live hooks in .git/hooks; core.hooksPath would silently switch them
        # all off. Install beside them instead, chaining any pre-commit/commit-msg of theirs.
        actions += install_into(default_dir, HOOK_NAMES, lc)
        return str(default_dir)
    if configured is None:
        git.run("config", "core.hooksPath", SHIM_DIR)
        actions.append(f"set core.hooksPath = {SHIM_DIR}")
    return SHIM_DIR


def _write(top: Path, rel: str, data: bytes) -> None:
    from gitstate.git.atomic import safe_path, write_file
    write_file(safe_path(top, rel), data)


def _commit(git: Git, top: Path, files: dict[str, bytes], lc: Lifecycle) -> str | None:
    head = git.head()
    paths = sorted(files)
    committed = git.cat_files(f"{head}:{p}" for p in paths) if head else [None] * len(paths)
    changed = {p: files[p] for p, c in zip(paths, committed) if c != files[p]}
    if not changed:
        return None

    def prepare(parent: str | None) -> Plan:
        return Plan(changed, f"gitstate: manage this repository with lifecycle '{lc.name}'\n",
                    executable=frozenset(p for p in changed if p.startswith(SHIM_DIR + "/")),
                    with_staged=False)

    return commit_atomically(git, top, prepare, reflog="gitstate init").sha
