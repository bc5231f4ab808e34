"""The resident judge: the commit hooks' Python kept running between commits (its server:
`resident_server.py`).

A state commit's hooks would start Python, import gitstate and judge. The judge is a process
that has done the first two already: the pre-commit and commit-msg shims find its socket
beside the index (`<git dir>/gitstate/judge.sock`) and hand it their arguments, environment,
working folder and standard streams (the descriptors themselves, over the socket); it runs
the very `run_hook` an in-process hook runs, writing to the commit's own stderr, and answers
the exit code. The shim's Python client starts with `-I -S` and imports only `_socket`.

- Started on demand: a hook judged in-process, where the judge is wanted (`gitstate.judge`
  is not false, GITSTATE_JUDGE is not 0) and absent, starts one, detached, for the next
  commit. It exits after `GITSTATE_JUDGE_IDLE` seconds without a request (600), when its
  socket is removed or replaced, and when gitstate's source files change under it.
- It serves only its own user (the peer's credentials), seeing the files as it does (the same
  mount namespace and root), and only a client that would have run the same Python and
  gitstate the same way (its interpreter, `identity`); anything else is answered "not
  served", and the client judges in-process, as without a judge. The client tells nothing to
  a socket another user listens on (an index may be kept in a shared folder), and a judge
  lives only in a folder no other user may write in (`private`).
- A request it took and did not answer (it was killed) fails the commit: the client cannot
  tell how much of its standard input was read, so it never judges again on what is left.

The judgement is the same code on the same inputs, so every verdict is the one an in-process
hook gives (tests/doors/test_resident_judge.py runs commits both ways).
"""

from __future__ import annotations

import os
import sys

SOCKET = "judge.sock"
STATUS = "judge.json"          # beside the socket: its pid, since when, judgements given
TAG = b"gitstate-judge-2"
SERVED, NOT_SERVED = b"J", b"N"
IDLE = 600.0                   # seconds without a request before the judge exits
TICK = 1.0                     # how often an idle judge looks at its socket
MAX_REQUEST = 1 << 20         # an environment larger than this is no client of ours
# What must match between the judge's start and a client for the same gitstate to judge the
# same way, besides the Python itself: what Python reads at its start (every PYTHON* variable:
# where it finds modules, its encodings, warnings, limits), the locale its streams are read
# and written in, the clock's zone, and where the caches and the user's keys live.
_IDENTITY_ENV = (b"LANG", b"LC_ALL", b"LC_CTYPE", b"TZ", b"HOME", b"XDG_CACHE_HOME")

# The client, run by the shims as `"$py" -I -S -c "$CLIENT" SOCKET HOOK ARGS...`: it connects,
# hands over its request with fds 0-2, and exits with the judge's code. Not served (no
# judge, a stale one, another gitstate): it becomes the in-process hook (FALLBACK). Served
# but not answered: the commit fails (its stdin may be half read).
# (Python started with -c looks for modules in its folder first: the top of the work tree,
# where a commit may have put a `gitstate/` of its own. Neither the hook nor the judge does.)
FALLBACK = ("import sys; sys.path[0] or sys.path.pop(0); from gitstate.doors.hooks import main; "
            "sys.exit(main())")
SERVE = ("import sys; sys.path[0] or sys.path.pop(0); "
         "from gitstate.doors.resident_server import main; sys.exit(main(sys.argv[1:]))")
CLIENT = r"""
import _socket, os, sys
def stopped(pid):   # the judge is stopped (kill -STOP, a debugger): it answers nobody
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            return pid > 0 and f.read().rpartition(b")")[2].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False
sock, args, cwd, pid = sys.argv[1], sys.argv[2:], os.getcwd(), 0
env = [k + b"=" + v for k, v in os.environb.items() if k != b"GITSTATE_JUDGE_START"]
mask = os.umask(0o22)
os.umask(mask)
req = b"\0".join([b"gitstate-judge-2", os.fsencode(sys.executable), os.fsencode(cwd),
                  b"%d" % os.getppid(), b"%d" % mask, b"%d" % len(args)]
                 + [os.fsencode(a) for a in args] + env)
s, sent, said = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM), 0, b"N"
try:
    s.settimeout(5)
    os.chdir(os.path.dirname(sock) or ".")
    try:
        s.connect(os.path.basename(sock))
        # only a judge of this user is told anything (another may listen where the index is)
        if hasattr(_socket, "SO_PEERCRED"):
            cred = s.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
            pid = int.from_bytes(cred[:4], sys.byteorder)
            if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid() or stopped(pid):
                raise OSError
        else:
            st = os.stat(".")
            if st.st_uid != os.getuid() or st.st_mode & 0o022:   # a folder of this user only
                raise OSError
    finally:
        os.chdir(cwd)
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
    req = len(req).to_bytes(4, "big") + req
    sent = s.sendmsg([req], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    if sent < len(req):
        s.sendall(req[sent:])
except OSError:
    pass
if sent:   # the judge may have read the request (and the fds): its answer, else none
    said = b""
    s.settimeout(1)
    while len(said) < 2:
        try:
            got = s.recv(2 - len(said))
        except TimeoutError:
            if not stopped(pid):
                continue
            os.write(2, b"gitstate: the resident judge (pid %d) was stopped while it judged this "
                        b"commit; nothing was committed. Let it go on (kill -CONT %d) or end it "
                        b"(kill %d), then commit again.\n" % (pid, pid, pid))
            os._exit(1)
        except OSError:
            break
        if not got:
            break
        said += got
if said[:1] == b"J" and len(said) == 2:
    os._exit(said[1])
if said != b"N":
    os.write(2, b"gitstate: the resident judge stopped before it gave its verdict; nothing "
                b"was committed. Commit again (it is judged without the judge then).\n")
    os._exit(1)
s.close()
os.environ["GITSTATE_JUDGE_START"] = sock
os.execv(sys.executable, [sys.executable, "-c", "FALLBACK"] + args)
""".replace("FALLBACK", FALLBACK)
assert "'" not in CLIENT   # it is written inside the shims' single quotes


def start(sock: str) -> None:
    """Start a judge on `sock`, detached (its own session, no terminal, /dev/null for its
    streams): it outlives this hook. A failure to start costs the next commit nothing but its
    in-process judgement."""
    folder = os.path.dirname(sock)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not private(folder):
            return
        null = os.devnull
        argv = [sys.executable, "-c", SERVE, sock]
        os.posix_spawn(sys.executable, argv, os.environ, setsid=True, file_actions=[
                           (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                           (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                           (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)])
    except (OSError, NotImplementedError, AttributeError):   # no posix_spawn(setsid=) here
        pass


def identity(env) -> tuple:
    """What a client's environment must share with the judge's (`_IDENTITY_ENV`)."""
    return (tuple(env.get(k) for k in _IDENTITY_ENV),
            sorted(item for item in env.items() if item[0].startswith(b"PYTHON")))


def private(folder: str) -> bool:
    """Is `folder` a directory of this user's that no other user may write in (a group's
    members may: a umask of 002 makes gitstate's folders so)? A judge lives only in one (its
    socket, its status file); beside an index kept in a shared folder there is none."""
    import _socket
    import stat
    # (where a client cannot ask a socket's user, it trusts a folder only its user may write in)
    others = 0o002 if hasattr(_socket, "SO_PEERCRED") else 0o022
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & others


def sources() -> dict[str, int]:
    """Each source file of the gitstate this judge runs, with its time of change."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = {}
    for folder, _dirs, files in os.walk(top):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    found[path] = os.stat(path).st_mtime_ns
                except OSError:
                    continue
    return found
