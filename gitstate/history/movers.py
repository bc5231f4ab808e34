"""Who moved whom, proven (the README's "Who may move whom"): what `verify`, the hub and the
ref guard add to the rules for the mover of a commit.

- A commit made here by a session bound to an agent (`GITSTATE_AGENT`, handed over by the
  ref guard with the commits made here) is judged as the commit hooks judge it: `not-yours`.
- An agent with a key (`key:` in its state file, fixed at birth) is moved only by a commit
  signed by a key of someone the law lets move it (`unsigned-move`): its own, its parent's
  where the lifecycle lets the parent make the move (and for its birth), a holder's of a
  mover role (that holder's key in `protocols/allowed_signers`, a change of the law).
  A human's approval of a gated move is proven by `unsigned-approval`; `sweep`'s moves by
  time (due by this door's clock); `reap`'s and `shutdown`'s by a signature of a human or an
  operator of `policies.movers.operators` in `protocols/allowed_signers`.

Without keys and without a binding this costs a byte search per changed state file.
"""

from __future__ import annotations

from gitstate.git.runner import Git
from gitstate.git.signing import signed_by_any
from gitstate.history.commits import Commit
from gitstate.law import statefile
from gitstate.law.grammar import parse_message
from gitstate.law.lifecycle import SIGNERS_PATH, Lifecycle
from gitstate.law.movers import (
    KEY_FIELD,
    check_bound,
    move_of,
    op_kind,
    parsed_changes,
    team_operation,
    who_may,
)
from gitstate.law.signers import approvers, keys_of, parse_public_key
from gitstate.law.verdict import Parsed, Violation
from gitstate.rule_ids import Rule

_KEY_LINE = f"\n{KEY_FIELD}:".encode()


def judge_movers(git: Git, c: Commit, lc: Lifecycle, changes: list, ctx, law_from: str | None,
                 memo: dict, bound: tuple[str, set[str]] | None) -> list[dict]:
    """`not-yours` (a commit made here under a binding) and `unsigned-move` of a commit with
    one parent."""
    out: list[Violation] = []
    here = bound is not None and c.sha in bound[1]
    keyed = [ch for ch in changes if ch.old != ch.new and (
        (ch.old is not None and _KEY_LINE in ch.old)
        or (ch.old is None and ch.new is not None and b"\nparent:" in ch.new))]
    if not here and not keyed:
        return []
    parsed = parsed_changes(lc, changes, memo)
    msg = parse_message(c.message)
    if here and bound is not None:
        out += check_bound(lc, bound[0], parsed, ctx.agents(), msg)
    signers: list = []   # protocols/allowed_signers of the law in force, read once if asked
    keyed_ids = {id(ch) for ch in keyed}   # by identity: comparing records is O(fields)
    for p in parsed:
        if id(p.change) in keyed_ids:
            why = _unproven(git, c, lc, p, msg, ctx, law_from, signers)
            if why:
                out.append(Violation(Rule.UNSIGNED_MOVE, why, p.change.path))
    return [v.to_dict() for v in out]


def _key(front: dict | None) -> tuple[str, str] | None:
    value = (front or {}).get(KEY_FIELD)
    return parse_public_key(value) if isinstance(value, str) else None


def _unproven(git: Git, c: Commit, lc: Lifecycle, p: Parsed, msg, ctx, law_from: str | None,
              signers: list) -> str | None:
    """Why the mover of this change is not proven, or None."""
    old, new = move_of(p)
    doc = p.old or p.new
    front = doc.front if doc is not None else {}
    parent = statefile.as_text(front.get("parent"))
    parent = parent.lower() if parent else None
    agents = ctx.agents()
    parent_key = _key(agents.get(parent)) if parent else None
    if old is None:   # a birth: proven by the parent's key, where the parent has one
        if parent_key is None:
            return None
        keys, who = [parent_key], f"its parent {parent}"
    else:
        own = _key(front)
        if own is None or new is None:
            return None
        if lc.gated(old, new) and approvers(lc, msg):
            return None   # a human's move: proven by `unsigned-approval`
        op = team_operation(msg)
        role = statefile.as_text(front.get("role"))
        if op is not None and op_kind(lc, op, old, new, role):
            return _team_move(git, c, lc, p, op, old, new, role, ctx, law_from, signers)
        keys = [own]
        movers = lc.policies.movers
        if parent_key is not None and movers.parent_may(old, new):
            keys.append(parent_key)
        holders = [a for r in movers.roles_for(old, new) for a, f in agents.items()
                   if statefile.as_text(f.get("role")) == r and a != p.agent
                   and lc.roster_of(str(f.get("state"))) == "living"]
        listed = _signers(git, law_from, signers)
        keys += [k for a in holders for k in keys_of(listed, a)]
        who = who_may(lc, p.agent, front, old, new)
    why = signed_by_any(_raw(git, c), keys)
    if why is None:
        return None
    what = f"{old} -> {new}" if old else f"its birth in {new}"
    return (f"{p.agent} has a key, so its moves are proven by signatures: this one ({what}) "
            f"must be signed by a key of {who}, but {why}; sign the commit with that key "
            "(gitstate's commands do where this clone holds it)")


def _team_move(git: Git, c: Commit, lc: Lifecycle, p: Parsed, op: str, old: str, new: str,
               role: str | None, ctx, law_from: str | None, signers: list) -> str | None:
    """`sweep` is proven by time: due by this door's clock. `reap` and `shutdown` by a
    signature of a human or an operator the law names."""
    if op == "sweep":
        spec = lc.policies.timeout(old, new)
        limit: int | None
        if spec is not None and lc.timeout_applies(old, new, role):
            since, limit = ctx.entered(p.agent, old), spec.after
        else:
            since, limit = _born(git, ctx, p.change.path), lc.role_timeout(role)
        if since is not None and limit is not None and ctx.now() - since >= limit:
            return None
        return (f"`gitstate sweep` moved {p.agent} ({old} -> {new}) before it was due by this "
                "door's clock; a timed move is proven by time alone")
    names = list(lc.policies.humans) + list(lc.policies.movers.operators)
    listed = _signers(git, law_from, signers)
    keys = [k for n in names for k in keys_of(listed, n)]
    why = signed_by_any(_raw(git, c), keys)
    if why is None:
        return None
    return (f"{p.agent} has a key, and `gitstate {op}` moved it ({old} -> {new}): {op} acts on "
            f"what only its clone can see, so it must be signed by a key {SIGNERS_PATH} lists "
            f"for {' or '.join(names) or 'a human or an operator'}, but {why}")


def _signers(git: Git, law_from: str | None, memo: list) -> str:
    if not memo:
        data = git.cat_files([f"{law_from}:{SIGNERS_PATH}"])[0] if law_from else None
        memo.append((data or b"").decode("utf-8", "replace"))
    return memo[0]


def _raw(git: Git, c: Commit) -> bytes:
    found = git.cat_batch([c.sha])[0]
    return found[2] if found and isinstance(found[2], bytes) else b""


def _born(git: Git, ctx, path: str) -> float | None:
    """When the agent of `path` was born (its state file added), by this door's clock."""
    base = ctx.base
    if base is None:
        return None
    line = git.text("log", "-1", "--format=%H %ct", "--diff-filter=A", base, "--", path)
    sha, _, ct = line.partition(" ")
    if not ct.isdigit():
        return None
    clock = getattr(ctx, "clock", None)
    return clock.received(sha, float(ct)) if clock is not None else float(ct)
