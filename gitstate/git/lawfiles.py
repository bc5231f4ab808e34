"""The one reader of the law's files: the lifecycle's agents folder (`policies.agents_from`)
at a revision, in the index or in the work tree, merged into the lifecycle by
`gitstate.law.agents`. Every door that reads a law reads it through `with_agents`.

A revision's folder costs one `cat-file` (its tree); its files are parsed once per tree and
kept under `.git/gitstate` (a hook then imports no PyYAML). `verify` carries each commit's
listing on from its parent's with the commit's changes, and starts no process for it."""

from __future__ import annotations

import os

from gitstate.errors import InvalidFile
from gitstate.git.cache import load, load_lifecycle_cached, store
from gitstate.git.runner import Git
from gitstate.law.agents import agent_file, merged, merged_parsed, parsed
from gitstate.law.lifecycle import LIFECYCLE_PATH, Lifecycle
from gitstate.law.limits import STATE_FILE_BYTES
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import Violation

INDEX = ""   # `rev` for the staged files

_PARSED: dict[tuple, dict] = {}    # a folder's listing ((path, blob) pairs) -> its parsed files
_LISTED: dict[tuple, tuple] = {}   # (commit, folder) -> listing, as verify carries it on


def with_agents(git: Git, lc: Lifecycle, rev: str | None, top: str | os.PathLike | None = None,
                strict: bool = True, cache_dir: str | None = None) -> Lifecycle:
    """The law whose lifecycle is `lc`, as `rev` holds it (a revision, INDEX for the staged
    files, None for the work tree at `top`). A lifecycle without `agents_from` costs nothing;
    a malformed agent file is InvalidFile naming its file and line (not `strict`: left out)."""
    folder = lc.policies.agents_from
    if not folder:
        return lc
    if rev is None:
        return merged(lc, _worktree(top or ".", folder), strict)
    tree, listing = None, _LISTED.get((rev, folder))
    if listing is None:
        tree, listing = _listing(git, folder, rev)
        if len(rev) in (40, 64) and not rev.strip("0123456789abcdef"):   # a commit id: for good
            _LISTED[(rev, folder)] = listing
    return merged_parsed(lc, _parsed(git, listing, tree, cache_dir), strict)


def cached_law(git: Git, found: tuple, rev: str | None, cache_dir: str | None) -> Lifecycle:
    """The law of a lifecycle blob `found` ((blob id, type, content), as `cat_batch` says)
    that `rev` holds: the lifecycle kept by its blob id, with its agent files."""
    return with_agents(git, load_lifecycle_cached(found[2], found[0], LIFECYCLE_PATH, cache_dir),
                       rev, cache_dir=cache_dir)


def read_law(git: Git, data: bytes, rev: str | None, top: str | os.PathLike = ".") -> Lifecycle:
    """The law whose lifecycle's bytes are `data`, checked in full (never kept: one being
    committed, or the work tree's of `init --no-commit`), as `rev` holds it (INDEX: staged;
    None: the work tree at `top`)."""
    from gitstate.law.load import read_lifecycle  # PyYAML, and every check
    return with_agents(git, read_lifecycle(data, LIFECYCLE_PATH), rev, top)


def judged_law(git: Git, lc: Lifecycle, rev: str, commit, problem: Violation | None
               ) -> tuple[Lifecycle, Violation | None]:
    """For verify: (the law `commit` is judged by, `lc` with its agent files at `rev`, its
    parent; the problem of the law it leaves: `problem`, else that of an agent file it
    changes). `commit` has `sha` and `changes` ((path, old blob, new blob, mode) each)."""
    folder = lc.policies.agents_from
    if not folder:
        return lc, problem
    law = with_agents(git, lc, rev, strict=False)
    new = {p: b for p, _o, b, m in commit.changes if agent_file(lc, p) and m != "160000"}
    before = _LISTED.get((rev, folder))
    if before is not None and commit.parents[:1] == [rev]:   # its changes are against `rev`
        if len(_LISTED) > 200_000:   # (a long history: the next commits ask git again)
            _LISTED.clear()
        _LISTED[(commit.sha, folder)] = _carried(before, new)
    if problem is None and any(new.values()):
        problem = _agent_problem(git, lc, new)
    return law, problem


def _carried(before: tuple, new: dict[str, str]) -> tuple:
    """A folder's listing at a commit: its parent's with the commit's changes."""
    listing = dict(before)
    listing.update(new)
    return tuple(sorted((p, b) for p, b in listing.items() if b))


def _agent_problem(git: Git, lc: Lifecycle, new: dict[str, str]) -> Violation | None:
    try:
        merged_parsed(lc, _parsed(git, tuple((p, b) for p, b in new.items() if b)))
    except InvalidFile as exc:
        return Violation(getattr(exc, "rule", Rule.LIFECYCLE), "this commit leaves an "
                         f"agent file of the law invalid: {exc.message}", exc.where)
    return None


def _parsed(git: Git, listing: tuple, tree: str | None = None,
            cache_dir: str | None = None) -> dict:
    """path -> `law.agents.parsed` of the files `listing` names: parsed once per process, and
    kept by the folder's `tree` id across processes."""
    if listing in _PARSED:
        return _PARSED[listing]
    from gitstate import __version__
    identity, name = [1, __version__], f"agents-{tree}.bin"
    saved = load(cache_dir, name, identity, binary=True) if tree else None
    files = saved.get("files") if saved else None
    if not isinstance(files, dict):
        files = _parse_files(git, listing)
        if tree:
            store(cache_dir, name, identity, {"files": files}, binary=True)
    _PARSED[listing] = files
    return files


def _parse_files(git: Git, listing: tuple) -> dict:
    datas = git.cat_files([b for _p, b in listing], STATE_FILE_BYTES)
    return {p: parsed(p, d) for (p, _b), d in zip(listing, datas) if d is not None}


def _listing(git: Git, folder: str, rev: str) -> tuple[str | None, tuple]:
    """(the folder's tree id, its (path, blob id) files, directly in it) at `rev` (INDEX: the
    staged files, from `git ls-files`; a revision: its tree, read in one `cat-file`)."""
    if rev == INDEX:
        return None, _index_listing(git, folder)
    got = git.cat_batch([f"{rev}:{folder}"])[0]
    if got is None or got[1] != "tree":
        return None, ()
    return got[0], tuple(sorted(_tree_files(got[2], folder, len(got[0]) // 2)))


def _index_listing(git: Git, folder: str) -> tuple:
    out = git.run("ls-files", "-s", "-z", "--", folder + "/")
    found = []
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")
        fields = meta.split()
        if tab and len(fields) == 3 and fields[2] == "0" and fields[0] != "160000" \
                and path.rpartition("/")[0] == folder and path.endswith(".md"):
            found.append((path, fields[1]))
    return tuple(sorted(found))


def _tree_files(data: bytes, folder: str, width: int):
    """(path, blob id) of the files of a raw tree object (`<mode> <name>\\0<id>` entries;
    `width`: the id's bytes, 20 for SHA-1, 32 for SHA-256)."""
    pos = 0
    while pos < len(data):
        nul = data.index(b"\0", pos)
        mode, _, name = data[pos:nul].partition(b" ")
        oid = data[nul + 1:nul + 1 + width].hex()
        pos = nul + 1 + width
        if mode in (b"100644", b"100755", b"120000") and name.endswith(b".md"):
            yield f"{folder}/{name.decode('utf-8', 'surrogateescape')}", oid


def _worktree(top: str | os.PathLike, folder: str) -> dict[str, bytes]:
    """path -> content of the files directly in `folder` of the work tree at `top`."""
    found = {}
    base = os.path.join(top, folder)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return {}
    for name in names:
        full = os.path.join(base, name)
        if name.endswith(".md") and os.path.isfile(full) and not os.path.islink(full):
            with open(full, "rb") as fh:
                found[f"{folder}/{name}"] = fh.read(STATE_FILE_BYTES + 1)
    return found


def fallback_law(git: Git, base: str | None):
    """Once managed, always managed: the law in force when none is committed or staged — the
    one in the work tree (`init --no-commit`), or the last one the history had before a
    commit deleted it. Like a `cat_batch` answer (blob id, "blob", content), or None."""
    try:
        with open(LIFECYCLE_PATH, "rb") as fh:   # hooks run at the top of the work tree
            data = fh.read(1 << 22)
        return (None, "blob", data)   # not a blob: never cached
    except OSError:
        pass
    if base is None:
        return None
    code, out, _ = git.call("log", "-1", "--format=%H", "--diff-filter=D", base, "--",
                              LIFECYCLE_PATH)
    deleted = out.decode().strip() if code == 0 else ""
    if not deleted:
        return None
    found = git.cat_batch([f"{deleted}^:{LIFECYCLE_PATH}"])[0]
    return found if found is not None and found[1] == "blob" else None
