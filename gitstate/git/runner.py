"""The one door to git. Every call to git goes through `Git.call` (or `run`, `text`, `ok`,
`stream`, `cat_batch` on top of it), which reads what git writes on both pipes at once and
turns git's failures into GitFailure with git's own words.

These are plain `git` processes: the hooks run on every commit, and git's own porcelain and
plumbing say everything gitstate asks. (GitPython, which starts the same processes under a
~100 ms import, is not used: see docs/development.md, "Dependencies".)
"""

from __future__ import annotations

import os
import re

from gitstate.errors import GitFailure, NotManaged

# Modules a hook imports say `TYPE_CHECKING = False` rather than import it from typing, which
# costs a hook ~3 ms (bench/README.md, "Hook latency"); said here once for all of them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

# Every door reads history as the commits say it is: never through replace objects
# (`refs/replace/*`, which anyone may push or fetch) or grafts (`info/grafts`). The graft file
# is pointed at a path that cannot exist (a file under /dev/null), which git skips silently.
# A root commit's files are part of what it changes, whatever `log.showRoot` says here.
_GLOBAL_OPTIONS = ("--no-replace-objects", "-c", "log.showRoot=true")
_DOORS_ENV = {"GIT_NO_REPLACE_OBJECTS": "1", "GIT_GRAFT_FILE": "/dev/null/no-grafts"}
# Long reads (a whole history's log, batches of objects) keep git's memory bounded: git would
# otherwise map its packs and cache inflated delta bases up to its defaults (GiBs and 96 MiB),
# ~250 MB for a 100,000-commit history, while walking no slower with these
# (bench/README.md, "Memory").
_READ_OPTIONS = ("-c", "core.deltaBaseCacheLimit=24m", "-c", "core.packedGitWindowSize=4m",
                 "-c", "core.packedGitLimit=32m")
# Object ids are SHA-1 (40 hex digits) or SHA-256 (64, `git init --object-format=sha256`).
_COMMIT_ID = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\Z").match
EMPTY_TREES = {"sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
               "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}


# What these git commands do moves no ref: HEAD as a command read it still holds after them.
_MOVE_NO_REF = frozenset({"rev-parse", "cat-file", "config", "diff-index", "diff-tree", "log",
                          "ls-files", "ls-tree", "rev-list", "hash-object", "update-index",
                          "write-tree", "commit-tree", "merge-base", "var", "for-each-ref"})


def _command(args: tuple[str, ...]) -> str:
    """The git command of `args` (after its `-c NAME=VALUE` options)."""
    i = 0
    while i < len(args) and args[i] == "-c":
        i += 2
    return args[i] if i < len(args) else ""


def is_zero(oid: str) -> bool:
    """Is `oid` git's all-zero id (no object: a ref created or deleted, a file added or
    removed), of either length?"""
    return bool(oid) and not oid.strip("0")


def zero_like(oid: str) -> str:
    """The all-zero id of the repository `oid` (any id git gave) comes from: no git asked."""
    return "0" * len(oid)


class Git:
    """git in one repository (`cwd` is any directory inside its work tree, or a bare repo)."""

    def __init__(self, cwd: str | os.PathLike | None = None, env: dict[str, str] | None = None):
        self.cwd = str(cwd) if cwd is not None else None
        self.env = env
        self._format: str | None = None
        self.deadline: float | None = None   # git/spawning.py `bounded`
        self.known_git_dir: str | None = None   # the absolute git dir, where found already
        self._config: tuple | None = None   # git/configured.py: (files, stamp, values)
        self.hubs_queueing: set[str] = set()   # remotes that said they keep a landing queue
        # One command's git (`locate_repo(..., command=True)`): its `cat-file --batch` is kept
        # open (git/catfile.py), and what it read of HEAD is kept while it moves no ref
        self.command = False
        self.head_read: tuple[str, str] | None = None   # (commit, `--symbolic-full-name HEAD`)
        self.branch_read: str | None = None   # what HEAD named then ("HEAD": detached), kept
        self._kept = None
        # (base, index, paths) of the last `staged_changes` of one command's git, and the
        # index a commit was built on (git/atomic.py): the paths that rode along, told
        self.staged_read: tuple[str | None, tuple, list[str]] | None = None
        self.index_copied: tuple | None = None

    def index_stamp(self) -> tuple | None:
        """What tells the index file from any written over it (git/catfile.py)."""
        from gitstate.git.catfile import index_stamp
        return index_stamp(self.known_git_dir, self._env(None))

    def head_renamed(self) -> str | None:
        """What HEAD names now ("HEAD": no branch) where it is not what it named when the
        command began (`branch_read`), which decided where its move lands: read from the
        HEAD file; git asked as then where that file says otherwise (a symbolic ref further
        on, which git follows to its branch; reftable's HEAD, which says nothing)."""
        if self.branch_read is None or self.known_git_dir is None:
            return None
        try:
            with open(os.path.join(self.known_git_dir, "HEAD"), "rb") as fh:
                said = fh.read(4096).decode("utf-8", "surrogateescape")
        except OSError:
            return None
        now = said[5:].strip() if said.startswith("ref: ") else "HEAD"
        if now != self.branch_read:
            code, out, _ = self.call("rev-parse", "--symbolic-full-name", "HEAD")
            now = out.decode("utf-8", "surrogateescape").strip() if code == 0 else now
        return now if now != self.branch_read else None

    def close(self) -> None:
        """End the kept `cat-file --batch`, if any (a command's end; git ends it at exit)."""
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.close()

    def _env(self, extra: dict[str, str] | None) -> dict[str, str]:
        env = dict(os.environ if self.env is None else self.env)
        env.update(_DOORS_ENV)
        env.update(extra or {})
        return env

    def call(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
             long_read: bool = False) -> tuple[int, bytes, bytes]:
        """(exit code, stdout, stderr) of `git args...`, whatever git says: both pipes are
        read at once, so a git (or a hub) that writes a lot to either never blocks.
        `long_read`: git's memory is bounded (`_READ_OPTIONS`)."""
        argv = ["git", *_GLOBAL_OPTIONS, *(_READ_OPTIONS if long_read else ())] \
            + (["-C", self.cwd] if self.cwd else []) + list(args)
        full_env = self._env(env)
        if args and args[0] == "config":
            self._config = None   # it may be a write: read it all again when next asked
        if self.head_read is not None and _command(args) not in _MOVE_NO_REF:
            self.head_read = None
        if self.deadline is not None:
            from gitstate.git.spawning import remote_command, spawn_to_files
            if remote_command(args):
                return spawn_to_files(argv, input, full_env, self.deadline)
        if _can_spawn_light(input):
            return _spawn_light(argv, input, full_env)
        if long_read:
            from gitstate.git.spawning import spawn_to_files
            return spawn_to_files(argv, input, full_env)
        import subprocess
        proc = subprocess.run(argv, input=input, capture_output=True, env=full_env)
        return proc.returncode, proc.stdout, proc.stderr

    def run(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True, long_read: bool = False) -> bytes:
        """stdout of `git args...`; GitFailure (with git's message) if it fails and `check`."""
        code, out, err = self.call(*args, input=input, env=env, long_read=long_read)
        if check and code != 0:
            raise GitFailure(_plain(err, args), where=f"git {args[0]}")
        return out

    def committer_time(self) -> float:
        """The time a commit made now gets: GIT_COMMITTER_DATE's, as git reads it, where set
        (a move stamps the commit's own time); else now."""
        if os.environ.get("GIT_COMMITTER_DATE"):
            code, out, _ = self.call("var", "GIT_COMMITTER_IDENT")
            parts = out.decode("utf-8", "replace").split() if code == 0 else []
            if len(parts) >= 2 and parts[-2].isdigit():
                return float(parts[-2])
        import time
        return time.time()

    def text(self, *args: str, **kw) -> str:
        return self.run(*args, **kw).decode("utf-8", "replace").strip()

    def ok(self, *args: str, env: dict[str, str] | None = None) -> bool:
        return self.call(*args, env=env)[0] == 0

    def stream(self, *args: str, sep: bytes = b"\n") -> Iterator[bytes]:
        """Records of a long-running git command's stdout, split on `sep`, as they come:
        the caller works while git is still writing. git starts at once, so a caller may do
        other work while git walks before it reads the first record."""
        return (record for batch in self.stream_batches(*args, sep=sep) for record in batch)

    def stream_batches(self, *args: str, sep: bytes = b"\n") -> Iterator[list[bytes]]:
        """`stream`'s records a list at a time, as each read of git's output brings them (a
        thread handing records to another pays its locks once per list, not per record).
        git starts now; its output is read as the caller iterates."""
        from gitstate.git.streamed import started
        # GIT_FLUSH=0: git log flushes after every commit when writing to a pipe, a system
        # call per record (a third of the time of a long log); full buffers still arrive
        return started(["git", *_GLOBAL_OPTIONS, *_READ_OPTIONS, *args], self.cwd,
                       self._env({"GIT_FLUSH": "0"}), args, sep, _plain)

    def log_records(self, fields: list[str], *args: str,
                    check: bool = True) -> Iterator[list[str]]:
        """Commits of `git log ARGS`, each as a list of `fields` (format placeholders such as
        %H, %ct, %an, %s, %B), read unambiguously: records end with NUL (`-z`) and fields
        with newline, which only the last field may contain (a name or a subject cannot).
        Records whose first field is not a commit id are skipped. git starts at once."""
        fmt = "--format=" + "%n".join(fields)
        stream = self.stream("log", "-z", fmt, *args, sep=b"\0") if check else \
            iter(self.run("log", "-z", fmt, *args, check=False).split(b"\0"))
        from gitstate.git.streamed import records
        return records(stream, len(fields), _COMMIT_ID)

    # -- where am I ---------------------------------------------------------------------

    def is_bare(self) -> bool:
        return self.text("rev-parse", "--is-bare-repository") == "true"

    def object_format(self) -> str:
        """`sha1` or `sha256`: the repository's hash, asked of git once. Where an id git gave
        is at hand, `zero_like(id)` needs no git at all."""
        if self._format is None:
            self._format = self.text("rev-parse", "--show-object-format")
        return self._format

    def zero(self) -> str:
        """The repository's all-zero id (40 or 64 digits)."""
        return "0" * (64 if self.object_format() == "sha256" else 40)

    def empty_tree(self) -> str:
        """The id of the empty tree in this repository's hash."""
        return EMPTY_TREES.get(self.object_format()) or self.text(
            "hash-object", "-t", "tree", "--stdin", input=b"")

    # -- refs and objects ---------------------------------------------------------------

    def rev(self, rev: str) -> str | None:
        """The commit a revision names, or None (unborn HEAD, unknown name)."""
        code, out, _ = self.call("rev-parse", "-q", "--verify", f"{rev}^{{commit}}")
        return (out.decode().strip() or None) if code == 0 else None

    def head(self) -> str | None:
        return self.rev("HEAD")

    def cat_batch(self, specs: Iterable[str], max_size: int | None = None
                  ) -> list[tuple[str, str, bytes] | None]:
        """(sha, type, content) of each object named (`rev`, `rev:path`, `:path`) in one
        `git cat-file --batch`; None for a name that resolves to nothing.

        With `max_size`, sizes are asked first (`--batch-check`) and an object larger than
        that is not read: its content is an `Oversized` standing for it (history from
        others may hold a blob of gigabytes; its size alone is enough to refuse it)."""
        specs = list(specs)
        if not specs:
            return []
        for s in specs:
            if "\n" in s:
                raise GitFailure(f"a path with a newline cannot be read: {s!r}")
        if max_size is not None:
            from gitstate.git.catfile import bounded
            return bounded(self, specs, max_size)
        asked = "".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape")
        out = None
        if self.command:
            from gitstate.git.catfile import kept_answers
            out = kept_answers(self, asked, specs, ["git", *_GLOBAL_OPTIONS, *_READ_OPTIONS])
        if out is None:   # a path as git gave it, byte for byte
            out = self.run("cat-file", "--batch", input=asked, long_read=True)
        results: list[tuple[str, str, bytes] | None] = []
        pos = 0
        for _ in specs:
            nl = out.index(b"\n", pos)
            header = out[pos:nl]
            pos = nl + 1
            if header.endswith((b" missing", b" ambiguous")):
                results.append(None)
                continue
            sha, kind, size = header.split()
            results.append((sha.decode(), kind.decode(), out[pos:pos + int(size)]))
            pos += int(size) + 1
        return results

    def cat_files(self, specs: Iterable[str], max_size: int | None = None) -> list[bytes | None]:
        """Blob contents of `rev:path` / `:path` in one batch; None if absent or not a blob
        (with `max_size`, an `Oversized` for a blob larger than that)."""
        return [r[2] if r is not None and r[1] == "blob" else None
                for r in self.cat_batch(specs, max_size)]

    def hash_object(self, data: bytes) -> str:
        return self.text("hash-object", "-w", "--stdin", input=data)

    def ls_tree_paths(self, rev: str, prefix: str = "") -> list[str]:
        args = ["ls-tree", "-r", "-z", "--name-only", rev]
        if prefix:
            args += ["--", prefix]
        return [p for p in self.run(*args).decode("utf-8", "surrogateescape").split("\0") if p]

    def index_paths(self, prefix: str = "") -> list[str]:
        args = ["ls-files", "-z", "--cached"]
        if prefix:
            args += ["--", prefix]
        return [p for p in self.run(*args).decode("utf-8", "surrogateescape").split("\0") if p]

    def staged_changes(self, base: str | None) -> list[str]:
        """Paths whose index entry differs from `base` (None: nothing committed yet)."""
        stamp = self.index_stamp() if self.command else None
        out = self.run("diff-index", "--cached", "-z", "--name-only", "--no-renames",
                       base or self.empty_tree())
        paths = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
        if stamp and stamp == self.index_stamp():
            self.staged_read = (base, stamp, paths)   # git read this very index
        return paths

    def config(self, key: str) -> str | None:
        """`git config --get KEY`, answered from one `git config --list` per command: its
        values are read again when a file it came from (or one git would read) changed, or
        the environment that names them did."""
        from gitstate.git.configured import config_name, read_config, stamp
        name = config_name(key)
        found = self._config
        if name is not None and (found is None or found[1] != stamp(self, found[0])):
            found = self._config = read_config(self)
        if name is None or found is None:
            code, out, _ = self.call("config", "--get", key)
            return out.decode().strip() if code == 0 else None
        value = found[2].get(name)
        return value.strip() if value is not None else None


# Running git without the `subprocess` module: it is the largest import left on the hook path.
# A small input is written into the pipe before git starts reading, which cannot block while
# it fits the pipe's buffer (one page at least); anything larger goes through `subprocess`.
_LIGHT_INPUT_MAX = 4096


def _can_spawn_light(input: bytes | None) -> bool:
    return hasattr(os, "posix_spawnp") and (input is None or len(input) <= _LIGHT_INPUT_MAX)


def _spawn_light(argv: list[str], input: bytes | None,
                 env: dict[str, str] | None) -> tuple[int, bytes, bytes]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions: list[tuple[int, ...]] = [
        (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2)]
    # No CLOSE actions: the pipes are close-on-exec, and one is itself 0, 1 or 2 where this
    # process started with that closed (closing it after the moves took git's stdin away)
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ if env is None else env,
                              file_actions=actions)
    except OSError as exc:
        for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
            os.close(fd)
        raise GitFailure(f"cannot run git: {exc.strerror}",
                         hint="install git and make sure it is on PATH") from None
    os.close(in_r)
    os.close(out_w)
    os.close(err_w)
    try:
        if input:
            os.write(in_w, input)
    except BrokenPipeError:
        pass
    finally:
        os.close(in_w)
    out, err = _read_both(out_r, err_r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out, err


def _read_both(out_r: int, err_r: int) -> tuple[bytes, bytes]:
    """Everything a child writes to its stdout and stderr, read as it comes on either: a child
    that fills one pipe while the other is being waited on would otherwise never finish."""
    import select
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    open_fds = 2
    try:
        while open_fds:
            for fd, _event in poller.poll():
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    poller.unregister(fd)
                    open_fds -= 1
    finally:
        os.close(out_r)
        os.close(err_r)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


def _plain(stderr: bytes, args: tuple[str, ...]) -> str:
    """git's stderr made into one readable sentence."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    fatal = [ln.split(":", 1)[1].strip() if ln.startswith(("fatal:", "error:")) else ln
             for ln in lines if not ln.startswith("hint:")]
    text = "; ".join(fatal) or "git failed with no message"
    return text


def find_repo(path: str | os.PathLike | None = None) -> tuple[Git, Path, Path]:
    """(git, top of work tree, git dir) of the repository containing `path`."""
    from pathlib import Path
    git, top, gdir = locate_repo(path)
    return git, Path(top), Path(gdir)


def locate_repo(path: str | os.PathLike | None = None, *,
                command: bool = False) -> tuple[Git, str, str]:
    """`find_repo` in plain strings (the views need no `pathlib`). `command`: the git of one
    short command (a move), which keeps its `cat-file --batch` open and HEAD as read here,
    asked in the same process, while it moves no ref (`Git.head_read`)."""
    git = Git(path)
    asked = ("HEAD^{commit}", "--symbolic-full-name", "HEAD") if command else ()
    code, out, _ = git.call("rev-parse", "--show-toplevel", "--absolute-git-dir", *asked)
    lines = out.decode().splitlines()
    if len(lines) < 2 or (code != 0 and not asked):
        where = os.path.abspath(path or ".")
        raise NotManaged(f"not inside a git work tree: {where}",
                         hint="run `git init` first, then `gitstate init`")
    found = Git(lines[0])
    found.known_git_dir = lines[1]
    found.command = command
    if command and code == 0 and len(lines) == 4:   # else (unborn HEAD) asked when needed
        found.head_read = (lines[2], lines[3])
        found.branch_read = lines[3]
    return found, lines[0], lines[1]
