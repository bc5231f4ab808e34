"""What the pages show, read through the same views as the CLI's `--json` (history/views.py),
one read at a time, with what cannot change for a given commit remembered per commit."""

from __future__ import annotations

import threading

from gitstate.errors import GitstateError, UsageError
from gitstate.git.repo import Managed
from gitstate.history import views

_KEEP = 8   # commits whose timelines are remembered (each is every agent's)


class Viewer:
    """A read-only window on one managed repository."""

    def __init__(self, repo: Managed):
        self.repo = repo
        self._lock = threading.RLock()   # the index under .git/gitstate has one writer at a time
        self._timelines: dict[str, dict[str, list[dict]]] = {}
        self._laws: dict[str, object] = {}

    def tip(self) -> str | None:
        return self.repo.git.head()

    @staticmethod
    def clean_at(at: str | None) -> str | None:
        """`?at=` as given: None for nothing; an option-looking value is refused."""
        at = (at or "").strip() or None
        if at is not None and at.startswith("-"):
            raise UsageError(f"at={at!r} is neither a revision nor a date",
                             hint="e.g. at=HEAD~10, at=v1.0, at=2026-11-01")
        return at

    def resolve(self, at: str) -> str | None:
        """The commit `?at=REV|DATE` names (a UsageError saying what is legal if none)."""
        with self._lock:
            return views.resolve_at(self.repo, at)[0]

    # -- the views, exactly as `--json` gives them ----------------------------------------

    def roster(self, at: str | None = None) -> dict:
        with self._lock:
            return views.roster(self.repo, at)

    def vacancies(self, at: str | None = None) -> dict:
        with self._lock:
            return views.vacant_roles(self.repo, at)

    def log(self, agent: str | None = None, at: str | None = None) -> dict:
        with self._lock:
            return views.log_rows(self.repo, agent, at=at)

    def inbox(self, agent: str, at: str | None = None) -> dict:
        with self._lock:
            return views.inbox(self.repo, agent, at)

    def show(self, agent: str, at: str | None = None) -> dict:
        with self._lock:
            return views.freeze_state(self.repo, agent, at)

    def lifecycle(self, commit: str | None):
        """The law in force at `commit` (remembered: a commit's law never changes), or today's."""
        with self._lock:
            if commit is None:
                return self.repo.lifecycle()
            lc = self._laws.get(commit)
            if lc is None:
                if len(self._laws) >= _KEEP:
                    self._laws.pop(next(iter(self._laws)))
                lc = self._laws[commit] = self.repo.lifecycle(commit, index=False,
                                                              worktree=False)
            return lc

    # -- for pages --------------------------------------------------------------------------

    def timeline(self, agent: str, commit: str) -> list[dict]:
        """The agent's moves up to `commit` (a resolved sha), as `log AGENT` gives them; from
        every agent's timelines when those were read for this commit (the static site)."""
        with self._lock:
            by_agent = self._timelines.get(commit)
            if by_agent is not None:
                return by_agent.get(agent, [])
            try:
                return views.transitions(self.repo, agent, commit)
            except GitstateError:
                return []          # an agent with a state file but no tagged commit yet

    def timelines(self, commit: str) -> None:
        """Read every agent's timeline up to `commit` at once (one read of the log)."""
        with self._lock:
            by_agent: dict[str, list[dict]] = {}
            for move in views.transitions(self.repo, None, commit):
                by_agent.setdefault(move["agent"], []).append(move)
            if len(self._timelines) >= _KEEP:
                self._timelines.pop(next(iter(self._timelines)))
            self._timelines[commit] = by_agent

    def agent(self, agent: str, at: str | None = None) -> dict:
        """Everything an agent's page shows: its roster record, timeline, inbox, and its
        freeze-state when frozen."""
        from gitstate.law.grammar import canonical_id
        agent = canonical_id(agent)
        view = self.roster(at)
        record = next((r for group in ("living", "freezer", "cemetery", "unknown")
                       for r in view.get(group, []) if r["agent"] == agent), None)
        if record is None:
            raise GitstateError(f"unknown agent '{agent}' at {(view['commit'] or '')[:10]}",
                                hint="the roster lists the agents this repository knows")
        commit = view["commit"]
        out = {"record": record, "commit": commit, "lifecycle": view["lifecycle"],
               "timeline": self.timeline(agent, commit), "inbox": None, "inbox_error": None,
               "freeze": None, "freeze_error": None}
        try:
            out["inbox"] = self.inbox(agent, commit)
        except GitstateError as exc:
            out["inbox_error"] = str(exc)
        if record["roster"] == "frozen":
            try:
                out["freeze"] = self.show(agent, commit)
            except GitstateError as exc:
                out["freeze_error"] = str(exc)
        return out
