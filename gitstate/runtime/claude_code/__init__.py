"""Claude Code's hooks: `gitstate hook NAME` with the runtime's JSON on stdin.

The contract (https://code.claude.com/docs/en/hooks): every event sends `session_id`,
`transcript_path`, `cwd` and `hook_event_name` on stdin; SessionStart adds `source` (startup,
resume, clear, compact) and `model`; PreToolUse and PostToolUse add `tool_name` and
`tool_input`. A hook speaks to the model through JSON on stdout,
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`, and a PreToolUse
hook refuses a tool call with `"permissionDecision": "deny"` and its reason.

- session-start  (SessionStart): the briefing; binds the session to its agent.
- context        (PostToolUse): measures the context from the transcript; commits and speaks
                 when a mortality phase is crossed, reminds of the mortality clock every
                 REMIND_EVERY tool calls where the lifecycle declares one (no git either
                 way), and briefs a session that has
                 just bound itself (`gitstate spawn ID --session SID` in its Bash tool).
- spawn-guard    (PreToolUse on the sub-agent tool, `Agent`, formerly `Task`): refuses a
                 spawn past max_depth, of a kind the parent may not spawn, or past the pool
                 cap; the parent is the session's agent, from SessionStart's binding or else
                 the state file that names the session.
- subagent-start (SubagentStart): tells a new sub-agent its parent and depth (registered as
                 their child where the lifecycle's `runtime.subagent_start` says so).
- prompt, stop, session-end (UserPromptSubmit, Stop, SessionEnd: decided in a process of
                 their own, the turn never waits), pre-compact (PreCompact), subagent-stop
                 (SubagentStop), stop-failure (StopFailure: a turn, or a sub-agent, that ended
                 on an API error): the moves the lifecycle's `runtime:` table gives these
                 events (runtime/events.py).
- notification   (Notification): records that the session's agent waits for a person, no
                 commit (runtime/attention.py).

Whatever goes wrong, a hook never stops the runtime: it says so on stderr and exits 0 (a
refused spawn is a decision, not an error).
"""

from __future__ import annotations

import json
import os
import sys

from gitstate.runtime import memory
from gitstate.runtime.memory import bound_agent
from gitstate.runtime.registry import RUNTIMES, option
from gitstate.runtime.replies import context_reply

# hook -> the event of the lifecycle's `runtime:` table it reports (gitstate.law.runtime_table)
EVENT_HOOKS = {"prompt": "prompt", "stop": "stop", "pre-compact": "pre_compact",
               "session-end": "session_end", "subagent-stop": "subagent_stop"}
# decided in a process the runtime never waits for (a hub that answers slowly never holds a
# turn, a compaction or the session's end); subagent-start answers the sub-agent: it waits
DETACHED = ("prompt", "stop", "session-end", "pre-compact", "subagent-stop", "stop-failure")
NAMES = RUNTIMES["claude-code"].names()    # the one declaration: runtime/registry.py
PHASES = ("fresh", "midlife", "legacy", "urgent")
SUBAGENT_TOOLS = ("Agent", "Task")


def run(name: str, args: list[str], event: dict | None = None, measure=None) -> int:
    """Answer the hook `name`. Another runtime whose payloads read as Claude Code's gives the
    `event` it has read and mapped, and the `measure` of its own transcript (`context`)."""
    import time
    ticket = time.time_ns()    # when the runtime sent the event: its place in the session's
    event = _stdin_json() if event is None else event
    agent_arg = option(args, "--agent")
    try:
        code = _answer(name, event, agent_arg, measure) if name in _ANSWERS \
            else _event(name, event, ticket)
    except Exception as exc:  # noqa: BLE001 — a hook must never stop the runtime
        if os.environ.get("GITSTATE_DEBUG"):
            raise
        print(f"gitstate: {name} hook: {exc}", file=sys.stderr)
        return 0
    if code is not None:
        return code
    print(f"gitstate: unknown runtime hook '{name}'; known: {', '.join(NAMES)}",
          file=sys.stderr)
    return 2


_ANSWERS = ("session-start", "context", "spawn-guard", "subagent-start")


def _answer(name: str, event: dict, agent_arg: str | None, measure) -> int:
    """The hooks whose answer the model reads: the briefing, the context, the spawn guard."""
    if name == "session-start":
        from gitstate.runtime.briefing import session_start
        return _say(session_start(event, agent_arg))
    if name == "context":
        return _say(context(event, measure))
    if name == "spawn-guard":
        return _say(spawn_guard(event))
    return _say(subagent_start(event))


def _event(name: str, event: dict, ticket: int) -> int | None:
    """The hooks that report the session's events (the model is told nothing); None: no
    such hook."""
    if name in EVENT_HOOKS:
        if name in ("prompt", "session-end"):   # its person answered, or it is gone
            _clear_attention(event)
        from gitstate.runtime.events import handle, say
        say(handle(EVENT_HOOKS[name], event, ticket, detach=name in DETACHED))
        return 0
    if name == "stop-failure":    # a turn that ended on an API error: a sub-agent's ends it
        from gitstate.runtime.events import handle, say
        sub = bool(event.get("agent_id"))
        say(handle("subagent_stop" if sub else "stop", event, ticket, detach=True,
                   failed=True))
        return 0
    if name == "notification":
        from gitstate.runtime.attention import notice
        notice(event, session_agent)   # silent: the model is told nothing
        return 0
    return None


def _stdin_json() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.read()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _say(reply: dict | str | None) -> int:
    if isinstance(reply, str):
        sys.stdout.write(reply + "\n")
    elif reply:
        sys.stdout.write(json.dumps(reply) + "\n")
    return 0


def _session_id(event: dict) -> str:
    return event.get("session_id") or ""


def _clear_attention(event: dict) -> None:
    """The session waits for nobody now (no git: a file under the common git folder)."""
    gdir = memory.git_dir(event.get("cwd"))
    if gdir and isinstance(event.get("session_id"), str):
        memory.clear_attention(gdir, event["session_id"])


def session_agent(event: dict, gdir: str) -> str | None:
    """The session's agent: `bound_agent`, else (no SessionStart recorded, or it failed: git
    is read) the agent whose committed state file names the session."""
    agent, bound = bound_agent(event, gdir)
    return _committed_agent(event) if agent is None and bound is None else agent


def _committed_agent(event: dict) -> str | None:
    """The agent whose committed state file names the session (git is read)."""
    session = event.get("session_id")
    if not isinstance(session, str):
        return None
    from gitstate.git.repo import open_managed
    from gitstate.runtime.briefing import agent_of_session
    return agent_of_session(open_managed(event.get("cwd")), session)


# -- measured context -------------------------------------------------------------------------


def context(event: dict, measure=None) -> dict | None:
    """PostToolUse: the context used, from the transcript (`measure(path, policy window,
    model, tool_use_id)` -> (%, tokens, window) or None: Claude Code's transcript unless
    another runtime gives its own). Silent, and without a git process, unless a mortality
    phase is crossed upwards; then one progress commit by gitstate records `context_pct`, and
    the agent is told what the new phase asks of it."""
    gdir = memory.git_dir(event.get("cwd"))
    if gdir is None or event.get("agent_id"):
        return None    # not in a clone, or a sub-agent's call: its context is not the session's
    agent, bound = bound_agent(event, gdir)
    if agent is None or bound is None:
        return _bound_late(event)
    measured = _measured(event, gdir, bound, measure)
    return None if measured is None else _context_said(event, gdir, agent, bound, measured)


def _context_said(event: dict, gdir: str, agent: str, bound: dict,
                  measured: tuple) -> dict | None:
    """The measured context: a crossing recorded and said, else perhaps a reminder."""
    marks = marks_of(bound)
    calls = memory.count_call(gdir, _session_id(event))
    if crossing(gdir, agent, measured[0], marks) is None:
        return _reminded(agent, calls, measured, marks, bound)
    return _told(record_crossing(event.get("cwd"), gdir, agent, measured[0], marks,
                                 measured[1], measured[2]))


def marks_of(bound: dict | None) -> list:
    """The mortality marks SessionStart kept of the law (midlife, legacy, urgent)."""
    return (bound or {}).get("mortality") or [50, 75, 90]


def _told(text: str | None) -> dict | None:
    return context_reply("PostToolUse", text) if text else None


def _reminded(agent: str, calls: int, measured: tuple, marks: list, bound: dict) -> dict | None:
    """The reminder of the mortality clock, every REMIND_EVERY-th call where the lifecycle
    declares one."""
    if calls % REMIND_EVERY or not bound.get("remind", True):
        return None
    return _told(reminder(agent, calls, measured, phase_of(measured[0], marks), marks,
                          bound.get("asks") or {}))


def _bound_late(event: dict) -> dict | None:
    """A call of a session no agent is bound to: after `gitstate spawn ID --session SID`
    perhaps bound now (its briefing the reply); else nothing (no briefing yet: SessionStart
    records the law's thresholds)."""
    if not _ran_gitstate(event):
        return None
    from gitstate.runtime.briefing import bind_late
    return _told(bind_late(event))


def _measured(event: dict, gdir: str, bound: dict, measure=None) -> tuple | None:
    """(%, tokens, window) of the session's context, waiting for the transcript to show the
    call; a transcript that never names its calls is measured from its latest turn after."""
    import time

    from gitstate.runtime.claude_code.transcript import WAIT
    if measure is None:
        from gitstate.runtime.claude_code.transcript import measure
    tool_use_id = event.get("tool_use_id")
    wait_for = tool_use_id if isinstance(tool_use_id, str) and not bound.get("no_ids") \
        else None
    started = time.monotonic()
    measured = measure(event.get("transcript_path"), bound.get("window"), bound.get("model"),
                       wait_for)
    if wait_for and time.monotonic() - started >= WAIT:
        # a transcript that never names its tool calls: measure its latest turn from now on
        memory.bind(gdir, _session_id(event), {**bound, "no_ids": True})
    return measured


def crossing(gdir: str, agent: str, pct: float, marks: list) -> str | None:
    """The phase `pct` is in when it crosses a mortality mark upwards since the phase last
    remembered for `agent` (to be recorded: `record_crossing`); else None, and a phase lower
    than the last (fewer tokens: a compaction) is remembered at once. No git either way."""
    phase = phase_of(pct, marks)
    last = memory.last_phase(gdir, agent)
    if PHASES.index(phase) <= (PHASES.index(last) if last is not None else 0):
        if last != phase:
            memory.remember_phase(gdir, agent, phase, pct)
        return None
    return phase


def record_crossing(cwd: str | None, gdir: str, agent: str, pct: float, marks: list,
                    tokens: int, window: int) -> str | None:
    """Record a crossing (`crossing`) of the context: one progress commit by gitstate with
    `context_pct`, and what the agent is told. The context hook (from the transcript) and the
    status line (from Claude Code's own figure) may see one crossing at once: one process
    records it, the other says nothing (None)."""
    with memory.Recording(gdir, agent) as mine:
        phase = crossing(gdir, agent, pct, marks) if mine else None
        if phase is None:
            return None
        from gitstate.runtime.system_moves import record_context
        text = record_context(cwd, agent, pct, phase, tokens, window)
        memory.remember_phase(gdir, agent, phase, pct)   # only once recorded: else tried again
        return text


TASK_CHARS = 4000   # of a sub-agent's task and instructions, kept for its registration
REMIND_EVERY = 20   # tool calls between two reminders of the mortality clock (seed 000)


def reminder(agent: str, calls: int, measured: tuple, phase: str, marks: list,
             asks_of: dict) -> str:
    """What every REMIND_EVERY-th tool call tells the agent of its mortality clock (no git:
    what each phase asks was kept when the session was bound)."""
    pct, tokens, window = measured
    nxt = next(((name, mark) for name, mark in zip(PHASES[1:], list(marks)[:3]) if pct < mark),
               None)
    ahead = f"; {nxt[0]} at {nxt[1]:g}%" if nxt else ""
    asks = asks_of.get(phase) or ""
    return (f"gitstate: {agent}, {calls} tool calls this session: context {pct:g}% "
            f"({tokens:,} of {window:,} tokens), mortality phase {phase}{ahead}. "
            f"Is what you know written down?{(' ' + asks) if asks else ''}")


def _ran_gitstate(event: dict) -> bool:
    """Could this tool call have bound the session (a gitstate command or MCP tool that names
    a session)? Only then does an unbound session's context hook look at git."""
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        return False
    name = str(event.get("tool_name") or "")
    if name == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and "gitstate" in command and "session" in command
    return name.startswith("mcp__") and "gitstate" in name and "session" in json.dumps(
        tool_input)


def phase_of(pct: float, marks: list) -> str:
    """The latest phase whose mark (midlife, legacy, urgent; 50, 75, 90 where not given)
    `pct` has reached, else fresh."""
    reached = [name for name, mark in zip(PHASES[1:], (list(marks) + [50, 75, 90])[:3])
               if pct >= mark]
    return reached[-1] if reached else "fresh"


# -- sub-agents -------------------------------------------------------------------------------


def spawn_guard(event: dict) -> dict | None:
    """PreToolUse on the sub-agent tool: judge the child before it exists."""
    if event.get("tool_name") not in SUBAGENT_TOOLS:
        return None
    gdir = memory.git_dir(event.get("cwd"))
    if gdir is None:
        return None
    agent = _parent(event, gdir)
    if agent is None:
        return None
    found = event.get("tool_input")
    tool_input = found if isinstance(found, dict) else {}
    kind = tool_input.get("subagent_type") or "general-purpose"
    from gitstate.runtime.system_moves import judge_spawn
    reason, depth = judge_spawn(event.get("cwd"), agent, str(kind))
    if reason:
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": f"gitstate refuses this sub-agent: {reason}"}}
    memory.record_child(gdir, _session_id(event), {
        "parent": agent, "depth": depth, "kind": kind,
        "tool_use_id": event.get("tool_use_id"), **_task(tool_input)})
    return None


def _task(tool_input: dict) -> dict:
    return {k: v[:TASK_CHARS] for k in ("description", "prompt")
            if isinstance(v := tool_input.get(k), str) and v.strip()}


def _parent(event: dict, gdir: str) -> str | None:
    """The session's agent; without a SessionStart recorded (or it failed), the agent whose
    state file names the session."""
    agent, bound = bound_agent(event, gdir)
    return (_committed_agent(event) or agent) if bound is None else agent


def subagent_start(event: dict) -> dict | None:
    """SubagentStart: the new sub-agent learns its parent and depth (recorded by the guard)."""
    gdir = memory.git_dir(event.get("cwd"))
    if gdir is None:
        return None
    kind = event.get("agent_type")
    child = memory.take_child(gdir, _session_id(event),
                              kind if isinstance(kind, str) else None)
    from gitstate.runtime.events import handle, say
    # registered, where the lifecycle says so, with its task and instructions
    say(handle("subagent_start", {**event, "child": child or {}}))
    kept = memory.subagent_record(gdir, str(event.get("agent_id") or ""))
    if child is None:
        return None
    return context_reply("SubagentStart", child_briefing(
        child, kept.get("agent"), kept.get("update")))


def child_briefing(child: dict, registered: str | None = None,
                   update: str | None = None) -> str:
    """What a new sub-agent is told: its parent and depth (a sub-agent shares its session's
    Bash, whose CLAUDE_AGENT_DEPTH is the session's agent's), and once registered, its id and
    the `[UPDATE]` instruction appended to its instructions (runtime/events.py)."""
    parent, depth, kind = child["parent"], child["depth"], child["kind"]
    if registered:
        return (f"gitstate: you are a sub-agent ({kind}) of {parent}, at depth {depth}, "
                f"registered as {registered}: set GITSTATE_AGENT={registered} "
                f"CLAUDE_AGENT_DEPTH={depth} for your gitstate commands. Your end is recorded "
                "when you stop." + (f"\n{update}" if isinstance(update, str) else ""))
    return (f"gitstate: you are a sub-agent ({kind}) of {parent}, at depth {depth}. To keep "
            f"your own state, register once: `gitstate spawn <your-id> --parent {parent} "
            f"--role {kind}` (adding `--new-role` where the lifecycle does not declare "
            f"'{kind}'), and set GITSTATE_AGENT=<your-id> for your gitstate commands.")
