"""What a judgement is made of: the changes judged, the violations found, the rule ids, and
the `Context` through which rules see the rest of the repository. Shared by the per-agent
rules (`rules`) and the rules about the whole society (`society`).
"""

from __future__ import annotations

from gitstate.law.record import Record


SYMLINK_MODE = "120000"


class FileChange(Record):
    """One state file in a commit: its content in the parent and in the commit (None: absent),
    and the mode it has in the commit (SYMLINK_MODE is a symlink), when known."""

    __slots__ = ("path", "old", "new", "new_mode")

    def __init__(self, path: str, old: bytes | None, new: bytes | None,
                 new_mode: str | None = None):
        self.path, self.old, self.new, self.new_mode = path, old, new, new_mode


class Violation(Record):
    __slots__ = ("rule", "message", "where")

    def __init__(self, rule: str, message: str, where: str | None = None):
        self.rule, self.message, self.where = rule, message, where

    def __str__(self) -> str:
        return f"[{self.rule}] {self.where}: {self.message}" if self.where \
            else f"[{self.rule}] {self.message}"

    def to_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "where": self.where}


# Short ids and readable names of every rule, for docs and `--json` consumers.
RULES = {
    "invalid-id": "the agent id in a state file's path is not a valid id",
    "unreadable": "a state file that cannot be parsed",
    "bad-field": "a known front-matter key with a value of the wrong type",
    "agent-mismatch": "'agent:' differs from the agent's directory",
    "unknown-state": "'state:' names a state the lifecycle does not declare",
    "not-initial": "a new agent must start in the lifecycle's initial state",
    "deleted": "a state file was deleted",
    "terminal": "an agent in a terminal state was changed",
    "illegal-transition": "a move the lifecycle does not allow",
    "missing-field": "a field the target state requires is missing",
    "needs-approval": "a move that needs an Approved-by: trailer from a lifecycle human",
    "urgent": "entering a state the mortality policy forbids at urgent context",
    "multiple-agents": "one commit changes more than one agent's state",
    "malformed-subject": "a state tag not in the form '@id: [STATE:x] text'",
    "tag-mismatch": "the [STATE:x] tag differs from the state the commit writes",
    "tag-without-change": "a [STATE:x] tag but no state file change",
    "change-without-tag": "a state file change without a [STATE:x] tag",
    "prefix-mismatch": "the @id: prefix is not the agent whose state file changed",
    "inbox-checkpoint": "last_read_commit moved backwards or to a commit outside the history",
    "unknown-role": "a role the lifecycle does not declare, where custom roles are not allowed",
    "role-max": "more living holders of a role than its max",
    "max-living": "more living agents than the lifecycle's max_living",
    "parent": "a parent that is not an agent of the repository",
    "depth": "a depth that is not the parent's plus one",
    "max-depth": "a spawn deeper than the lifecycle's max_depth",
    "self-spawn": "a role spawning its own kind, or a kind it must never spawn",
    "parent-ended": "a spawn from a parent that has ended (done, failed, dead)",
    "log": "entering a state with a `log` without appending to that file in the commit",
    "freeze-state": "a freeze without its complete freeze-state file in the same commit",
    "atomic": "an agent's commit without its state file, where commits must be atomic",
    "timeout": "a timed transition taken before it is due",
    "too-large": "a state file, its front matter, one of its lines, or a lifecycle over its "
                 "size limit",
    "too-deep": "YAML nested deeper than the limit",
    "yaml-alias": "YAML anchors or aliases in a state file (in a lifecycle: past a bound)",
    "yaml-tag": "an explicit YAML tag (!!python/..., !!binary, !tag)",
    "long-number": "a number literal longer than the limit",
    "duplicate-key": "a key given twice in the same mapping",
    "symlink": "a state file that is a symbolic link",
    "lifecycle": "a lifecycle that is deleted, invalid or hostile",
    "unsigned-approval": "a gated move whose commit is not signed by a key allowed_signers "
                         "lists for the human in its Approved-by: trailer",
}


class Context:
    """What rules about the rest of the repository ask, answered by the caller (git-backed in
    the hooks, `transition` and `verify`; plain data in tests). The pure core never calls git.

    `base` is the parent of the commit being judged; `tree_file` and `agents` see the commit
    as it will be (after the change). Each is asked only when a rule needs it.
    """

    base: str | None = None

    def commit(self, rev: str) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    def is_ancestor(self, a: str, b: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def tree_file(self, path: str) -> bytes | None:  # pragma: no cover - interface
        raise NotImplementedError

    def base_file(self, path: str) -> bytes | None:  # pragma: no cover - interface
        """A file as it was before the commit (None if absent)."""
        raise NotImplementedError

    def agents(self) -> dict[str, dict]:  # pragma: no cover - interface
        """agent id -> front matter of every readable state file in the commit."""
        raise NotImplementedError

    def now(self) -> float:  # pragma: no cover - interface
        """When the commit is made (the commit's own time, when replaying history)."""
        raise NotImplementedError

    def entered(self, agent: str, state: str) -> float | None:  # pragma: no cover
        """When `agent` entered `state`, by the tags of the history before the commit."""
        raise NotImplementedError


class Parsed(Record):
    """A change with both sides parsed. `new_problem`: the new side is too broken for the
    rules that follow to say anything useful."""

    __slots__ = ("change", "agent", "old", "new", "old_error", "new_problem")

    def __init__(self, change: FileChange, agent: str):
        self.change, self.agent = change, agent
        self.old = self.new = self.old_error = None
        self.new_problem = False
