"""One base error carrying an exit code; the CLI turns any of them into a message and a code.

Exit codes are docs/reference/commands.md's: 0 done, 1 rejected (illegal move, invalid file,
failed check), 2 usage error.
"""

from __future__ import annotations

EXIT_REJECTED = 1
EXIT_USAGE = 2


class GitstateError(Exception):
    """Something the user can act on. `where` is a "file:line" or a commit, when known."""

    exit_code = EXIT_REJECTED

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  {self.hint}"
        return text

    def to_dict(self) -> dict:
        return {"error": type(self).__name__, "message": self.message, "where": self.where,
                "hint": self.hint}


class UsageError(GitstateError):
    """The command was called wrongly (unknown preset, bad --set syntax, ...)."""

    exit_code = EXIT_USAGE


class InvalidFile(GitstateError):
    """A lifecycle, state file or freeze-state that cannot be read as gitstate data.

    `rule` is the id of the refusal (`unreadable`, `too-large`, `too-deep`, `yaml-alias`,
    `yaml-tag`, `long-number`, `duplicate-key`, `symlink`, `lifecycle`), shown as `[rule]`
    wherever the file is refused."""

    rule: str = "unreadable"   # Rule.UNREADABLE (gitstate.law.rule_ids: a layer above)

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None,
                 rule: str | None = None):
        super().__init__(message, where=where, hint=hint)
        if rule is not None:
            self.rule = rule

    def __str__(self) -> str:
        return f"[{self.rule}] {super().__str__()}"

    def to_dict(self) -> dict:
        return {**super().to_dict(), "rule": self.rule}


class InvalidId(GitstateError):
    """An agent id outside the allowed alphabet; never used as a path."""


class GitFailure(GitstateError):
    """git itself refused or failed; the message is git's own, made into a sentence."""


class NotManaged(GitstateError):
    """The repository has no protocols/lifecycle.yaml yet."""


class Rejected(GitstateError):
    """A proposed commit broke the lifecycle's rules; carries every violation."""

    def __init__(self, violations: list, *, action: str = "commit"):
        self.violations = violations
        n = len(violations)
        lines = [f"{action} refused ({n} problem{'s' if n != 1 else ''}):"]
        lines += [f"  {v}" for v in violations]
        super().__init__("\n".join(lines))

    def to_dict(self) -> dict:
        return {"error": "Rejected", "message": self.message,
                "violations": [v.to_dict() for v in self.violations]}
