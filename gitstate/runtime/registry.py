"""The agent runtimes gitstate joins, each declared once: its hooks (which event of the runtime
runs which `gitstate hook NAME`), the module that answers them, the one that writes its
configuration (`gitstate init --runtime NAME`) and the one whose `findings` `gitstate doctor`
adds. The entry point, `gitstate hook`, `init --runtime`, `doctor`, the Claude Code plugin and
the table of hooks in docs/reference/runtime-hooks.md are made from here: a new runtime is a
package of its own under `gitstate/runtime/` and an entry in RUNTIMES.

Pure data, no imports: `python -m gitstate hook NAME` reads it before anything else.
"""

from __future__ import annotations


class Runtime:
    """One runtime: `hooks` maps its event to (the event's matcher or None, gitstate's hook
    name[, extra keys of the hook's entry]); the modules are imported only when needed."""

    __slots__ = ("name", "title", "hooks", "entry", "install", "doctor", "start", "settings")

    def __init__(self, name: str, title: str, hooks: dict[str, tuple], entry: str,
                 install: str, doctor: str, start: str, settings: tuple[str, ...]):
        self.name, self.title, self.hooks = name, title, hooks
        self.entry, self.install, self.doctor = entry, install, doctor
        # `start`: the command that starts the runtime bound to {agent} ({session}: the id
        # its spawn recorded); `settings`: what `init --runtime` writes that a worktree
        # needs committed, the first of them naming gitstate when it is there
        self.start, self.settings = start, settings

    def names(self) -> tuple[str, ...]:
        """gitstate's hooks this runtime runs, in the order of its events."""
        return tuple(dict.fromkeys(spec[1] for spec in self.hooks.values()))


RUNTIMES: dict[str, Runtime] = {
    # The sub-agent tool is `Agent` (called `Task` before Claude Code 2.1.63); SessionStart's
    # matcher is the session's source.
    "claude-code": Runtime(
        "claude-code", "Claude Code", {
            "SessionStart": ("startup|resume|clear|compact", "session-start"),
            "PostToolUse": ("*", "context"),
            "PreToolUse": ("Agent|Task", "spawn-guard"),
            "SubagentStart": (None, "subagent-start"),
            "UserPromptSubmit": (None, "prompt"),
            "Stop": (None, "stop"),
            "PreCompact": (None, "pre-compact"),
            "SessionEnd": (None, "session-end"),
            "SubagentStop": (None, "subagent-stop"),
            "StopFailure": (None, "stop-failure"),
            "Notification": (None, "notification"),
        },
        entry="gitstate.runtime.claude_code", install="gitstate.runtime.claude_code.settings",
        doctor="gitstate.runtime.claude_code.doctor",
        start="claude --session-id {session}", settings=(".claude/settings.json", ".mcp.json")),
    # Codex names its sub-agent tool `spawn_agent` (SubagentStart can only add context, so the
    # guard is a PreToolUse hook); its matchers are regular expressions, none matches all.
    "codex": Runtime(
        "codex", "Codex CLI", {
            "SessionStart": (None, "session-start"),
            "PostToolUse": (None, "context"),
            "PreToolUse": ("spawn_agent", "spawn-guard"),
            "SubagentStart": (None, "subagent-start"),
            "UserPromptSubmit": (None, "prompt"),
            "Stop": (None, "stop"),
            "PreCompact": (None, "pre-compact"),
            "SessionEnd": (None, "session-end"),
            "SubagentStop": (None, "subagent-stop"),
        },
        entry="gitstate.runtime.codex.hooks", install="gitstate.runtime.codex.settings",
        doctor="gitstate.runtime.codex.doctor",
        # Codex cannot be given a session id: the agent is named to the session's hooks
        start="GITSTATE_AGENT={agent} codex", settings=(".codex/hooks.json", ".codex")),
    # Gemini CLI's timeouts are milliseconds; its sub-agent tool is `invoke_agent`. Its
    # PreCompress fires before every model request (the check, not a compression): not taken.
    # It has no sub-agent start or stop events.
    "gemini": Runtime(
        "gemini", "Gemini CLI", {
            "SessionStart": (None, "session-start", {"timeout": 30_000}),
            "AfterTool": (None, "context", {"timeout": 30_000}),
            "BeforeTool": ("invoke_agent", "spawn-guard", {"timeout": 30_000}),
            "BeforeAgent": (None, "prompt", {"timeout": 30_000}),
            "AfterAgent": (None, "stop", {"timeout": 30_000}),
            "SessionEnd": (None, "session-end", {"timeout": 30_000}),
            "Notification": (None, "notification", {"timeout": 30_000}),
        },
        entry="gitstate.runtime.gemini.hooks", install="gitstate.runtime.gemini.settings",
        doctor="gitstate.runtime.gemini.doctor",
        start="GITSTATE_AGENT={agent} gemini", settings=(".gemini/settings.json",)),
}
DEFAULT = "claude-code"   # the runtime of a hook run without `--runtime`


def hook_names() -> frozenset[str]:
    """Every runtime hook gitstate answers (`gitstate hook NAME`)."""
    return frozenset(name for rt in RUNTIMES.values() for name in rt.names())


def option(args: list[str], name: str) -> str | None:
    """The value of the option `name` in a hook's arguments (`--runtime NAME`)."""
    return args[args.index(name) + 1] if name in args[:-1] else None


def runtime_of(args: list[str]) -> Runtime:
    """The runtime a hook's arguments name (`--runtime NAME`), else the default one."""
    return RUNTIMES.get(option(args, "--runtime") or "", RUNTIMES[DEFAULT])


def hooks_table() -> list[str]:
    """The table of hooks in docs/reference/runtime-hooks.md: a row per gitstate hook, a column
    per runtime (the event that runs it there)."""
    names = list(dict.fromkeys(n for rt in RUNTIMES.values() for n in rt.names()))
    head = "| gitstate hook | " + " | ".join(rt.title for rt in RUNTIMES.values()) + " |"
    return [head, "|---|" + "---|" * len(RUNTIMES)] + [
        f"| `{name}` | " + " | ".join(_cell(rt, name) for rt in RUNTIMES.values()) + " |"
        for name in names]


def _cell(rt: Runtime, name: str) -> str:
    """The events of `rt` that run gitstate's hook `name`, with their matchers."""
    return ", ".join(_event(event, spec[0]) for event, spec in rt.hooks.items()
                     if spec[1] == name) or "—"


def _event(event: str, matcher: str | None) -> str:
    shown = f" (`{matcher}`)".replace("|", "\\|") if matcher and matcher != "*" else ""
    return f"`{event}`{shown}"
