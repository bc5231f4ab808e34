"""The models of the records the data side declares as law records (`gitstate.law.record`:
the lifecycle, a landing, an init report): described from those declarations, not written again,
each field with the description it is declared with (`field(..., about=...)`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from gitstate.doors import install
from gitstate.git import push
from gitstate.law import record as law_record
from gitstate.schema.records import JsonModel


def described(record: type[law_record.Record], names: dict[type[law_record.Record], str]) -> Any:
    """The pydantic model of a law record's plain form (`gitstate.law.record`): the record is
    the one declaration, with what each field means (`field(..., about=...)`). Every field is
    required (the plain form always has them all). `names`: the records' names in the
    schema."""
    import re

    from pydantic import create_model

    def resolve(annotation: str) -> Any:
        scope: dict[str, Any] = {"Any": Any}
        for other in names:
            if re.search(rf"\b{other.__name__}\b", annotation):
                scope[other.__name__] = described(other, names)
        return eval(annotation, scope)  # an annotation of gitstate's own, never input

    if record not in _DESCRIBED:
        hints = record.__annotations__
        about = record._about
        fields: dict[str, Any] = {
            f: (resolve(hints[f]), Field(..., description=about.get(f)))
            for f in record._fields if f not in record._plain_skip}
        model = create_model(names[record], __base__=JsonModel, __doc__=record.__doc__, **fields)
        _DESCRIBED[record] = model
        if record._plain_type:   # written in another form too (a timeout: a bare duration)
            _DESCRIBED[record] = eval(record._plain_type, {record.__name__: model})
    return _DESCRIBED[record]


_DESCRIBED: dict[type, Any] = {}


def _lifecycle_doc() -> type[JsonModel]:
    from gitstate.law import lifecycle as law
    names: dict[type[law_record.Record], str] = {
        law.State: "StateSpec", law.Role: "RoleSpec", law.Mortality: "Mortality",
        law.Timeout: "TimeoutSpec", law.Heartbeat: "HeartbeatSpec", law.Policies: "Policies",
        law.Movers: "Movers", law.Retry: "RetrySpec", law.Layout: "Layout",
        law.RuntimeRule: "RuntimeRule",
        law.Grammar: "Grammar", law.Lifecycle: "LifecycleDoc"}
    return described(law.Lifecycle, names)


# Models described at run time; mypy, which cannot follow them, checks them as the base model.
if TYPE_CHECKING:
    LifecycleDoc = JsonModel
    _InitReport = JsonModel
    Pushed = JsonModel
else:
    LifecycleDoc = _lifecycle_doc()
    _InitReport = described(install.InitReport, {install.InitReport: "InitReport"})
    Pushed = described(push.Landing, {push.Landing: "Pushed", push.Earlier: "Earlier"})


