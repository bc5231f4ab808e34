"""What needs a person's eyes first: an agent that waits for a person (its runtime said so:
runtime/attention.py, added by the roster page), an agent at urgent or legacy context, a
living agent silent past the heartbeat, an agent in a state past its timeout, a state file
that cannot be read. Each is said in words (the colour only repeats it)."""

from __future__ import annotations

from gitstate.law.lifecycle import Lifecycle
from gitstate.law.times import duration
from gitstate.web.clock import epoch

# how bad each kind is: the roster sorts the worst first
WEIGHT = {"waiting": 5, "problem": 4, "urgent": 3, "silent": 3, "overdue": 2, "legacy": 1}


def trouble(r: dict, lc: Lifecycle, now: int) -> list[tuple[str, str]]:
    """(kind, words) of each thing wrong with roster record `r` as of `now` (seconds)."""
    out: list[tuple[str, str]] = []
    if r.get("problem"):
        out.append(("problem", str(r["problem"])))
    if r.get("roster") in ("dead", None):
        return out
    found = [_late_in_life(r)]
    if r.get("roster") == "living":
        found += [_silent(r, lc, now), _overdue(r, lc, now)]
    return out + [f for f in found if f]


def _late_in_life(r: dict) -> tuple[str, str] | None:
    """An agent at urgent or legacy context."""
    if r.get("phase") in ("urgent", "legacy") and r.get("context_pct") is not None:
        return (r["phase"], f"{r['phase']} context ({r['context_pct']:g}%)")
    return None


def _silent(r: dict, lc: Lifecycle, now: int) -> tuple[str, str] | None:
    """A living agent silent past its heartbeat: none for a role kept alive (squad's core)
    or a state that waits by design (its idle)."""
    beat = lc.heartbeat_for(r.get("role"), r.get("state"))
    last = epoch(r.get("last_commit_at") or r.get("last_commit"))
    if beat and last is not None and now - last >= beat:
        return ("silent", f"silent for {duration(now - last)} (heartbeat "
                          f"{duration(beat, exact=True)})")
    return None


def _overdue(r: dict, lc: Lifecycle, now: int) -> tuple[str, str] | None:
    """A living agent in a state past a timeout of it."""
    since = epoch(r.get("in_state_since"))
    state = r.get("state")
    if since is None or not state:
        return None
    for src, dst, spec in lc.policies.timed_moves():
        if src == state and lc.timeout_applies(src, dst, r.get("role")) \
                and now - since >= spec.after:
            return ("overdue", f"past its timeout: {state} -> {dst} was due after "
                               f"{duration(spec.after, exact=True)}")
    return None


def worst(kinds: list[tuple[str, str]]) -> int:
    return max((WEIGHT.get(k, 1) for k, _ in kinds), default=0)
