"""A managed repository: where its law (the lifecycle) and its agents' state files are.

Light on purpose (git subprocesses, yaml): the hooks use it.
"""

from __future__ import annotations

import os

from gitstate.errors import GitstateError, InvalidFile, NotManaged
from gitstate.git.lawfiles import INDEX, cached_law, read_law
from gitstate.git.runner import Git
from gitstate.law import statefile
from gitstate.law.lifecycle import LIFECYCLE_PATH, Lifecycle
from gitstate.law.limits import LIFECYCLE_BYTES
from gitstate.law.rules import Context, FileChange, parse_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


class Managed:
    """A repository under gitstate: `top` is its work tree (None for a bare repository)."""

    def __init__(self, git: Git, top: str | os.PathLike | None, cache_dir: str = ""):
        self.git, self._top = git, top
        self.cache_dir = cache_dir   # .git/gitstate: caches that are pure speed-ups ("": none)

    @property
    def top(self) -> Path | None:
        """The work tree's top as a Path, made when first asked: the views never ask, and
        importing `pathlib` costs a read ~2 ms."""
        top = self._top
        if isinstance(top, str):
            from pathlib import Path
            top = self._top = Path(top)
        return top  # type: ignore[return-value]

    # -- the team line ------------------------------------------------------------------

    def line_ref(self) -> str | None:
        """The team line's ref when moves land there rather than on HEAD: in a worktree (or a
        clone) on another branch, or detached, where the team line exists as a local branch.
        None when HEAD is on the team line, or there is none here (moves go to HEAD)."""
        if not hasattr(self, "_line_ref"):
            self._line_ref = _elsewhere_line(self)
        return self._line_ref

    def head(self) -> str | None:
        """The commit a move decides from and a view reads: the team line's tip where moves
        land on it (`line_ref`), else HEAD."""
        first = "_line_ref" not in self.__dict__
        ref = self.line_ref()
        fresh = self.__dict__.pop("_fresh_head", None)   # HEAD as `line_ref` read it
        if ref:
            return self.git.rev(ref)
        return fresh if first else self._here[0]   # later, HEAD may have moved: read again

    @property
    def _here(self) -> tuple[str | None, str | None]:
        """(HEAD's commit, the ref HEAD names: None when detached or unborn), from one git
        process (none where the command read it: `Git.head_read`); asked again after each
        move (a move changes it)."""
        lines = list(self.git.head_read or ())
        if not lines:
            code, out, _ = self.git.call("rev-parse", "HEAD", "--symbolic-full-name", "HEAD")
            lines = out.decode("utf-8", "surrogateescape").split() if code == 0 else []
        named = lines[1] if len(lines) == 2 and lines[1].startswith("refs/") else None
        return (lines[0] if len(lines) == 2 else None), named

    @property
    def work_tree(self) -> Path:
        """`top`, for the commands that need a work tree."""
        if self.top is None:
            raise NotManaged("this command needs a work tree; this is a bare repository")
        return self.top

    # -- the law --------------------------------------------------------------------------

    def lifecycle(self, rev: str | None = "HEAD", *, index: bool = True,
                  worktree: bool = True) -> Lifecycle:
        """The lifecycle in force: as committed at `rev`, else as staged, else in the work tree."""
        memo = self.__dict__.setdefault("_laws", {})
        if rev in memo:   # a commit's law, read once per command
            return memo[rev]
        specs = (([f"{rev}:{LIFECYCLE_PATH}"] if rev else [])
                 + ([f":{LIFECYCLE_PATH}"] if index else []))
        for n, found in enumerate(self.git.cat_batch(specs)):
            if found is not None and found[1] == "blob":
                lc = cached_law(self.git, found, rev if n == 0 else INDEX, self.cache_dir)
                if n == 0 and rev and _is_commit_id(rev):
                    memo[rev] = lc
                return lc
        if worktree and self.top is not None:
            path = self.top / LIFECYCLE_PATH
            if path.is_file():
                return read_law(self.git, read_limited(path, LIFECYCLE_BYTES), None, self.top)
        raise NotManaged(f"no {LIFECYCLE_PATH} here: this repository is not managed by gitstate",
                         hint="run `gitstate init` (or `gitstate init --lifecycle PRESET`)")

    # -- agents ---------------------------------------------------------------------------

    def agents_at(self, lc: Lifecycle, rev: str | None) -> dict[str, bytes]:
        """Agent id -> state file bytes for every state file committed at `rev`."""
        if rev is None:
            return {}
        rx = lc.state_path_regex()
        head_dir = lc.state_file.split("{id}")[0]
        blobs = tree_blobs(self.git, rev, head_dir.rstrip("/"))
        found = [(m.group("id"), p) for p in blobs if (m := rx.match(p))]
        datas = self.git.cat_files(blobs[p] for _, p in found)
        return {agent: d for (agent, _), d in zip(found, datas) if d is not None}

    def agent_doc(self, agent: str, rev: str | None, lc: Lifecycle | None = None):
        """(lifecycle, path, parsed state file) of `agent` as committed at `rev`; an error that
        says how to spawn it when it is not there."""
        lc = lc or self.lifecycle(rev)
        path = lc.state_path(agent)
        data = self.git.cat_files([f"{rev}:{path}"])[0] if rev else None
        if data is None:
            raise self.unknown_agent(agent, rev, lc)
        return lc, path, statefile.parse_bytes(data, path)

    def agent_ids(self, lc: Lifecycle, rev: str | None) -> list[str]:
        """The ids of every agent with a state file committed at `rev` (no file is read)."""
        if rev is None:
            return []
        rx = lc.state_path_regex()
        head_dir = lc.state_file.split("{id}")[0]
        return [m.group("id") for p in self.git.ls_tree_paths(rev, head_dir.rstrip("/"))
                if (m := rx.match(p))]

    def unknown_agent(self, agent: str, rev: str | None, lc: Lifecycle,
                      hint: str | None = None):
        """The error for an agent with no committed state file, naming the closest known id
        (a typo) or else how to spawn it."""
        from gitstate.law.suggest import closest
        best = closest(agent, self.agent_ids(lc, rev))
        if best:
            return GitstateError(f"unknown agent '{agent}' (did you mean '{best}'?): "
                                 f"{lc.state_path(agent)} is not committed",
                                 hint=f"the agent is '{best}', or spawn '{agent}' first: "
                                      f"`gitstate spawn {agent}`")
        return GitstateError(f"unknown agent '{agent}': {lc.state_path(agent)} is not committed",
                             hint=hint or f"spawn it first: `gitstate spawn {agent}`")

    def staged_state_changes(self, lc: Lifecycle, base: str | None,
                             skip: frozenset[str] | set[str] = frozenset(),
                             staged: list[str] | None = None) -> list[FileChange]:
        """State files whose staged content differs from `base` (`staged`: git's list)."""
        rx = lc.state_path_regex()
        staged = self.git.staged_changes(base) if staged is None else staged
        paths = [p for p in staged if rx.match(p) and p not in skip]
        return self.changes_between(paths, base, None)

    def changes_between(self, paths: list[str], base: str | None,
                        target: str | None) -> list[FileChange]:
        """FileChange for each path from `base` to `target` (None as target: the index)."""
        if not paths:
            return []
        olds = self.git.cat_files(f"{base}:{p}" for p in paths) if base else [None] * len(paths)
        news = self.git.cat_files(f"{target or ''}:{p}" for p in paths)
        return [FileChange(p, o, n) for p, o, n in zip(paths, olds, news)]


def read_limited(path: Path, limit: int) -> bytes:
    """A file's bytes, or its first `limit + 1` (enough for `decode` to say it is too large):
    a 20 GB file in the work tree is refused without being read."""
    with open(path, "rb") as fh:
        return fh.read(limit + 1)


def open_managed(path: str | None = None, *, bare_ok: bool = False,
                 command: bool = False) -> Managed:
    """The repository around `path`, with any commit interrupted by a crash finished first
    (when git's index lock keeps it from finishing, reading goes on, and a move says so).
    `bare_ok`: a bare repository (a hub, a mirror) will do too, for commands that read only
    history (`verify`, the views: they read its HEAD, the hub's team line); `command`: a move's."""
    from gitstate.git.runner import locate_repo
    try:
        git, top, gdir = locate_repo(path, command=command)
    except NotManaged:
        # asked only where there is no work tree: a view in one pays nothing for it
        git = Git(path)
        code, out, _ = git.call("rev-parse", "--is-bare-repository", "--absolute-git-dir")
        lines = out.decode("utf-8", "surrogateescape").splitlines()
        if code == 0 and len(lines) == 2 and lines[0] == "true":
            if bare_ok:
                return Managed(git, None, f"{lines[1]}/gitstate")
            raise NotManaged(f"{lines[1]} is a bare repository (a hub): it is read here, and "
                             "moved from a clone", hint="read it with `gitstate -C HUB roster` "
                             "(status, log, vacancies, inbox, show, situations, verify, serve, "
                             "site); move an agent in a clone of it, with `--push`") from None
        raise
    if os.path.isfile(os.path.join(gdir, "gitstate", "pending.json")):   # atomic's journal
        from pathlib import Path

        from gitstate.git.atomic import IndexLocked, recover, repo_lock
        try:
            with repo_lock(Path(gdir)):
                recover(git, Path(top), Path(gdir))
        except IndexLocked as exc:
            import sys
            print(f"gitstate: warning: {exc}", file=sys.stderr)
    if os.path.isfile(os.path.join(gdir, "gitstate", "follow.json")):   # git/line.py's
        from gitstate.git.line import finish_following
        finish_following(git, top, gdir)
    return Managed(git, top, os.path.join(gdir, "gitstate"))


def tree_blobs(git: Git, rev: str, prefix: str = "") -> dict[str, str]:
    """path -> blob id of every file under `prefix` in `rev`, from one `git ls-tree -r`.
    (Asking git for `rev:path` of each file instead makes it scan the entries of the file's
    folder once per file: N lookups in a folder of N agents cost N * N.)"""
    return _listed(git, ["ls-tree", "-r", "-z", rev], prefix,   # "<mode> blob <id>"
                   lambda f: f[2] if f[1] == "blob" else None)


def index_blobs(git: Git, prefix: str = "") -> dict[str, str]:
    """path -> blob id of each file under `prefix` in the index (merged), by `git ls-files -s`."""
    return _listed(git, ["ls-files", "-s", "-z"], prefix,   # "<mode> <id> <stage>"
                   lambda f: f[1] if f[2] == "0" and f[0] != "160000" else None)  # 160000: no file


def _listed(git: Git, args: list[str], prefix: str, blob_of) -> dict[str, str]:
    """path -> blob id from a `-z` listing whose entries read "<three fields>\t<path>"."""
    found = {}
    out = git.run(*args, *(["--", prefix] if prefix else []))
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")
        fields = meta.split()
        if tab and len(fields) == 3 and (blob := blob_of(fields)) is not None:
            found[path] = blob
    return found


def on_first_parent_line(git: Git, old: str, new: str) -> bool:
    """Is `old` on the first-parent line of `new` (`new` itself included)? The line that a
    branch's history is: a fast-forward onto a commit whose first parents lead elsewhere
    (git's merge of the old tip as a second parent) rewrites it."""
    if old == new:
        return True
    out = git.text("rev-list", "--first-parent", "--parents", new, "--not", old)
    last = out.rsplit("\n", 1)[-1].split()
    return len(last) > 1 and last[1] == old


def team_branch(git: Git, lc: Lifecycle) -> str | None:
    """The local branch that holds the team line: the one a clone names for its copy (`git
    config gitstate.teamBranch`), else the one the law declares (`line:`); None where the law
    declares none (the line rule is not in force)."""
    if lc.line is None:
        return None
    return git.config("gitstate.teamBranch") or lc.line


def team_ref(git: Git, rev: str | None, *, local: bool = True) -> str | None:
    """The team line's ref by the law in force at `rev`, or None where that law declares
    none. `local`: a clone's name for its copy counts (`team_branch`); a hub reads the law's."""
    if not rev:
        return None
    try:
        lc = Managed(git, None).lifecycle(rev, index=False, worktree=False)
    except GitstateError:
        return None
    branch = team_branch(git, lc) if local else lc.line
    return f"refs/heads/{branch}" if branch else None


def _elsewhere_line(repo: Managed) -> str | None:
    """`Managed.line_ref`: the team branch by `git config gitstate.teamBranch`, else by the
    law committed at HEAD; its ref when it exists here and HEAD is not on it."""
    git = repo.git
    head, named = repo._here
    repo.__dict__["_fresh_head"] = head
    branch = git.config("gitstate.teamBranch")
    if not branch and head:
        try:
            branch = repo.lifecycle(head, index=False, worktree=False).line
        except GitstateError:
            return None
    if not branch or named == f"refs/heads/{branch}":
        return None
    ref = f"refs/heads/{branch}"
    return ref if git.rev(ref) else None


def _is_commit_id(rev: str) -> bool:
    return len(rev) in (40, 64) and not rev.strip("0123456789abcdef")


def on_team_line(git: Git, lc: Lifecycle) -> bool:
    """Is the branch HEAD names the team line?"""
    branch = team_branch(git, lc)
    if branch is None:
        return False
    code, out, _ = git.call("symbolic-ref", "-q", "HEAD")
    return code == 0 and out.decode("utf-8", "replace").strip() == f"refs/heads/{branch}"


def parse_state_or_none(data: bytes | None, where: str,
                        memo: dict | None = None) -> statefile.StateDoc | None:
    """A state file parsed, or None if it cannot be; `memo` as `rules.parse_state` keeps it
    (the files a judgement parsed already are not parsed again)."""
    if data is None:
        return None
    try:
        return parse_state(data, where, memo)
    except InvalidFile:
        return None


class GitContext(Context):
    """The commit being judged, as git sees it: `tree` is its commit (None: the index, for a
    commit being made), `overrides` files about to be written on top of the index. `memo`:
    the parsed state files the judgement keeps (`rules.validate`'s), from which `agents`
    takes what was parsed already."""

    def __init__(self, git: Git, base: str | None, *, tree: str | None = None,
                 overrides: dict[str, bytes] | None = None, lc: Lifecycle | None = None,
                 now: float | None = None, memo: dict | None = None):
        self.git, self._parsed, self._now = git, memo, now
        self._base_name, self._resolved, self._tree = base, False, tree
        self._overrides, self._lc = overrides or {}, lc
        self._agents: dict | None = None
        self._answers: dict = {}   # what git said about revisions, for this judgement

    @property
    def base(self) -> str | None:
        if not self._resolved:
            self._base = self.git.rev(self._base_name) if self._base_name else None
            self._resolved = True
        return self._base

    def commit(self, rev: str) -> str | None:   # (asked per agent with a checkpoint: once)
        return self._answers[rev] if rev in self._answers else \
            self._answers.setdefault(rev, self.git.rev(rev))

    def is_ancestor(self, a: str, b: str) -> bool:
        if (a, b) not in self._answers:
            self._answers[(a, b)] = self.git.ok("merge-base", "--is-ancestor", a, b)
        return self._answers[(a, b)]

    def now(self) -> float:
        if self._now is None:
            if self._tree:
                self._now = float(self.git.text("log", "-1", "--format=%ct", self._tree))
            else:
                import time
                self._now = time.time()
        return self._now

    def committed(self) -> float:
        return self.now() if self._tree else self.git.committer_time()

    def entered(self, agent: str, state: str) -> float | None:
        found = self.entering_commit(agent, state)
        return found[1] if found else None

    def entering_commit(self, agent: str, state: str) -> tuple[str, float] | None:
        """(commit, committer time) of the commit by which `agent` entered `state`, by the tags
        of the history before the commit being judged."""
        from gitstate.law.grammar import subject_tag
        if not self.base:
            return None
        out = self.git.text("log", "--first-parent", "--format=%H %ct %s", "-i",
                            f"--grep=^@{agent}:", self.base, "--")
        entered = None
        for line in out.split("\n"):
            sha, _, rest = line.partition(" ")
            ct, _, subject = rest.partition(" ")
            tag = subject_tag(subject)
            if tag is None or tag[0] != agent or not ct.isdigit():
                continue
            if tag[1] != state:
                break
            entered = (sha, float(ct))
        return entered

    def base_file(self, path: str) -> bytes | None:
        return self.git.cat_files([f"{self.base}:{path}"])[0] if self.base else None

    def tree_file(self, path: str) -> bytes | None:
        if path in self._overrides:
            return self._overrides[path]
        return self.git.cat_files([f"{self._tree or ''}:{path}"])[0]

    def tree_mode(self, path: str) -> str | None:   # (one process: asked of a freeze-state)
        args = ["ls-tree", "-r", "-z", self._tree] if self._tree else ["ls-files", "-s", "-z"]
        return "100644" if path in self._overrides else \
            _listed(self.git, args, path, lambda f: f[0]).get(path)

    def agents(self) -> dict[str, dict]:
        if self._agents is None:
            lc = self._lc or Managed(self.git, None).lifecycle(
                self._tree or self._base_name, worktree=False)
            rx = lc.state_path_regex()
            self._agents = self._new_agents(rx, self._read_agents(lc, rx))
        return self._agents

    def _read_agents(self, lc: Lifecycle, rx) -> dict[str, dict]:
        head_dir = lc.state_file.split("{id}")[0].rstrip("/")
        blobs = (tree_blobs(self.git, self._tree, head_dir) if self._tree
                 else index_blobs(self.git, head_dir))
        ids = {p: m.group("id") for p in blobs if (m := rx.match(p))}
        found = {}
        for (path, agent), data in zip(ids.items(), self.git.cat_files(blobs[p] for p in ids)):
            doc = parse_state_or_none(self._overrides.get(path, data), path, self._parsed)
            if doc is not None:
                found[agent] = doc.front
        return found

    def _new_agents(self, rx, found: dict[str, dict]) -> dict[str, dict]:
        for path, data in self._overrides.items():
            if (m := rx.match(path)) and m.group("id") not in found:
                doc = parse_state_or_none(data, path)
                if doc is not None:
                    found[m.group("id")] = doc.front
        return found
