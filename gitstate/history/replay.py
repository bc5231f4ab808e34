"""A commit being replayed by `verify`: the state files of every agent kept up to date commit
by commit along a line of history, instead of read from git again for each commit."""

from __future__ import annotations

from gitstate.errors import GitstateError
from gitstate.git.repo import GitContext
from gitstate.git.runner import Git
from gitstate.history.commits import Commit
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.rules import parse_state
from gitstate.law.society import census_entry


def carry_over(run: dict, c: Commit, parent: str | None) -> None:
    """The agents' state files of `c` are its parent's: keep them if they were known."""
    if run["agents"] is not None and run["at"] == parent:
        run["at"] = c.sha
    else:
        run["agents"], run["at"] = None, None
        run.pop("census", None)


class ReplayContext(GitContext):
    """A commit being replayed. The state files of every agent (asked by the rules about
    roles and the pool) are kept up to date commit by commit along a line of history, instead
    of being read from git again for each commit; at a fork they are read once from the tree."""

    def __init__(self, git: Git, parent: str | None, c: Commit, lc: Lifecycle, run: dict,
                 contents: dict, parsed: dict, clock=None):
        super().__init__(git, parent, tree=c.sha, now=c.time if clock is None else clock.now,
                         lc=lc)
        self._clock, self._committed = clock, float(c.time)
        linear = run["agents"] is not None and (
            run["at"] == parent if parent else run["at"] is None)
        self._running = run["agents"] if linear else None
        rx = lc.state_path_regex()
        self._changes = [(p, m.group("id"), n) for p, _o, n, _m in c.changes
                         if (m := rx.match(p))]
        self._contents, self._parsed, self._run, self._sha = contents, parsed, run, c.sha
        self._applied = False

    def _apply(self) -> None:
        if self._applied or self._running is None:
            return
        self._applied = True
        for path, agent, new in self._changes:
            doc = self._read(path, new)
            census, lc = self._run.get("census"), self._lc
            if census is not None and (lc is None or census[3] is not lc):
                census = self._run["census"] = None
            before = self._running.get(agent)
            if doc is None:
                self._running.pop(agent, None)
            else:
                self._running[agent] = doc.front
            if census is not None and lc is not None:
                _recount(census, lc, agent, before, self._running.get(agent))

    def _read(self, path: str, new: str | None):
        """The state file at `path` as the commit leaves it (None: deleted, or unreadable)."""
        if not new:
            return None
        data = self._contents.get(new)
        if data is None:
            data = self.git.cat_files([f"{self._sha}:{path}"])[0]
        try:
            return parse_state(data or b"", path, self._parsed)
        except GitstateError:
            return None

    def living_roles(self, lc: Lifecycle) -> tuple[dict[str, set[str]], int] | None:
        """Kept up to date along the line, as the agents are: a spawn's role and pool checks
        do not count every agent again."""
        if self._running is None or lc is not self._lc:
            return None
        agents = self.agents()
        census = self._run.get("census")
        if census is None or census[2] is not agents or census[3] is not lc:
            census = self._run["census"] = _census(lc, agents)
        return census[0], census[1]

    @property
    def clock(self):
        """The door's clock (the hub's), or None where a commit's own time counts."""
        return self._clock

    def committed(self) -> float:
        return self._committed

    def entered(self, agent: str, state: str) -> float | None:
        found = self.entering_commit(agent, state)
        if found is None or self._clock is None:
            return found[1] if found else None
        return self._clock.received(*found)

    def agents(self) -> dict[str, dict]:
        if self._agents is None:
            if self._running is not None:
                self._apply()
                self._agents = self._running
            else:
                self._agents = super().agents()
        return self._agents

    def settle(self) -> None:
        """After judging: hand the agents' state files on to the next commit, if known."""
        self._apply()
        known = self._running if self._running is not None else self._agents
        self._run["agents"] = known
        self._run["at"] = self._sha if known is not None else None


def _census(lc: Lifecycle, agents: dict[str, dict]) -> list:
    """Every agent counted: [role -> living holders, living, `agents`, `lc`]."""
    census = [{}, 0, agents, lc]
    for agent, front in agents.items():
        _count(census, lc, agent, census_entry(lc, front), 1)
    return census


def _recount(census: list, lc: Lifecycle, agent: str, before: dict | None,
             after: dict | None) -> None:
    """One agent's census entry moved from its front matter `before` to `after`."""
    was = census_entry(lc, before) if before is not None else None
    now = census_entry(lc, after) if after is not None else None
    if was != now:   # (most moves keep an agent living in its role: no change)
        _count(census, lc, agent, was, -1)
        _count(census, lc, agent, now, 1)


def _count(census: list, lc: Lifecycle, agent: str, entry: tuple[bool, str | None] | None,
           sign: int) -> None:
    """Add (sign 1) or take away (-1) one agent's census entry (living, role held) in a running
    census [role -> living holders, living, the agents it counts, the law it counts by]."""
    if entry is None:
        return
    alive, role = entry
    if not alive:
        return
    census[1] += sign
    if role:
        holders = census[0].setdefault(role, set())
        if sign > 0:
            holders.add(agent)
        else:
            holders.discard(agent)
