"""What the runtime knows of a session, recorded once at SessionStart in the agent's state
file: the runtime's process (`pid`) and the machine it runs on (`host`), the `model`, and the
`worktree` the session works in. Health checks (`reap`, `watch`) judge an agent by its
recorded process, and `shutdown` stops it, without anyone setting `--set pid=`.

The runtime's process is the hook's nearest ancestor that is not a shell: Claude Code runs a
hook's command in a shell (`sh -c`), and the shim `.claude/hooks/gitstate` is a shell script
that execs gitstate, so the hook's own parent may be a shell that ends with the hook. The first
process above the shells is the one that started them: the `claude` process. Read from
`/proc` (Linux), else from `ps`; where neither answers, the hook's parent.
"""

from __future__ import annotations

import os
import socket
import subprocess

SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox",
                    "csh", "tcsh"))
FACTS = ("pid", "host", "model", "worktree", "pid_started")


def _parent_and_name(pid: int) -> tuple[int, str] | None:
    """(parent pid, command name) of a process, or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        name = stat[stat.index(b"(") + 1:stat.rindex(b")")].decode(errors="replace")
        return int(stat[stat.rindex(b")") + 1:].split()[1]), name
    except (OSError, ValueError, IndexError):
        pass
    try:
        out = subprocess.run(["ps", "-o", "ppid=,comm=", "-p", str(pid)], capture_output=True,
                             text=True, timeout=5).stdout.split(None, 1)
        return int(out[0]), out[1].strip()
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def runtime_pid() -> int:
    """The runtime's process: the nearest ancestor of this hook that is not a shell."""
    pid = os.getppid()
    for _ in range(16):   # a few shells at most; never a loop
        found = _parent_and_name(pid)
        if found is None:
            return pid
        parent, name = found
        name = os.path.basename(name).lstrip("-")
        if name not in SHELLS or parent <= 1:
            return pid
        pid = parent
    return pid


def model_of(event: dict) -> str | None:
    """The model the runtime names (SessionStart's `model`: an id, or `{id, display_name}`)."""
    model = event.get("model")
    if isinstance(model, dict):
        model = model.get("id")
    return model if isinstance(model, str) and model.strip() else None


def of_session(event: dict, worktree: str | None) -> dict:
    """The facts of this session, as they are written in a state file."""
    found: dict = {"pid": runtime_pid(), "host": socket.gethostname()}
    model = model_of(event)
    if model:
        found["model"] = model
    if worktree:
        found["worktree"] = worktree
    from gitstate.moves.processes import STARTED, started
    since = started(found["pid"])
    if since is not None:   # so a pid the system gives another process later is not taken
        found[STARTED] = since   # for this one, by `reap`, `watch` or `shutdown`
    return found


def changed(front: dict, found: dict) -> dict:
    """The facts that differ from what the state file records (empty: nothing to record)."""
    return {k: v for k, v in found.items() if front.get(k) != v}
