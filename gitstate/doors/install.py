"""`gitstate init`: make a repository managed (idempotent).

Writes the lifecycle and its protocol docs, the agent kit and the hook shims (committed under
`.githooks/`, for everyone to read), installs the shims into this clone's own hooks folder
without ever destroying a hook of the user's, and commits what it wrote (one commit, touching
nothing the user staged).

What runs as a hook is what this clone installed from the gitstate it runs, never the tracked
`.githooks/` files: a pulled change to those never runs as code here (docs/explanation/hooks.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

from gitstate.doors.humans import (
    approved_change,
    human_of,
    kept_humans,
    read_law_file,
    record_key,
    with_humans,
)
from gitstate.doors.shims import HOOK_NAMES, install_into, is_ours, render_shim, write_executable
from gitstate.errors import GitstateError, NotManaged, UsageError
from gitstate.git.atomic import Plan, commit_atomically
from gitstate.git.runner import Git
from gitstate.law.lifecycle import LIFECYCLE_PATH, SIGNERS_PATH, Lifecycle, is_law_path
from gitstate.law.load import load_lifecycle, read_lifecycle
from gitstate.law.record import Record, field
from gitstate.law.statefile import MAX_STATE_FILE_BYTES, decode
from gitstate.resources import preset_dir, presets, read_shipped

SHIM_DIR = ".githooks"
AGENT_GUIDE = "agent/README.md"


# Its plain form is the `--json` record of `gitstate init`; gitstate/schema describes it.
class InitReport(Record):
    """What `gitstate init` did: the lifecycle, the hooks folder, each action, the commit."""

    lifecycle: str | None = field(
        about="the lifecycle the repository is managed with (null on a hub: each push is judged by"
              " the lifecycle committed in its own history)")
    hooks_dir: str = field(about="where the hooks are installed")
    actions: list[str] = field([], about="what init did, line by line")
    commit: str | None = field(
        None, about="the commit that put the lifecycle in history (null: none made)")


def _top(path: str | None) -> Path:
    """The top of the work tree around `path`: a clear error outside a repository, and for a
    bare one (a hub takes `init --server`)."""
    git = Git(path or ".")
    code, out, _ = git.call("rev-parse", "--is-bare-repository")
    if code != 0:
        raise NotManaged(f"not a git repository: {Path(path or '.').resolve()}",
                         hint="run `git init` first, then `gitstate init`")
    if out.strip() == b"true":
        raise UsageError("this is a bare repository: use `gitstate init --server` on a hub")
    return Path(git.text("rev-parse", "--show-toplevel"))


def _source(lifecycle: str | None) -> tuple[str, dict[str, str], Lifecycle]:
    """(lifecycle text, {state doc name: text}, checked lifecycle) of a preset name or a
    lifecycle file."""
    if lifecycle is None or lifecycle in presets():
        return _preset(lifecycle or "haak")
    f = Path(lifecycle)
    if not f.is_file():
        raise UsageError(f"--lifecycle {lifecycle!r} is neither a lifecycle file nor a shipped "
                         f"preset; shipped presets: {', '.join(presets())}")
    text, lc = read_law_file(f, str(f))
    return text, _state_docs(f, lc), lc


def _preset(name: str) -> tuple[str, dict[str, str], Lifecycle]:
    d = preset_dir(name)
    docs = {p.name: p.read_text(encoding="utf-8") for p in sorted(d.glob("*.md"))}
    text = (d / "lifecycle.yaml").read_text(encoding="utf-8")
    return text, docs, load_lifecycle(text, name)


def _state_docs(f: Path, lc: Lifecycle) -> dict[str, str]:
    """The states' docs beside a lifecycle file (`STATE.md`), those that are files."""
    docs = {}
    for state in lc.states:
        doc = f.parent / f"{state}.md"
        if doc.is_file() and not doc.is_symlink():
            with open(doc, "rb") as fh:
                docs[doc.name] = decode(fh.read(MAX_STATE_FILE_BYTES + 1), str(doc))
    return docs


def init(path: str | None = None, lifecycle: str | None = None, *, force: bool = False,
         commit: bool = True, approved_by: str | None = None,
         humans: tuple[str, ...] = (), signing_key: str | None = None) -> InitReport:
    """Manage the repository at `path`. `signing_key`: a human's SSH public key (a line, a
    .pub file, or a private key with its .pub beside it), recorded for the first human of the
    law in protocols/allowed_signers, in the same commit."""
    top = _top(path)
    git = Git(top)
    files: dict[str, bytes | None] = {}   # None: remove
    actions: list[str] = []

    current = top / LIFECYCLE_PATH
    humans_were: list[str] | None = None   # the humans a `--human` on a managed repo replaces
    if current.is_file() and lifecycle is None:
        text, docs, lc, humans_were = _law_kept(top, current, humans, actions)
    else:
        text, docs, lc, humans = _law_chosen(git, current, lifecycle, humans, force, actions)
    if force and lifecycle is not None and current.is_file():
        _drop_stale_docs(top, current, docs, files, actions)
    _add_law(top, files, text, docs, force)
    if signing_key is not None:
        record_key(top, lc, signing_key, files, actions)
    _add_shims(top, lc, files)
    sign = _approval(git, files, approved_by, humans_were, humans, actions) if commit else False
    _write_files(top, files, lc, actions)

    hooks_dir = _activate(git, top, lc, actions)
    git.run("config", "gitstate.python", sys.executable)
    git.run("config", "gitstate.managed", "true")

    report = InitReport(lifecycle=lc.name, hooks_dir=hooks_dir, actions=actions)
    if commit:
        subject = f"gitstate: manage this repository with lifecycle '{lc.name}'" \
            if humans_were is None else f"gitstate: the humans of the law are {', '.join(humans)}"
        report.commit = _commit(git, top, files, lc, approved_by, sign, subject)
        if report.commit:
            actions.append(f"committed {report.commit[:10]} ({subject})")
    return report


def _law_kept(top: Path, current: Path, humans: tuple[str, ...], actions: list[str]
              ) -> tuple[str, dict[str, str], Lifecycle, list[str] | None]:
    """A managed repository's own lifecycle (its preset's docs when it is one), with the humans
    a `--human` names instead of its own: (text, docs, lifecycle, the humans it replaced)."""
    text, lc = read_law_file(current, LIFECYCLE_PATH)
    docs: dict[str, str] = {}
    if (top / "protocols").is_dir() and lc.name in presets():
        _, docs, _ = _source(lc.name)
    if not humans or [h.lower() for h in humans] == [h.lower() for h in lc.policies.humans]:
        return text, docs, lc, None
    humans_were = list(lc.policies.humans)
    text = with_humans(text, humans)
    lc = load_lifecycle(text, LIFECYCLE_PATH)
    actions.append(f"humans: {', '.join(humans_were) or '(none)'} -> "
                   f"{', '.join(humans)} (policies.humans in {LIFECYCLE_PATH})")
    return text, docs, lc, humans_were


def _law_chosen(git: Git, current: Path, lifecycle: str | None, humans: tuple[str, ...],
                force: bool, actions: list[str]
                ) -> tuple[str, dict[str, str], Lifecycle, tuple[str, ...]]:
    """A preset or a lifecycle file, with its humans and its line: (text, docs, lifecycle,
    humans). An existing lifecycle it would change is refused without `force`."""
    text, docs, lc = _source(lifecycle)
    if not humans and (lifecycle is None or lifecycle in presets()):
        humans = _preset_humans(git, current, actions)
    text, lc = _fitted(git, text, lc, humans, lifecycle)
    if current.is_file() and current.read_text(encoding="utf-8", errors="replace") != text \
            and not force:
        raise GitstateError(f"{LIFECYCLE_PATH} exists and differs from "
                            f"'{lifecycle}'; gitstate will not overwrite it",
                            hint="pass --force to replace it")
    return text, docs, lc, humans


def _fitted(git: Git, text: str, lc: Lifecycle, humans: tuple[str, ...],
            lifecycle: str | None) -> tuple[str, Lifecycle]:
    """The law's text with its humans and a line (this branch, when it names none)."""
    if humans:
        text = with_humans(text, humans)
    if lc.line is None:
        text = _with_line(text, _branch(git))
    if humans or lc.line is None:
        lc = load_lifecycle(text, lifecycle or "haak")
    return text, lc


def _preset_humans(git: Git, current: Path, actions: list[str]) -> tuple[str, ...]:
    """A preset's humans are a placeholder: the law's approvers are the ones kept, else this
    user's."""
    humans = kept_humans(current)
    if not humans:
        humans = (human_of(git),)
        actions.append(f"humans: {humans[0]}, from git config user.name (who may "
                       "approve gated moves; `--human NAME` names others)")
    return humans


def _add_law(top: Path, files: dict[str, bytes | None], text: str, docs: dict[str, str],
             force: bool) -> None:
    """The lifecycle, its protocol docs and the agent guide (the docs and the guide only where
    absent, unless `force`)."""
    files[LIFECYCLE_PATH] = text.encode()
    for name, doc in docs.items():
        target = top / "protocols" / name
        if force or not target.exists():
            files[f"protocols/{name}"] = doc.encode()
    if force or not (top / AGENT_GUIDE).exists():
        files[AGENT_GUIDE] = read_shipped("agent", "README.md").encode()


def _add_shims(top: Path, lc: Lifecycle, files: dict[str, bytes | None]) -> None:
    """The hook shims, but where a hook of the user's stands."""
    for name in HOOK_NAMES:
        target = top / SHIM_DIR / name
        if not target.exists() or is_ours(target):   # a hook of the user's stays theirs
            files[f"{SHIM_DIR}/{name}"] = render_shim(name, lc).encode()


def _approval(git: Git, files: dict[str, bytes | None], approved_by: str | None,
              humans_were: list[str] | None, humans: tuple[str, ...],
              actions: list[str]) -> bool:
    """What committing needs approved: a change of the humans is refused without it, changed
    shims wait for it. Whether the commit is signed as the approval."""
    if humans_were is not None:
        approved_change(*_law_changes(git, files), approved_by, humans_were, humans)
    for rel in _unapproved_shims(git, files, approved_by):
        del files[rel]   # this clone still gets current hooks; the committed ones wait
        actions.append(f"left {rel} as committed: changing it changes the law (commit it "
                       "with `gitstate init --approved-by <human>`)")
    return bool(approved_by and _law_changes(git, files)[1]) \
        and _signs_approval(git, approved_by or "")


def _write_files(top: Path, files: dict[str, bytes | None], lc: Lifecycle,
                 actions: list[str]) -> None:
    """Each file written where it differs (the shims executable), or removed."""
    for rel, content in files.items():
        target = top / rel
        if content is None:
            target.unlink(missing_ok=True)
            actions.append(f"removed {rel} (shipped with the former preset, not part of "
                           f"'{lc.name}')")
            continue
        if not target.is_file() or target.read_bytes() != content:
            if rel.startswith(SHIM_DIR + "/"):
                write_executable(target, content.decode())
            else:
                _write(top, rel, content)
            actions.append(f"wrote {rel}")


def _drop_stale_docs(top: Path, current: Path, docs: dict[str, str],
                     files: dict, actions: list[str]) -> None:
    """`init --force --lifecycle NEW` over a preset: the protocol docs the old preset shipped
    and NEW does not are removed where they are as shipped, kept (and said) where edited."""
    try:
        _, old = read_law_file(current, LIFECYCLE_PATH)
    except (OSError, GitstateError):
        return
    if old.name not in presets():
        return
    _, old_docs, _ = _source(old.name)
    for name, shipped in old_docs.items():
        rel, target = f"protocols/{name}", top / "protocols" / name
        if name in docs or not target.is_file() or target.is_symlink():
            continue
        if target.read_bytes() == shipped.encode():
            files[rel] = None   # removed with the rest, once nothing refuses the change
        else:
            actions.append(f"kept {rel}: shipped with '{old.name}' and edited since; remove it "
                           "yourself if it no longer applies")


def _activate(git: Git, top: Path, lc: Lifecycle, actions: list[str]) -> str:
    """Install the shims into the hooks folder git uses for this clone; never disable or
    destroy a hook the user already has (theirs run after gitstate's check)."""
    configured = git.config("core.hooksPath")
    tracked = top / SHIM_DIR
    if configured and str(configured).rstrip("/") == SHIM_DIR \
            and all(is_ours(p) for p in tracked.glob("*") if p.is_file()):
        # tracked files as hooks: a pulled commit could change what runs here
        git.run("config", "--unset", "core.hooksPath")
        actions.append(f"unset core.hooksPath (it pointed at the tracked {SHIM_DIR}/)")
        configured = None
    hook_dir = _hook_dir(git, top, configured)
    actions += install_into(hook_dir, HOOK_NAMES, lc, top)
    try:
        return hook_dir.relative_to(top).as_posix()
    except ValueError:
        return str(hook_dir)


def _branch(git: Git) -> str:
    """The branch the repository is being managed on (what HEAD names, born or not): the team
    line. A detached HEAD names none: `main` then."""
    from gitstate.law.grammar import is_branch_name
    code, out, _ = git.call("symbolic-ref", "--short", "-q", "HEAD")
    name = out.decode("utf-8", "replace").strip() if code == 0 else ""
    return name if is_branch_name(name) else "main"


def _with_line(text: str, branch: str) -> str:
    """The lifecycle text declaring its team line (`line: BRANCH`), after its `name:` line
    (else first): from this commit on, the line rule is in force."""
    line = (f"line: {branch}   # the team line: moves land here one by one; a merge here "
            "carries work only\n")
    lines = text.splitlines(keepends=True)
    at = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("name:")), 0)
    if at and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    return "".join(lines[:at] + [line] + lines[at:])


def _hook_dir(git: Git, top: Path, configured) -> Path:
    if configured:
        hook_dir = Path(str(configured)).expanduser()
    else:
        hook_dir = Path(git.text("rev-parse", "--git-path", "hooks"))
    return hook_dir if hook_dir.is_absolute() else top / hook_dir


def _law_changes(git: Git, files: dict[str, bytes | None]) -> tuple[Lifecycle | None, list[str]]:
    """(the law committed at HEAD, the law files this init would change), when managed."""
    head = git.head()
    if head is None:
        return None, []
    found = git.cat_batch([f"{head}:{LIFECYCLE_PATH}"])[0]
    if found is None:
        return None, []
    try:
        current = read_lifecycle(found[2], LIFECYCLE_PATH)
    except GitstateError:
        return None, []
    paths = sorted(p for p in files if is_law_path(p))
    committed = git.cat_files(f"{head}:{p}" for p in paths)
    return current, [p for p, c in zip(paths, committed) if c != files[p]]


def _unapproved_shims(git: Git, files: dict[str, bytes | None],
                      approved_by: str | None) -> list[str]:
    """Refuse, before writing anything, to commit a change of the lifecycle without approval;
    the committed shims that would change without approval are returned, to be left as they
    are (a newer gitstate still installs its own hooks in this clone)."""
    current, changed = _law_changes(git, files)
    if current is None or not changed or not current.policies.law_approval:
        return []
    humans = {h.lower() for h in current.policies.humans}
    if approved_by and approved_by.strip().lower() in humans:
        _not_an_agents_approval(git, current, changed, approved_by)
        return []
    if all(p.startswith(SHIM_DIR + "/") for p in changed):
        return changed
    raise _unapproved(current, changed, approved_by)


def _unapproved(current: Lifecycle, changed: list[str], approved_by: str | None
                ) -> GitstateError:
    named = f" ('{approved_by}' is not one of them)" if approved_by else ""
    return GitstateError(f"this would change the law ({', '.join(changed)}), which needs a "
                        f"human's approval{named}",
                        hint=f"run it as `gitstate init --approved-by <human>`, naming one of "
                             f"{', '.join(current.policies.humans)}")


def _not_an_agents_approval(git: Git, current: Lifecycle, changed: list[str],
                            approved_by: str) -> None:
    """Refuse a change of the law approved from an agent's session while no allowed_signers
    could prove the human's approval (`agent-approval`), before anything is written."""
    from gitstate.errors import Rejected
    from gitstate.law.grammar import parse_message
    from gitstate.law.movers import agent_approval, agent_session
    from gitstate.moves.principals import session_env
    head = git.head()
    found = agent_approval(current, *agent_session(session_env()), [], changed,
                           parse_message(f"init\n\nApproved-by: {approved_by}\n"),
                           lambda: git.cat_files([f"{head}:{SIGNERS_PATH}"])[0] is not None)
    if found:
        raise Rejected(found, action="init")


def _write(top: Path, rel: str, data: bytes) -> None:
    from gitstate.git.atomic import safe_path, write_file
    write_file(safe_path(top, rel), data)


def _signs_approval(git: Git, approved_by: str) -> bool:
    """Whether this change of the law is signed: where the law in force lists keys
    (protocols/allowed_signers), it must be, by a key listed for the human who approves it;
    refused before anything is written when this clone has none."""
    head = git.head()
    signers = git.cat_files([f"{head}:{SIGNERS_PATH}"])[0] if head else None
    if signers is None:
        return False
    from gitstate.git.signing import can_sign_as
    ok, have = can_sign_as(git, signers, approved_by)
    if not ok:
        raise GitstateError(f"this change of the law is approved by {approved_by}, and "
                            f"{SIGNERS_PATH} binds approvals to keys: the commit must be signed "
                            f"by a key of {approved_by}, but this clone signs with {have}; "
                            "nothing was written",
                            hint=f"{approved_by} runs it, with `git config gpg.format ssh` and "
                                 f"`git config user.signingkey` set to a key listed for "
                                 f"{approved_by} in {SIGNERS_PATH}")
    return True


def _commit(git: Git, top: Path, files: dict[str, bytes | None], lc: Lifecycle,
            approved_by: str | None, sign: bool, subject: str) -> str | None:
    head = git.head()
    paths = sorted(files)
    committed = git.cat_files(f"{head}:{p}" for p in paths) if head else [None] * len(paths)
    changed = {p: files[p] for p, c in zip(paths, committed) if c != files[p]}
    if not changed:
        return None

    def prepare(parent: str | None) -> Plan:
        trailer = f"\nApproved-by: {approved_by}\n" if approved_by else ""
        return Plan(changed, subject + "\n" + trailer,
                    executable=frozenset(p for p in changed if p.startswith(SHIM_DIR + "/")),
                    with_staged=False, sign=sign)

    return commit_atomically(git, top, prepare, reflog="gitstate init").sha
