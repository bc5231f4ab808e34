"""What `gitstate doctor` checks of Gemini CLI, only in a project that uses it (a
`.gemini/settings.json` whose hooks run gitstate, or the shim `gitstate init --runtime gemini`
writes):

- gemini-hooks: gitstate's hooks are in `.gemini/settings.json`, and can run (the context
  hook's command, as Gemini CLI runs it: `bash -c` in the project, with an empty event).
- gemini-trust: Gemini CLI loads the project's settings only in a trusted folder, and `gemini
  -p` refuses to run in one that is not. Read from `~/.gemini/trustedFolders.json`: the
  project, or a folder above it, trusted (`TRUST_FOLDER` of the folder itself, `TRUST_PARENT`
  of the folder a rule names, which trusts its parent's tree) and none of them refused.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from gitstate.git.repo import Managed
from gitstate.runtime.gemini.settings import COMMAND, HOOKS, SETTINGS, SHIM, SUFFIX

WAIT = 30          # seconds for the hook's command
FIX_INIT = "run `gitstate init --runtime gemini`"
FIX_TRUST = "run `gemini` in the project and trust the folder"


def finding(status: str, check: str, detail: str, fix: str | None = None) -> dict:
    return {"status": status, "check": check, "detail": detail, "fix": fix}


def gitstate_hooks(top: Path) -> list[tuple[str, str]] | None:
    """(event, gitstate hook) of each gitstate hook in `.gemini/settings.json` (None: no
    readable file)."""
    try:
        data = json.loads((top / SETTINGS).read_text(encoding="utf-8"))
        out = []
        for event, groups in (data.get("hooks") or {}).items():
            for group in groups if isinstance(groups, list) else []:
                for hook in group.get("hooks") or []:
                    command = hook.get("command")
                    if isinstance(command, str) and command.startswith(COMMAND):
                        out.append((event, command[len(COMMAND):].split(" ")[0]))
        return out
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def findings(repo: Managed) -> list[dict]:
    if repo.top is None:
        return []
    top = Path(repo.top)
    found = gitstate_hooks(top)
    if not found and not (top / SHIM).is_file():
        return []     # the project does not use Gemini CLI (with gitstate): nothing to say
    if found is None:
        return [finding("warn", "gemini-hooks", f"{SETTINGS} cannot be read", FIX_INIT)]
    want = {spec[1] for spec in HOOKS.values()}
    missing = sorted(want - {name for _e, name in found})
    if missing:
        return [finding("warn", "gemini-hooks", f"{SETTINGS} lacks gitstate's hooks: "
                        f"{', '.join(missing)}", FIX_INIT)]
    return [_runs(top), _trust(top)]


def _runs(top: Path) -> dict:
    command = f"{COMMAND}context{SUFFIX}"
    try:
        res = subprocess.run(["bash", "-c", command], cwd=top, input="{}",
                             capture_output=True, text=True, timeout=WAIT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return finding("fail", "gemini-hooks", f"gitstate's Gemini CLI hook cannot run: {exc}",
                       FIX_INIT)
    if res.returncode != 0:
        said = (res.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return finding("fail", "gemini-hooks", f"gitstate's Gemini CLI hook fails "
                       f"(exit {res.returncode}): {said}", FIX_INIT)
    return finding("ok", "gemini-hooks", f"gitstate's hooks are in {SETTINGS} and run")


def trusted_folders() -> Path:
    return Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                or Path.home() / ".gemini" / "trustedFolders.json")


def trust_of(top: Path, rules: dict) -> bool | None:
    """Whether the rules trust `top` (None: no rule says), the nearest rule deciding."""
    for folder in (top, *top.parents):
        for path, level in rules.items():
            if level == "TRUST_FOLDER" and Path(path) == folder:
                return True
            if level == "TRUST_PARENT" and Path(path).parent == folder:
                return True
            if level == "DO_NOT_TRUST" and Path(path) == folder:
                return False
    return None


def _trust(top: Path) -> dict:
    path = trusted_folders()
    try:
        rules = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError) as exc:
        return finding("warn", "gemini-trust", f"{path} cannot be read: {exc}", FIX_TRUST)
    if not isinstance(rules, dict):
        return finding("warn", "gemini-trust", f"{path} does not hold an object", FIX_TRUST)
    said = trust_of(top, rules)
    if said:
        return finding("ok", "gemini-trust", f"Gemini CLI trusts {top}")
    how = "refuses" if said is False else "does not trust"
    return finding("warn", "gemini-trust", f"Gemini CLI {how} {top}: it ignores {SETTINGS} "
                   "there, and `gemini -p` will not run", FIX_TRUST)
