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

from gitstate.git.repo import Managed
from gitstate.runtime.codex.settings import COMMAND, HOOKS, HOOKS_FILE, SHIM, SUFFIX

WAIT = 30          # seconds for the hook's command
ASK = 15           # seconds for Codex's app-server
FIX_INIT = "run `gitstate init --runtime codex`"
FIX_TRUST = "run `codex` in the project and accept it and its hooks (/hooks)"


def finding(status: str, check: str, detail: str, fix: str | None = None) -> dict:
    return {"status": status, "check": check, "detail": detail, "fix": fix}


def _ours(command: object) -> bool:
    return isinstance(command, str) and command.startswith(COMMAND)


def gitstate_hooks(top: Path) -> list[tuple[str, str, int, int]] | None:
    """(event, gitstate hook, group, handler) of each gitstate hook in `.codex/hooks.json`
    (None: no readable file)."""
    try:
        data = json.loads((top / HOOKS_FILE).read_text(encoding="utf-8"))
        out = []
        for event, groups in (data.get("hooks") or {}).items():
            for g, group in enumerate(groups):
                for h, hook in enumerate(group.get("hooks") or []):
                    if _ours(hook.get("command")):
                        name = hook["command"][len(COMMAND):].split(" ")[0]
                        out.append((event, name, g, h))
        return out
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def findings(repo: Managed) -> list[dict]:
    if repo.top is None:
        return []
    top = Path(repo.top)
    found = gitstate_hooks(top)
    if not found and not (top / SHIM).is_file():
        return []     # the project does not use Codex (with gitstate): nothing to say
    if found is None:
        return [finding("warn", "codex-hooks", f"{HOOKS_FILE} cannot be read", FIX_INIT)]
    want = {spec[1] for spec in HOOKS.values()}
    missing = sorted(want - {name for _e, name, _g, _h in found})
    if missing:
        return [finding("warn", "codex-hooks", f"{HOOKS_FILE} lacks gitstate's hooks: "
                        f"{', '.join(missing)}", FIX_INIT)]
    return [_runs(top), _trust(top, found)]


def _runs(top: Path) -> dict:
    command = f"{COMMAND}context{SUFFIX}"
    try:
        res = subprocess.run(["/bin/bash", "-c", command], cwd=top, input="{}",
                             capture_output=True, text=True, timeout=WAIT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return finding("fail", "codex-hooks", f"gitstate's Codex hook cannot run: {exc}",
                       FIX_INIT)
    if res.returncode != 0:
        said = (res.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return finding("fail", "codex-hooks", f"gitstate's Codex hook fails "
                       f"(exit {res.returncode}): {said}", FIX_INIT)
    return finding("ok", "codex-hooks", f"gitstate's hooks are in {HOOKS_FILE} and run")


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
    projects = config.get("projects") or {}
    trusted = any((projects.get(str(p)) or {}).get("trust_level") == "trusted"
                  for p in (top, *top.parents))
    if not trusted:
        return finding("warn", "codex-trust", f"Codex does not trust {top}: it ignores "
                       f"{HOOKS_FILE} and .codex/config.toml there", FIX_TRUST)
    source = top / HOOKS_FILE
    keys = {f"{source}:{snake(e)}:{g}:{h}" for e, _n, g, h in found}
    listed = _listed(top)
    if listed is not None:
        bad = sorted(k.rsplit(":", 3)[1] for k, status in listed.items()
                     if k in keys and status != "trusted")
        unseen = sorted(k for k in keys if k not in listed)
        if bad or unseen:
            return finding("warn", "codex-trust", f"Codex skips gitstate's hooks it does not "
                           f"trust: {', '.join(bad + unseen)}", FIX_TRUST)
        return finding("ok", "codex-trust", f"the project and gitstate's {len(keys)} hooks "
                       "are trusted (codex app-server)")
    state = (config.get("hooks") or {}).get("state") or {}
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
            buffer += chunk
            *whole, buffer = buffer.split(b"\n")
            for line in whole:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == 2 \
                        and "method" not in message:
                    result = message.get("result") or {}
                    return {hook.get("key"): hook.get("trustStatus")
                            for entry in result.get("data") or []
                            for hook in entry.get("hooks") or []}
    return None
