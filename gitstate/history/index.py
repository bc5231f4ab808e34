"""The incremental index: what the tag timeline says of every agent, saved under `.git/`.

The saved result is keyed by the commit it was folded up to. A later read at a descendant
reads only the commits in between (`git log TIP..REV`) and folds them on; anything else (a
rewritten or force-pushed history, where TIP is no longer an ancestor, or new commits that
merge other lines of history) is rebuilt from scratch and never trusted. The index is a pure
speed-up: delete it and every answer is the same.

State files are read at the revision asked about (one `ls-tree`, one `cat-file --batch`);
the fields of each blob are remembered by its hash, so a warm read parses only new blobs.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.errors import InvalidFile
from gitstate.git import cache
from gitstate.git.runner import Git
from gitstate.history.fold import fold, folded, track_from_plain, track_to_plain
from gitstate.law import statefile
from gitstate.law.lifecycle import Lifecycle

FORMAT = 9   # 7: the tracks of the first-parent line alone; 8: pid_started kept; 9: retries
TRACKS_NAME = "tracks.bin"
BLOBS_NAME = "fronts.bin"
# The front-matter keys a view reads, remembered per blob as a list (compact to load).
KEPT = ("agent", "state", "role", "model", "thread", "summary", "person", "project", "parent",
        "depth", "context_pct", "last_read_commit", "freeze_state", "final_summary", "pid", "host",
        "past_roles", "task", "instructions", "started", "ended", "heartbeat", "pid_started",
        "retries")
_LINEAR_LIMIT = 5000            # past this many new commits, a rebuild is as cheap


def _is_line(rows: list, tip: str, rev: str) -> bool:
    """Are `rows` (newest first: id, parents, ...) the first-parent line from `rev` down to
    `tip`?"""
    expected = rows[0][0]
    if expected != rev:
        return False
    for i, (sha, parents, *_rest) in enumerate(rows):
        parent = rows[i + 1][0] if i + 1 < len(rows) else tip
        if sha != expected or parents.split(" ")[0] != parent:
            return False   # a line that does not start at tip
        expected = parent
    return True


class Index:
    """Tag tracks and parsed state files for one repository, cached in `cache_dir`."""

    def __init__(self, git: Git, lc: Lifecycle, cache_dir: str | None):
        self.git = git
        self.lc = lc
        self.cache_dir = cache_dir
        self._saved = self._load(TRACKS_NAME) or {"tip": None, "tracks": {}}
        found = self._load(BLOBS_NAME) or {}
        self._blobs = found.get("blobs", {})
        # the state files listed at the last revision read: (revision, layout, entries)
        listed = found.get("listed")
        self._listed = listed if isinstance(listed, tuple) and len(listed) == 3 else None
        self._dirty = False
        self._new_blobs = 0
        self._new_listing = False

    # -- persistence ----------------------------------------------------------------------
    # Two files: the tracks (rewritten whenever the tip moves) and the parsed state files by
    # blob (rewritten whenever a read parsed new ones: 0.2 MB at 1,000 agents costs less to
    # write once than its new files cost to read again on every later read).

    def _identity(self) -> list:
        return [FORMAT, __version__, list(self.lc.accept)]

    def _load(self, name: str) -> dict | None:
        return cache.load(self.cache_dir, name, self._identity(), binary=True)

    def _write(self, name: str, data: dict) -> None:
        cache.store(self.cache_dir, name, self._identity(), data, binary=True)

    def save(self) -> None:
        """Write what was learnt (once, after a read), if it is worth writing."""
        if not self.cache_dir:
            return
        if self._dirty:
            self._write(TRACKS_NAME, self._saved)
            self._dirty = False
        if self._new_blobs or self._new_listing:
            self._write(BLOBS_NAME, {"blobs": self._blobs, "listed": self._listed})
            self._new_blobs, self._new_listing = 0, False

    # -- the tag timeline -----------------------------------------------------------------

    def tracks_and_fronts(self, rev: str | None, *, remember: bool = True) -> tuple[dict, dict]:
        """(`tracks`, `fronts`) at `rev`. When the whole history must be read, the state
        files are read and parsed while git walks it."""
        read: list[dict] = []
        tracks = self.tracks(rev, remember=remember,
                             meanwhile=lambda: read.append(self.fronts(rev)))
        return tracks, read[0] if read else self.fronts(rev)

    def tracks(self, rev: str | None, *, remember: bool = True, meanwhile=None) -> dict:
        """AgentTracks of every agent tagged in the history of commit `rev` (`meanwhile` is
        called while git walks it, when it is read whole)."""
        if rev is None:
            return {}
        tip = self._saved.get("tip")
        if tip == rev:
            return self._kept_tracks()
        new = self._line_since(tip, rev) if tip else None
        if new is not None:
            tracks = fold(self._kept_tracks(), new)
        else:
            tracks = folded(self.git, self.lc, [rev], meanwhile=meanwhile)
        if remember:
            self._remember(rev, tracks)
        return tracks

    def _kept_tracks(self) -> dict:
        return {a: track_from_plain(p) for a, p in self._saved["tracks"].items()}

    def _remember(self, rev: str, tracks: dict) -> None:
        self._saved["tip"] = rev
        self._saved["tracks"] = {a: track_to_plain(t) for a, t in tracks.items()}
        self._dirty = True

    def _line_since(self, tip: str, rev: str) -> list | None:
        """Tag events of `tip..rev` if the first-parent line of `rev` goes on from `tip` (one
        `git log`, which also proves it); None if history went any other way."""
        from gitstate.law.grammar import subject_tag
        rows = list(self.git.log_records(["%H", "%P", "%ct", "%an", "%s"],
                                         f"--max-count={_LINEAR_LIMIT + 1}", "--first-parent",
                                         f"{tip}..{rev}",
                                         "--", check=False))
        if not 0 < len(rows) <= _LINEAR_LIMIT or not _is_line(rows, tip, rev):
            return None
        accept = self.lc.accept_patterns()
        events = []
        for sha, parents, ct, author, subject in reversed(rows):
            tag = subject_tag(subject, accept) if " " not in parents else None   # no merge
            if tag is not None:
                events.append((sha, int(ct) if ct.isdigit() else 0, author) + tag)
        return events

    # -- state files at a revision --------------------------------------------------------

    def fronts(self, rev: str | None) -> dict[str, tuple[str, dict | None, str | None]]:
        """agent -> (path, front matter, problem) for every state file committed at `rev`.
        Front matters are remembered by blob hash: only new blobs are read and parsed."""
        entries = self._entries(rev)
        missing = _missing(entries, self._blobs)
        new = sum(1 for _, _, b in missing if b not in self._blobs or len(self._blobs[b]) < 3)
        problems = self._read(missing)
        if new:
            self._forget({b for _, _, b in entries})
            self._new_blobs += new
        return _fronts_of(entries, self._blobs, problems)

    def _read(self, missing: list[tuple[str, str, str]]) -> dict[str, str]:
        """Each (agent, path, blob) read and parsed into the blobs known: path -> problem."""
        known = self._blobs
        problems: dict[str, str] = {}
        datas = self.git.cat_files((b for _, _, b in missing), statefile.MAX_STATE_FILE_BYTES)
        for (_agent, path, blob), data in zip(missing, datas):
            try:
                front = statefile.parse_bytes(data or b"", path).front
                known[blob] = [[_plain(front.get(k)) for k in KEPT], None]
            except InvalidFile as exc:
                problems[path] = str(exc)
                _unreadable(known, blob, path, str(exc))
        return problems

    def _forget(self, live: set[str]) -> None:
        """Forget the blobs no longer looked at, when they are many."""
        if len(self._blobs) > 2 * len(live) + 1000:
            self._blobs = {b: self._blobs[b] for b in live}

    def _entries(self, rev: str | None) -> list[tuple[str, str, str]]:
        """(agent, path, blob) of every state file committed at `rev`: as listed last time
        when `rev` is the revision listed then (a commit's tree never changes; at 10,000
        agents `git ls-tree` takes ~25 ms), else from `git ls-tree`."""
        if rev is None:
            return []
        if self._listed is not None and self._listed[:2] == (rev, self.lc.state_file):
            return self._listed[2]
        entries = self._listing(rev)
        self._listed, self._new_listing = (rev, self.lc.state_file, entries), True
        return entries

    def _listing(self, rev: str) -> list[tuple[str, str, str]]:
        rx = self.lc.state_path_regex()
        head_dir = self.lc.state_file.split("{id}")[0].rstrip("/")
        args = ["ls-tree", "-r", "-z", rev] + (["--", head_dir] if head_dir else [])
        entries = []
        for item in self.git.run(*args).decode("utf-8", "surrogateescape").split("\0"):
            if not item:
                continue
            meta, _, path = item.partition("\t")
            m = rx.match(path)
            if m and meta.split()[1] == "blob":
                entries.append((m.group("id"), path, meta.split()[2]))
        return entries




def _missing(entries: list[tuple[str, str, str]], known: dict) -> list[tuple[str, str, str]]:
    """The entries whose blob is not known yet. A problem names the file it was found in: a
    blob unreadable at another path (two state files alike) is read again for this one."""
    return [(a, p, b) for a, p, b in entries
            if b not in known or (known[b][0] is None and known[b][2:] != [p])]


def _fronts_of(entries: list[tuple[str, str, str]], known: dict,
               problems: dict[str, str]) -> dict[str, tuple[str, dict | None, str | None]]:
    return {a: (p, None if known[b][0] is None else dict(zip(KEPT, known[b][0])),
                problems.get(p, known[b][1])) for a, p, b in entries}


def _unreadable(known: dict, blob: str, path: str, problem: str) -> None:
    """A blob that does not parse, kept with its problem and the path it was found at
    (unless kept so already, as found at another path)."""
    if blob not in known or known[blob][0] is not None or len(known[blob]) < 3:
        known[blob] = [None, problem, path]


def _plain(value):
    """A front-matter value as JSON keeps it (nested YAML is kept as its text)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return list(value)     # e.g. past_roles
    return str(value)
