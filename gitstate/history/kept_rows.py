"""Each agent's row of the views of every agent (`roster`, `vacancies`: its record; `status`:
its status), kept at the tip it was read at and carried on by the commits since, agent by
agent, so that a read after N new commits costs in proportion to N, not to the agents.

One sealed `marshal` file per kind under `.git/gitstate` (`git/cache.py`) holds the rows by
agent, with (roster) every agent's track and the place of the last move folded. A read at a
descendant reads `TIP..HEAD` once (`git log --first-parent --raw`: each commit's subject and
the files it changed) and makes again only the rows of the agents those commits tag or whose
state files they change (their state files read in one `cat-file --batch`); the rest are
taken as kept. Instance numbers, groups and vacancies are then made from the rows as a cold
read makes them. Anything unusual is read whole, as a cold read: a rewritten history (the
kept tip not on the first-parent line of HEAD), a merge in the range, more than `LIMIT`
commits, a change to the lifecycle, two state files of one agent. The rows depend on the
lifecycle committed at HEAD (its blob is part of the file's identity); one not committed
there is never kept.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.errors import InvalidFile
from gitstate.git import cache
from gitstate.history.fold import agent_record, fold_plain, track_from_plain, track_to_plain
from gitstate.law import statefile
from gitstate.law.lifecycle import LIFECYCLE_PATH, Lifecycle

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

FORMAT = 1
LIMIT = 1000      # past this many new commits, reading every agent again is as cheap


def records(repo, lc: Lifecycle, head: str, now: int) -> list[dict] | None:
    """Every agent's roster record at `head` (as `views.agent_records` makes them), from
    the rows kept and carried on; None when the lifecycle is not committed at `head` or
    nothing can be kept (the caller reads them the usual way)."""
    kept = _rows(repo, lc, head, "roster")
    if kept is None:
        return None
    since = kept["since"]
    out = []
    for agent, row in kept["rows"].items():
        when = since.get(agent)
        if when is not None:
            row["seconds_in_state"] = max(0, now - when)
        out.append(row)
    return out


def statuses(repo, lc: Lifecycle, head: str, make: Callable) -> list[dict] | None:
    """Every agent's status at `head`, sorted by agent (a lifecycle without timed moves: the
    rows do not move with the clock), each made by `make(agent, path, front, problem)`; None
    as for `records`."""
    kept = _rows(repo, lc, head, "status", make)
    if kept is None:
        return None
    rows = kept["rows"]
    return [rows[a] for a in sorted(rows)]


def _rows(repo, lc: Lifecycle, head: str, kind: str, make: Callable | None = None
          ) -> dict | None:
    law = _law_blob(repo, head)
    if law is None:
        return None
    name, identity = f"rows-{kind}.bin", [FORMAT, __version__, law, list(lc.accept)]
    saved = _saved(repo.cache_dir, name, identity)
    if saved is not None and saved["tip"] == head:
        return saved
    data = _onward(repo, lc, saved, head, kind, make) if saved is not None else None
    if data is None:
        data = _anew(repo, lc, head, kind, make)
    data["tip"] = head
    cache.store(repo.cache_dir, name, identity, data, binary=True)
    return data


def _law_blob(repo, head: str) -> str | None:
    """The blob of the lifecycle committed at `head` (None: none, or nothing is kept)."""
    law = repo.git.cat_batch([f"{head}:{LIFECYCLE_PATH}"])[0] if repo.cache_dir else None
    return law[0] if law is not None and law[1] == "blob" else None


def _saved(cache_dir: str, name: str, identity: list) -> dict | None:
    saved = cache.load(cache_dir, name, identity, binary=True)
    return saved if saved is not None and _valid(saved) else None


# what a kept file holds, each of its keys with its type
KEPT_TYPES = {"tip": str, "rows": dict, "paths": dict, "since": dict, "tracks": dict, "seq": int}


def _valid(saved: dict) -> bool:
    return all(isinstance(saved.get(key), kind) for key, kind in KEPT_TYPES.items())


def _anew(repo, lc: Lifecycle, head: str, kind: str, make: Callable | None) -> dict:
    """Every agent's row read whole (through the index of parsed state files)."""
    from gitstate.history.index import Index
    index = Index(repo.git, lc, repo.cache_dir)
    if kind == "roster":
        tracks, fronts = index.tracks_and_fronts(head)
        plain = {a: track_to_plain(t) for a, t in tracks.items()}
    else:
        fronts, plain = index.fronts(head), {}
    index.save()
    data = {"rows": {}, "paths": {}, "since": {}, "tracks": plain,
            "seq": sum(t[4] for t in plain.values())}
    for agent, (path, front, problem) in fronts.items():
        _put(data, lc, agent, path, front, problem, make)
    return data


def _put(data: dict, lc: Lifecycle, agent: str, path: str, front: dict | None,
         problem: str | None, make: Callable | None) -> None:
    """The row of `agent` made (by `make`, else as a roster record) and kept in `data`."""
    data["paths"][agent] = path
    if make is not None:
        data["rows"][agent] = make(agent, path, front, problem)
        return
    plain = data["tracks"].get(agent)
    track = track_from_plain(plain) if plain is not None else None
    row = agent_record(agent, path, front, problem, track, lc, 0)
    data["rows"][agent] = row
    data["since"].pop(agent, None)
    if row["seconds_in_state"] is not None and track is not None:
        data["since"][agent] = (track.entered if track.tag == row["state"] else track.last)[1]


def _onward(repo, lc: Lifecycle, saved: dict, head: str, kind: str,
            make: Callable | None) -> dict | None:
    """`saved` carried on to `head`, remaking only the rows the commits since touch; None
    where it cannot be (the caller reads everything again)."""
    found = _range(repo.git, lc, saved["tip"], head)
    if found is None:
        return None
    events, changed = found
    files = _state_files(lc, saved, changed)
    if files is None:
        return None
    touched = set(files)
    if kind == "roster" and events:
        saved["seq"] = fold_plain(saved["tracks"], events, saved["seq"])
        touched.update(e[3] for e in events)
    _remake(repo, lc, saved, head, _still_filed(saved, files, touched), make)
    return saved


def _state_files(lc: Lifecycle, saved: dict, changed: dict) -> dict | None:
    """agent -> (path, blob at head or None) of each state file `changed` holds; None where
    the lifecycle changed or an agent has two state files (read whole, as a cold read)."""
    rx = lc.state_path_regex()
    files: dict[str, tuple[str, str | None]] = {}
    for path, blob in changed.items():
        if path == LIFECYCLE_PATH:
            return None
        m = rx.match(path)
        if m is None:
            continue
        agent = m.group("id")
        if agent in files or saved["paths"].get(agent, path) != path:
            return None
        files[agent] = (path, blob)
    return files


def _still_filed(saved: dict, files: dict, touched: set) -> list[tuple[str, str]]:
    """(agent, path) of each agent `touched` that still has a state file; the rows of the
    others dropped."""
    redo = []
    for agent in touched:
        path, blob = files.get(agent) or (saved["paths"].get(agent), "")
        if path is None or blob is None:      # no state file (any more)
            for key in ("rows", "paths", "since"):
                saved[key].pop(agent, None)
        else:
            redo.append((agent, path))
    return redo


def _remake(repo, lc: Lifecycle, saved: dict, head: str, redo: list[tuple[str, str]],
            make: Callable | None) -> None:
    """The rows of `redo` made again from their state files at `head`, in the order `git
    ls-tree` lists the files (as a cold read has them) when one is new."""
    fresh = [a for a, _ in redo if a not in saved["rows"]]
    datas = repo.git.cat_files((f"{head}:{p}" for _, p in redo), statefile.MAX_STATE_FILE_BYTES)
    for (agent, path), blob in zip(redo, datas):
        front, problem = _parsed(blob, path)
        _put(saved, lc, agent, path, front, problem, make)
    if fresh:
        _in_tree_order(saved)


def _in_tree_order(saved: dict) -> None:
    order = sorted(saved["rows"], key=lambda a: saved["paths"][a].encode(
        "utf-8", "surrogateescape"))
    saved["rows"] = {a: saved["rows"][a] for a in order}


def _parsed(data: bytes | None, path: str) -> tuple[dict | None, str | None]:
    """(the front matter as the index keeps it, None) or (None, why it does not read)."""
    from gitstate.history.index import KEPT, _plain
    try:
        front = statefile.parse_bytes(data or b"", path).front
    except InvalidFile as exc:
        return None, str(exc)
    return {k: _plain(front.get(k)) for k in KEPT}, None


def _range(git, lc: Lifecycle, tip: str, head: str) -> tuple[list, dict] | None:
    """(tag events of `tip..head`, oldest first; path -> its blob at `head`, None where it is
    gone, for every file that differs between them), if `head`'s first-parent line goes on
    from `tip` without merges and within `LIMIT` commits; else None. Two gits: the line's
    subjects, and one comparison of the two trees (a file changed and changed back is the
    same file; each commit's own changes would cost a comparison each)."""
    out = git.run("log", "--first-parent", f"--max-count={LIMIT + 1}",
                  "--format=%x01%H%x00%P%x00%ct%x00%an%x00%s", f"{tip}..{head}", "--",
                  check=False)
    chunks = out.decode("utf-8", "surrogateescape").split("\x01")[1:]
    events = _events(chunks, lc, tip, head) if 0 < len(chunks) <= LIMIT else None
    if events is None:
        return None
    changed = _changed(git, tip, head)
    return None if changed is None else (events, changed)


def _events(chunks: list[str], lc: Lifecycle, tip: str, head: str) -> list | None:
    """The tag events of the line's commits (`chunks`, newest first), oldest first; None
    where they are not the line from `tip` to `head`, or hold a merge."""
    from gitstate.law.grammar import subject_tag
    accept = lc.accept_patterns()
    events, expected = [], head
    for chunk in chunks:     # newest first
        fields = chunk.split("\0")
        if len(fields) != 5 or fields[0] != expected or " " in fields[1] or not fields[1]:
            return None   # not the line from tip, or a merge
        sha, parents, ct, author, subject = fields
        expected = parents
        tag = subject_tag(subject.rstrip("\n"), accept)
        if tag is not None:
            events.append((sha, int(ct) if ct.isdigit() else 0, author) + tag)
    if expected != tip:
        return None
    events.reverse()
    return events


def _changed(git, tip: str, head: str) -> dict | None:
    """path -> its blob at `head` (None: gone) of each file that differs from `tip`."""
    raw = git.run("diff-tree", "-r", "--no-renames", "--raw", "-z", tip, head, "--",
                  check=False).decode("utf-8", "surrogateescape").split("\0")
    changed: dict[str, str | None] = {}
    for i in range(0, len(raw) - 1, 2):
        meta, path = raw[i].split(" "), raw[i + 1]
        if len(meta) < 5 or not meta[0].startswith(":"):
            return None
        gone = meta[4].startswith("D") or meta[1].startswith("16")   # or a submodule
        changed[path] = None if gone else meta[3]
    return changed
