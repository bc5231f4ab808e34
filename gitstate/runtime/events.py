"""The runtime's events as moves: what the lifecycle's `runtime:` table
(`gitstate.law.runtime_table`) says an event does, made and judged like any move.

The session's agent is the subject (the binding SessionStart recorded), or for a sub-agent's
events the sub-agent, registered as the session's agent's child. A move the law refuses is not
made and is said on stderr; a move that needs a human's approval is never made from an agent's
session (its signature is the human's to give). Whatever happens, the runtime goes on.

Cost: the binding keeps which events the lifecycle gives rules, so an event without one starts
no git process; an event with one reads the agent's state (one `cat-file`) and commits only when
a rule applies. A prompt, a turn's end and a session's end are decided in a process of the
hook's own that the runtime does not wait for (Claude Code's `async` hooks end with the
session, so `claude -p` would lose its last turn's end); the runtime waits only for the hook to
start and fork. Two events of one session are decided in the order they were sent: each takes a
ticket when its hook starts, and one that finds a later event already decided makes nothing.
What each decided is a line of `.git/gitstate/runtime/events.jsonl`; a refusal is said there
(and on stderr, where the runtime still listens).

An outcome (`success`, `failure`): a turn (a sub-agent's too) failed when Claude Code sends
StopFailure rather than Stop (SubagentStop does not fire then), and a session or sub-agent
failed when its transcript's last turn is an API error or was interrupted by the user.
"""

from __future__ import annotations

import json
import os
import sys
import time

from gitstate.runtime import memory

SUMMARY_CHARS = 2000   # of a last message kept as a summary
_INTERRUPTED = "[Request interrupted by user"


def handle(event: str, payload: dict, ticket: int | None = None,
           detach: bool = False, failed: bool = False) -> str | None:
    """Make the move `event` (a `gitstate.law.runtime_table` name) calls for, if any: what the hook
    says on stderr (None: nothing to say). Each event decided is one line of the events log
    (`memory.log_event`). `detach`: decide it in a process of its own, which outlives the
    runtime's wait (and the runtime itself), and return at once. `failed`:
    the runtime said the turn ended on an error (Claude Code's StopFailure)."""
    gdir = memory.git_dir(payload.get("cwd"))
    session = payload.get("session_id")
    if gdir is None or not isinstance(session, str):
        return None
    agent, forged = _reporter(event, payload, gdir, session)
    if agent is None:
        return forged
    ticket = ticket or time.time_ns()
    if detach and _detached():
        return None    # the runtime goes on; the child decides
    said = _logged(event, payload, gdir, agent, ticket, failed)
    if detach:
        os._exit(0)    # the detached child ends here
    return said


def _logged(event: str, payload: dict, gdir: str, agent: str, ticket: int,
            failed: bool) -> str | None:
    """The move decided (`_decided`; `failed`: the turn's outcome is a failure), and said in
    one line of the events log."""
    said = _decided(event, {**payload, "outcome": "failure"} if failed else payload, gdir,
                    agent, ticket)
    memory.log_event(gdir, {"session": payload["session_id"], "event": event,
                            "ticket": ticket, "said": said or ""})
    return said


def _reporter(event: str, payload: dict, gdir: str,
              session: str) -> tuple[str | None, str | None]:
    """(the session's agent, when this event of it is this process's to decide; else None
    and what is said: a forged report, logged)."""
    agent, bound = memory.bound_agent(payload, gdir)
    if agent is None or (bound is not None and event not in bound.get("events", [event])):
        return None, None    # no rule for this event in the law the session was briefed with
    forged = _not_the_sessions(agent, bound)
    if forged:
        memory.log_event(gdir, {"session": session, "event": event, "said": forged})
        return None, forged
    if payload.get("agent_id") and event not in ("subagent_start", "subagent_stop"):
        return None, None    # a sub-agent's own turn: its session's agent is not the subject
    return agent, None


def _decided(event: str, payload: dict, gdir: str, agent: str, ticket: int) -> str | None:
    """The move decided in the order of the session's events (none when a later one was
    decided already); what went wrong said, never raised."""
    try:
        with memory.EventOrder(gdir, payload["session_id"], ticket) as in_order:
            # not in order: a later event of this session was decided already
            return _move(event, payload, gdir, agent) if in_order else None
    except Exception as exc:  # noqa: BLE001 — a runtime's event never stops the runtime
        if os.environ.get("GITSTATE_DEBUG"):
            raise
        return f"gitstate: {event}: {exc}"


def _not_the_sessions(agent: str, bound: dict | None) -> str | None:
    """Why this process may not report the session's events: the runtime that started the
    session (its process, recorded when SessionStart bound it) is not the one running this
    hook, e.g. another agent's Bash running `gitstate hook` with the session's id. None: it
    may (or nothing was recorded to tell)."""
    recorded = (bound or {}).get("pid")
    if not isinstance(recorded, int):
        return None
    from gitstate.runtime.facts import runtime_pid
    if runtime_pid() == recorded:
        return None
    return (f"gitstate: the events of {agent}'s session are reported by its runtime (process "
            f"{recorded}), not by this process: nothing recorded")


def _detached() -> bool:
    """In the parent: True once a child that goes on alone was made (its own session, no
    stdio: the runtime, which waits for the hook's output to end, is not held); in the child,
    or where no child can be made: False."""
    try:
        if os.fork():
            return True
    except OSError:
        return False
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    return False


def _move(event: str, payload: dict, gdir: str, agent: str) -> str | None:
    from gitstate.git.repo import open_managed
    repo = open_managed(payload.get("cwd"))
    head = repo.head()
    lc = repo.lifecycle(head)
    if not lc.runtime.get(event):
        return None
    subject = _subject(event, payload, gdir, agent)
    if subject is None and event == "subagent_stop":
        return None    # a sub-agent gitstate did not register
    found, state = _state_of(repo, lc, head, subject)
    decided = _rule(lc, event, payload, found, state)
    if decided is None:
        return None
    target, summary = decided
    if target == "":
        return _register(repo, lc, payload, gdir, agent)
    if not found or subject is None or state is None:
        return None
    return _made(repo, lc, event, payload, agent, subject, state, target, summary)


def _rule(lc, event: str, payload: dict, found: bool,
          state: str | None) -> tuple[str, str | None] | None:
    """(the target the lifecycle's rule for the event gives, its summary key), or None: no
    rule applies (or the state file records no state)."""
    from gitstate.law.runtime_table import decide
    if found and state is None:
        return None
    target, rule = decide(lc.runtime, event, kinds(event, payload), state)
    if target is None or rule is None:
        return None
    return target, rule.summary


def _made(repo, lc, event: str, payload: dict, agent: str, subject: str, state: str,
          target: str, summary: str | None) -> str:
    """The move `subject` `state` -> `target`, unless it needs a human's approval."""
    if lc.needs_approval(state, target):
        return (f"gitstate: {event} would move {subject} {state} -> {target}, which needs a "
                "human's approval: not made from an agent's session")
    os.environ["GITSTATE_AGENT"] = agent    # the session's agent moves itself, or its child
    return _moved(repo, lc, event, payload, subject, state, target, summary)


def _subject(event: str, payload: dict, gdir: str, agent: str) -> str | None:
    """Whom the event moves: the session's agent, or for a sub-agent's start or stop the
    sub-agent gitstate registered (None: none)."""
    if event in ("subagent_start", "subagent_stop"):
        return memory.subagent(gdir, str(payload.get("agent_id") or ""))
    return agent


def _state_of(repo, lc, head, subject: str | None) -> tuple[bool, str | None]:
    """(whether `subject`'s state file is committed at `head`, the state it records: None
    where it records none)."""
    from gitstate.law import statefile
    data = repo.git.cat_files([f"{head}:{lc.state_path(subject)}"])[0] \
        if head and subject else None
    if not data or not subject:
        return data is not None, None
    state = statefile.parse_bytes(data, lc.state_path(subject)).state
    return True, state if isinstance(state, str) else None


def _said(event: str, payload: dict) -> str:
    """The move's message: the runtime's event, with its reason or trigger where it has one."""
    return f"runtime: {event.replace('_', ' ')}" + (
        f" ({payload.get('reason') or payload.get('trigger') or ''})".replace(" ()", "")
        if event in ("session_end", "pre_compact") else "")


def _moved(repo, lc, event: str, payload: dict, subject: str, state: str, target: str,
           summary: str | None) -> str:
    """`subject` moved `state` -> `target` by the system (a logout where the target keeps a
    log), the last message as its `summary` key's value: what the hook says."""
    from gitstate.errors import GitstateError
    from gitstate.runtime.system_moves import commit_as_system
    said = _said(event, payload)
    last = last_message(payload)
    # the last message as the summary; none written (a turn without text): what happened
    sets = {summary: (last or said)[:SUMMARY_CHARS]} if summary else {}
    try:
        note = commit_as_system(repo, subject, lambda system: _runtime_move(
            system, lc, subject, target, sets, said, last))
    except GitstateError as exc:
        return f"gitstate: {event}: {subject} stays {state}: {exc.message}"
    move = f"{state} -> {target}" if target != state else f"recorded in {state}"
    return f"gitstate: {event}: {subject} {move}.{note}"


def _runtime_move(system, lc, subject: str, target: str, sets: dict, said: str, last: str):
    """The commit of `_moved`: a logout where the target keeps a log, else a transition."""
    if lc.states[target].log:    # era's logout: its note appended in the same commit
        from gitstate.moves.logbook import logout
        note = (last.splitlines() or [""])[0][:200].strip() or said
        return logout(system, subject, note, text=said, sets=sets, with_work=False,
                      moved_by="runtime")[0]
    from gitstate.moves.agent import transition
    return transition(system, subject, target, sets=sets, text=said, with_work=False,
                      moved_by="runtime")


def _register(repo, lc, payload: dict, gdir: str, parent: str) -> str | None:
    """SubagentStart under `spawn: true`: the sub-agent registered as `parent`'s child."""
    from gitstate.errors import GitstateError
    from gitstate.runtime.system_moves import commit_as_system
    agent_id = str(payload.get("agent_id") or "")
    kind = str(payload.get("agent_type") or "general-purpose")
    if not agent_id:
        return None
    child = _child_id(kind, agent_id)
    os.environ["GITSTATE_AGENT"] = parent

    # the seed's registry: the instructions as given, with how to report progress appended
    update = update_instruction(child, lc.initial)
    try:
        note = commit_as_system(repo, child, lambda system: _spawned(
            system, lc, child, kind, parent, agent_id, payload.get("child"), update))
    except GitstateError as exc:
        return f"gitstate: subagent_start: {kind} sub-agent of {parent} not registered: " \
               f"{exc.message}"
    memory.remember_subagent(gdir, agent_id, child, update=update)
    return f"gitstate: subagent_start: registered {child}, child of {parent}.{note}"


def _spawned(system, lc, child: str, kind: str, parent: str, agent_id: str, told,
             update: str):
    """The commit of `_register`: the sub-agent's spawn, with the task and instructions it
    was `told`."""
    from gitstate.moves.agent import spawn
    told = told if isinstance(told, dict) else {}
    task, prompt = told.get("description"), told.get("prompt")
    return spawn(system, child, role=kind, parent_agent=parent,
                 new_role=kind not in lc.roles, text=f"runtime: sub-agent {agent_id}",
                 task=task if isinstance(task, str) else None,
                 instructions=f"{prompt}\n\n{update}" if isinstance(prompt, str) else update)


def update_instruction(child: str, state: str) -> str:
    """The seed's `[UPDATE]` instruction, appended to a registered sub-agent's instructions
    (its state file's `instructions`) and said to it when it starts: how it reports progress,
    a commit that stays in its state, which `gitstate await` streams to its parent."""
    return (f"[UPDATE] Report progress as you go: `gitstate transition {child} {state} "
            f"-m \"<what is done>\"` (GITSTATE_AGENT={child}).")


def _plain(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _child_id(kind: str, agent_id: str) -> str:
    """The sub-agent's gitstate id: its kind, then its runtime id's letters and digits (its
    digest, when it has fewer than four)."""
    from gitstate.law.grammar import canonical_id
    stem = "".join(c if _plain(c) else "-" for c in kind)[:40].strip("-")
    tail = "".join(filter(_plain, agent_id))[:16]
    if len(tail) < 4:    # an id of other characters: named by its digest
        import hashlib
        tail = hashlib.sha1(agent_id.encode("utf-8", "replace")).hexdigest()[:8]
    return canonical_id(f"{stem or 'agent'}-{tail}")


# event -> (the payload's key that names its kind, the kind when it names none)
NAMED_KINDS = {"session_start": ("source", "startup"), "pre_compact": ("trigger", "auto"),
               "session_end": ("reason", "other")}
WITH_OUTCOME = ("session_end", "subagent_stop", "stop")   # and their outcome, last


def kinds(event: str, payload: dict) -> tuple[str, ...]:
    """The kinds of this event a rule's `when` may name."""
    key, default = NAMED_KINDS.get(event, (None, ""))
    named = (str(payload.get(key) or default),) if key else ()
    return named + ((outcome(payload),) if event in WITH_OUTCOME else ())


def outcome(payload: dict) -> str:
    """`failure` when the runtime said so, or the transcript's last turn is an API error or
    was interrupted."""
    if payload.get("outcome") == "failure":
        return "failure"
    for entry in _newest_first(payload):
        failed = _FAILED.get(str(entry.get("type")))
        if failed:
            return "failure" if failed(entry) else "success"
    return "success"


def _api_error(entry: dict) -> bool:
    return bool(entry.get("isApiErrorMessage") or entry.get("error"))


def _interrupted(entry: dict) -> bool:
    message = entry.get("message")
    return isinstance(message, dict) and _INTERRUPTED in _text(message.get("content"))


# a turn's kind -> whether that turn, the transcript's last, failed
_FAILED = {"assistant": _api_error, "user": _interrupted}


def last_message(payload: dict) -> str:
    """The last assistant message: the payload's, else the transcript's."""
    said = payload.get("last_assistant_message")
    if isinstance(said, str) and said.strip():
        return said.strip()
    return next(filter(None, map(_assistant_text, _newest_first(payload))), "")


def _assistant_text(entry: dict) -> str:
    message = entry.get("message")
    if entry.get("type") != "assistant" or not isinstance(message, dict):
        return ""
    return _text(message.get("content")).strip()


def _newest_first(payload: dict) -> list[dict]:
    """The transcript's last entries (the sub-agent's, for its events), newest first."""
    path = payload.get("agent_transcript_path") or payload.get("transcript_path")
    return list(reversed(_tail(path))) if isinstance(path, str) else []


def _is_text(part) -> bool:
    return isinstance(part, dict) and part.get("type") == "text"


def _text(content) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(c.get("text") or "") for c in filter(_is_text, parts))


def _tail(path: str) -> list[dict]:
    """The JSON objects of the transcript's last lines (none if it cannot be read)."""
    from gitstate.runtime.claude_code.transcript import tail_lines
    out = []
    for line in tail_lines(path):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def say(text: str | None) -> None:
    if text:
        print(text, file=sys.stderr)
