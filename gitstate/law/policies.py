"""Reading the `policies:` and `defaults:` of a lifecycle file (part of `law.load`): each
value checked, each problem reported through the loader's reader with its location."""

from __future__ import annotations

from gitstate.law.lifecycle import (
    MORTALITY_KEYS,
    NOT_DEFAULTS,
    POLICY_KEYS,
    TIMEOUT_KEYS,
    Mortality,
    Policies,
    Timeout,
    parse_arrow,
    parse_duration,
)

TYPE_CHECKING = False  # typing costs a hook ~3 ms to import (bench/README.md, "Hook latency")
if TYPE_CHECKING:
    from typing import Any


def read_policies(r, raw: Any) -> Policies:
    p = r.mapping(raw, ("policies",), "policies")
    r.unknown_keys(p, POLICY_KEYS, ("policies",), "policies")
    approval = []
    for i, item in enumerate(r.names(p.get("approval"), ("policies", "approval"),
                                     "policies.approval")):
        if item.strip() == "law":   # changes of the lifecycle, allowed_signers and the shims
            approval.append("law")
            continue
        arrow = parse_arrow(item)
        if arrow is None:
            r.bad(("policies", "approval", i), f"approval rule {item!r} must read 'from -> to' "
                                               "('*' matches any state)")
        else:
            approval.append(f"{arrow[0]} -> {arrow[1]}")
    mortality = None
    if "mortality" in p:
        m = r.mapping(p.get("mortality"), ("policies", "mortality"), "policies.mortality")
        r.unknown_keys(m, MORTALITY_KEYS, ("policies", "mortality"), "mortality")
        vals = {k: r.integer(m.get(k, d), ("policies", "mortality", k), f"mortality.{k}", 0, 100)
                for k, d in (("midlife", 50), ("legacy", 75), ("urgent", 90))}
        mortality = Mortality(
            midlife=vals["midlife"] if vals["midlife"] is not None else 50,
            legacy=vals["legacy"] if vals["legacy"] is not None else 75,
            urgent=vals["urgent"] if vals["urgent"] is not None else 90,
            urgent_forbids=tuple(r.names(m.get("urgent_forbids"),
                                         ("policies", "mortality", "urgent_forbids"),
                                         "mortality.urgent_forbids")))
        if not mortality.midlife <= mortality.legacy <= mortality.urgent:
            r.bad(("policies", "mortality"), "mortality thresholds must rise: "
                  f"midlife {mortality.midlife} <= legacy {mortality.legacy} "
                  f"<= urgent {mortality.urgent}")
    timeouts: dict[str, Timeout] = {}
    for key, value in r.mapping(p.get("timeouts"), ("policies", "timeouts"),
                                "policies.timeouts").items():
        arrow = parse_arrow(key)
        roles: tuple[str, ...] = ()
        early = False
        if isinstance(value, dict):   # {after: 30m, except_roles: [lead]}
            where = ("policies", "timeouts", key)
            r.unknown_keys(value, TIMEOUT_KEYS, where, f"timeout '{key}'")
            roles = tuple(r.names(value.get("except_roles"), where + ("except_roles",),
                                  f"timeout '{key}': except_roles"))
            early = value.get("sooner", False)
            if not isinstance(early, bool):
                r.bad(where + ("sooner",), f"timeout '{key}': sooner must be true or false")
                early = False
            if "after" not in value:
                r.bad(where, f"timeout '{key}' needs 'after: <duration>'")
            value = value.get("after", 1)
        seconds = parse_duration(value)
        if arrow is None:
            r.bad(("policies", "timeouts", key), f"timeout key {key!r} must read 'from -> to'")
        elif seconds is None:
            r.bad(("policies", "timeouts", key), f"timeout {value!r} for '{key}' must be a "
                  "duration such as 45s, 30m, 2h or 1d")
        else:
            timeouts[f"{arrow[0]} -> {arrow[1]}"] = Timeout(seconds, roles, early)
    custom_roles = p.get("custom_roles", True)
    if not isinstance(custom_roles, bool):
        r.bad(("policies", "custom_roles"), "custom_roles must be true or false")
        custom_roles = True
    atomic = p.get("atomic_commits", False)
    if not isinstance(atomic, bool):
        r.bad(("policies", "atomic_commits"), "atomic_commits must be true or false")
        atomic = False
    return Policies(
        humans=tuple(r.names(p.get("humans"), ("policies", "humans"), "policies.humans")),
        approval=tuple(approval),
        mortality=mortality,
        max_living=r.integer(p.get("max_living"), ("policies", "max_living"), "max_living", 1),
        max_depth=r.integer(p.get("max_depth"), ("policies", "max_depth"), "max_depth", 0),
        timeouts=timeouts,
        role_timeout=duration(r, p, "role_timeout", ("policies",), "policies.role_timeout"),
        heartbeat=duration(r, p, "heartbeat", ("policies",), "policies.heartbeat"),
        custom_roles=custom_roles,
        atomic_commits=atomic,
        context_window=r.integer(p.get("context_window"), ("policies", "context_window"),
                                 "context_window", 1000))


def read_defaults(r, raw: Any) -> dict:
    d = r.mapping(raw, ("defaults",), "defaults")
    out = {}
    for key, value in d.items():
        if key in NOT_DEFAULTS:
            r.bad(("defaults", key), f"'{key}' is set by gitstate at birth and has no default")
        elif isinstance(value, (dict, list)):
            r.bad(("defaults", key), f"the default of '{key}' must be a single value, "
                  f"not {'a list' if isinstance(value, list) else 'a mapping'}")
        else:
            out[str(key)] = value
    return out


def duration(r, spec: dict, key: str, path: tuple, what: str) -> int | None:
    if spec.get(key) is None:
        return None
    seconds = parse_duration(spec.get(key))
    if seconds is None:
        r.bad(path + (key,), f"{what} {spec.get(key)!r} must be a duration such as 45s, 30m, "
                             "2h or 1d")
    return seconds
