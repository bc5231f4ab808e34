"""Reading commits for verify without splitting free text: ids, parents and changed blobs
from one `git log -z`, and author, time and message from the commit objects' headers."""

from __future__ import annotations

from gitstate.errors import GitstateError
from gitstate.git.runner import Git, is_zero


class Commit:
    __slots__ = ("sha", "parents", "changes", "time", "author", "message", "encoding",
                 "_subject")

    def __init__(self, sha: str, parents: list[str], changes: list):
        self.sha, self.parents, self.changes = sha, parents, changes
        self.time, self.author, self.message = 0, "", ""
        self.encoding: str | None = None
        self._subject: tuple[str, str] | None = None

    @property
    def subject(self) -> str:
        """What git calls the subject (`%s`): every door and view reads the same one."""
        if self._subject is None or self._subject[0] is not self.message:
            from gitstate.law.grammar import split_message
            self._subject = (self.message, split_message(self.message)[0])
        return self._subject[1]


def read_commits(git: Git, revs: list[str], *, first_parent: bool = False):
    """Every commit of `revs`, oldest first, with (path, old blob, new blob, new mode) of its
    changes; author, time and message are filled in later from the commit objects.

    `git log -z` with a format of ids only: records and fields are NUL-terminated and nothing
    in them is free text. A thread drains git's output as it comes, so that git keeps walking
    history while the commits already read are being judged. `first_parent`: the line of
    `revs` alone (a merge's other parents are not walked)."""
    raw = ["-z", "--raw", "--no-abbrev", "--no-renames", "--diff-merges=first-parent",
           "--format=%H %P"]
    if first_parent:
        ids, width = _line(git, revs)   # read whole before the first commit is judged
        return _commits(_drained(_shown(git, raw, ids, width)))
    return _commits(_drained(git.stream_batches("log", "--reverse", "--topo-order", *raw, *revs,
                                                "--", sep=b"\0")))


def _line(git: Git, revs: list[str]) -> tuple[bytearray, int]:
    """(the ids of the first-parent line of `revs`, newest first, as one run of hex digits;
    the length of an id).

    `git log --reverse` holds every commit it walked, with its message, before it writes the
    first one (a million commits: GBs); `rev-list` keeps no messages, and the ids are held
    here as one run of hex digits (40 MB for a million), not as a million strings."""
    ids = bytearray()
    width = 0
    for batch in git.stream_batches("rev-list", "--topo-order", "--first-parent", *revs, "--"):
        for line in batch:
            if line:
                width = width or len(line)
                ids += line
    return ids, width


SHOWN = 800_000   # bytes of ids named to each `git log --no-walk` (20,000 SHA-1 ids)


def _shown(git: Git, raw: list[str], ids: bytearray, width: int):
    """`git log --raw`'s tokens for the commits `ids` names, oldest first: SHOWN bytes of
    ids at a time (within any system's limit on a command's arguments), named to a `git log
    --no-walk=unsorted`, which shows them in the order named, each with what it changed
    against its first parent, as `git log --first-parent --raw` does."""
    at, step = len(ids), width * max(1, SHOWN // (width + 1))
    while at > 0:
        start = max(0, at - step)
        named = [ids[i:i + width].decode("ascii") for i in range(at - width, start - width,
                                                                    -width)]
        yield from git.stream_batches("log", "--no-walk=unsorted", *raw, *named, "--",
                                      sep=b"\0")
        at = start


def _drained(tokens):
    """git's output in batches of NUL-terminated tokens, drained by a thread as it comes."""
    import queue
    import threading

    batches: queue.Queue = queue.Queue(maxsize=64)   # lists of tokens, up to 1 MiB each
    done = object()

    def pump() -> None:
        try:
            for batch in tokens:
                batches.put(batch)
            batches.put(done)
        except BaseException as exc:  # handed to the reading side, raised there
            batches.put(exc)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        batch = batches.get()
        if batch is done:
            return
        if isinstance(batch, BaseException):
            raise batch
        yield batch


def _commits(batches):
    """The commits of `git log -z --raw --format='%H %P'`'s tokens, each with its changes."""
    current: Commit | None = None
    meta: list[str] | None = None
    for batch in batches:
        for token in batch:
            if meta is not None and current is not None:   # the path after a raw line
                path = token.decode("utf-8", "surrogateescape")
                old, new = meta[2], meta[3]
                current.changes.append((path, None if is_zero(old) else old,
                                        None if is_zero(new) else new, meta[1]))
                meta = None
                continue
            token = token.lstrip(b"\n")
            if not token:
                continue
            if token.startswith(b":"):
                meta = token[1:].decode("ascii", "replace").split()
                if len(meta) < 5 or current is None:
                    raise GitstateError("git log printed a change this version cannot read",
                                        where="git log")
                continue
            ids = token.decode("ascii", "replace").split()
            if current is not None:
                yield current
            current = Commit(ids[0], ids[1:], [])
    if current is not None:
        yield current


def parse_commit_object(data: bytes) -> tuple[int, str, str, str | None]:
    """(committer time, author name, message, `encoding` header or None) of a raw commit
    object. The message is read as UTF-8, as git shows it to every reader: a commit that
    declares another encoding is refused (`encoding`), never read two ways."""
    head, _, body = data.partition(b"\n\n")
    when, author, encoding = 0, "", None
    for line in head.split(b"\n"):
        if line.startswith(b"author "):
            ident = line[7:]
            author = ident[:ident.find(b"<")].strip().decode("utf-8", "replace") \
                if b"<" in ident else ident.decode("utf-8", "replace")
        elif line.startswith(b"committer "):
            stamp = line.rpartition(b">")[2].split()
            when = int(stamp[0]) if stamp and stamp[0].isdigit() and len(stamp[0]) < 16 else 0
        elif line.startswith(b"encoding ") and encoding is None:
            # the first one, as git reads it (`get_header`): a second `encoding` header
            # must not make a message git re-encodes read as UTF-8 here
            encoding = line[9:].decode("ascii", "replace").strip()
    return when, author, body.decode("utf-8", "surrogateescape"), encoding
