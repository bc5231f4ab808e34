"""Checked lifecycles remembered under `.git/gitstate/`, for the hooks and read commands:
reading one back from JSON skips both the PyYAML import and the checks. Keyed by the blob's
hash, so an edited lifecycle is a miss."""

from __future__ import annotations

from gitstate.law.lifecycle import Lifecycle, Mortality, Policies, Role, State
from gitstate.law.load import read_lifecycle


def to_plain(lc: Lifecycle) -> dict:
    """Everything needed to rebuild `lc`, as JSON-ready data."""
    pol = lc.policies
    return {
        "name": lc.name, "initial": lc.initial, "description": lc.description,
        "source": lc.source, "state_file": lc.state_file, "accept": list(lc.accept),
        "states": [[s.name, s.roster, s.terminal, list(s.requires), s.description, s.protocol,
                    s.outcome, s.log] for s in lc.states.values()],
        "transitions": {k: list(v) for k, v in lc.transitions.items()},
        "roles": [[r.name, r.mandate, r.max, r.description,
                   None if r.spawns is None else list(r.spawns), list(r.never_spawns),
                   r.self_spawn, r.timeout] for r in lc.roles.values()],
        "policies": {
            "humans": list(pol.humans), "approval": [list(a) for a in pol.approval],
            "law_approval": pol.law_approval,
            "mortality": None if pol.mortality is None else [
                pol.mortality.midlife, pol.mortality.legacy, pol.mortality.urgent,
                list(pol.mortality.urgent_forbids)],
            "max_living": pol.max_living, "max_depth": pol.max_depth,
            "timeouts": [[a, b, s] for (a, b), s in pol.timeouts.items()],
            "custom_roles": pol.custom_roles, "atomic_commits": pol.atomic_commits,
            "timeout_exempt": [[a, b, list(rs)] for (a, b), rs in pol.timeout_exempt.items()],
            "role_timeout": pol.role_timeout, "heartbeat": pol.heartbeat,
            "context_window": pol.context_window,
            "timeout_sooner": [list(a) for a in pol.timeout_sooner]},
        "defaults": dict(lc.defaults),
    }


def from_plain(d: dict) -> Lifecycle:
    pol = d["policies"]
    mort = pol["mortality"]
    return Lifecycle(
        name=d["name"], initial=d["initial"], description=d["description"], source=d["source"],
        state_file=d["state_file"], accept=tuple(d["accept"]), defaults=dict(d["defaults"]),
        states={s[0]: State(s[0], s[1], s[2], tuple(s[3]), s[4], s[5], s[6], s[7])
                for s in d["states"]},
        transitions={k: tuple(v) for k, v in d["transitions"].items()},
        roles={r[0]: Role(r[0], r[1], r[2], r[3], None if r[4] is None else tuple(r[4]),
                          tuple(r[5]), r[6], r[7]) for r in d["roles"]},
        policies=Policies(
            humans=tuple(pol["humans"]), approval=tuple(tuple(a) for a in pol["approval"]),
            law_approval=pol["law_approval"],
            mortality=None if mort is None else Mortality(mort[0], mort[1], mort[2],
                                                          tuple(mort[3])),
            max_living=pol["max_living"], max_depth=pol["max_depth"],
            timeouts={(a, b): s for a, b, s in pol["timeouts"]},
            custom_roles=pol["custom_roles"], atomic_commits=pol["atomic_commits"],
            timeout_exempt={(a, b): tuple(rs) for a, b, rs in pol["timeout_exempt"]},
            role_timeout=pol["role_timeout"], heartbeat=pol["heartbeat"],
            context_window=pol.get("context_window"),
            timeout_sooner=tuple(tuple(a) for a in pol["timeout_sooner"])))


def load_lifecycle_cached(data: bytes, blob: str, source: str,
                          cache_dir: str | None) -> Lifecycle:
    """`load_lifecycle` of a committed or staged blob, remembered under `cache_dir`."""
    from gitstate import __version__
    from gitstate.git import cache

    name = f"lifecycle-{blob}.json"
    identity = [10, __version__]   # 10: presets round two read on the limits and checks
    saved = cache.load(cache_dir, name, identity)
    if saved is not None:
        try:
            return from_plain(saved["lifecycle"])
        except (KeyError, IndexError, TypeError, ValueError):
            pass  # damaged: rebuilt below
    lc = read_lifecycle(data, source)
    cache.store(cache_dir, name, identity, {"lifecycle": to_plain(lc)})
    return lc
