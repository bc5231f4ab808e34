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

import json
import os

from gitstate import __version__, statefile
from gitstate.errors import InvalidFile
from gitstate.git import Git
from gitstate.history import fold, tag_events, track_from_plain, track_to_plain
from gitstate.lifecycle import Lifecycle

FORMAT = 1
CACHE_NAME = "tracks.json"


class Index:
    """Tag tracks and parsed state files for one repository, cached in `cache_dir`."""

    def __init__(self, git: Git, lc: Lifecycle, cache_dir: str | None):
        self.git = git
        self.lc = lc
        self.cache_dir = cache_dir
        self._saved = self._load()

    # -- persistence ----------------------------------------------------------------------

    def _path(self) -> str | None:
        return os.path.join(self.cache_dir, CACHE_NAME) if self.cache_dir else None

    def _identity(self) -> list:
        return [FORMAT, __version__, list(self.lc.accept)]

    def _load(self) -> dict:
        path = self._path()
        if path:
            try:
                with open(path, encoding="utf-8") as fh:
                    data = json.load(fh)
                if data.get("identity") == self._identity():
                    return data
            except (OSError, ValueError, AttributeError):
                pass  # missing or damaged: rebuilt below
        return {"identity": self._identity(), "tip": None, "tracks": {}, "blobs": {}}

    def _save(self) -> None:
        path = self._path()
        if not path:
            return
        try:
            os.makedirs(self.cache_dir, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self._saved, fh, separators=(",", ":"))
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs speed

    # -- the tag timeline -----------------------------------------------------------------

    def tracks(self, rev: str | None, *, remember: bool = True) -> dict:
        """AgentTracks of every agent tagged in the history of commit `rev`."""
        if rev is None:
            return {}
        tip = self._saved.get("tip")
        if tip == rev:
            return {a: track_from_plain(p) for a, p in self._saved["tracks"].items()}
        if tip and self._extends(tip, rev):
            tracks = {a: track_from_plain(p) for a, p in self._saved["tracks"].items()}
            tracks = fold(tracks, tag_events(self.git, self.lc, [f"{tip}..{rev}"]))
        else:
            tracks = fold({}, tag_events(self.git, self.lc, [rev]))
        if remember:
            self._saved["tip"] = rev
            self._saved["tracks"] = {a: track_to_plain(t) for a, t in tracks.items()}
            self._save()
        return tracks

    def _extends(self, tip: str, rev: str) -> bool:
        """True if `rev` is `tip` plus a line of new commits without merges."""
        if not self.git.ok("merge-base", "--is-ancestor", tip, rev):
            return False
        return self.git.text("rev-list", "--merges", "-n", "1", f"{tip}..{rev}") == ""

    # -- state files at a revision --------------------------------------------------------

    def fronts(self, rev: str | None) -> dict[str, tuple[str, dict | None, str | None]]:
        """agent -> (path, front matter, problem) for every state file committed at `rev`.
        Front matters are remembered by blob hash: only new blobs are read and parsed."""
        entries = self._entries(rev)
        known = self._saved.setdefault("blobs", {})
        missing = [(a, p, b) for a, p, b in entries if b not in known]
        datas = self.git.cat_files(b for _, _, b in missing)
        for (agent, path, blob), data in zip(missing, datas):
            try:
                known[blob] = [statefile.parse_bytes(data or b"", path).front, None]
            except InvalidFile as exc:
                known[blob] = [None, str(exc)]
        if missing:
            live = {b for _, _, b in entries}
            if len(known) > 2 * len(live) + 1000:   # forget blobs no longer looked at
                self._saved["blobs"] = known = {b: known[b] for b in live}
            self._save()
        return {a: (p, known[b][0], known[b][1]) for a, p, b in entries}

    def _entries(self, rev: str | None) -> list[tuple[str, str, str]]:
        """(agent, path, blob) of every state file committed at `rev`."""
        if rev is None:
            return []
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


