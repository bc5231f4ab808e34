"""The lander's long-lived git processes: objects read, replayed commits written, and "is
this commit on the branch?" answered, each without a process per question (doors/batch.py)."""

from __future__ import annotations

import subprocess
from collections import deque

from gitstate.git.runner import Git, is_zero

WALK = 512        # commits of the branch's history read in-process to answer "is it on it?"


class Objects:
    """One long-lived `git cat-file --batch-command`: each object, or its size, in one
    round trip through a pipe instead of a process."""

    def __init__(self, git: Git):
        argv = ["git", "--no-replace-objects"] + (["-C", git.cwd] if git.cwd else []) \
            + ["cat-file", "--batch-command"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=git._env(None))

    def _ask(self, command: str, name: str) -> tuple[str, str, int] | None:
        if "\n" in name or not name:
            return None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{command} {name}\n".encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("git cat-file stopped")
        header = line.split()
        if line.endswith((b" missing\n", b" ambiguous\n")) or len(header) != 3 \
                or not header[2].isdigit():
            return None
        return header[0].decode(), header[1].decode(), int(header[2])

    def info(self, name: str) -> tuple[str, str, int] | None:
        """(id, type, size) of the object `name` names (`rev`, `rev:path`), or None."""
        return self._ask("info", name)

    def read(self, name: str) -> tuple[str, str, bytes] | None:
        found = self._ask("contents", name)
        if found is None:
            return None
        assert self.proc.stdout is not None
        data = self.proc.stdout.read(found[2] + 1)[:-1]
        return found[0], found[1], data

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


class Store:
    """The pass's objects: read through one `Objects`, and the ones the pass makes (trees and
    commits) named in-process by git's own hash of them, kept in memory and handed to git
    together (`flush`, before any git process reads them) as one pack, which
    `git unpack-objects` writes as it writes a small push's objects."""

    def __init__(self, git: Git):
        self.git = git
        self.objects = Objects(git)
        self.made: dict[str, tuple[str, bytes]] = {}
        self.trees: dict[str, bytes] = {}   # trees read: the same ones again and again
        self.pending: list[str] = []
        self.sha256 = False

    def read(self, oid: str) -> tuple[str, str, bytes] | None:
        if oid in self.made:
            return oid, *self.made[oid]
        if oid in self.trees:
            return oid, "tree", self.trees[oid]
        got = self.objects.read(oid)
        if got is not None and got[1] == "tree" and got[0] == oid:
            self.trees[oid] = got[2]
        return got

    def put(self, kind: str, body: bytes) -> str:
        oid = self._hash(f"{kind} {len(body)}\0".encode() + body).hexdigest()
        if oid not in self.made:
            self.made[oid] = (kind, body)
            self.pending.append(oid)
        return oid

    def _hash(self, data: bytes):
        import hashlib
        return (hashlib.sha256 if self.sha256 else hashlib.sha1)(data)

    def flush(self) -> None:
        """Every object made so far written to git, in one `git unpack-objects`."""
        if not self.pending:
            return
        import zlib
        kinds = {"commit": 1, "tree": 2}
        parts = [b"PACK", (2).to_bytes(4, "big"), len(self.pending).to_bytes(4, "big")]
        for oid in self.pending:
            kind, body = self.made[oid]
            size = len(body)
            head = [(kinds[kind] << 4) | (size & 15)]
            size >>= 4
            while size:
                head[-1] |= 0x80
                head.append(size & 0x7F)
                size >>= 7
            parts += [bytes(head), zlib.compress(body)]
        pack = b"".join(parts)
        self.git.run("unpack-objects", "-q", input=pack + self._hash(pack).digest())
        self.pending = []

    def close(self) -> None:
        self.objects.close()


class Unsure(Exception):
    """The tree cannot be edited in place: git's three-way merge decides."""


def edited_tree(store: Store, tree: str, blobs: dict[str, tuple[str, str]]) -> str:
    """`tree` with the files at `blobs`' paths (path -> (mode, blob): each one there already,
    with that mode) holding those blobs: the trees along each path read and written again, no
    other object touched. Unsure where a path is not a file of `tree` of that mode."""
    got = store.read(tree)
    if got is None or got[1] != "tree":
        raise Unsure(tree)
    entries = _entries(got[2], len(tree) // 2)
    by_name = {e[1]: e for e in entries}
    for name, inner in _by_folder(blobs).items():
        entry = by_name.get(name)
        if entry is None:
            raise Unsure(name)
        is_tree = entry[0] == b"40000"
        if "" in inner:             # the file itself
            file_mode, file_blob = inner[""]
            if is_tree or len(inner) > 1 or entry[0] != file_mode.encode():
                raise Unsure(name)
            entry[2] = bytes.fromhex(file_blob)
        else:
            if not is_tree:
                raise Unsure(name)
            entry[2] = bytes.fromhex(edited_tree(store, entry[2].hex(), inner))
    return store.put("tree", b"".join(m + b" " + n + b"\0" + oid for m, n, oid in entries))


def _entries(data: bytes, width: int) -> list[list[bytes]]:
    """[mode, name, id] of each entry of a raw tree (`width`: an id's bytes)."""
    entries, pos = [], 0
    while pos < len(data):
        nul = data.index(b"\0", pos)
        mode, _, name = data[pos:nul].partition(b" ")
        entries.append([mode, name, data[nul + 1:nul + 1 + width]])
        pos = nul + 1 + width
    return entries


def _by_folder(blobs: dict[str, tuple[str, str]]) -> dict[bytes, dict[str, tuple[str, str]]]:
    """`blobs` by the first name of their path: the rest of the path -> (mode, blob)."""
    groups: dict[bytes, dict[str, tuple[str, str]]] = {}
    for path, held in blobs.items():
        head, _, rest = path.partition("/")
        groups.setdefault(head.encode("utf-8", "surrogateescape"), {})[rest] = held
    return groups


class Reach:
    """Is a commit on the branch's history at `tip` (or on the chain the pass adds to it)?
    The newest `WALK` commits are read in-process. Beyond them, the pass's moves that no
    other commit given reaches are found with one `git merge-base --independent` (a new move
    is on no branch: the common answer, settled without a process per move); git is asked
    one by one only what that leaves open."""

    def __init__(self, git: Git, objects: Objects, tip: str, moves: list[str]):
        self.git, self.objects, self.tip = git, objects, tip
        self.seen = {tip}
        self.frontier = deque([tip])
        self.moves: list[str] | None = moves
        self.off: set[str] = set()

    def holds(self, sha: str, chain: set[str]) -> bool:
        if sha in chain or sha in self.seen or self._walked_to(sha):
            return True
        if not self.frontier:
            return False   # the whole history read
        return self._asked(sha)

    def _walked_to(self, sha: str) -> bool:
        """Found by reading the branch's history on, up to `WALK` commits in all."""
        while self.frontier and len(self.seen) < WALK:
            got = self.objects.read(self.frontier.popleft())
            for parent in parents_of(got[2]) if got and got[1] == "commit" else []:
                if parent not in self.seen:
                    self.seen.add(parent)
                    self.frontier.append(parent)
            if sha in self.seen:
                return True
        return False

    def _asked(self, sha: str) -> bool:
        if self.moves is not None:
            self._rule_out(self.moves)
            self.moves = None
        if sha in self.off:
            return False
        return self.git.ok("merge-base", "--is-ancestor", sha, self.tip)

    def _rule_out(self, moves: list[str]) -> None:
        """The moves no other commit of these, the tip included, reaches: not on the branch."""
        known = sorted({m for m in moves if m != self.tip and (self.objects.info(m) or
                                                               ("", ""))[1] == "commit"})
        if known:
            code, out, _ = self.git.call("merge-base", "--independent", self.tip, *known)
            self.off = set(out.decode().split()) - {self.tip} if code == 0 else set()


def parents_of(raw: bytes) -> list[str]:
    head = raw.partition(b"\n\n")[0]
    return [line[7:].decode() for line in head.split(b"\n") if line.startswith(b"parent ")]


def is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def read_diff_tree(tokens: list[str], changed: dict) -> None:
    """`git diff-tree --stdin -r -z` read into `changed` (move -> path -> modes, blob)."""
    current: dict[str, tuple[str, str, str | None]] | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith(":") and current is not None and i + 1 < len(tokens):
            fields = token[1:].split()
            if len(fields) >= 4:
                current[tokens[i + 1]] = (fields[0], fields[1],
                                          None if is_zero(fields[3]) else fields[3])
            i += 2
            continue
        if is_oid(token.strip()):
            current = changed.setdefault(token.strip(), {})
        i += 1


def tree_of(raw: bytes) -> str:
    return raw[5:raw.index(b"\n")].decode()


def replayed(raw: bytes, tip: str, tree: str) -> bytes:
    """M's message, author and committer, on top of `tip` with the merged `tree`."""
    head, _, message = raw.partition(b"\n\n")
    lines = [b"tree " + tree.encode(), b"parent " + tip.encode()]
    lines += [ln for ln in head.split(b"\n") if not ln.startswith((b"tree ", b"parent "))]
    return b"\n".join(lines) + b"\n\n" + message


def is_signed(raw: bytes) -> bool:
    head = raw.partition(b"\n\n")[0]
    return any(line.startswith((b"gpgsig ", b"gpgsig-sha256 ")) for line in head.split(b"\n"))
