"""The law read from a tree: the lifecycle, and the runtime's agent files where it says so.

With `policies.agents_from: .claude/agents` the law is the lifecycle plus every
`<folder>/<name>.md` there: Claude Code's own sub-agent definitions. The front matter of each
may list the agent types that agent may never spawn (`forbiddenAgents: [programmer]`, seed
001's forbidden-agents list); they are added to that role's `never_spawns`, so every door that
judges a spawn refuses them. A change of those files is then a change of the law
(`is_law_path`), judged as a change of the lifecycle is.

This module is pure: `law_of` is given a way to read the folder at a revision (the reader is
`gitstate.git.lawfiles`), and every door reads the law through that reader.
"""

from __future__ import annotations

from gitstate.errors import InvalidFile
from gitstate.law.lifecycle import Lifecycle, Role, is_law_path
from gitstate.law.rule_ids import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

FORBIDDEN_KEY = "forbiddenAgents"   # Claude Code's front matter is camelCase (disallowedTools)

__all__ = ["FORBIDDEN_KEY", "agent_file", "forbidden_of", "is_law_path", "law_of", "merged",
           "merged_parsed", "parsed"]


def agent_file(lc: Lifecycle, path: str) -> str | None:
    """The agent type `path` declares when it is one of the lifecycle's agent files (the
    file's name without `.md`), else None."""
    folder, _, name = path.rpartition("/")
    if not folder or folder != lc.policies.agents_from or not name.endswith(".md"):
        return None
    return name[:-3] or None


def forbidden_of(path: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    """(agent type, the types it may never spawn) of one agent file. Its type is its front
    matter's `name`, else the file's name. InvalidFile names the file and line of a problem.

    Only `name` and `forbiddenAgents` are read as YAML: the runtime reads the rest its own
    way (Claude Code takes a `description: Use it when: ...` that strict YAML refuses)."""
    from gitstate.law import statefile
    text = statefile.decode(data, path)   # too large, not UTF-8: refused with file and line
    lines = text.split("\n")
    front = lines[1:_front_end(lines, path)]
    name = _agent_type(front, lines, path)
    raw = _key(front, FORBIDDEN_KEY, path)
    return name, () if raw is None else _agent_types(raw, lines, path)


def _front_end(lines: list[str], path: str) -> int:
    """The line that closes the front matter; InvalidFile where there is none."""
    close = next((n for n, line in enumerate(lines[1:], 1)
                  if line.rstrip() in ("---", "...")), None)
    if lines[0].rstrip() == "---" and close is not None:
        return close
    what = "is never closed with a '---' line" if lines[0].rstrip() == "---" else \
        "must start the file: a line '---', its keys, then a line '---'"
    raise InvalidFile(f"the agent file's YAML front matter {what}", where=f"{path}:1",
                      hint=f"put '---', then '{FORBIDDEN_KEY}: [TYPE]' and the agent's "
                      "other keys, then '---' at its top")


def _agent_type(front: list[str], lines: list[str], path: str) -> str:
    """The front matter's `name`, else the file's name."""
    name = _key(front, "name", path)
    if name is None:
        name = path.rsplit("/", 1)[-1][:-3]
    if not isinstance(name, str) or not name.strip():
        raise InvalidFile("'name' must be the agent's type, a text",
                          where=f"{path}:{_line_of(lines, 'name')}")
    return name.strip()


def _agent_types(raw, lines: list[str], path: str) -> tuple[str, ...]:
    """The types a `forbiddenAgents` value lists (a list, or a text of names)."""
    if isinstance(raw, str):
        raw = raw.replace(",", " ").split()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x.strip() for x in raw):
        raise InvalidFile(f"'{FORBIDDEN_KEY}' must be a list of agent types, e.g. "
                          f"'{FORBIDDEN_KEY}: [programmer, reviewer]'",
                          where=f"{path}:{_line_of(lines, FORBIDDEN_KEY)}")
    return tuple(x.strip() for x in raw)


def _key(front: list[str], key: str, path: str):
    """The YAML value of a top-level `key` of front matter lines (`front`, from the file's
    line 2): its line and the indented lines under it, read alone; None when absent."""
    starts = [n for n, line in enumerate(front) if line.split(":", 1)[0] == key and ":" in line]
    if not starts:
        return None
    if len(starts) > 1:
        raise InvalidFile(f"'{key}' is given twice (lines {starts[0] + 2} and {starts[1] + 2})",
                          where=f"{path}:{starts[1] + 2}", rule=Rule.DUPLICATE_KEY)
    end = _block_end(front, starts[0] + 1)
    from gitstate.law import yamlio
    data, _lines = yamlio.load("\n".join(front[starts[0]:end]), where=path,
                               line_offset=starts[0] + 1)
    return data.get(key) if isinstance(data, dict) else None


def _block_end(front: list[str], end: int) -> int:
    """The end of the block from `end`: its blank, indented and comment lines."""
    while end < len(front) and (not front[end].strip() or front[end][:1] in " \t#"):
        end += 1
    return end


def _line_of(lines: list[str], key: str) -> int:
    return next((n for n, line in enumerate(lines, 1) if line.split(":", 1)[0] == key), 1)


def parsed(path: str, data: bytes) -> list:
    """One agent file in a plain form a cache keeps: ["ok", type, [forbidden...]], or
    ["bad", message, where, rule] for a malformed one."""
    try:
        name, forbidden = forbidden_of(path, data)
    except InvalidFile as exc:
        return ["bad", exc.message, exc.where, exc.rule]
    return ["ok", name, list(forbidden)]


def merged(lc: Lifecycle, files: Mapping[str, bytes], strict: bool = True) -> Lifecycle:
    """`lc` with the forbidden lists of its agent files (`files`: path -> content, the folder
    as read) added to each type's `never_spawns`; see `merged_parsed`."""
    return merged_parsed(lc, {p: parsed(p, files[p]) for p in files if agent_file(lc, p)},
                         strict)


def merged_parsed(lc: Lifecycle, files: Mapping[str, list], strict: bool = True) -> Lifecycle:
    """`lc` with the forbidden lists of its agent files (`files`: path -> `parsed`) added to
    each type's `never_spawns`. A type the lifecycle does not declare is declared by a file
    that forbids it something, where custom roles are allowed. Not `strict`: a malformed file
    is left out (it was refused where it was committed)."""
    lists: dict[str, tuple[str, ...]] = {}
    for path in sorted(files):
        kind, *said = _admitted(lc, path, files[path])
        if kind == "ok" and said[1]:
            lists[said[0]] = lists.get(said[0], ()) + tuple(said[1])
        elif kind != "ok" and strict:
            raise InvalidFile(said[0], where=said[1], rule=said[2])
    return _with_never_spawns(lc, lists) if lists else lc


def _admitted(lc: Lifecycle, path: str, entry: list) -> list:
    """A parsed agent file, or why it is bad: a type that forbids something must be a role
    the lifecycle declares, where it allows no custom roles."""
    kind, *said = entry
    if kind == "ok" and said[1] and said[0] not in lc.roles and not lc.policies.custom_roles:
        return ["bad", f"agent type '{said[0]}' is not a role of the lifecycle "
                "(custom_roles: false), so it spawns nothing to forbid", f"{path}:1",
                "unreadable"]
    return entry


def _with_never_spawns(lc: Lifecycle, lists: dict[str, tuple[str, ...]]) -> Lifecycle:
    roles = dict(lc.roles)
    for name, forbidden in lists.items():
        old = roles.get(name) or Role(name=name)
        extra = tuple(t for t in dict.fromkeys(forbidden) if t not in old.never_spawns)
        roles[name] = _with(old, never_spawns=old.never_spawns + extra)
    return _with(lc, roles=roles)


def _with(record, **changed):
    """A copy of a record with some of its fields changed (a record is never changed)."""
    return type(record)(**{n: changed.get(n, getattr(record, n)) for n in record._fields})


def law_of(lc: Lifecycle, read_folder: Callable[[str], Mapping[str, bytes]],
           strict: bool = True) -> Lifecycle:
    """The law of a tree whose lifecycle is `lc`: the lifecycle itself, or, where it names an
    agents folder, merged with that folder's files (`read_folder(folder)`: path -> content
    of the files under it, at the same revision as `lc`)."""
    folder = lc.policies.agents_from
    return merged(lc, read_folder(folder), strict) if folder else lc
