"""Every rule's short id and what it refuses, declared once.

A refusal names its rule as `[id]` in every message and as `"rule": id` under `--json`. A member
is its id: it compares, formats and serialises as that string (`Rule.ROLE_MAX == "role-max"`),
and carries its one-line `description`. The table of rules in docs/reference/rules.md lists the
same ids (`tests/test_rule_ids.py` keeps the two in step, and keeps every id used in the package
declared here).

A standard `enum.StrEnum`. The hooks import this on every state commit, with `enum` already
loaded (by `re`); making its members costs 0.8 ms there, 0.65 ms more than the hand-made
metaclass it replaced (median of 300 runs of the module's body), under the 2 ms a hook would
notice.
"""

from __future__ import annotations

from enum import StrEnum


class Rule(StrEnum):
    description: str

    def __new__(cls, rule_id: str, description: str) -> Rule:
        rule = str.__new__(cls, rule_id)
        rule._value_ = rule_id
        rule.description = description
        return rule

    @classmethod
    def of(cls, rule_id: str) -> Rule:
        """The rule whose id is `rule_id` (KeyError: there is none)."""
        found = cls._value2member_map_[rule_id]
        assert isinstance(found, Rule)
        return found

    # a state file, read on its own
    INVALID_ID = "invalid-id", "the agent id in a state file's path is not a valid id"
    UNREADABLE = "unreadable", "a state file that cannot be parsed"
    BAD_FIELD = "bad-field", "a known front-matter key with a value of the wrong type"
    AGENT_MISMATCH = "agent-mismatch", "'agent:' differs from the agent's directory"
    UNKNOWN_STATE = "unknown-state", "'state:' names a state the lifecycle does not declare"
    SYMLINK = "symlink", "a state file that is a symbolic link"
    TOO_LARGE = ("too-large", "a state file, its front matter, one of its lines, or a lifecycle "
                 "over its size limit")
    TOO_DEEP = "too-deep", "YAML nested deeper than the limit"
    YAML_ALIAS = ("yaml-alias", "YAML anchors or aliases in a state file (in a lifecycle: past "
                  "a bound)")
    YAML_TAG = "yaml-tag", "an explicit YAML tag (!!python/..., !!binary, !tag)"
    LONG_NUMBER = "long-number", "a number literal longer than the limit"
    DUPLICATE_KEY = "duplicate-key", "a key given twice in the same mapping"

    # one agent's move
    NOT_INITIAL = "not-initial", "a new agent must start in the lifecycle's initial state"
    DELETED = "deleted", "a state file was deleted"
    TERMINAL = "terminal", "an agent in a terminal state was changed"
    ILLEGAL_TRANSITION = "illegal-transition", "a move the lifecycle does not allow"
    MISSING_FIELD = "missing-field", "a field the target state requires is missing"
    FIXED_FIELD = "fixed-field", "a change of parent, depth, role or key after birth"
    NEEDS_APPROVAL = ("needs-approval", "a gated move or a change of the law without an "
                      "Approved-by: trailer from a lifecycle human")
    UNSIGNED_APPROVAL = ("unsigned-approval", "a gated move whose commit is not signed by a key "
                         "allowed_signers lists for the human in its Approved-by: trailer")
    NOT_YOURS = ("not-yours", "a move of an agent by a session bound to another agent the law "
                 "does not let move it")
    AGENT_APPROVAL = ("agent-approval", "a human's approval (Approved-by:) of a gated move made "
                      "from an agent's session while no allowed_signers proves the human's")
    UNBOUND_MOVER = ("unbound-mover", "a move asked of the MCP server while it is bound to no "
                     "agent")
    UNSIGNED_MOVE = ("unsigned-move", "a move of an agent with a key whose commit is not signed "
                     "by that key or by a key of someone the law lets move it")
    FOURTH_WALL = ("fourth-wall", "under policies.fourth_wall, a change of a key the system "
                   "measures, or a move of movers.system, made neither by the runtime's hooks "
                   "nor with a human's approval")
    CHANGES_IN = ("changes-in", "a change of a key that policies.changes_in allows only in "
                  "moves that leave other states")
    UNNAMED_WORK = ("unnamed-work", "under policies.work_commits_name_agent, a commit on the "
                    "team line that does not speak as @id and is no human's")
    URGENT = "urgent", "entering a state the mortality policy forbids at urgent context"
    TIMEOUT = "timeout", "a timed transition taken before it is due"
    RETRY = ("retry", "a failed agent retried beyond `policies.retry`: more than its max, before "
             "its backoff, or with a wrong `retries` count")
    LOG = "log", "entering a state with a `log` without appending to that file in the commit"
    TOKEN_LIMIT = ("token-limit", "staying in (or entering) a state with a `token_limit` once "
                   "the agent's tokens reached its max_tokens")
    FREEZE_STATE = ("freeze-state", "a freeze without its own complete freeze-state file "
                    "(a `wake_if`, a `frozen_at` that is a time, not later than the freeze) "
                    "written in the same commit")
    INBOX_CHECKPOINT = ("inbox-checkpoint", "last_read_commit moved backwards or to a commit "
                        "outside the history")

    # the commit message
    MALFORMED_SUBJECT = "malformed-subject", "a state tag not in the form '@id: [STATE:x] text'"
    TAG_MISMATCH = "tag-mismatch", "the [STATE:x] tag differs from the state the commit writes"
    TAG_WITHOUT_CHANGE = "tag-without-change", "a [STATE:x] tag but no state file change"
    CHANGE_WITHOUT_TAG = "change-without-tag", "a state file change without a [STATE:x] tag"
    PREFIX_MISMATCH = ("prefix-mismatch", "the @id: prefix is not the agent whose state file "
                       "changed")
    MULTIPLE_AGENTS = "multiple-agents", "one commit changes more than one agent's state"
    ATOMIC = "atomic", "an agent's commit without its state file, where commits must be atomic"

    # the society: roles, the pool, lineage
    UNKNOWN_ROLE = ("unknown-role", "a role the lifecycle does not declare, where custom roles "
                    "are not allowed, or taken without a 'New-role:' trailer where they are")
    ROLE_MAX = "role-max", "more living holders of a role than its max"
    ASSUME_ROLE = ("assume-role", "a role taken ('Assumes-role:', or handed over with "
                   "'Role-transfer:') that is not vacant, or by an agent that holds another or "
                   "is not living")
    ROLE_FORBIDS = ("role-forbids", "an agent entering a state its role forbids (squad: a core "
                    "session suspended)")
    MAX_LIVING = "max-living", "more living agents than the lifecycle's max_living"
    PARENT = "parent", "a parent that is not an agent of the repository"
    PARENT_ENDED = "parent-ended", "a spawn from a parent that has ended (done, failed, dead)"
    DEPTH = "depth", "a depth that is not the parent's plus one"
    MAX_DEPTH = "max-depth", "a spawn deeper than the lifecycle's max_depth"
    SELF_SPAWN = "self-spawn", "a role spawning its own kind, or a kind it must never spawn"

    # the law and history
    LIFECYCLE = "lifecycle", "a lifecycle that is deleted, invalid or hostile"
    MERGE_MOVES = ("merge-moves", "a merge on the team line that changes a state file or a file "
                   "of the law against its first parent (merge work, land moves)")
    TAG_ON_MERGE = "tag-on-merge", "a merge on the team line whose subject reads as a move"
    TAG_FORM = ("tag-form", "a subject in a `grammar.accept` form once the law is in force (new "
                "moves use the standard '@id: [STATE:x] text')")
    ENCODING = ("encoding", "a commit whose `encoding` header is not UTF-8 (its message would "
                "read one way to git and another to the judge)")
    SHALLOW = ("shallow", "a commit whose parents a shallow clone does not have: it cannot be "
               "judged, nor the history before it")

    # the hub
    FUTURE_DATE = "future-date", "a commit dated more than 5 minutes in the hub's future"
    NON_FAST_FORWARD = "non-fast-forward", "a push that rewrites a protected branch"
    PROTECTED_REF = "protected-ref", "a push that deletes a protected branch"
    REF_NAMESPACE = ("ref-namespace", "a pushed ref outside refs/heads/, refs/tags/ and "
                     "refs/gitstate/")
    TOO_MANY_REFS = "too-many-refs", "a push that updates more refs than the hub takes at once"
    QUEUE_MOVE = ("queue-move", "a push to the hub's landing queue that is not one move (a "
                  "merge, a root, no state file, work over the size bound)")
    QUEUE_STALE = ("queue-stale", "a queued move whose agent moved on the hub since it was "
                   "decided, or a signed move made on an older tip (the pusher decides it "
                   "again, or signs it again on the tip)")
    QUEUE_CONFLICT = ("queue-conflict", "a queued move whose work conflicts with the hub's "
                      "branch")

    # `gitstate check`
    HOOKS = "hooks", "a hook shim that is missing, not executable, or not the one init writes"
