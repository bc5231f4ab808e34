"""Installing the hook shims: render them for a lifecycle, chain to a user's own hooks."""

from __future__ import annotations

import os
import re
import shlex
import stat
from pathlib import Path

from gitstate.doors.precommit import has_mark
from gitstate.errors import GitstateError
from gitstate.law.lifecycle import LIFECYCLE_PATH, SHIMS_DIR, SIGNERS_PATH, Lifecycle

SHIM_MARK = "# gitstate-shim:"
# what a clone installs: the commit hooks, and the guard for every other way to a branch
HOOK_NAMES = ("pre-commit", "commit-msg", "reference-transaction")
CHAINED_SUFFIX = ".pre-gitstate"
# Claude Code's hooks run this committed shim (`gitstate init --runtime claude-code`), which
# finds gitstate as the git hook shims do; settings.json names it from the project's folder.
RUNTIME_SHIM = ".claude/hooks/gitstate"
RUNTIME_COMMAND = f'"$CLAUDE_PROJECT_DIR"/{RUNTIME_SHIM} '
BARE_COMMAND = "gitstate hook "   # what settings.json named before the shim
# Claude Code's `statusLine` (a person's own setting: `.claude/settings.local.json`) runs the
# same shim; CLAUDE_PROJECT_DIR, where it is not given, is the top of the work tree.
STATUSLINE_COMMAND = ('"${CLAUDE_PROJECT_DIR:-$(git rev-parse --show-toplevel)}"/'
                      f'{RUNTIME_SHIM} statusline')
# Claude Code's project MCP servers (.mcp.json, committed): gitstate's runs the same shim,
# found from the top of the work tree the session runs in (an MCP server is not given
# CLAUDE_PROJECT_DIR, and a session may start in a subfolder).
MCP_CONFIG = ".mcp.json"
MCP_NAME = "gitstate"
MCP_SERVER = {"command": "sh",
              "args": ["-c", f'exec "$(git rev-parse --show-toplevel)/{RUNTIME_SHIM}" mcp']}

# gitstate's Claude Code plugin (gitstate/claude_plugin, its files made by
# gitstate/runtime/claude_code/plugin.py): its hooks and MCP server run the plugin's own shim,
# which finds
# gitstate as the project's shim does. It stands down (exits 0, silently) where the project's
# committed settings already run gitstate's (`init --runtime claude-code`): it looks for these
# words, as JSON writes them, in .claude/settings.json (hooks) and .mcp.json (MCP server), so
# that one kind or the other runs, never both.
PLUGIN_NAME = "gitstate"
PLUGIN_SHIM = "bin/gitstate"
PLUGIN_COMMAND = f'"${{CLAUDE_PLUGIN_ROOT}}"/{PLUGIN_SHIM} hook '
PROJECT_HOOK_MARKS = (f"/{RUNTIME_SHIM} ", f'"{BARE_COMMAND}')
PROJECT_MCP_MARK = f"/{RUNTIME_SHIM}"


def runs_our_mcp(server: object, shim: str = RUNTIME_SHIM) -> bool:
    """Does a runtime's MCP server entry run gitstate's MCP server, in any of its forms (the
    shim at `shim`, `gitstate mcp`, `python -m gitstate mcp`)?"""
    words = _command_words(server)
    if words is None:
        return False
    if any(shim in w for w in words):
        return any("mcp" in w.split() or w == "mcp" for w in words)
    return _runs_gitstate_mcp(words)


def _command_words(server: object) -> list[str] | None:
    """An MCP server entry's command and arguments, if it has them as JSON should."""
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        return None
    args = server.get("args") or []
    if not isinstance(args, list):
        return None
    return [server["command"], *(str(a) for a in args)]


def _runs_gitstate_mcp(words: list[str]) -> bool:
    name = os.path.basename(words[0])
    return (name == "gitstate" and words[1:2] == ["mcp"]) or any(
        words[i:i + 3] == ["-m", "gitstate", "mcp"] for i in range(len(words)))


def paths_pattern(lc: Lifecycle) -> str:
    """A loose ERE that matches (at least) every state file path and every path of the law
    (lifecycle, allowed signers, shims, the agent files of `policies.agents_from`), as
    printed by `git diff --raw` or `--name-only` (which may quote unusual paths)."""
    head, _, tail = lc.state_file.partition("{id}")
    state = f"{_ere(tail)}\"?$" if tail else f"^\"?{_ere(head)}"
    agents = f"|{_ere(folder)}/.*\"?$" if (folder := lc.policies.agents_from) else ""
    return (f"{state}|{_ere(LIFECYCLE_PATH)}\"?$|{_ere(SIGNERS_PATH)}\"?$"
            f"|{_ere(SHIMS_DIR)}.*\"?${agents}")


def pathspecs(lc: Lifecycle) -> list[str]:
    """The same loose set as `paths_pattern`, as git pathspecs: the commit hooks let
    `git diff` itself pick the lines (no `grep` started per commit). Matching is on real
    paths, so quoting does not matter."""
    head, _, tail = lc.state_file.partition("{id}")
    state = f":(glob)**/*{_glob(tail)}" if tail else f":(glob){_glob(head)}**"
    agents = [f":(glob){_glob(f)}/*.md"] if (f := lc.policies.agents_from) else []
    return [state, f":(glob)**/{_glob(LIFECYCLE_PATH)}", f":(glob)**/{_glob(SIGNERS_PATH)}",
            f":(glob)**/{_glob(SHIMS_DIR)}**", *agents]


def concerns_glob(lc: Lifecycle) -> str:
    """A shell `case` pattern that matches (at least) every `git log` listing in which the ref
    guard's ERE (`paths_pattern` and the tags, merges and agent subjects of the guard) could
    match, ignoring case as `grep -i` does: a listing it does not match concerns gitstate in
    no way, and the guard starts no `grep` for it."""
    head, _, tail = lc.state_file.partition("{id}")
    if not (tail or head) or lc.accept:
        return "*"      # layout `{id}`: any path at the top may be a state file; any subject
                        # may read as a move in a `grammar.accept` form
    parts = [tail or head, LIFECYCLE_PATH, SIGNERS_PATH, SHIMS_DIR, lc.policies.agents_from]
    alternatives = [_caseless(part) for part in parts if part]
    # a merge: two parents, of SHA-1 (40 hex digits) or SHA-256 (64)
    alternatives += ["*\\[*"] + ["*'>'" + "[0-9a-fA-F]" * n + "' '*" for n in (40, 64)]
    if lc.policies.atomic_commits:
        alternatives.append("*'>@'*")
    return "|".join(alternatives)


def _caseless(part: str) -> str:
    return "*" + "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in part) + "*"


def _ere(text: str) -> str:
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def _glob(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def render_shim(name: str, lc: Lifecycle) -> str:
    from gitstate.doors.resident import CLIENT
    from gitstate.resources import read_shipped
    template = read_shipped("githooks", name)
    return (template.replace("@GITSTATE_PATHS@", paths_pattern(lc).replace("'", "'\\''"))
            .replace("@GITSTATE_CONCERNS@", concerns_glob(lc))
            .replace("@GITSTATE_PATHSPECS@", " ".join(shlex.quote(p) for p in pathspecs(lc)))
            .replace("@GITSTATE_ATOMIC@", "1" if lc.policies.atomic_commits else "")
            .replace("@GITSTATE_ACCEPT@", "1" if lc.accept else "")
            .replace("@GITSTATE_JUDGE_CLIENT@", CLIENT))


def is_ours(path: Path) -> bool:
    return has_mark(path, SHIM_MARK)


def write_executable(path: Path, text: str) -> bool:
    """Write `text` (atomically) unless the file already says exactly that. True if written."""
    if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)
    os.replace(tmp, path)
    return True


def install_into(hook_dir: Path, names: tuple[str, ...], lc: Lifecycle,
                 top: Path | None = None, templates: dict[str, str] | None = None) -> list[str]:
    """Put our shims into a live hooks folder, keeping any user hook as `<name>.pre-gitstate`,
    which the shim runs after its own check (before it for commit-msg, which may rewrite the
    message gitstate judges); a hook of the pre-commit framework that runs
    gitstate's check (its config in the work tree `top`) is left as it is. `templates`: the
    shipped shim a hook is written from, where it is not its own name's. Returns what was
    done, for the user."""
    from gitstate.doors import precommit
    done = []
    for name in names:
        target = hook_dir / name
        config = precommit.runs_gitstate(target, name, top) if top else None
        if config:
            done.append(f"left the {name} hook to pre-commit: it runs gitstate's check "
                        f"({config})")
            continue
        if target.exists() and not is_ours(target):
            kept = target.with_name(name + CHAINED_SUFFIX)
            if kept.exists():
                raise GitstateError(f"both {target} and {kept} exist and neither is gitstate's; "
                                    "gitstate will not overwrite a hook of yours",
                                    hint=f"merge them by hand, or remove {kept}")
            os.replace(target, kept)
            done.append(f"kept your {name} hook as {kept.name}; gitstate runs it after its check")
        if write_executable(target, render_shim((templates or {}).get(name, name), lc)):
            done.append(f"installed {target}")
    return done
