"""Records: a shape declared once, as annotated fields with their defaults and what each
means, from which come construction, equality, a repr, the plain (JSON-ready) form, reading
that form back, and the JSON Schema (`gitstate.schema`, which builds pydantic models from these
declarations, each field described by its `about`).

    class Mortality(Record):
        midlife: int = field(50, about="context_pct from which an agent is in midlife")
        urgent_forbids: tuple[str, ...] = ()

Not `dataclasses`: a hook imports these modules on every state commit, and `dataclasses`
costs ~6 ms to import (it pulls in `inspect`; bench/README.md, "Hook latency"), and each
decorated class compiles generated code at import. A record's fields are its `__slots__`.

The plain form: records become mappings of their fields (less `_plain_skip`), tuples become
lists, mappings keep their keys. A record with another plain form (`as_plain`, `from_plain`)
says so with `_plain_type`, the annotation the schema describes it by.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_RECORDS: dict[str, type[Record]] = {}   # every record class by name: annotations name them
_COPIED = (dict, list, set)   # defaults each record gets a copy of


class _Field:
    __slots__ = ("default", "about")

    def __init__(self, default, about: str):
        self.default, self.about = default, about


_REQUIRED = _Field(None, "")   # no default: a record cannot be made without the field


def field(default=_REQUIRED, *, about: str) -> Any:
    """A field's default (none: required) and what the field means, declared together: the
    description is the one `gitstate schema` gives the field.

        midlife: int = field(50, about="context_pct from which an agent is in midlife")
    """
    return _Field(default, about)


class _RecordType(type):
    def __new__(mcls, name, bases, ns):
        if "__slots__" not in ns:
            _declare(ns, tuple(k for k in ns.get("__annotations__", {}) if not k.startswith("_")))
        cls = super().__new__(mcls, name, bases, ns)
        _RECORDS[name] = cls
        return cls


def _declare(ns: dict, fields: tuple[str, ...]) -> None:
    """A record class's namespace made from its annotated `fields`: what each means, their
    defaults, its slots."""
    ns["_about"] = _abouts(ns, fields)
    ns["_defaults"] = {k: ns.pop(k) for k in fields if k in ns}
    ns["__slots__"] = fields + tuple(ns.get("_private", ()))
    ns["_fields"] = fields


def _abouts(ns: dict, fields: tuple[str, ...]) -> dict[str, str]:
    """What each field declared with `field()` means; its default left in its place."""
    about = {}
    for k in fields:
        if isinstance(ns.get(k), _Field):
            declared = ns.pop(k)
            about[k] = declared.about
            if declared.default is not _REQUIRED:
                ns[k] = declared.default
    return about


class Record(metaclass=_RecordType):
    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()
    _defaults: dict = {}
    # fields that are not part of the plain form: `name`, for records kept in a mapping by it
    _plain_skip: tuple[str, ...] = ()
    _plain_type: str | None = None      # the annotation of the plain form, if not the record
    _about: dict[str, str] = {}         # what each field means, from `field(..., about=...)`

    def __init__(self, *args, **kwargs):
        # (verify builds ~140,000 records for 100,000 commits: no dict of values on the way)
        names = self._fields or self.__slots__
        given = len(args)
        if given > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} arguments")
        put = object.__setattr__
        for name, value in zip(names, args):
            put(self, name, value)
        rest = names[given:]
        if kwargs:
            self._put_given(rest, kwargs)
        else:   # the rest from their defaults (`Parsed(change, agent)`, per commit)
            defaults = self._defaults
            for name in rest:
                if name not in defaults:
                    raise TypeError(f"{type(self).__name__}: missing field {name!r}")
                value = defaults[name]
                put(self, name, type(value)(value) if isinstance(value, _COPIED) else value)
        for name in self.__slots__[len(names):]:
            put(self, name, None)

    def _put_given(self, rest: tuple[str, ...], kwargs: dict) -> None:
        """The fields `rest` from `kwargs`, or else their defaults."""
        for key in kwargs:
            if key not in rest:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated field {key!r}")
        defaults = self._defaults
        for name in rest:
            if name in kwargs:
                value = kwargs[name]
            elif name in defaults:
                value = defaults[name]
                if isinstance(value, _COPIED):
                    value = type(value)(value)
            else:
                raise TypeError(f"{type(self).__name__}: missing field {name!r}")
            object.__setattr__(self, name, value)

    def _astuple(self) -> tuple:
        return tuple(getattr(self, n) for n in self._fields or self.__slots__)

    def __eq__(self, other):
        return type(other) is type(self) and other._astuple() == self._astuple()

    def __hash__(self):
        return hash((type(self).__name__,) + tuple(
            v for v in self._astuple() if not isinstance(v, (dict, list, set))))

    def __repr__(self):
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields or self.__slots__)
        return f"{type(self).__name__}({inner})"

    # -- the plain form ------------------------------------------------------------------

    def as_plain(self) -> dict:
        return {n: plain(getattr(self, n)) for n in self._fields if n not in self._plain_skip}

    @classmethod
    def from_plain(cls, data: dict, **extra):
        """The record whose `as_plain()` is `data` (`extra`: the skipped fields)."""
        hints = cls.__annotations__
        return cls(**{n: build(hints[n], data[n]) for n in cls._fields if n in data}, **extra)


def plain(value):
    """`value` as JSON-ready data: records by their plain form, tuples as lists."""
    if isinstance(value, Record):
        return value.as_plain()
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def build(annotation: str, value):
    """A plain `value` read back as the field annotated `annotation` holds it: records
    rebuilt, lists made tuples where the field is a tuple."""
    if value is None:
        return None
    kind = annotation.replace(" | None", "").strip()
    if kind in _RECORDS:
        return _RECORDS[kind].from_plain(value)
    if kind.startswith("tuple[") and kind.endswith(", ...]"):
        inner = kind[len("tuple["):-len(", ...]")]
        return tuple(build(inner, v) for v in value)
    if kind.startswith("dict[str, ") and kind.endswith("]"):
        return _build_mapping(kind[len("dict[str, "):-1], value)
    return value


def _build_mapping(inner: str, value: dict) -> dict:
    keyed = _RECORDS.get(inner)
    if keyed is not None and "name" in keyed._plain_skip:   # records keyed by their name
        return {k: keyed.from_plain(v, name=k) for k, v in value.items()}
    return {k: build(inner, v) for k, v in value.items()}

