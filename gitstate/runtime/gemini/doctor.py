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
from pathlib import Path

from gitstate.doors.doctor import finding
from gitstate.git.repo import Managed
from gitstate.runtime.gemini.settings import COMMAND, HOOKS, SETTINGS, SHIM, SUFFIX
from gitstate.runtime.shared import HooksFile

FIX_TRUST = "run `gemini` in the project and trust the folder"
FILE = HooksFile("gemini", "Gemini CLI", SETTINGS, SHIM, COMMAND, SUFFIX, HOOKS, "bash",
                 lenient=True)


def findings(repo: Managed) -> list[dict]:
    return [] if repo.top is None else FILE.findings(Path(repo.top), _trust)


def trusted_folders() -> Path:
    return Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                or Path.home() / ".gemini" / "trustedFolders.json")


# a trust rule's level -> whether it trusts its folder (TRUST_PARENT: the folder's parent)
TRUSTS = {"TRUST_FOLDER": True, "TRUST_PARENT": True, "DO_NOT_TRUST": False}


def trust_of(top: Path, rules: dict) -> bool | None:
    """Whether the rules trust `top` (None: no rule says), the nearest rule deciding."""
    for folder in (top, *top.parents):
        for path, level in rules.items():
            at = Path(path).parent if level == "TRUST_PARENT" else Path(path)
            if at == folder and level in TRUSTS:
                return TRUSTS[level]
    return None


def _trust(top: Path, _found: list | None = None) -> dict:
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
