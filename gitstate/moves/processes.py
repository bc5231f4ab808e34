"""The processes agents recorded (`pid`, `host`): whether one still runs, and stopping one
as the maos seed does (SIGTERM, a bounded wait, SIGKILL)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import TypeGuard

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
    if not _a_pid(pid) or _elsewhere(host):
        return None
    since = started(pid)
    if since is not None:
        return since
    return 0 if os.path.isdir("/proc/self") else None


def _a_pid(pid: object) -> TypeGuard[int]:
    return isinstance(pid, int) and not isinstance(pid, bool) and pid > 0


def _elsewhere(host: object) -> bool:
    import socket
    return isinstance(host, str) and bool(host.strip()) and host.strip() != socket.gethostname()


def alive(pid: int, since: object = None) -> bool:
    """Whether process `pid` runs, and is the one that started at `since` when that was
    recorded (a pid the system gave to another process since is not the recorded one)."""
    since = _as_start(since)
    if since is not None and started(pid) not in (None, since):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _as_start(since: object) -> int | None:
    """A recorded `pid_started` (as the state file's front matter reads it back), or None."""
    if isinstance(since, str) and since.strip().isdigit():
        return int(since)
    return since if isinstance(since, int) and not isinstance(since, bool) else None


def _zombie(pid: int) -> bool:
    """A zombie has ended; only its parent has not read its status yet (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[:1] == [b"Z"]
    except OSError:
        return False


def stop_process(front: dict, host: str, grace: float, say: Callable[[str], None],
                 agent: str) -> str | None:
    """The seed's graceful stop of an agent's recorded process: SIGTERM, up to `grace`
    seconds for it to end, then SIGKILL. What happened, as recorded in `stopped:` (None: no
    process recorded). A process on another host is not signalled, and said."""
    import signal
    pid = front.get("pid")
    if not _a_pid(pid):
        return None
    said = _not_to_signal(pid, statefile.as_text(front.get("host")), host)
    if said:
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
    return _after_sigterm(pid, front, grace, say, agent)


def _not_to_signal(pid: int, where: str | None, host: str) -> str | None:
    """Why the process is not signalled from here (another host's, or this gitstate's)."""
    if where != host:
        return f"not signalled: process {pid} runs on {where or 'an unrecorded host'}, not {host}"
    if pid in (os.getpid(), os.getppid()):
        return f"not signalled: process {pid} is this gitstate or the process that started it"
    return None


def _after_sigterm(pid: int, front: dict, grace: float, say: Callable[[str], None],
                   agent: str) -> str:
    """Up to `grace` seconds for the process to end on SIGTERM, then SIGKILL."""
    import signal
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
