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
from pathlib import Path

from gitstate.errors import GitstateError, Rejected
from gitstate.git.atomic import Plan, Result, safe_path, write_file
from gitstate.git.carry import changes, stage
from gitstate.git.push import UNLANDED, Landing
from gitstate.git.repo import Managed
from gitstate.git.runner import Git, zero_like
from gitstate.git.upstream import Upstream
from gitstate.law import statefile
from gitstate.law.grammar import parse_message
from gitstate.law.statekeys import KEYS, MOVE

_KEYS_THE_MOVE_SETS = tuple(k.name for k in KEYS if MOVE in k.by)   # law/statekeys.py


class Unlanded:
    """One commit to replay: where it came from, and what it moves."""
    __slots__ = ("sha", "parent", "source", "subject", "message", "paths", "agent", "state",
                 "path", "signed", "kind", "record", "landing", "result", "remake")

    def __init__(self, sha: str, parent: str | None, source: str, subject: str, message: str,
                 paths: dict[str, tuple[str, str | None]], *, signed: bool = False) -> None:
        self.sha, self.parent, self.subject, self.message = sha, parent, subject, message
        self.source = source                  # the branch it was found on
        self.paths = paths
        self.signed = signed
        self.agent: str | None = None         # the agent whose state file it changes (a move)
        self.state: str | None = None         # its [STATE:x]
        self.path: str | None = None          # that agent's state file
        self.kind = "work"                    # transition | spawn | gated | work
        self.record: dict = {}
        self.landing: Landing | None = None   # how it landed, when it was pushed
        self.result: Result | None = None     # the commit made again (or landed)
        self.remake: Callable[[], Result] | None = None   # makes it again on HEAD (else: replayed)

    def plan(self, git: Git, sha: str) -> Plan:
        """The plan of the move as made again (its commit `sha`), as a move's plan records it."""
        files: dict[str, bytes | None] = {}
        info: dict = {"agent": self.agent, "to": self.state, "path": self.path, "from": None}
        if self.path:
            files[self.path] = git.cat_files([f"{sha}:{self.path}"])[0]
            old = git.cat_files([f"{self.parent}:{self.path}"])[0] if self.parent else None
            info["from"] = _state(old, self.path)
        return Plan(files, self.message, info)

    def text(self) -> str | None:
        _, found, text = self.subject.partition(f"[STATE:{self.state}]")
        return (text.strip() or None) if found else None

    def body(self) -> str:
        return parse_message(self.message).body

    def sets(self, git: Git) -> dict:
        """The keys the commit set in its state file besides those every move sets."""
        if not self.path or not self.parent:
            return {}
        old, new = git.cat_files([f"{self.parent}:{self.path}", f"{self.sha}:{self.path}"])
        try:
            before, after = _front(old, self.path), _front(new, self.path)
        except GitstateError:
            return {}
        return {k: v for k, v in after.items()
                if k not in _KEYS_THE_MOVE_SETS and before.get(k) != v}


def _state(data: bytes | None, path: str) -> str | None:
    try:
        s = statefile.parse_bytes(data, path).state if data else None
    except GitstateError:
        return None
    return s if isinstance(s, str) else None


def _front(data: bytes | None, path: str) -> dict:
    return statefile.parse_bytes(data, path).front if data else {}


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
        for sha in _unseen(_ahead(git, up, source, tipref), seen):
            parents = git.text("rev-list", "--parents", "-n1", sha).split()[1:]
            if len(parents) > 1:
                merges.append(sha)
                continue
            found.append(_read(git, rx, sha, parents[0] if parents else None, source))
    return found, merges


def _ahead(git: Git, up: Upstream, source: str, tipref: str) -> list[str]:
    """The commits of `tipref` the upstream has not got, oldest first; of a side branch, its
    tip only: it holds one move (its parents landed, or are kept elsewhere)."""
    limit = ("-n1",) if source != up.branch else ()
    return git.text("rev-list", "--reverse", "--topo-order", *limit, tipref, "--not",
                    up.tracking).split()


def _unseen(shas: list[str], seen: set[str]) -> list[str]:
    """`shas` not in `seen` (which takes them), in order."""
    fresh = [sha for sha in dict.fromkeys(shas) if sha not in seen]
    seen.update(fresh)
    return fresh


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
        _as_move(git, u, msg, moved)
    return u


def _as_move(git: Git, u: Unlanded, msg, moved: list[str]) -> None:
    """`u` read as a move of the agent its message names, in the state file it moves."""
    u.agent, u.state = msg.prefix, msg.tag
    u.path = next((p for p in moved if f"/{u.agent}/" in f"/{p.lower()}"), moved[0])
    u.kind = _kind(git, u, bool(msg.trailers) or len(moved) > 1)


def _kind(git: Git, u: Unlanded, gated: bool) -> str:
    if gated or u.signed:
        return "gated"          # an approval, a hand-over: not decided again here
    if u.parent is None or git.cat_files([f"{u.parent}:{u.path}"])[0] is None:
        return "spawn"
    return "transition"


def left_by_push(git: Git, top: Path, head: str,
                  todo: list[Unlanded]) -> dict[str, tuple[Unlanded, bool]]:
    """The uncommitted files that are a kept move's own work: path -> that move (from a side
    branch), and whether the file was staged. A move `--push` could not land leaves its work
    staged on the branch's tip; each such file, staged or not, whose content is byte for byte
    the move's version of it, and whose index entry is that version or the branch's, is the
    move's, and goes with it. Anything else (a file edited since, a change of another path)
    is the user's."""
    paths = _side_paths(todo)
    if not paths:
        return {}
    names = [f":(literal){p}" for p in paths]
    at_head = entries(git, names, "ls-tree", "-z", head)
    index = entries(git, names, "ls-files", "-s", "-z")
    on_disk = _hashed(git, top, list(paths))
    found: dict[str, tuple[Unlanded, bool]] = {}
    for p, u in paths.items():
        mode, blob = u.paths[p]
        mine = (mode, blob) if blob else None
        if _as_left(top, p, blob, mine, at_head.get(p), index.get(p), on_disk.get(p)):
            found[p] = (u, index.get(p) != at_head.get(p))   # uncommitted, and the move's
    return found


def _side_paths(todo: list[Unlanded]) -> dict[str, Unlanded]:
    """path -> the first move from a side branch that changes it."""
    paths: dict[str, Unlanded] = {}
    for u in todo:
        for p in u.paths if u.source.startswith(UNLANDED) else ():
            paths.setdefault(p, u)
    return paths


def _as_left(top: Path, p: str, blob: str | None, mine: tuple | None, at_head: tuple | None,
             index: tuple | None, on_disk: str | None) -> bool:
    """Whether the path is uncommitted and still as the move left it."""
    if index not in (at_head, mine):
        return False                        # staged as something else
    if on_disk != blob or (blob is None and os.path.lexists(top / p)):
        return False                        # not the move's version in the work tree
    return index != at_head or at_head != mine


def entries(git: Git, names: list[str], *args: str) -> dict[str, tuple[str, str]]:
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
    files = [p for p in paths if _regular(top / p)]
    if not files or any("\n" in p for p in files):
        return {}
    hashed = git.text("hash-object", "--stdin-paths",
                      input="".join(f"{p}\n" for p in files).encode()).split()
    return dict(zip(files, hashed))


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def leave_as_found(git: Git, top: Path, before: str, todo: list[Unlanded],
                    found: dict[str, tuple[Unlanded, bool]]) -> None:
    """A kept move's work found uncommitted is left as it was found (staged, as `--push`
    left it, or not), where the branch's new tip has not changed that file; elsewhere it is
    on the move's side branch only."""
    paths = _kept_paths(todo, found)
    if not paths:
        return
    same = _unchanged_since(git, before, paths)
    versions = {p: (found[p][1], found[p][0].paths[p]) for p in same}
    stage(git, top, {p: v for p, (staged, v) in versions.items() if staged})
    _write_back(git, top, {p: v for p, (staged, v) in versions.items() if not staged})
    git.run("update-index", "-q", "--refresh", check=False)


def _kept_paths(todo: list[Unlanded], found: dict[str, tuple[Unlanded, bool]]) -> list[str]:
    """The found paths whose move was kept aside (not landed), sorted."""
    kept = {id(u) for u in todo if u.record.get("outcome") in ("illegal", "kept")}
    return sorted(p for p, (u, _) in found.items() if id(u) in kept)


def _unchanged_since(git: Git, before: str, paths: list[str]) -> list[str]:
    """The paths neither dirty nor changed between `before` and the branch's tip."""
    head = git.head() or before
    dirty = set(git.text("diff", "--name-only", "-z", "HEAD").split("\0"))
    return [p for p in paths
            if p not in dirty and entry(git, head, p) == entry(git, before, p)]


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
    staged = [p for p in _names(git, "diff", "--cached", "--name-only", "-z", head)
              if p not in found]
    touched = _touched(git, head, tip, todo)
    dirty = set(_names(git, "diff", "--name-only", "-z")) | set(staged)
    if touched:   # untracked (or ignored) files the replay would write over
        dirty |= set(_names(git, "ls-files", "-o", "-z", "--",
                            *(f":(literal){p}" for p in touched)))
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


def _names(git: Git, *args: str) -> list[str]:
    return [p for p in git.text(*args).split("\0") if p]


def _touched(git: Git, head: str, tip: str, todo: list[Unlanded]) -> set[str]:
    """The paths the replay would change: the upstream's since `head`, and the moves'."""
    touched = set(changes(git, head, tip)) if head != tip else set()
    for u in todo:
        touched |= set(u.paths)
    return touched


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
    side = u.source if u.source.startswith(UNLANDED) else _new_side(git, u)
    u.record.update(outcome=outcome, reason=why, rule=rule,
                    kept=side.removeprefix("refs/heads/"))


def _new_side(git: Git, u: Unlanded) -> str:
    """A side branch of its own for `u` (the first free `<agent>-<n>`), pointing at it."""
    side = free_side(git, u.agent or "work")
    git.run("update-ref", side, u.sha, zero_like(u.sha), env={"GITSTATE_JUDGED": u.sha})
    return side


def free_side(git: Git, name: str) -> str:
    """The first side branch `gitstate/unlanded/<name>-<n>` that does not exist."""
    n = 1
    while git.rev(f"{UNLANDED}/{name}-{n}"):
        n += 1
    return f"{UNLANDED}/{name}-{n}"


def rule_of(exc: Rejected) -> str | None:
    return str(exc.violations[0].rule) if exc.violations else None
