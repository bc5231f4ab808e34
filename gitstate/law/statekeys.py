"""The keys of a state file's front matter that gitstate knows, declared once: each key's type
(what `check`, the hooks and the writers accept, `statefile.FIELDS`) and who may set it. The
lists the other rooms keep are read from this table: which keys `--set` refuses and which it
reads as numbers (`moves/fields.py`), which a lifecycle's `defaults:` may not name
(`lifecycle.NOT_DEFAULTS`), which every move writes itself (`moves/sync.py`), which the system
measures (`law/wall.py`: under `policies.fourth_wall` only the runtime or a human changes
them). A key not here is the team's own: any value, set by anyone."""

from __future__ import annotations

from gitstate.law.record import Record, field

# Who may set a key.
SPAWN = "spawn"        # gitstate, when the agent is born
MOVE = "move"          # gitstate, at every move (or at the move into a terminal state)
SET = "--set"          # whoever moves the agent, with `--set KEY=VALUE`
DEFAULTS = "defaults"  # the lifecycle's `defaults:`, for a newborn's state file
ANYONE = (SET, DEFAULTS)

# Types (statefile.py checks each): a value of "count" or "percent" is a number, which `--set`
# reads as one; a key of no type takes any value.
NUMBERS = ("count", "percent")


class Key(Record):
    """A key of the state file's front matter."""
    name: str = field(about="the key, as written in the front matter")
    type: str | None = field(about="what its value must be: id, name, text, count, percent, "
                                   "commit, path or public-key (none: any value)")
    by: tuple[str, ...] = field(about="who may set it: spawn, move, --set, defaults")
    refused: str | None = field(None, about="why `--set` may not set it, when it may not")
    measured: bool = field(False, about="the system measures it: under `policies.fourth_wall` "
                                        "only the runtime's hooks or a human change it")


KEYS = (
    Key("agent", "id", (SPAWN,), "it is the agent's id"),
    Key("state", "name", (SPAWN, MOVE), "name the state as the STATE argument"),
    Key("role", "name", (SPAWN,) + ANYONE),
    Key("model", "text", (SPAWN,) + ANYONE),
    Key("person", "text", ANYONE),
    Key("project", "text", ANYONE),
    Key("parent", "id", (SPAWN, SET)),
    Key("depth", "count", (SPAWN, SET)),
    Key("thread", "text", ANYONE),
    Key("context_pct", "percent", ANYONE, measured=True),
    Key("summary", "text", ANYONE),
    Key("last_read_commit", "commit", ANYONE),
    Key("freeze_state", "path", ANYONE),
    Key("final_summary", "text", ANYONE),
    Key("updated", "text", (SPAWN, MOVE, SET)),
    Key("ended", None, (MOVE,) + ANYONE, measured=True),   # the move into a terminal state
    Key("retries", "count", (MOVE,), "a retry counts itself (`policies.retry`: "
        "`gitstate transition ID STATE` from a failure state)"),
    Key("pid", "count", ANYONE, measured=True),
    Key("pid_started", None, ANYONE, measured=True),   # written with `pid` (moves/processes.py)
    Key("host", "text", ANYONE, measured=True),
    Key("worktree", "text", ANYONE, measured=True),    # the work tree its runtime session works in
    Key("max_tokens", "count", ANYONE, measured=True),  # era: deep_work's token budget
    Key("tokens", "count", ANYONE, measured=True),      # the tokens its session has used
    Key("stopped", "text", ANYONE),          # how `gitstate shutdown` ended the agent's process
    Key("key", "public-key", (SPAWN, SET)),
    Key("task", None, (SPAWN,) + ANYONE),
    Key("instructions", None, (SPAWN,) + ANYONE),
    Key("started", None, (SPAWN,) + ANYONE, measured=True),
    Key("session", None, (SPAWN,) + ANYONE, measured=True),  # the runtime's: its hooks find it
)


MEASURED = tuple(k.name for k in KEYS if k.measured)   # the fourth wall's keys (law/wall.py)
