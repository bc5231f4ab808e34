"""What `gitstate sync` takes (docs/explanation/landing.md): this branch's commits the upstream has
not got and the moves kept on the side branches `gitstate/unlanded/*`; and what `--push` left
uncommitted when a move did not land (its work, staged on the branch's tip), which is that
move's and goes with it. Any other uncommitted change the replay would touch stops it first.
Also the branch brought to the upstream's tip (`fetch_tip`, `reset_keep`) and a move that
cannot be made again kept on a side branch (`keep`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gitstate.errors import GitstateError, Rejected
from gitstate.git.atomic import Result, safe_path, write_file
from gitstate.git.carry import changes, stage
from gitstate.git.push import UNLANDED, Landing
from gitstate.git.repo import Managed
from gitstate.git.runner import Git, zero_like
from gitstate.git.upstream import Upstream
from gitstate.law.grammar import parse_message


@dataclass
class Unlanded:
    """One commit to replay: where it came from, and what it moves."""

    sha: str
    parent: str | None
    source: str                       # the branch it was found on
    subject: str
    message: str
    paths: dict[str, tuple[str, str | None]]
    agent: str | None = None          # the agent whose state file it changes (a move)
    state: str | None = None          # its [STATE:x]
    path: str | None = None           # that agent's state file
    signed: bool = False
    kind: str = "work"                # transition | spawn | gated | work
    record: dict = field(default_factory=dict)
    landing: Landing | None = None    # how it landed, when it was pushed
    result: Result | None = None      # the commit made again (or landed)
    remake: Callable[[], Result] | None = None   # makes it again on HEAD (else: replayed)


def find_unlanded(repo: Managed, up: Upstream, head: str,
              sides: list[str]) -> tuple[list[Unlanded], list[str]]:
    """This branch's commits the upstream has not got, then each side branch's move; and
    the merges among them (not replayed: their parents are)."""
    git = repo.git
    lc = repo.lifecycle(head)
    rx = lc.state_path_regex()
    seen: set[str] = set()
    found, merges = [], []
    for source, tipref in [(up.branch, head)] + [(s, s) for s in sides]:
        # a side branch holds one move, its tip (its parents landed, or are kept elsewhere)
        limit = ("-n1",) if source != up.branch else ()
        for sha in git.text("rev-list", "--reverse", "--topo-order", *limit, tipref, "--not",
                            up.tracking).split():
            if sha in seen:
                continue
            seen.add(sha)
            parents = git.text("rev-list", "--parents", "-n1", sha).split()[1:]
            if len(parents) > 1:
                merges.append(sha)
                continue
            found.append(_read(git, rx, sha, parents[0] if parents else None, source))
    return found, merges


def _read(git: Git, rx, sha: str, parent: str | None, source: str) -> Unlanded:
    raw = git.run("cat-file", "commit", sha)
    header, _, body = raw.partition(b"\n\n")
    message = body.decode("utf-8", "surrogateescape")
    msg = parse_message(message)
    paths = changes(git, parent, sha)
    u = Unlanded(sha, parent, source, msg.subject, message, paths,
                 signed=any(ln.startswith(b"gpgsig") for ln in header.split(b"\n")))
    moved = [p for p in paths if rx.match(p)]
    if msg.tag and msg.prefix and moved:
        u.agent, u.state = msg.prefix, msg.tag
        u.path = next((p for p in moved if f"/{u.agent}/" in f"/{p.lower()}"), moved[0])
        if msg.trailers or u.signed or len(moved) > 1:
            u.kind = "gated"          # an approval, a hand-over: not decided again here
        elif parent is None or git.cat_files([f"{parent}:{u.path}"])[0] is None:
            u.kind = "spawn"
        else:
            u.kind = "transition"
    return u


def left_by_push(git: Git, top: Path, head: str,
                  todo: list[Unlanded]) -> dict[str, tuple[Unlanded, bool]]:
    """The uncommitted files that are a kept move's own work: path -> that move (from a side
    branch), and whether the file was staged. A move `--push` could not land leaves its work
    staged on the branch's tip; each such file, staged or not, whose content is byte for byte
    the move's version of it, and whose index entry is that version or the branch's, is the
    move's, and goes with it. Anything else (a file edited since, a change of another path)
    is the user's."""
    paths: dict[str, Unlanded] = {}
    for u in todo:
        if u.source.startswith(UNLANDED):
            for p in u.paths:
                paths.setdefault(p, u)
    if not paths:
        return {}
    names = [f":(literal){p}" for p in paths]
    at_head = _entries(git, names, "ls-tree", "-z", head)
    index = _entries(git, names, "ls-files", "-s", "-z")
    on_disk = _hashed(git, top, list(paths))
    found: dict[str, tuple[Unlanded, bool]] = {}
    for p, u in paths.items():
        mode, blob = u.paths[p]
        mine = (mode, blob) if blob else None
        if index.get(p) not in (at_head.get(p), mine):
            continue                        # staged as something else
        if on_disk.get(p) != blob or (blob is None and os.path.lexists(top / p)):
            continue                        # not the move's version in the work tree
        if index.get(p) != at_head.get(p) or at_head.get(p) != mine:
            found[p] = (u, index.get(p) != at_head.get(p))   # uncommitted, and the move's
    return found


def _entries(git: Git, names: list[str], *args: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob) of `names` as `git ls-tree` or `git ls-files -s` lists them."""
    out = git.run(*args, "--", *names).decode("utf-8", "surrogateescape")
    got = {}
    for rec in filter(None, out.split("\0")):
        meta, _, path = rec.partition("\t")
        fields = meta.split()
        got[path] = (fields[0], fields[2] if args[0] == "ls-tree" else fields[1])
    return got


def _hashed(git: Git, top: Path, paths: list[str]) -> dict[str, str]:
    """path -> the blob of the work tree's file, for each of `paths` that is a regular file."""
    files = [p for p in paths if (top / p).is_file() and not (top / p).is_symlink()]
    hashed = git.text("hash-object", "--stdin-paths",
                      input="".join(f"{p}\n" for p in files).encode()).split() \
        if files and not any("\n" in p for p in files) else []
    return dict(zip(files, hashed))


def leave_as_found(git: Git, top: Path, before: str, todo: list[Unlanded],
                    found: dict[str, tuple[Unlanded, bool]]) -> None:
    """A kept move's work found uncommitted is left as it was found (staged, as `--push`
    left it, or not), where the branch's new tip has not changed that file; elsewhere it is
    on the move's side branch only."""
    kept = {id(u) for u in todo if u.record.get("outcome") in ("illegal", "kept")}
    paths = sorted(p for p, (u, _) in found.items() if id(u) in kept)
    if not paths:
        return
    head = git.head() or before
    dirty = set(git.text("diff", "--name-only", "-z", "HEAD").split("\0"))
    same = [p for p in paths if p not in dirty and entry(git, head, p) == entry(git, before, p)]
    stage(git, top, {p: found[p][0].paths[p] for p in same if found[p][1]})
    _write_back(git, top, {p: found[p][0].paths[p] for p in same if not found[p][1]})
    git.run("update-index", "-q", "--refresh", check=False)


def _write_back(git: Git, top: Path, files: dict[str, tuple[str, str | None]]) -> None:
    """Each path's version (mode, blob; None: no file) written in the work tree only."""
    for p, (mode, blob) in files.items():
        target = safe_path(top, p)
        if blob is None:
            target.unlink(missing_ok=True)
        else:
            write_file(target, git.run("cat-file", "blob", blob), executable=mode == "100755")


def entry(git: Git, rev: str, path: str) -> str:
    return git.text("ls-tree", rev, "--", f":(literal){path}")


def refuse_dirty(git: Git, head: str, tip: str, todo: list[Unlanded],
                  found: set[str]) -> None:
    """Nothing is done when the replay would touch a file with uncommitted changes (or when
    anything is staged: it would ride along with a replayed commit); the `found` work of the
    kept moves is theirs, and goes with them."""
    staged = git.text("diff", "--cached", "--name-only", "-z", head).split("\0")
    staged = [p for p in staged if p and p not in found]
    touched = set(changes(git, head, tip)) if head != tip else set()
    for u in todo:
        touched |= set(u.paths)
    dirty = {p for p in git.text("diff", "--name-only", "-z").split("\0") if p} | set(staged)
    if touched:   # untracked (or ignored) files the replay would write over
        out = git.text("ls-files", "-o", "-z", "--", *(f":(literal){p}" for p in touched))
        dirty |= {p for p in out.split("\0") if p}
    hit = sorted((dirty & touched) - found)
    if hit:
        raise GitstateError(f"uncommitted changes in {', '.join(hit[:5])}, which the replay "
                            "would change; nothing was done",
                            hint="commit them, or put them away (`git stash -u`), then run "
                                 "`gitstate sync` again")
    if staged:
        raise GitstateError(f"{len(staged)} file(s) are staged ({', '.join(staged[:3])}); "
                            "sync replays commits and would take them along, so nothing was done",
                            hint="commit them (`git commit`) or unstage them (`git restore "
                                 "--staged`), then run `gitstate sync` again")


def fetch_tip(git: Git, up: Upstream) -> str:
    code, _, err = git.call("fetch", "--quiet", "--no-tags", up.remote,
                            f"+{up.ref}:{up.tracking}")
    tip = git.rev(up.tracking)
    if code != 0 or tip is None:
        raise GitstateError(f"could not fetch {up.name}: "
                            f"{err.decode('utf-8', 'replace').strip() or 'it does not exist'}; "
                            "nothing was done", hint="is the hub reachable? (`git fetch`)")
    return tip


def reset_keep(git: Git, rev: str) -> None:
    git.run("update-index", "-q", "--refresh", check=False)
    code, _, err = git.call("reset", "-q", "--keep", rev)
    if code != 0:
        raise GitstateError(f"could not move the branch onto {rev[:10]}: "
                            f"{err.decode('utf-8', 'replace').strip()}")


def keep(git: Git, top: Path, u: Unlanded, head: str | None, why: str, rule: str | None,
          outcome: str) -> None:
    """`u` stays on a side branch (its own, when it came on one); nothing is staged."""
    if head and git.head() != head:
        reset_keep(git, head)
    side = u.source
    if not u.source.startswith(UNLANDED):
        n = 1
        name = u.agent or "work"
        while git.rev(f"{UNLANDED}/{name}-{n}"):
            n += 1
        side = f"{UNLANDED}/{name}-{n}"
        git.run("update-ref", side, u.sha, zero_like(u.sha), env={"GITSTATE_JUDGED": u.sha})
    u.record.update(outcome=outcome, reason=why, rule=rule,
                    kept=side.removeprefix("refs/heads/"))


def rule_of(exc: Rejected) -> str | None:
    return str(exc.violations[0].rule) if exc.violations else None
