"""The models of the records the data side declares as law records (`gitstate.law.record`:
the lifecycle, a landing, an init report): described from those declarations, not written again,
with a description per field (`LAW_FIELDS`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from gitstate.doors import install
from gitstate.git import push
from gitstate.law import record as law_record
from gitstate.schema.records import Record

LAW_FIELDS: dict[str, dict[str, str]] = {
    "StateSpec": {
        "roster": "living, frozen or dead: where an agent in this state is listed",
        "terminal": "true when no move leaves this state",
        "requires": "front-matter keys an agent must have to enter this state",
        "description": "what the state means",
        "protocol": "the protocol document an agent in this state follows",
        "outcome": "how an ending here reads to whoever waits on it: success or failure",
        "log": "a shared file that a commit entering this state appends to",
        "token_limit": "the state an agent goes to once its `tokens` reach `max_tokens`",
        "stamp": "a front-matter key set to the moment an agent enters this state",
    },
    "RoleSpec": {
        "mandate": "what a holder of the role is for",
        "max": "how many living holders the role may have",
        "description": "what the role is",
        "spawns": "the roles a holder may spawn (null: any)",
        "never_spawns": "the roles a holder must never spawn",
        "self_spawn": "whether a holder may spawn its own role",
        "timeout": "seconds a holder may stay living from birth before `sweep` ends it",
        "forbids": "states a holder never enters (squad: a core session is never suspended)",
        "load": "the state `gitstate team load` brings a new holder to at once",
    },
    "Mortality": {
        "midlife": "context_pct from which an agent is in midlife",
        "legacy": "context_pct from which it is in legacy (writes what it leaves behind)",
        "urgent": "context_pct from which it is urgent (must freeze or end)",
        "urgent_forbids": "states an urgent agent may not move to",
    },
    "TimeoutSpec": {
        "after": "seconds in the first state after which the move is due",
        "except_roles": "roles the timeout never applies to",
        "sooner": "whether an agent may make the move itself before it is due",
    },
    "Movers": {
        "parent": "moves ('from -> to') an agent's parent may make of it",
        "roles": "for each role, the moves its living holders may make of any agent",
        "operators": "principals whose signature proves `reap` and `shutdown`",
    },
    "Policies": {
        "humans": "the humans who may approve gated moves",
        "approval": "moves ('from -> to', or `law`) that need a human's approval",
        "mortality": "the context thresholds of the mortality phases",
        "max_living": "how many agents may be living at once",
        "max_depth": "how deep agents may spawn agents",
        "timeouts": "timed moves, keyed 'from -> to'",
        "role_timeout": "seconds a holder of a role without its own timeout may live",
        "role_max": "how many living holders a role without its own `max` may have",
        "heartbeat": "seconds of silence after which `reap` ends a living agent",
        "custom_roles": "whether agents may hold roles the lifecycle does not declare",
        "atomic_commits": "whether a state commit must hold the agent's state file alone",
        "context_window": "tokens of the agents' model window, when not known otherwise",
        "movers": "who may move an agent besides itself",
    },
    "Layout": {"state_file": "where an agent's state file lives (`{id}` is its id)"},
    "Grammar": {"accept": "further patterns of commit subjects read as state commits"},
    "LifecycleDoc": {
        "name": "the lifecycle's name",
        "description": "what it is for",
        "initial": "the state a spawned agent starts in",
        "states": "every state, by name",
        "transitions": "for each state, the states it may move to",
        "roles": "every declared role, by name",
        "policies": "the rules beyond the moves",
        "layout": "where state files live",
        "grammar": "how commit subjects are read",
        "defaults": "front-matter values a spawned agent gets",
    },
    "InitReport": {
        "lifecycle": "the lifecycle the repository is managed with (null on a hub: each push "
                     "is judged by the lifecycle committed in its own history)",
        "hooks_dir": "where the hooks are installed",
        "actions": "what init did, line by line",
        "commit": "the commit that put the lifecycle in history (null: none made)",
    },
    "Pushed": {
        "outcome": "landed, illegal or gave-up",
        "attempts": "how many times it tried to land",
        "commit": "the commit on the hub (landed), or the one kept here",
        "upstream": "the branch it was to land on",
        "reason": "why it did not land (or what could not follow)",
        "rule": "the rule that refused it (illegal)",
        "kept": "the side branch that holds the unlanded work",
        "staged": "work left staged in the index",
    },
}


def described(record: type[law_record.Record], names: dict[type[law_record.Record], str]) -> Any:
    """The pydantic model of a law record's plain form (`gitstate.law.record`): the record is
    the one declaration, this only describes it (`LAW_FIELDS`). Every field is required (the
    plain form always has them all). `names`: the records' names in the schema."""
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
        about = LAW_FIELDS.get(names[record], {})
        fields: dict[str, Any] = {
            f: (resolve(hints[f]), Field(..., description=about.get(f)))
            for f in record._fields if f not in record._plain_skip}
        model = create_model(names[record], __base__=Record, __doc__=record.__doc__, **fields)
        _DESCRIBED[record] = model
        if record._plain_type:   # written in another form too (a timeout: a bare duration)
            _DESCRIBED[record] = eval(record._plain_type, {record.__name__: model})
    return _DESCRIBED[record]


_DESCRIBED: dict[type, Any] = {}


def _lifecycle_doc() -> type[Record]:
    from gitstate.law import lifecycle as law
    names: dict[type[law_record.Record], str] = {
        law.State: "StateSpec", law.Role: "RoleSpec", law.Mortality: "Mortality",
        law.Timeout: "TimeoutSpec", law.Policies: "Policies", law.Movers: "Movers",
        law.Layout: "Layout",
        law.Grammar: "Grammar", law.Lifecycle: "LifecycleDoc"}
    return described(law.Lifecycle, names)


# Models described at run time; mypy, which cannot follow them, checks them as the base model.
if TYPE_CHECKING:
    LifecycleDoc = Record
    _InitReport = Record
    Pushed = Record
else:
    LifecycleDoc = _lifecycle_doc()
    _InitReport = described(install.InitReport, {install.InitReport: "InitReport"})
    Pushed = described(push.Landing, {push.Landing: "Pushed"})


