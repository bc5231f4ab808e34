"""`git config` read once per command: one `git config --list` answers every key a command
asks (a `--push` asked seven, each its own git process), and is read again when a file it
came from, or one git would read, changed, or the environment that names them did (a long
running viewer or MCP server sees a `git config` made meanwhile)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Git(Protocol):   # gitstate.git.runner.Git, which imports this module
        cwd: str | None
        env: dict[str, str] | None

        def call(self, *args: str) -> tuple[int, bytes, bytes]: ...


def config_name(key: str) -> str | None:
    """A config key as `git config --list` spells it: section and name in lower case, the
    subsection as it is; None for what is no key (git is asked then, and says so)."""
    section, _, rest = key.partition(".")
    sub, _, name = rest.rpartition(".")
    if not section or not name:
        return None
    return f"{section.lower()}.{sub}.{name.lower()}" if sub else f"{section.lower()}.{name.lower()}"


def read_config(git: Git) -> tuple[list[str], tuple, dict[str, str]] | None:
    """(the files it depends on, their stamp, key -> last value) of `git config --list`;
    None when git cannot list it (a config file git refuses: each key is asked then)."""
    code, out, _ = git.call("config", "--list", "-z", "--show-origin")
    if code != 0:
        return None
    values: dict[str, str] = {}
    origins = []
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    for origin, entry in zip(parts[0::2], parts[1::2]):
        if origin.startswith("file:"):
            origins.append(origin[5:])
        name, _, value = entry.partition("\n")
        values[name] = value   # the last one wins, as with `git config --get`
    files = _files(git, origins)
    return files, stamp(git, files), values


def _files(git: Git, origins: list[str]) -> list[str]:
    """The files a listing came from, and those git would read were they there."""
    env = os.environ if git.env is None else git.env
    home = env.get("HOME", "")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    base = git.cwd or os.getcwd()
    return sorted({*(os.path.join(base, o) for o in origins),
                   env.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
                   os.path.join(xdg, "git", "config"),
                   env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"})


def stamp(git: Git, files: list[str]) -> tuple:
    """What a listing depends on: each file's identity, size and time of change, and the
    environment's GIT_*, HOME and XDG_CONFIG_HOME."""
    env = os.environ if git.env is None else git.env
    stamps: list = []
    for path in files:
        try:
            st = os.stat(path)
            stamps.append((st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            stamps.append(None)
    return tuple(stamps), tuple(sorted((k, v) for k, v in env.items() if k.startswith("GIT_")
                                       or k in ("HOME", "XDG_CONFIG_HOME")))
