"""The processes agents recorded (`pid`, `host`): whether one still runs, and stopping one
as the maos seed does (SIGTERM, a bounded wait, SIGKILL)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable

from gitstate.law import statefile

STARTED = "pid_started"   # the recorded process's start (clock ticks after boot, Linux)


def started(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot), where /proc tells; else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[-1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def stamp(pid: object, host: object = None) -> int | None:
    """What `pid_started` a recorded `pid` gets: its start when it runs on this host, 0 when
    it runs nowhere here (so that a process given that pid later is never taken for it: not
    reaped as alive, never signalled by `shutdown`), None when this host cannot tell (another
    host, no /proc)."""
    import socket
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if isinstance(host, str) and host.strip() and host.strip() != socket.gethostname():
        return None
    since = started(pid)
    if since is not None:
        return since
    return 0 if os.path.isdir("/proc/self") else None


def alive(pid: int, since: object = None) -> bool:
    """Whether process `pid` runs, and is the one that started at `since` when that was
    recorded (a pid the system gave to another process since is not the recorded one)."""
    if isinstance(since, str) and since.strip().isdigit():
        since = int(since)     # as the state file's front matter reads it back
    if isinstance(since, int) and not isinstance(since, bool):
        now = started(pid)
        if now is not None and now != since:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:   # a zombie has ended; only its parent has not read its status yet (Linux)
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[:1] != [b"Z"]
    except OSError:
        return True


def stop_process(front: dict, host: str, grace: float, say: Callable[[str], None],
                 agent: str) -> str | None:
    """The seed's graceful stop of an agent's recorded process: SIGTERM, up to `grace`
    seconds for it to end, then SIGKILL. What happened, as recorded in `stopped:` (None: no
    process recorded). A process on another host is not signalled, and said."""
    import signal
    pid = front.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    where = statefile.as_text(front.get("host"))
    if where != host:
        said = f"not signalled: process {pid} runs on {where or 'an unrecorded host'}, not {host}"
        say(f"{agent}: {said}")
        return said
    if pid in (os.getpid(), os.getppid()):
        said = f"not signalled: process {pid} is this gitstate or the process that started it"
        say(f"{agent}: {said}")
        return said
    if not alive(pid, front.get(STARTED)):
        return f"process {pid} had already ended"    # or the pid is another process's now
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return f"process {pid} had already ended"
    except PermissionError:
        said = f"not signalled: process {pid} belongs to another user"
        say(f"{agent}: {said}")
        return said
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not alive(pid, front.get(STARTED)):
            say(f"{agent}: process {pid} ended on SIGTERM")
            return f"process {pid} ended on SIGTERM"
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    say(f"{agent}: process {pid} did not end within {grace:g}s of SIGTERM; killed (SIGKILL)")
    return f"process {pid} killed (SIGKILL) after {grace:g}s"
