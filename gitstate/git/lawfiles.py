"""The one reader of the law's files: the lifecycle's agents folder (`policies.agents_from`)
at a revision, in the index or in the work tree, merged into the lifecycle by
`gitstate.law.agents.law_of`. Every door that reads a law reads it through `with_agents`."""

from __future__ import annotations

import os

from gitstate.errors import InvalidFile
from gitstate.git.cache import load_lifecycle_cached
from gitstate.git.runner import Git
from gitstate.law.agents import agent_file, law_of, merged
from gitstate.law.lifecycle import LIFECYCLE_PATH, Lifecycle
from gitstate.law.limits import STATE_FILE_BYTES
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import Violation

INDEX = ""   # `rev` for the staged files

_MEMO: dict = {}   # (lifecycle, the folder's blob ids) -> the law: read once per process


def with_agents(git: Git, lc: Lifecycle, rev: str | None, top: str | os.PathLike | None = None,
                strict: bool = True) -> Lifecycle:
    """The law whose lifecycle is `lc`, as `rev` holds it (a revision, INDEX for the staged
    files, None for the work tree at `top`). A lifecycle without `agents_from` costs nothing;
    a malformed agent file is InvalidFile naming its file and line."""
    folder = lc.policies.agents_from
    if not folder:
        return lc
    if rev is None:
        return law_of(lc, lambda f: _worktree(top or ".", f), strict)
    blobs = _listing(git, folder, rev)
    key = (id(lc), strict, tuple(sorted(blobs.items())))
    if key not in _MEMO or _MEMO[key][0] is not lc:
        paths = sorted(blobs)
        datas = git.cat_files([blobs[p] for p in paths], STATE_FILE_BYTES)
        files = {p: d for p, d in zip(paths, datas) if d is not None}
        _MEMO[key] = (lc, law_of(lc, lambda _f: files, strict))
    return _MEMO[key][1]


def cached_law(git: Git, found: tuple, rev: str | None, cache_dir: str | None) -> Lifecycle:
    """The law of a lifecycle blob `found` ((blob id, type, content), as `cat_batch` says)
    that `rev` holds: the lifecycle kept by its blob id, with its agent files."""
    return with_agents(git, load_lifecycle_cached(found[2], found[0], LIFECYCLE_PATH, cache_dir),
                       rev)


def judged_law(git: Git, lc: Lifecycle, rev: str, changes: list, problem: Violation | None
               ) -> tuple[Lifecycle, Violation | None]:
    """(the law a commit is judged by: `lc` with its agent files at `rev`, the commit's
    parent; the problem of the law the commit leaves: `problem`, else that of an agent file
    it changes, `changes` being its (path, old blob, new blob, mode))."""
    if not lc.policies.agents_from:
        return lc, problem
    new = {p: b for p, _o, b, _m in changes if b and agent_file(lc, p)}
    if problem is None and new:
        datas = git.cat_files(list(new.values()), STATE_FILE_BYTES)
        try:
            merged(lc, {p: d for p, d in zip(new, datas) if d is not None})
        except InvalidFile as exc:
            problem = Violation(getattr(exc, "rule", Rule.LIFECYCLE), "this commit leaves an "
                                f"agent file of the law invalid: {exc.message}", exc.where)
    return with_agents(git, lc, rev, strict=False), problem


def _listing(git: Git, folder: str, rev: str) -> dict[str, str]:
    """path -> blob id of the files directly in `folder` at `rev` (INDEX: staged)."""
    args = ["ls-files", "-s", "-z"] if rev == INDEX else ["ls-tree", "-z", rev]
    out = git.run(*args, "--", folder + "/")
    found = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")
        fields = meta.split()
        if tab and len(fields) == 3 and path.rpartition("/")[0] == folder:
            if rev == INDEX and fields[2] == "0" and fields[0] != "160000":
                found[path] = fields[1]
            elif rev != INDEX and fields[1] == "blob":
                found[path] = fields[2]
    return found


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
