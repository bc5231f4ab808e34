"""A minimal record type for the hook path.

`dataclasses` costs more to import and apply than a hook can afford (it pulls in `inspect`,
and each decorated class compiles generated code at import). Records here are plain classes
with `__slots__`, positional-or-keyword construction, equality and a readable repr.
"""

from __future__ import annotations


class Record:
    __slots__: tuple[str, ...] = ()
    _defaults: dict = {}

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} arguments")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated field {key!r}")
            values[key] = value
        for name in names:
            if name in values:
                value = values[name]
            elif name in self._defaults:
                value = self._defaults[name]
                if isinstance(value, (dict, list, set)):
                    value = type(value)(value)
            else:
                raise TypeError(f"{type(self).__name__}: missing field {name!r}")
            object.__setattr__(self, name, value)

    def _astuple(self) -> tuple:
        return tuple(getattr(self, n) for n in self.__slots__)

    def __eq__(self, other):
        return type(other) is type(self) and other._astuple() == self._astuple()

    def __hash__(self):
        return hash((type(self).__name__,) + tuple(
            v for v in self._astuple() if not isinstance(v, (dict, list, set))))

    def __repr__(self):
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({inner})"
