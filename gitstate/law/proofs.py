"""Who moved whom, proven by signatures or by time (docs/explanation/movers.md): what the
doors that see a commit as made (the hub, the ref guard, `verify`) ask beyond the binding.

- An agent with a key (`key:` in its state file, fixed at birth) is moved only by a commit
  signed by a key of someone the law lets move it (`unsigned-move`): its own, its parent's
  where the lifecycle lets the parent make the move (and for its birth), a holder's of a
  mover role (that holder's key in `protocols/allowed_signers`).
  A human's approval of a gated move is proven by `unsigned-approval`; `sweep`'s moves by
  time (due by the door's clock); `reap`'s and `shutdown`'s by a signature of a human or an
  operator of `policies.movers.operators` in `protocols/allowed_signers`.
- A gated move approved by a human is signed by that human's key, where the law in force
  has `protocols/allowed_signers` (`unsigned-approval`).

Pure: the signatures are checked, and the signers in force read, by the door's `Proofs`
(`history/signatures.py` reads them from git); the signers are always those in force where the
commit joins the line (its first parent), so a key removed from the file approves nothing
after its removal.
"""

from __future__ import annotations

from gitstate.law import statefile
from gitstate.law.grammar import Message
from gitstate.law.lifecycle import SIGNERS_PATH, Lifecycle
from gitstate.law.movers import KEY_FIELD, move_of, op_kind, parsed_changes, team_operation, who_may
from gitstate.law.rule_ids import Rule
from gitstate.law.signers import approvers, gated, keys_of, parse_public_key, unsigned
from gitstate.law.verdict import FileChange, Parsed, Violation
from gitstate.law.wall import RUNTIME, runtime_move, system_changes, walled

_KEY_LINE = f"\n{KEY_FIELD}:".encode()


class Proofs:
    """What a door that sees the commit as made answers about it (interface)."""

    def signers(self) -> str | None:  # pragma: no cover - interface
        """`protocols/allowed_signers` in force where the commit joins the line (None: none)."""
        raise NotImplementedError

    def signed_by(self, principal: str) -> str | None:  # pragma: no cover - interface
        """None if the commit is signed by a key the signers in force list for `principal`;
        else why not."""
        raise NotImplementedError

    def signed_by_any(self, keys: list[tuple[str, str]]) -> str | None:  # pragma: no cover
        """None if the commit is signed by one of `keys`; else why not."""
        raise NotImplementedError

    def born(self, path: str) -> float | None:  # pragma: no cover - interface
        """When the agent of `path` was born, by this door's clock."""
        raise NotImplementedError

    def retried(self, path: str) -> float | None:  # pragma: no cover - interface
        """When the agent of `path` was last retried (`policies.retry`), by this door's
        clock; None: never."""
        raise NotImplementedError


def unproven_movers(lc: Lifecycle, changes: list[FileChange], msg: Message, ctx,
                    proofs: Proofs, memo: dict | None) -> list[Violation]:
    """`unsigned-move` of every change of an agent with a key (or the birth of a child of a
    parent with one) whose mover is not proven."""
    keyed = [ch for ch in changes if _may_be_keyed(ch)]
    if not keyed:
        return []
    keyed_ids = {id(ch) for ch in keyed}   # by identity: comparing records is O(fields)
    out = []
    for p in parsed_changes(lc, changes, memo):
        if id(p.change) in keyed_ids:
            why = _unproven(lc, p, msg, ctx, proofs)
            if why:
                out.append(Violation(Rule.UNSIGNED_MOVE, why, p.change.path))
    return out


def _may_be_keyed(ch: FileChange) -> bool:
    """A change of a file that names a key, or the birth of an agent that names a parent."""
    if ch.old == ch.new:
        return False
    if ch.old is not None:
        return _KEY_LINE in ch.old
    return ch.new is not None and b"\nparent:" in ch.new


def unsigned_approvals(lc: Lifecycle, changes: list[FileChange], changed_law: list[str],
                       msg: Message, proofs: Proofs) -> list[Violation]:
    """A gated move approved by a human must be signed by that human's key, where the law in
    force has protocols/allowed_signers."""
    what = gated(lc, changes, changed_law) + walled(lc, changes)
    names = approvers(lc, msg) if what else []
    if not names or proofs.signers() is None:
        return []   # keys not known: the trailer alone counts (doctor says so)
    reasons = [proofs.signed_by(n) for n in names]
    if reasons[0] is None or None in reasons:
        return []
    return [unsigned(what, names, reasons[0])]


def _key(front: dict | None) -> tuple[str, str] | None:
    value = (front or {}).get(KEY_FIELD)
    return parse_public_key(value) if isinstance(value, str) else None


def _unproven(lc: Lifecycle, p: Parsed, msg: Message, ctx, proofs: Proofs) -> str | None:
    """Why the mover of this change is not proven, or None."""
    old, new = move_of(p)
    doc = p.old or p.new
    front = doc.front if doc is not None else {}
    parent = statefile.as_text(front.get("parent"))
    parent = parent.lower() if parent else None
    parent_key = _key(ctx.agents().get(parent)) if parent else None
    if old is None:   # a birth: proven by the parent's key, where the parent has one
        if parent_key is None:
            return None
        return _not_signed(p, proofs, [parent_key], f"its parent {parent}", old, new)
    return _unproven_move(lc, p, msg, ctx, proofs, front, parent_key, old, new)


def _unproven_move(lc: Lifecycle, p: Parsed, msg: Message, ctx, proofs: Proofs, front: dict,
                   parent_key: tuple[str, str] | None, old: str, new: str | None
                   ) -> str | None:
    """Why the mover of a move (not a birth) of an agent with a key is not proven, or None."""
    own = _key(front)
    if own is None or new is None:
        return None
    if (lc.gated(old, new) or system_changes(lc, p)) and approvers(lc, msg):
        return None   # a human's move: proven by `unsigned-approval`
    role = statefile.as_text(front.get("role"))
    op = _operation(lc, msg, old, new, role)
    if op is not None:
        return _team_move(lc, p, op, old, new, role, ctx, proofs)
    keys = [own] + _movers_keys(lc, p, old, new, parent_key, ctx, proofs)
    return _not_signed(p, proofs, keys, who_may(lc, p.agent, front, old, new), old, new)


def _operation(lc: Lifecycle, msg: Message, old: str, new: str, role: str | None) -> str | None:
    """The team operation that says it made the move (one that makes moves of its kind), or
    the runtime under the fourth wall; None: the move is the agent's or its movers'."""
    op = team_operation(msg)
    if op is not None and op_kind(lc, op, old, new, role):
        return op
    if lc.policies.fourth_wall and runtime_move(msg):   # the runtime's, not the agent's key
        return RUNTIME
    return None


def _not_signed(p: Parsed, proofs: Proofs, keys: list, who: str, old: str | None,
                new: str | None) -> str | None:
    """Why the commit is signed by none of `keys` (the keys of `who`), or None."""
    why = proofs.signed_by_any(keys)
    if why is None:
        return None
    what = f"{old} -> {new}" if old else f"its birth in {new}"
    return (f"{p.agent} has a key, so its moves are proven by signatures: this one ({what}) "
            f"must be signed by a key of {who}, but {why}; sign the commit with that key "
            "(gitstate's commands do where this clone holds it)")


def _movers_keys(lc: Lifecycle, p: Parsed, old: str, new: str, parent_key, ctx,
                 proofs: Proofs) -> list[tuple[str, str]]:
    """The keys, besides the agent's own, of those the law lets make this move of it."""
    movers = lc.policies.movers
    keys = [parent_key] if parent_key is not None and movers.parent_may(old, new) else []
    roles = movers.roles_for(old, new)
    if not roles:
        return keys
    holders = _living_holders(lc, roles, ctx.agents(), p.agent)
    listed = proofs.signers() or ""
    return keys + [k for a in holders for k in keys_of(listed, a)]


def _living_holders(lc: Lifecycle, roles: list[str], agents: dict[str, dict],
                    but: str) -> list[str]:
    """The living holders of `roles` other than `but`, role by role."""
    return [a for r in roles for a, f in agents.items()
            if statefile.as_text(f.get("role")) == r and a != but
            and lc.roster_of(str(f.get("state"))) == "living"]


def _lives_since(p: Parsed, proofs: Proofs) -> float | None:
    """Whence a role's timeout counts: the agent's last retry (a retried agent works anew,
    `policies.retry`), else its birth."""
    from gitstate.law.retry import count
    doc = p.old or p.new
    retried = proofs.retried(p.change.path) if doc is not None and count(doc.front) else None
    return retried if retried is not None else proofs.born(p.change.path)


def _early_sweep(lc: Lifecycle, p: Parsed, old: str, new: str, role: str | None, ctx,
                 proofs: Proofs) -> str | None:
    """`sweep` is proven by time: due by this door's clock."""
    spec = lc.policies.timeout(old, new)
    limit: int | None
    if spec is not None and lc.timeout_applies(old, new, role):
        since, limit = ctx.entered(p.agent, old), spec.after
    else:
        since, limit = _lives_since(p, proofs), lc.role_timeout(role)
    if since is not None and limit is not None and ctx.now() - since >= limit:
        return None
    return (f"`gitstate sweep` moved {p.agent} ({old} -> {new}) before it was due by this "
            "door's clock; a timed move is proven by time alone")


def _team_move(lc: Lifecycle, p: Parsed, op: str, old: str, new: str, role: str | None, ctx,
               proofs: Proofs) -> str | None:
    """`sweep` is proven by time: due by this door's clock. `reap` and `shutdown` by a
    signature of a human or an operator the law names."""
    if op == "sweep":
        return _early_sweep(lc, p, old, new, role, ctx, proofs)
    names = list(lc.policies.humans) + list(lc.policies.movers.operators)
    listed = proofs.signers() or ""
    keys = [k for n in names for k in keys_of(listed, n)]
    why = proofs.signed_by_any(keys)
    if why is None:
        return None
    acts = "records what the agent may not write of itself (policies.fourth_wall)" \
        if op == RUNTIME else "acts on what only its clone can see"
    return (f"{p.agent} has a key, and `gitstate {op}` moved it ({old} -> {new}): {op} {acts}, "
            f"so it must be signed by a key {SIGNERS_PATH} lists for "
            f"{' or '.join(names) or 'a human or an operator'}, but {why}")
