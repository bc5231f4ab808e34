"""The resident judge's server (`doors/resident.py` says what it is and how it is reached):
one request at a time, each run as the in-process hook would run in the client's place.
`resident.start` starts it (`python -c SERVE SOCKET`, `-m` would look in the work tree first).
"""

from __future__ import annotations

import io
import os
import socket
import struct
import sys
import time
from typing import NamedTuple

from gitstate.doors.resident import (
    IDLE,
    MAX_REQUEST,
    NOT_SERVED,
    SERVED,
    SOCKET,
    STATUS,
    TAG,
    TICK,
    identity,
    private,
    sources,
)


class Judge:
    def __init__(self, sock: str, idle: float):
        self.sock = os.path.abspath(sock)
        self.folder = os.path.dirname(self.sock)
        self.idle = idle
        self.env = dict(os.environb)
        self.me = identity(self.env)
        self.python = os.fsencode(sys.executable)   # a client of another Python is not served
        # the encoding and errors of its start's streams: a client's Python, configured as this
        # one (`identity`), reads and writes its streams with them
        self.streams = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
        self.sources = sources()
        self.inode: int | None = None
        self.served = 0
        self.since = int(time.time())

    def serve(self) -> int:
        """Bind, then answer requests until idle, replaced or stale."""
        server = self._bind()
        if server is None:
            return 1
        from gitstate.doors.hooks import run_hook  # imported now: each request finds it warm
        last = time.monotonic()
        try:
            while True:
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    if self._idle(last):
                        return 0
                    continue
                with conn:
                    stale = self.sources != sources()
                    if self._answer(conn, run_hook, stale):
                        self.served += 1
                        self._say()
                        last = time.monotonic()   # (only a judgement keeps it: a client
                        # not served cannot start a judge of its own while this one answers)
                if stale or self._idle(last):
                    return 0
        finally:
            self._close(server)

    def _idle(self, last: float) -> bool:
        """Idle too long since the last judgement, or replaced by another judge."""
        return time.monotonic() - last > self.idle or not self._ours()

    def _close(self, server: socket.socket) -> None:
        server.close()
        if self._ours():
            _unlink(self.sock)
        self._unsay()

    def _bind(self) -> socket.socket | None:
        """The listening socket, bound by its name inside its folder (a socket's path is
        limited to ~100 bytes; a repository's is not). A socket left by a judge that died is
        replaced; a living judge's is not."""
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not private(self.folder):
                raise OSError("a folder others may write in")
            os.chdir(self.folder)
            if os.path.exists(SOCKET):
                if _answers(SOCKET):
                    return None
                _unlink(SOCKET)
            old = os.umask(0o077)
            try:
                server.bind(SOCKET)
            finally:
                os.umask(old)
            server.listen(16)
            self.inode = os.stat(SOCKET).st_ino
            self._say()
        except OSError:
            server.close()
            return None
        server.settimeout(TICK)
        return server

    def _say(self) -> None:
        """`judge.json` beside the socket: this judge's pid, since when it runs and how many
        judgements it gave (`gitstate doctor` reads it)."""
        import json
        tmp = f"{STATUS}.{os.getpid()}.tmp"
        _unlink(tmp)
        try:   # a new file, never one planted at its name (a group may write in the folder)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            with open(os.open(tmp, flags, 0o600), "w", encoding="utf-8") as fh:
                json.dump({"pid": os.getpid(), "since": self.since, "served": self.served,
                           "socket": self.sock}, fh)
            os.replace(tmp, STATUS)
        except OSError:
            _unlink(tmp)

    def _unsay(self) -> None:
        """Remove `judge.json` if it is still this judge's."""
        import json
        path = os.path.join(self.folder, STATUS)
        try:
            with open(path, encoding="utf-8") as fh:
                mine = json.load(fh).get("pid") == os.getpid()
        except (OSError, ValueError, AttributeError):
            return
        if mine:
            _unlink(path)

    def _ours(self) -> bool:
        """Is the socket in place still the one this judge bound?"""
        try:
            return os.stat(self.sock).st_ino == self.inode
        except OSError:
            return False

    def _answer(self, conn: socket.socket, run_hook, stale: bool) -> bool:
        """Take one request and answer it; True if it was judged here. The client's streams
        are let go before the answer: the client, and git after it, may exit on it, and a
        caller reading their output to its end must not wait for this judge."""
        conn.settimeout(5)
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            return False
        code = None
        try:
            parsed = self._servable(conn, request, stale, fds)
            if parsed is not None:
                code = self._run(run_hook, parsed, fds)
        finally:
            for fd in fds:
                os.close(fd)
        try:
            conn.sendall(NOT_SERVED if code is None else SERVED + bytes([code & 0xFF]))
        except OSError:
            return False
        return code is not None

    def _become(self, request: Request, fds: list[int]) -> None:
        """This process made the client's: its streams, environment, folder and parent."""
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.environb.clear()
        os.environb.update(request.env)
        os.chdir(request.cwd)
        os.getppid = lambda: request.parent
        sys.stdin, sys.stdout, sys.stderr = (_stream(fd, like)
                                             for fd, like in enumerate(self.streams))
        sys.argv = ["-c", *request.args]

    def _servable(self, conn: socket.socket, request: bytes | None, stale: bool, fds: list[int]
                  ) -> Request | None:
        """The request, when this judge may judge it as the client's own process would."""
        parsed = _parse(request) if request and not stale and _same_user(conn) else None
        if parsed is not None and parsed.python == self.python \
                and identity(parsed.env) == self.me and len(fds) == 3:
            return parsed
        return None

    def _run(self, run_hook, request: Request, fds: list[int]) -> int | None:
        """`run_hook` as the client's process would run it: its folder, environment, streams,
        umask and parent (the hook asks it whether the `git commit` above is an --amend);
        all restored after. None if this process could not be made so (nothing was read)."""
        args = request.args
        saved = [os.dup(fd) for fd in (0, 1, 2)]
        streams = (sys.stdin, sys.stdout, sys.stderr, sys.argv)
        getppid, mask = os.getppid, os.umask(request.umask)
        try:
            try:
                self._become(request, fds)
            except OSError:
                return None
            return _judged(run_hook, args)
        finally:
            _flush()
            sys.stdin, sys.stdout, sys.stderr, sys.argv = streams
            os.getppid = getppid
            os.umask(mask)
            for target, fd in enumerate(saved):
                os.dup2(fd, target)
                os.close(fd)
            os.environb.clear()
            os.environb.update(self.env)
            try:
                os.chdir(self.folder)
            except OSError:   # gone: so is the socket, and this judge with it
                pass


def _judged(run_hook, args: list[str]) -> int:
    try:
        return _code(run_hook(args[0], args[1:]) if args else 2)
    except SystemExit as exc:
        return _code(exc.code)
    except Exception:   # a bug: said as the in-process hook would say it
        import traceback
        traceback.print_exc()
        return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _stream(fd: int, like) -> io.TextIOWrapper:
    """Standard stream `fd` (0, 1, 2) as Python would have made it at its start, with the
    encoding and errors of `like` (this judge's own): stdout line-buffered on a terminal only,
    stderr always."""
    raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
    return io.TextIOWrapper(raw, encoding=getattr(like, "encoding", None),
                            errors=getattr(like, "errors", None),
                            line_buffering=fd == 2 or (fd == 1 and raw.isatty()))


def _code(value) -> int:
    if value is None:
        return 0
    return value if isinstance(value, int) else 1


def _receive(conn: socket.socket) -> tuple[bytes | None, list[int]]:
    """The request (None: too large to be a client's) and the descriptors that came with its
    first bytes, which the caller closes (here only if the request breaks off)."""
    data, received, _flags, _addr = socket.recv_fds(conn, 65536, 3)
    fds = list(received)
    try:
        while len(data) < 4:
            more = conn.recv(65536)
            if not more:
                raise ValueError("short request")
            data += more
        size = int.from_bytes(data[:4], "big")
        if size > MAX_REQUEST:
            return None, fds
        while len(data) < 4 + size:
            more = conn.recv(min(65536, 4 + size - len(data)))
            if not more:
                raise ValueError("short request")
            data += more
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return data[4:4 + size], fds


class Request(NamedTuple):
    python: bytes           # the client's interpreter
    cwd: bytes
    parent: int             # the client's parent: the shim's shell, under the `git commit`
    umask: int
    args: list[str]         # the hook's name and arguments
    env: dict[bytes, bytes]


def _parse(request: bytes) -> Request | None:
    """A client's request; None if it is no client's."""
    fields = request.split(b"\0")
    if not _well_formed(fields):
        return None
    count = int(fields[5])
    env = dict(_pairs(fields[6 + count:]))
    return Request(fields[1], fields[2], int(fields[3]), int(fields[4]),
                   [os.fsdecode(a) for a in fields[6:6 + count]], env)


def _well_formed(fields: list[bytes]) -> bool:
    """The tag, three numbers, the arguments they count, and a umask."""
    return len(fields) >= 6 and fields[0] == TAG and all(f.isdigit() for f in fields[3:6]) \
        and len(fields) >= 6 + int(fields[5]) and int(fields[4]) <= 0o777


def _pairs(items: list[bytes]):
    for item in items:
        key, sep, value = item.partition(b"=")
        if sep and key:
            yield key, value


def _same_user(conn: socket.socket) -> bool:
    """Is the peer this judge's own user, and does it see the files as this judge does (Linux's
    SO_PEERCRED and /proc: the same mount namespace and root; a container or a sandbox may
    reach this socket and name other folders by the same paths, or these by others)?
    Elsewhere the socket's own mode, 0700, keeps others out."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option,
                                                         struct.calcsize("3i")))
    mine = _place("self")
    return uid == os.getuid() and mine is not None and _place(str(pid)) == mine


def _place(pid: str) -> tuple | None:
    """The mount namespace and root directory of process `pid` (None: not to be known)."""
    try:
        root = os.stat(f"/proc/{pid}/root")
        return os.readlink(f"/proc/{pid}/ns/mnt"), root.st_dev, root.st_ino
    except OSError:
        return None


def _answers(path: str) -> bool:
    """Does a judge answer on this socket?"""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1)
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    """`main([SOCKET])` (`resident.SERVE`): serve until idle, replaced or stale."""
    os.closerange(3, 1024)      # no descriptor of the hook that started it is held open
    if len(argv) != 1:
        return 2
    os.environ.pop("GITSTATE_JUDGE_START", None)
    return Judge(argv[0], float(os.environ.get("GITSTATE_JUDGE_IDLE") or IDLE)).serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
