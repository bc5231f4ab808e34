"""Situations: the entity graph of agent sessions (docs/how-to/views.md), as JSON and as SQLite.

Each agent session is the entity `situation:session-<id>`. The model (`agent:<model>`) and
the person (`person:<person>`) belong to it as actors, its role (`role:<role>`) as method, its
project (`situation:<project>`) as domain; its first and last state commits bound it in time,
its roster is its quality, and its summary and final summary belong to it as descriptions.
Agents whose state files were deleted are still there: they are read as of their last tagged
commit. The graph is one-way: nothing reads it back into gitstate.
"""

from __future__ import annotations

import os

from gitstate.errors import InvalidFile
from gitstate.git.repo import Managed
from gitstate.history.index import Index
from gitstate.law import statefile
from gitstate.law.times import iso

QUALITY: dict[str | None, str] = {"living": "live", "frozen": "frozen", "dead": "dead"}


# what a session's front matter names: (key, the kind of entity, the quality it belongs by)
LINKS = (("model", "agent", "actor"), ("person", "person", "actor"),
         ("role", "role", "method"), ("project", "situation", "domain"))


def graph(repo: Managed, at: str | None = None) -> dict:
    """{"commit", "entities": [...], "belongings": [...]} for every agent the history knows
    (up to HEAD, or as it was at `at`: a revision or a date)."""
    from gitstate.history.views import read_at
    head, lc = read_at(repo, at)
    if head is None or lc is None:
        return {"commit": None, "entities": [], "belongings": []}
    tracks, fronts = _fronts(repo, lc, head, at)
    found = _Graph()
    for agent in sorted(set(fronts) | set(tracks)):
        found.session(agent, fronts.get(agent) or {}, tracks.get(agent), lc)
    return {"commit": head, "entities": list(found.entities.values()),
            "belongings": found.belongings}


def _fronts(repo: Managed, lc, head: str, at: str | None) -> tuple[dict, dict]:
    """(agent -> track, agent -> front matter): a deleted state file's as of its last tagged
    commit (None when it does not parse)."""
    index = Index(repo.git, lc, repo.cache_dir)
    tracks, read = index.tracks_and_fronts(head, remember=at is None)
    fronts = {a: front for a, (_p, front, _e) in read.items()}
    index.save()
    gone = sorted(a for a in tracks if a not in fronts)   # files deleted since
    datas = repo.git.cat_files(f"{tracks[a].last[0]}:{lc.state_path(a)}" for a in gone)
    for agent, data in zip(gone, datas):
        fronts[agent] = _front(data, lc.state_path(agent))
    return tracks, fronts


def _front(data: bytes | None, path: str) -> dict | None:
    try:
        return statefile.parse_bytes(data, path).front if data else None
    except InvalidFile:
        return None


class _Graph:
    """The entities by id, and what belongs to what."""

    def __init__(self) -> None:
        self.entities: dict[str, dict] = {}
        self.belongings: list[dict] = []

    def entity(self, eid: str, kind: str, name: str, **extra) -> None:
        if eid not in self.entities:
            self.entities[eid] = {"id": eid, "type": kind, "name": name, "started_at": None,
                                  "ended_at": None, "quality": None}
        self.entities[eid].update({k: v for k, v in extra.items() if v is not None})

    def session(self, agent: str, front: dict, track, lc) -> None:
        """An agent's session, and what its front matter says belongs to it."""
        session = f"situation:session-{agent}"
        self.entity(session, "situation", f"session-{agent}", **_span(front, track, lc))
        for kind, quality, value in _links(front):
            if value:
                eid = f"{kind}:{value}"
                self.entity(eid, kind, value)
                self.belongings.append({"member": eid, "owner": session, "quality": quality,
                                        "value": None})
        self._texts(session, front)

    def _texts(self, session: str, front: dict) -> None:
        """The session's summaries, as its descriptions."""
        for key in ("summary", "final_summary"):
            value = statefile.as_text(front.get(key))
            if value:
                self.belongings.append({"member": f"text:{key}", "owner": session,
                                        "quality": "description", "value": value})


def _span(front: dict, track, lc) -> dict:
    """When a session started and ended, and its quality (the roster of its state)."""
    state = front.get("state") if isinstance(front.get("state"), str) else (
        track.tag if track else None)
    return {"started_at": iso(track.first[1]) if track else None,
            "ended_at": iso(track.last[1]) if track else None,
            "quality": QUALITY.get(lc.roster_of(state)) if state else None}


def _links(front: dict) -> list[tuple[str, str, str | None]]:
    """(kind, quality, value) of each entity the front matter names: its roles handed over
    too (still what this session did)."""
    past = front.get("past_roles")
    pairs = [(kind, quality, statefile.as_text(front.get(key))) for key, kind, quality in LINKS]
    pairs += [("role", "method", str(r)) for r in (past if isinstance(past, list) else ())
              if str(r) != statefile.as_text(front.get("role"))]
    return pairs


def write_sqlite(data: dict, path: str) -> dict:
    """Upsert the graph into the SQLite file at `path` (created with the shipped schema)."""
    import sqlite3

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    con = sqlite3.connect(path)
    try:
        with con:
            from gitstate.resources import read_shipped  # `pathlib`: only when SQLite is written
            con.executescript(read_shipped("data", "entities.sql"))
            con.executemany(
                "INSERT INTO entities (id, type, name, started_at, ended_at, quality) "
                "VALUES (:id, :type, :name, :started_at, :ended_at, :quality) "
                "ON CONFLICT(id) DO UPDATE SET type=excluded.type, name=excluded.name, "
                "started_at=COALESCE(excluded.started_at, entities.started_at), "
                "ended_at=COALESCE(excluded.ended_at, entities.ended_at), "
                "quality=COALESCE(excluded.quality, entities.quality)",
                data["entities"])
            con.executemany(
                "INSERT INTO belongings (member, owner, quality, value) "
                "VALUES (:member, :owner, :quality, :value) "
                "ON CONFLICT(member, owner, quality) DO UPDATE SET value=excluded.value",
                data["belongings"])
            con.execute("INSERT INTO meta (key, value) VALUES ('commit', ?) "
                        "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                        (data["commit"],))
        counts = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("entities", "belongings")}
    finally:
        con.close()
    return counts


def situations(repo: Managed, *, sqlite_path: str | None = None,
               no_sqlite: bool = False, at: str | None = None) -> dict:
    """`gitstate situations`: the graph, and (unless `no_sqlite`) where it was upserted: by
    default `.git/gitstate/entities.db`, per worktree, so that a read command leaves the work
    tree as it was and `git status` clean."""
    data = graph(repo, at)
    if not no_sqlite:
        if sqlite_path is None:
            os.makedirs(repo.cache_dir, exist_ok=True)
            sqlite_path = os.path.join(repo.cache_dir, "entities.db")
        data["sqlite"] = {"path": sqlite_path, **write_sqlite(data, sqlite_path)}
    return data
