"""`gitstate watch`: timeouts without cron (docs/how-to/watch.md).

A round does, as the system, what is due: with `--push`, first gets in step with the hub and
lands what this clone holds that the hub has not got (`gitstate sync`); then commits every
timed move that is due (`sweep`), then fails every working agent whose process is gone or
whose heartbeat stopped (`reap`). Sweep runs first: an agent a timeout has just moved is not
judged by its silence too. Each move is an ordinary state commit, judged by the same rules as
any other; with `--push` each lands on the hub (by its landing queue, where it keeps one).

A move that is not made (its agent moved on the hub meanwhile, the hub's law refuses it, or
no failure state is one move away) is tried again each round (the hub's clock may make it due
later), but said once while its agent stays where it was: a loop that runs every 30 seconds
does not repeat a refusal every 30 seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from gitstate.errors import GitstateError, Rejected
from gitstate.git.atomic import Result
from gitstate.git.repo import Managed
from gitstate.law.times import iso
from gitstate.moves.operations import NotMade, due_reaps, due_timeouts, move_record, reap, sweep

EVERY = 30.0   # seconds between two rounds (`--every`)


def _key(by: str, d: dict) -> tuple:
    """A due move as long as its agent stays where it was (a refusal holds as long)."""
    return by, d["agent"], d["from"], d["to"], d.get("since_commit") or d["why"]


def watch_round(repo: Managed, *, push: bool, say: Callable[[str], None], number: int = 1,
                refused: set | None = None, host: str | None = None) -> dict:
    """One round; its record (the model WatchRound of gitstate.schema). `say` is told one line
    per move made, and once per move not made (`refused` remembers those across rounds)."""
    refused = set() if refused is None else refused
    record: dict = {"round": number, "at": iso(time.time()), "commit": None, "due": [],
                    "moves": [], "synced": [], "left": [], "ok": True, "error": None}
    here = _Round(repo, push, say, record)
    seen: set[tuple] = set()
    try:
        if push:
            here.sync()
        for by in ("sweep", "reap"):
            seen |= here.make_due(by, host, refused)
        refused &= seen   # a move no longer due is forgotten
        record["commit"] = repo.head()
    except GitstateError as exc:
        record["ok"], record["error"] = False, str(exc)
    return record


class _Round:
    """A round under way: its record, and the agents it moved or keeps quiet about."""

    def __init__(self, repo: Managed, push: bool, say: Callable[[str], None], record: dict):
        self.repo, self.push, self.say, self.record = repo, push, say, record
        self.moved: set[str] = set()
        self.quiet: set[str] = set()   # agents whose move was not made before: not said again

    def said(self, line: str) -> None:
        agent = line.split(":", 1)[0]
        if agent not in self.moved:
            if agent in self.quiet:
                return
            self.record["left"].append(line)
        self.say(line)

    def sync(self) -> None:
        """This clone's unlanded moves landed first, each said."""
        from gitstate.moves.sync import sync
        for m in sync(self.repo, push=True)["moves"]:
            self.record["synced"].append(m)
            self.said(f"{m['agent'] or 'work'}: {m['outcome']}: {m['subject']}"
                      + (f" ({m['reason']})" if m.get("reason") else ""))

    def make_due(self, by: str, host: str | None, refused: set) -> set[tuple]:
        """The moves `by` (sweep or reap) finds due, made; those not made are remembered in
        `refused`, and one refused before is not said again. The keys of those due."""
        found, make = self._due(by, host)
        self.record["due"] += [{"by": by, "agent": d["agent"], "from": d["from"],
                                "to": d["to"], "why": d["why"],
                                "since_commit": d.get("since_commit")} for d in found]
        self.quiet |= {d["agent"] for d in found if _key(by, d) in refused}
        make()
        refused |= {_key(by, d) for d in found if d["agent"] not in self.moved}
        return {_key(by, d) for d in found}

    def _due(self, by: str, host: str | None) -> tuple[list[dict], Callable[[], list]]:
        """The moves `by` finds due, and how to make them."""
        if by == "sweep":
            found = due_timeouts(self.repo)
            return found, partial(sweep, self.repo, self.said, self.commit, due=found)
        found = due_reaps(self.repo, host)
        return found, partial(reap, self.repo, self.said, host, commit=self.commit, due=found)

    def commit(self, agent: str, move: Callable[[], Result]) -> Result:
        try:
            result = self.landed(agent, move) if self.push else move()
        except Rejected as exc:   # the law here refuses it (e.g. an unproven reap)
            raise NotMade("refused: " + "; ".join(str(v) for v in exc.violations)) from None
        made = move_record(agent, result)
        self.moved.add(made["agent"])
        self.record["moves"].append(made)
        return result

    def landed(self, agent: str, move: Callable[[], Result]) -> Result:
        from gitstate.moves.landing import push_move
        landing, result = push_move(self.repo, agent, move)
        if landing.outcome == "illegal":
            if landing.kept:   # a system move, decided from a state that no longer holds
                self.repo.git.call("update-ref", "-d", f"refs/heads/{landing.kept}")
            raise NotMade(f"it does not land on {landing.upstream}: {landing.reason}")
        if landing.outcome != "landed":   # the hub is out of reach: the round ends here
            raise GitstateError(f"{agent}'s move did not land ({landing.outcome}): "
                                f"{landing.reason}")
        return result
