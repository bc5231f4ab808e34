"""What `gitstate doctor` checks of Codex CLI, only in a project that uses it (a
`.codex/hooks.json` that runs gitstate, or the shim `gitstate init --runtime codex` writes):

- codex-hooks: gitstate's hooks are in `.codex/hooks.json`, and can run (the context hook's
  command, as Codex runs it: `/bin/bash -c` in the project, with an empty event).
- codex-trust: Codex loads the project's `.codex/` only in a trusted project and runs a hook
  only once its entry is trusted. Read from the user's config.toml (`$CODEX_HOME`, default
  ~/.codex): `[projects."<path>"] trust_level` and `[hooks.state."<key>"] trusted_hash`. A
  recorded hash may be stale (the hash covers the entry, computed by Codex): with `codex` on
  PATH, its app-server's `hooks/list` says which hooks are trusted; without it, how many of
  gitstate's hooks have a trust recorded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from gitstate.doors.doctor import finding
from gitstate.git.repo import Managed
from gitstate.runtime.codex.settings import COMMAND, HOOKS, HOOKS_FILE, SHIM, SUFFIX
from gitstate.runtime.shared import HooksFile

ASK = 15           # seconds for Codex's app-server
FIX_TRUST = "run `codex` in the project and accept it and its hooks (/hooks)"
FILE = HooksFile("codex", "Codex", HOOKS_FILE, SHIM, COMMAND, SUFFIX, HOOKS, "/bin/bash")


def findings(repo: Managed) -> list[dict]:
    return [] if repo.top is None else FILE.findings(Path(repo.top), _trust)


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _trust(top: Path, found: list[tuple[str, str, int, int]]) -> dict:
    path = codex_home() / "config.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return finding("warn", "codex-trust", f"{path} cannot be read: {exc}", FIX_TRUST)
    if not _project_trusted(config, top):
        return finding("warn", "codex-trust", f"Codex does not trust {top}: it ignores "
                       f"{HOOKS_FILE} and .codex/config.toml there", FIX_TRUST)
    return _hooks_trusted(config, top, found)


def _project_trusted(config: dict, top: Path) -> bool:
    projects = config.get("projects") or {}
    return any((projects.get(str(p)) or {}).get("trust_level") == "trusted"
               for p in (top, *top.parents))


def _hooks_trusted(config: dict, top: Path, found: list[tuple[str, str, int, int]]) -> dict:
    """Whether gitstate's hooks (`found`) are trusted: as Codex's app-server says, else as
    the user's config records."""
    source = top / HOOKS_FILE
    keys = {f"{source}:{snake(e)}:{g}:{h}" for e, _n, g, h in found}
    listed = _listed(top)
    if listed is not None:
        return _trust_listed(keys, listed)
    return _trust_recorded(keys, (config.get("hooks") or {}).get("state") or {})


def _trust_listed(keys: set[str], listed: dict[str, str]) -> dict:
    """What Codex's app-server says of the trust of gitstate's hooks (`keys`)."""
    bad = sorted(k.rsplit(":", 3)[1] for k, status in listed.items()
                 if k in keys and status != "trusted")
    unseen = sorted(k for k in keys if k not in listed)
    if bad or unseen:
        return finding("warn", "codex-trust", f"Codex skips gitstate's hooks it does not "
                       f"trust: {', '.join(bad + unseen)}", FIX_TRUST)
    return finding("ok", "codex-trust", f"the project and gitstate's {len(keys)} hooks "
                   "are trusted (codex app-server)")


def _trust_recorded(keys: set[str], state: dict) -> dict:
    """How many of gitstate's hooks (`keys`) have a trust recorded in the user's config."""
    recorded = sum(1 for k in keys if (state.get(k) or {}).get("trusted_hash"))
    if recorded < len(keys):
        return finding("warn", "codex-trust", f"trust recorded for {recorded} of {len(keys)} "
                       "of gitstate's hooks: Codex skips the others", FIX_TRUST)
    return finding("ok", "codex-trust", f"the project is trusted; trust recorded for "
                   f"{recorded} of {len(keys)} hooks (whether still current: run `codex` to "
                   "review)")


def _listed(top: Path) -> dict[str, str] | None:
    """{hook key: trust status} from `codex app-server`'s `hooks/list`, when `codex` is on
    PATH and answers within ASK seconds; else None."""
    codex = shutil.which("codex")
    if codex is None:
        return None
    lines: list[dict] = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"clientInfo": {"name": "gitstate-doctor", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
              "params": {"cwds": [str(top)]}}]
    try:
        proc = subprocess.Popen([codex, "app-server"], cwd=top, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)
    except OSError:
        return None
    try:
        return _answer(proc, lines)
    finally:
        proc.kill()
        proc.wait()


def _answer(proc: subprocess.Popen, lines: list[dict]) -> dict[str, str] | None:
    """The answer to `hooks/list` (the request of id 2) that `proc` gives within ASK
    seconds, once `lines` are written to it; None without one."""
    import selectors
    import time
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
        proc.stdin.flush()
    except OSError:
        return None
    deadline, buffer = time.monotonic() + ASK, b""
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not sel.select(deadline - time.monotonic()):
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            *whole, buffer = (buffer + chunk).split(b"\n")
            found = _hooks_listed(whole)
            if found is not None:
                return found
    return None


def _hooks_listed(lines: list[bytes]) -> dict[str, str] | None:
    """{hook key: trust status} from the answer to `hooks/list` among `lines`, if there."""
    for line in lines:
        result = _list_result(line)
        if result is not None:
            return {hook.get("key"): hook.get("trustStatus")
                    for entry in result.get("data") or []
                    for hook in entry.get("hooks") or []}
    return None


def _list_result(line: bytes):
    """The result of the answer to `hooks/list` (the request of id 2) when `line` is it."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("id") == 2 and "method" not in message:
        return message.get("result") or {}
    return None
