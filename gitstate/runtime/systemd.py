"""`gitstate watch --systemd` (and `init --watch`): a systemd user service and timer that run
one round of `gitstate watch --once` in this clone every few seconds, from the templates
shipped in `data/systemd/`.

They are written to the user's systemd folder (`$XDG_CONFIG_HOME/systemd/user`, else
`~/.config/systemd/user`), named after the clone (`gitstate-watch-<folder>-<hash of its
path>`), never committed: the command they run is this machine's gitstate (the Python running
now), in this clone's work tree. Nothing is started: the reply says how
(`systemctl --user enable --now NAME.timer`). Written again, a unit that would not change is
left as it is.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

from gitstate.errors import UsageError
from gitstate.resources import read_shipped

_PLAIN = re.compile(r"[A-Za-z0-9_./+:@=,-]+")


def unit_dir() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"),
                                                              ".config")
    return Path(config) / "systemd" / "user"


def unit_name(top: Path) -> str:
    """`gitstate-watch-<folder>-<8 hex of its path>`: one per clone, readable in systemctl."""
    folder = re.sub(r"[^A-Za-z0-9_.-]", "-", top.name).strip("-.")[:40] or "repo"
    return f"gitstate-watch-{folder}-{hashlib.sha1(str(top).encode()).hexdigest()[:8]}"


def _escape(text: str) -> str:
    """`text` in a unit file: `%` is a specifier there."""
    return text.replace("%", "%%")


def _arg(word: str) -> str:
    """One word of `ExecStart=` as systemd splits it: quoted where it must be, with `$` (an
    environment variable there) and `%` (a specifier) kept literal."""
    word = word.replace("%", "%%").replace("$", "$$")
    if _PLAIN.fullmatch(word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def units(top: Path, every: float, push: bool, python: str | None = None) -> dict[str, str]:
    """{file name: text} of the service and the timer for the clone at `top`."""
    if any(c in str(top) for c in "\n\r"):
        raise UsageError(f"{top!r}: a folder whose name holds a line break cannot be named in "
                         "a systemd unit")
    name = unit_name(top)
    command = [python or sys.executable, "-m", "gitstate", "watch", "--once"] + (
        ["--push"] if push else [])
    seconds = f"{every:g}"
    values = {"@DIR@": _escape(str(top)), "@NAME@": name, "@EVERY@": seconds,
              "@COMMAND@": " ".join(_arg(w) for w in command)}
    return {f"{name}.{kind}": _filled(f"gitstate-watch.{kind}", values)
            for kind in ("service", "timer")}


def _filled(template: str, values: dict[str, str]) -> str:
    text = read_shipped("data", "systemd", template)
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def install(top: Path, every: float, push: bool) -> dict:
    """Write the units (a file that would not change is left alone): the `init` report's
    entry for them, `then` saying how to start the timer."""
    where = unit_dir()
    written = []
    for file, text in units(top, every, push).items():
        path = where / file
        if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
            continue
        where.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(file)
    name = unit_name(top)
    return {"kind": "watch", "name": "systemd", "path": str(where / f"{name}.timer"),
            "changed": bool(written), "added": written, "kept": [],
            "then": "start it: systemctl --user daemon-reload && systemctl --user enable "
                    f"--now {name}.timer"}
