"""Retries of a failed agent (`policies.retry`, maos's seed: "simple retry policies with
exponential backoff"): a move from a failure state back to work, which the transitions alone
never allow (a failure state is terminal). Each retry counts itself in the state file
(`retries`), at most `max` per agent, and the n-th waits `backoff` * 2^(n-1) after the agent
entered the failure state, by the door's clock as a timed move does. Pure."""

from __future__ import annotations

from gitstate.law import statefile
from gitstate.law.record import Record, field
from gitstate.law.rule_ids import Rule
from gitstate.law.times import duration
from gitstate.law.verdict import Violation

TYPE_CHECKING = False
if TYPE_CHECKING:   # (the lifecycle, `lc`, is not named: gitstate.law.lifecycle imports Retry)
    from gitstate.law.verdict import Context, Parsed

RETRIES = "retries"   # the state file's count of the retries made


class Retry(Record):
    """Retries of a failed agent (maos's seed: "simple retry policies with exponential
    backoff"): a move from a failure state back to work, `max` times per agent at most, the
    n-th no sooner than `backoff` * 2^(n-1) after entering the failure state (judged by the
    door's clock, as a timed move is). The state file counts them (`retries`)."""
    max: int = field(about="how many times one agent may be retried")
    backoff: int = field(
        about="seconds after the failure before the first retry; each next one waits twice as "
              "long")
    states: tuple[str, ...] = field(
        (), about="the failure states a retry leaves (none listed: every terminal state whose "
                  "outcome is failure)")
    to: tuple[str, ...] = field(
        (), about="the states a retry may enter (none listed: the initial state)")
    except_roles: tuple[str, ...] = field((), about="roles whose holders are never retried")


def from_states(lc) -> tuple[str, ...]:
    """The failure states a retry leaves: those `policies.retry.states` lists, else every
    terminal state whose outcome is failure."""
    spec = lc.policies.retry
    if spec is None:
        return ()
    return spec.states or tuple(n for n, s in lc.states.items()
                                if s.terminal and s.outcome == "failure")


def to_states(lc) -> tuple[str, ...]:
    spec = lc.policies.retry
    if spec is None:
        return ()
    return spec.to or ((lc.initial,) if lc.initial else ())


def is_retry(lc, old: str | None, new: str | None, role: str | None) -> bool:
    """Is `old -> new` a retry that `policies.retry` allows a holder of `role`?"""
    spec = lc.policies.retry
    return spec is not None and old in from_states(lc) and new in to_states(lc) \
        and not (role and role in spec.except_roles)


def count(front: dict) -> int:
    n = front.get(RETRIES)
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0


def fields(lc, front: dict, old: str | None, new: str) -> dict:
    """What a move writes of its own when it is a retry: the count, one more, and no end
    (`ended: null`: the agent works again)."""
    role = statefile.as_text(front.get("role"))
    if not is_retry(lc, old, new, role):
        return {}
    return {RETRIES: count(front) + 1, **({"ended": None} if "ended" in front else {})}


def wait(lc, made: int) -> int:
    """Seconds the retry after `made` retries waits after the failure."""
    spec = lc.policies.retry
    return spec.backoff * 2 ** made if spec is not None else 0


def check_retries(parsed: list[Parsed], lc, ctx: Context | None) -> list[Violation]:
    """Every retry of the commit within its policy, and `retries` changed by retries only."""
    out: list[Violation] = []
    for p in parsed:
        if p.old is not None and p.new is not None and not p.new_problem:
            _check(p, lc, ctx, out)
    return out


def _check(p: Parsed, lc, ctx: Context | None, out: list[Violation]) -> None:
    assert p.old is not None and p.new is not None
    old, new = p.old.state, p.new.state
    role = statefile.as_text(p.new.get("role")) or statefile.as_text(p.old.get("role"))
    if isinstance(old, str) and old != new and is_retry(lc, old, new, role):
        out += _retry(p, lc, ctx, old, role)
    elif count(p.new.front) != count(p.old.front):
        out.append(Violation(Rule.RETRY, f"'{RETRIES}' counts {p.agent}'s retries "
                             f"({count(p.old.front)}) and changes only with a retry, not to "
                             f"{count(p.new.front)}", _where(p)))


def _where(p: Parsed) -> str:
    assert p.new is not None
    return f"{p.change.path}:{p.new.line_of(RETRIES if RETRIES in p.new.front else 'state')}"


def _retry(p: Parsed, lc, ctx: Context | None, old: str, role: str | None) -> list[Violation]:
    """A retry: within `max`, counted, and no sooner than its backoff."""
    assert p.old is not None and p.new is not None
    before, after, where = count(p.old.front), count(p.new.front), _where(p)
    if before >= lc.policies.retry.max:
        return [_spent(p.agent, before, lc.policies.retry.max, old, role, where)]
    out = []
    if after != before + 1:
        out.append(Violation(Rule.RETRY, f"a retry counts itself: '{RETRIES}: {before + 1}', not "
                             f"{after} (`gitstate transition {p.agent} {p.new.state}` writes "
                             "it)", where))
    if ctx is not None:
        out += _too_soon(p.agent, old, before, lc, ctx, where)
    return out


def _spent(agent: str, before: int, most: int, old: str, role: str | None,
           where: str) -> Violation:
    spawn = f" --role {role}`)" if role else "`)"
    return Violation(Rule.RETRY, f"{agent} was retried {before} time"
                     f"{'' if before == 1 else 's'} already, the most policies.retry "
                     f"allows ({most}): it stays {old}. Spawn a new agent for its "
                     f"task instead (`gitstate spawn ID" + spawn, where)


def _too_soon(agent: str, old: str, before: int, lc, ctx: Context,
              where: str) -> list[Violation]:
    spec = lc.policies.retry
    need, since, now = wait(lc, before), ctx.entered(agent, old), ctx.now()
    if since is not None and now - since >= need:
        return []
    left = f"; due in {int(need - (now - since))}s" if since is not None else ""
    return [Violation(Rule.RETRY, f"retry {before + 1} of {spec.max} of {agent} waits "
                      f"{duration(need, exact=True)} after it entered {old} (backoff "
                      f"{duration(spec.backoff, exact=True)}, doubled for each retry made)"
                      f"{left}", where)]
