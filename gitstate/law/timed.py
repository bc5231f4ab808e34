"""The lifecycle's lengths of time with options: a timed move (`policies.timeouts`) and the
heartbeat (`policies.heartbeat`), each written as a bare duration when no option is set. Their
checks and their use are the law's (`gitstate.law.lifecycle` imports these records)."""

from __future__ import annotations

from gitstate.law.record import Record, field


class _Lasting(Record):
    """A length of time (`after`) with options: written as a bare duration when none is set."""
    __slots__ = ()
    after: int   # each kind declares it, with what it means

    def as_plain(self):
        options = any(getattr(self, n) for n in self._fields if n != "after")
        return super().as_plain() if options else self.after

    @classmethod
    def from_plain(cls, data, **extra):
        return cls(after=data) if isinstance(data, int) else super().from_plain(data)


class Timeout(_Lasting):
    """A timed move: due `after` seconds in its first state; never for `except_roles`; with
    `sooner`, an agent may also make it before it is due (era's idle -> inbox)."""
    after: int = field(about="seconds in the first state after which the move is due")
    except_roles: tuple[str, ...] = field((), about="roles the timeout never applies to")
    sooner: bool = field(False, about="whether an agent may make the move itself before it is due")
    _plain_type = "int | Timeout"


class Heartbeat(_Lasting):
    """How long a working agent may be silent before `reap` fails it. In a living state that
    `states` leaves out, an agent waits by design (squad's idle): its timeout ends the wait."""
    after: int = field(about="seconds of silence after which `reap` ends a working agent")
    except_roles: tuple[str, ...] = field((), about="roles never reaped for silence")
    states: tuple[str, ...] = field(
        (), about="the living states where an agent works, whose silence is a crash (none "
                  "listed: every living state)")
    _plain_type = "int | Heartbeat"
