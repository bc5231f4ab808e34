"""Every agent's context (`context_pct` of its state file) at each commit that changed the file,
kept under `.git/gitstate` keyed by the tip it was read to: the viewer draws an agent's context
over time from it, and a later read takes only the commits since.

One `git log --raw` of the state files' folder names each changed file's blob; one `cat-file
--batch` of those blobs (by id: no tree walked per commit) gives their text; only the line
`context_pct:` of each front matter is read, by the same flat YAML reader as the rest. It is
read on from its tip as `git/cache.py` says.
"""

from __future__ import annotations

from gitstate import __version__
from gitstate.git.cache import read_on
from gitstate.git.runner import Git

NAME = "contexts.json"
FORMAT = 2   # 2: read along the first-parent line


def contexts(git: Git, lc, head: str, cache_dir: str | None, *,
             build: bool = True) -> dict[str, list[list]] | None:
    """agent -> [[commit, time, context_pct], ...], oldest first, for every commit of `head`'s
    history that changed the agent's state file to one with a numeric `context_pct`. Without
    `build`, None unless a kept read can be carried on to `head` (a read from nothing walks
    every tree of the history: seconds on a long one)."""
    def onward(saved: dict, revs: str) -> dict:
        agents = saved["agents"]
        for agent, rows in _read(git, lc, [revs]).items():
            agents.setdefault(agent, []).extend(rows)
        return {"agents": agents}
    kept = read_on(git, cache_dir, NAME, [FORMAT, __version__, lc.state_file], head,
                   valid=lambda saved: isinstance(saved.get("agents"), dict),
                   anew=(lambda tip: {"agents": _read(git, lc, [tip])}) if build else None,
                   onward=onward)
    return kept["agents"] if kept is not None else None


def contexts_since(git: Git, lc, old: str, head: str) -> dict[str, list[list]]:
    """The contexts of `old..head`, for a caller holding those up to `old`."""
    return _read(git, lc, [f"{old}..{head}"])


def _read(git: Git, lc, revs: list[str]) -> dict[str, list[list]]:
    """agent -> [commit, time, context %] of each state file of `revs` that says its
    context."""
    changes = _state_changes(git, lc, revs)
    out: dict[str, list[list]] = {}
    datas = git.cat_files((blob for _, _, _, blob in changes), 1 << 20)
    for (agent, commit, at, _blob), data in zip(changes, datas):
        pct = context_of(data)
        if pct is not None:
            out.setdefault(agent, []).append([commit, at, pct])
    return out


def _state_changes(git: Git, lc, revs: list[str]) -> list[tuple[str, str, int, str]]:
    """(agent, commit, time, blob) of each state file written on the first-parent line of
    `revs`, oldest first."""
    rx = lc.state_path_regex()
    top = lc.state_file.split("{id}")[0].rstrip("/")
    changes: list[tuple[str, str, int, str]] = []       # (agent, commit, time, blob)
    sha, when = "", 0
    ct: str
    for line in git.stream("log", "--reverse", "--first-parent", "--format=%x01%H %ct",
                           "--raw", "--no-abbrev", "--no-renames", *revs, "--",
                           *([top] if top else [])):
        if line.startswith(b"\x01"):
            sha, _, ct = line[1:].decode().partition(" ")
            when = int(ct) if ct.isdigit() else 0
        elif line.startswith(b":"):
            meta, _, path = line.decode("utf-8", "surrogateescape").partition("\t")
            fields = meta.split()
            m = rx.match(path)
            if m and len(fields) >= 5 and fields[4] != "D":
                changes.append((m.group("id"), sha, when, fields[3]))
    return changes


def context_of(data: bytes | None) -> float | None:
    """The front matter's `context_pct` when it is a number. Its one line is read by the flat
    YAML reader the state files are read with; a value that reader leaves to full YAML (a
    fraction, say) is read by parsing the whole file as `statefile` does."""
    from gitstate.errors import GitstateError
    from gitstate.law import statefile
    from gitstate.law.flatyaml import load_flat
    line = _context_line(data)
    if data is None or line is None:
        return None
    try:
        found = load_flat(line.decode("utf-8"))
        value = found[0].get("context_pct") if found is not None else \
            statefile.parse_bytes(data, "state file").get("context_pct")
    except (GitstateError, UnicodeDecodeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _context_line(data: bytes | None) -> bytes | None:
    """The front matter's line `context_pct: ...`, if it has one."""
    if not data or not data.startswith(b"---"):
        return None
    end = data.find(b"\n---", 3)
    front = data[:end] if end > 0 else data
    at = front.find(b"\ncontext_pct:")
    if at < 0:
        return None
    stop = front.find(b"\n", at + 1)
    return front[at + 1:stop if stop > 0 else None]
