"""What the pages show, read through the same views as the CLI's `--json` (history/views.py),
one read at a time, with what cannot change for a given commit remembered per commit."""

from __future__ import annotations

import threading
import time

from gitstate.errors import GitstateError, UsageError
from gitstate.git.repo import Managed, on_first_parent_line
from gitstate.history import views
from gitstate.law.times import iso
from gitstate.web.clock import epoch
from gitstate.web.rows import children_of, move_texts, rows, unsummed

_KEEP = 8   # commits whose lifecycles are remembered


class Viewer:
    """A read-only window on one managed repository."""

    def __init__(self, repo: Managed):
        self.repo = repo
        self._lock = threading.RLock()   # the index under .git/gitstate has one writer at a time
        self._laws: dict[str, object] = {}
        self._index: dict[str, dict] = {}    # commit -> its moves and messages by agent
        self._tip_index: dict | None = None  # the index of the last tip, to carry on
        self._commit_url: str | None = None
        self._times: dict[str, int] = {}
        self._roster: dict | None = None     # the tip's roster, while it is the tip
        self._words: tuple[str | None, dict[str, str]] = (None, {})   # last_words, per commit
        self.pinned: str | None = None      # the static site: one commit, read once
        self.follows: str | None = None     # the hub's branch read, in words (web/follow.py)
        self.lazy = True        # the server: what a first read from nothing costs, in a thread
        self._reading_contexts = False

    def tip(self) -> str | None:
        """The branch tip now (or the commit a static site was pinned to)."""
        return self.pinned if self.pinned else self.repo.head()

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

    def commit_at(self, at: str | None) -> str | None:
        """The commit a page shows: `?at=`'s, or the tip."""
        return self.resolve(at) if at else self.tip()

    def commit_time(self, commit: str) -> int:
        """A commit's time (seconds), remembered."""
        with self._lock:
            t = self._times.get(commit)
            if t is None:
                if len(self._times) > 64:
                    self._times.clear()
                t = self._times[commit] = int(self.repo.git.text("log", "-1", "--format=%ct",
                                                                 commit))
            return t

    # -- the views, exactly as `--json` gives them ----------------------------------------

    def roster(self, at: str | None = None) -> dict:
        """`roster --json` (`--at`). The roster of the tip is kept while the tip stays (it
        depends on the commit alone but for "in state for", counted again to now)."""
        with self._lock:
            if at is not None:
                return views.roster(self.repo, at)
            head = self.tip()
            kept = self._roster if self._roster and self._roster["commit"] == head else None
            if kept is None:
                kept = views.roster(self.repo, None)
                self._roster = kept if kept["commit"] == head else None
                return kept
            _aged(kept, int(time.time()))
            return kept

    def last_words(self, view: dict) -> dict[str, str]:
        """agent -> the text of its last move (its commit subject after the tag), for each
        agent of the roster `view` that set no summary (nor, when dead, a final summary): what
        the roster shows in their place. One `git log --stdin` for them all, kept per commit."""
        commit = view.get("commit")
        with self._lock:
            if commit is None or self._words[0] == commit:
                return self._words[1] if commit else {}
            wanted = {r["last_commit"]: r["agent"] for r in rows(view) if unsummed(r)}
            words: dict[str, str] = {}
            if wanted:
                out = self.repo.git.run("log", "--no-walk=unsorted", "--stdin",
                                        "--format=%H%x00%s",
                                        input="".join(f"{s}\n" for s in wanted).encode(),
                                        check=False).decode("utf-8", "replace")
                words = move_texts(out, wanted, self.lifecycle(commit).accept_patterns())
            self._words = (commit, words)
            return words

    def vacancies(self, at: str | None = None) -> dict:
        with self._lock:
            return views.vacant_roles(self.repo, at)

    def board(self, at: str | None = None) -> dict:
        from gitstate.history.board import board
        with self._lock:
            return board(self.repo, at=at)

    def log(self, agent: str | None = None, at: str | None = None) -> dict:
        with self._lock:
            return views.log_rows(self.repo, agent, at=at)

    def inbox(self, agent: str, at: str | None = None) -> dict:
        with self._lock:
            return views.inbox(self.repo, agent, at)

    def show(self, agent: str, at: str | None = None) -> dict:
        with self._lock:
            if at is not None and at == self.pinned:   # the static site's one commit
                return views.freeze_state(self.repo, agent, at,
                                          law=(at, self.lifecycle(at)))
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

    # -- the index of one commit: every move and message, by agent -------------------------

    def index(self, commit: str) -> dict:
        """Every move of `commit`'s history (as `log` gives them) and every message, grouped
        by agent, read once per commit and kept while it is the one asked about: an agent's
        page, the feed and the team chart are then lookups, not reads of the history. At the
        tip it rides on the moves and mentions kept under .git/gitstate (history/movelog.py,
        history/mentions.py); when the tip moves on by a line of new commits, the index of
        the old tip is carried on with the new commits alone."""
        with self._lock:
            idx = self._index.get(commit)
            if idx is not None:
                return idx
            at_tip = commit == self.tip()
            idx = self._carried(commit) if at_tip else None
            if idx is None:
                idx = self._read_index(commit, at_tip)
            if len(self._index) >= 2:
                self._index.pop(next(iter(self._index)))
            self._index[commit] = idx
            if at_tip:
                self._tip_index = idx
            return idx

    @staticmethod
    def _law_key(lc) -> tuple:
        return (lc.name, tuple(lc.accept), lc.state_file)

    def _read_index(self, commit: str, at_tip: bool) -> dict:
        from gitstate.history.mentions import messages
        try:
            moves = views.transitions(self.repo, None, None if at_tip else commit)
        except GitstateError:
            moves = []
        by_agent: dict[str, list[dict]] = {}
        for move in moves:
            by_agent.setdefault(move["agent"], []).append(move)
        lc = self.lifecycle(None if at_tip else commit)
        msgs = messages(self.repo.git, lc, commit, self.repo.cache_dir if at_tip else None)
        return self._indexed(commit, lc, moves, by_agent, msgs)

    def _indexed(self, commit: str, lc, moves, by_agent, msgs, **kept) -> dict:
        to_all: list[int] = []
        to_one: dict[str, list[int]] = {}
        for i, m in enumerate(msgs):
            for who in m[3].mentions:
                (to_all if who == "all" else to_one.setdefault(who, [])).append(i)
        return {"commit": commit, "law": self._law_key(lc), "moves": moves,
                "by_agent": by_agent, "messages": msgs, "to_all": to_all, "to_one": to_one,
                "context": None, "context_all": False, "team": None, "transfers": None,
                "transfer_items": None, **kept}

    def _carried(self, commit: str) -> dict | None:
        """The last tip's index carried on to `commit` by reading only the commits between,
        when they are a line without merges under the same law; None otherwise."""
        from gitstate.history.mentions import messages_since
        from gitstate.history.movelog import moves_since
        prev = self._tip_index
        if prev is None:
            return None
        old, git = prev["commit"], self.repo.git
        lc = self.lifecycle(None)
        if not self._carries_on(prev, lc, commit):
            return None
        last = {a: ms[-1]["to"] for a, ms in prev["by_agent"].items() if ms}
        new = [{**views.move_of(row), "time": iso(row[1])}   # as `transitions` says them
               for row in moves_since(git, lc, old, commit, last)]
        by_agent = dict(prev["by_agent"])
        for m in new:
            by_agent[m["agent"]] = by_agent.get(m["agent"], []) + [m]
        msgs = messages_since(git, lc, old, commit) + prev["messages"]
        return self._indexed(commit, lc, prev["moves"] + new, by_agent, msgs,
                             **self._read_since(prev, lc, commit))

    def _carries_on(self, prev: dict, lc, commit: str) -> bool:
        """Is `commit` the last tip's under the same law, on a line without merges?"""
        old, git = prev["commit"], self.repo.git
        return self._law_key(lc) == prev["law"] \
            and git.ok("merge-base", "--is-ancestor", old, commit) \
            and on_first_parent_line(git, old, commit)

    def _read_since(self, prev: dict, lc, commit: str) -> dict:
        """What the last tip's index had read of contexts and hand-overs, carried on."""
        from gitstate.history.contexts import contexts_since
        from gitstate.history.handovers import handovers_since
        old, git = prev["commit"], self.repo.git
        kept: dict = {}
        if prev["context_all"] and prev["context"] is not None:
            ctx = dict(prev["context"])
            for agent, rows in contexts_since(git, lc, old, commit).items():
                ctx[agent] = ctx.get(agent, []) + rows
            kept.update(context=ctx, context_all=True)
        if prev["transfer_items"] is not None:
            kept["transfer_items"] = prev["transfer_items"] + handovers_since(git, lc, old,
                                                                              commit)
        return kept

    def timeline(self, agent: str, commit: str) -> list[dict]:
        """The agent's moves up to `commit` (a resolved sha), as `log AGENT` gives them."""
        return self.index(commit)["by_agent"].get(agent, [])

    def mentions_of(self, agent: str, commit: str) -> list:
        """The messages of `commit`'s history that speak to `agent` or @ALL, newest first."""
        idx = self.index(commit)
        mine = sorted(set(idx["to_all"]).union(idx["to_one"].get(agent, ())))
        return [idx["messages"][i] for i in mine]

    def context(self, agent: str, commit: str) -> list[tuple]:
        """(time, context_pct, commit) at each commit of `commit`'s history that changed the
        agent's state file. From every agent's, kept under .git/gitstate (history/contexts.py)
        when that can be had cheaply; else from this agent's state file at each of its moves
        (one batch), while every agent's is read once in the background for next time."""
        idx = self.index(commit)
        with self._lock:
            if idx["context"] is None:
                self._read_contexts(idx, commit)
            if idx["context_all"]:
                return [(ct, pct, sha) for sha, ct, pct in idx["context"].get(agent, [])]
            one = idx.setdefault("context_one", {})
            if agent not in one:
                one[agent] = self._context_at_moves(agent, commit, idx)
            return one[agent]

    def _read_contexts(self, idx: dict, commit: str) -> None:
        """Every agent's context, into the index of `commit`, where it can be had cheaply (or
        always, on the static site); else read later, in the background (at the tip)."""
        from gitstate.history.contexts import contexts
        at_tip = commit == self.tip()
        lc = self.lifecycle(commit)
        idx["context"] = contexts(self.repo.git, lc, commit,
                                  self.repo.cache_dir if at_tip else None,
                                  build=not self.lazy) or {}
        idx["context_all"] = bool(idx["context"]) or not self.lazy
        if not idx["context_all"] and at_tip and self.repo.cache_dir:
            self._read_contexts_later(lc, commit)

    def _context_at_moves(self, agent: str, commit: str, idx: dict) -> list[tuple]:
        """The agent's context read from its state file at each of its last 400 moves."""
        from gitstate.history.contexts import context_of
        moves = idx["by_agent"].get(agent, [])[-400:]
        path = self.lifecycle(commit).state_path(agent)
        datas = self.repo.git.cat_files(f"{m['commit']}:{path}" for m in moves)
        return [(epoch(m["time"]) or 0, pct, m["commit"]) for m, data in zip(moves, datas)
                if (pct := context_of(data)) is not None]

    def _read_contexts_later(self, lc, commit: str) -> None:
        """Every agent's context over time, read once in a thread and kept (the server)."""
        if self._reading_contexts:
            return
        self._reading_contexts = True
        from gitstate.history.contexts import contexts

        def read():
            try:
                contexts(self.repo.git, lc, commit, self.repo.cache_dir)
            except (GitstateError, OSError):
                pass           # only ever a speed-up: the pages read each agent's then
            finally:
                self._reading_contexts = False
        threading.Thread(target=read, name="gitstate-contexts", daemon=True).start()

    def transfers(self, commit: str) -> dict[str, list[dict]]:
        """Hand-overs (`Role-transfer: ROLE -> TO`) of `commit`'s history, under both the giver
        and the taker: {agent: [{commit, time, role, from, to}]} (history/handovers.py)."""
        from gitstate.history.handovers import handovers
        idx = self.index(commit)
        with self._lock:
            if idx["transfers"] is None:
                if idx["transfer_items"] is None:
                    at_tip = commit == self.tip()
                    idx["transfer_items"] = handovers(self.repo.git, self.lifecycle(commit),
                                                      commit,
                                                      self.repo.cache_dir if at_tip else None)
                out: dict[str, list[dict]] = {}
                for t in idx["transfer_items"]:
                    out.setdefault(t["from"], []).append(t)
                    if t["to"] != t["from"]:
                        out.setdefault(t["to"], []).append(t)
                idx["transfers"] = out
            return idx["transfers"]

    def feed(self, commit: str, *, limit: int = 100, page: int = 0) -> list[dict]:
        """The moves of every agent, newest first: page `page` of `limit` moves."""
        moves = self.index(commit)["moves"]
        end = len(moves) - page * limit
        return list(reversed(moves[max(0, end - limit):max(0, end)]))

    def team(self, commit: str) -> dict:
        """How many agents stood in each state over the history, sampled at evenly spaced
        moments: {"times": [...], "counts": {state: [...]}, "states": [...]}."""
        from gitstate.web.charts import team_series
        idx = self.index(commit)
        with self._lock:
            if idx["team"] is None:
                end = self.commit_time(commit)
                idx["team"] = team_series(idx["moves"], self.lifecycle(commit), end)
            return idx["team"]

    def diff(self, sha: str, agent: str) -> dict:
        """What the move `sha` changed in `agent`'s state file, as `git show` prints it."""
        from gitstate.law.grammar import canonical_id
        agent = canonical_id(agent)
        if not (7 <= len(sha) <= 64 and all(c in "0123456789abcdef" for c in sha.lower())):
            raise UsageError(f"{sha!r} is not a commit id", hint="a hexadecimal commit id")
        with self._lock:
            full = self.repo.git.rev(sha)
            if full is None:
                raise GitstateError(f"no commit {sha} here")
            path = self.lifecycle(full).state_path(agent)
            text = self.repo.git.run("show", "--no-color", "--no-ext-diff", "--format=",
                                     "--patch", full, "--", path).decode("utf-8", "replace")
        return {"commit": full, "agent": agent, "path": path, "diff": text[:200_000]}

    def commit_url(self, sha: str) -> str | None:
        """The commit's page on the repository's web home (`git config gitstate.commitUrl
        'https://host/owner/repo/commit/{sha}'`), or None when none is configured; only an
        http(s) template is used."""
        if self._commit_url is None:
            url = self.repo.git.config("gitstate.commitUrl") or ""
            ok = url.startswith(("https://", "http://")) and "{sha}" in url
            self._commit_url = url if ok else ""
        return self._commit_url.replace("{sha}", sha) if self._commit_url else None

    def agent(self, agent: str, at: str | None = None) -> dict:
        """Everything an agent's page shows (`page_data`), read for that agent alone."""
        from gitstate.law.grammar import canonical_id
        agent = canonical_id(agent)
        view = self.roster(at)
        record = next((r for r in rows(view) if r["agent"] == agent), None)
        if record is None:
            raise GitstateError(f"unknown agent '{agent}' at {(view['commit'] or '')[:10]}",
                                hint="the roster lists the agents this repository knows")
        try:
            with self._lock:
                box = views.inbox(self.repo, agent, view["commit"],
                                  mentions=self.mentions_of(agent, view["commit"]))
        except GitstateError as exc:
            box = {"agent": agent, "error": str(exc)}
        return self.page_data(view, record, box, children_of(view))

    def page_data(self, view: dict, record: dict, box: dict | None,
                  children: dict[str, list[str]]) -> dict:
        """Everything the page of the agent of `record` (a row of the roster `view`) shows:
        the row, its timeline, its inbox (`box`, as `views.inboxes` gives it; None: it has no
        state file), its hand-overs, its context over time, the agents it spawned
        (`children_of(view)`), and its freeze-state when frozen. The server reads one; the
        static site reads history once for them all."""
        agent, commit = record["agent"], view["commit"]
        out = {"record": record, "commit": commit, "lifecycle": view["lifecycle"],
               "timeline": [], "inbox": box, "inbox_error": None, "freeze": None,
               "freeze_error": None, "transfers": [], "context": [],
               "children": children.get(agent, [])}
        if commit:
            out["timeline"] = self.timeline(agent, commit)
            out["transfers"] = self.transfers(commit).get(agent, [])
            out["context"] = self.context(agent, commit)
        if box is None or "error" in box:
            out["inbox"] = None
            out["inbox_error"] = box["error"] if box else f"{agent} has no state file here"
        if record["roster"] == "frozen":
            try:
                out["freeze"] = self.show(agent, commit)
            except GitstateError as exc:
                out["freeze_error"] = str(exc)
        return out


def _aged(view: dict, now: int) -> None:
    """Each row's time in its state, counted again to `now`."""
    for r in rows(view):
        since = epoch(r.get("in_state_since"))
        if since is not None:
            r["seconds_in_state"] = max(0, now - since)
