"""SessionStart: what an agent needs first, tailored to how the session began.

- startup (and clear): where it stands, what its state's protocol asks, its mortality phase,
  the vacant roles it could take, its inbox (count and newest messages), and who else waits
  for a person (the lead's cue);
- resume: the same, shorter: what changed while it was away comes first;
- compact: its memory was just summarised, so the protocol and its own notes (thread,
  summary) come back in full, and its context clock starts again.

It also binds the runtime's session to the agent: `$GITSTATE_AGENT`, or the agent whose state
file records this `session:` (`gitstate spawn ID --session SID`), and remembers what the
context hook needs to know of the law.
"""

from __future__ import annotations

import os
import sys

from gitstate.errors import GitstateError
from gitstate.git.repo import open_managed
from gitstate.law import statefile
from gitstate.runtime import memory
from gitstate.runtime.replies import context_reply, phase_asks
from gitstate.runtime.surroundings import decisions, reading, society


def session_start(event: dict, agent_arg: str | None = None) -> dict | str:
    """The runtime's JSON reply to its event; plain text when run by hand (no event). First,
    whatever the briefing finds, the session's Bash is given the gitstate it tells it to run."""
    if event:
        from gitstate.runtime.bash_env import for_session
        for_session(event.get("cwd"))
    text = briefing(event, agent_arg)
    return context_reply("SessionStart", text) if event else text


def _session_agents(repo, lc, head, session: str) -> list[str]:
    """The agents whose committed state files record `session: SESSION`: those not ended if
    any is (an ended agent's session may be another's now), else the ended ones."""
    found: list[str] = []
    ended: list[str] = []
    for agent, data in sorted(repo.agents_at(lc, head).items()):
        recorded = _recorded_session(lc, agent, data)
        if recorded and recorded[0] == session:
            (ended if recorded[1] else found).append(agent)
    return found or ended


def _recorded_session(lc, agent: str, data: bytes) -> tuple[str | None, bool] | None:
    """(the `session:` the agent's state file records, whether its state is an end); None
    when it records none, or cannot be read."""
    if b"session:" not in data:
        return None
    try:
        front = statefile.parse_bytes(data, lc.state_path(agent)).front
    except GitstateError:
        return None
    state = front.get("state")
    ended = isinstance(state, str) and state in lc.states and lc.states[state].terminal
    return statefile.as_text(front.get("session")), ended


def _find_by_session(repo, lc, head, session: str) -> str | None:
    """The one agent that records the session; None when none does, or more than one (an
    agent that wrote another's session into its own file binds neither)."""
    found = _session_agents(repo, lc, head, session)
    return found[0] if len(found) == 1 else None


def _session(event: dict) -> str | None:
    session = event.get("session_id")
    return session if isinstance(session, str) else None


def _git_dir(repo) -> str | None:
    return os.path.dirname(repo.cache_dir) if repo.cache_dir else None


def _at_head(repo, head, path: str) -> bytes | None:
    return repo.git.cat_files([f"{head}:{path}"])[0] if head else None


def briefing(event: dict, agent_arg: str | None = None) -> str:
    session = _session(event)
    repo = open_managed(event.get("cwd"))
    head = repo.head()
    lc = repo.lifecycle(head)
    agent = agent_arg.lower() if agent_arg else None
    claimed = _session_agents(repo, lc, head, session) if agent is None and session else []
    if len(claimed) > 1:
        return _claimed_twice(repo, session, claimed)
    agent, parent = _named(agent or (claimed[0] if claimed else None), session)
    if agent is None:
        return _unbound(repo, lc, head, parent, session)
    return _registered(repo, lc, head, agent, event)


def _named(agent: str | None, session: str | None) -> tuple[str | None, str | None]:
    return (agent, None) if agent else _from_environment(session)


def _registered(repo, lc, head, agent: str, event: dict) -> str:
    path = lc.state_path(agent)
    data = _at_head(repo, head, path)
    if data is None:
        session = _session(event)
        return (f"gitstate: agent '{agent}' is not registered here ({path} is not committed). "
                f"Register with `gitstate spawn {agent}"
                + (f" --session {session}`." if session else "`."))
    return _briefed(repo, lc, head, agent, statefile.parse_bytes(data, path).front, event)


def _claimed_twice(repo, session: str | None, claimed: list[str]) -> str:
    """A session two agents record is bound to neither: what it is told."""
    gdir = _git_dir(repo)
    if gdir:
        memory.unbind(gdir, session or "")
    return (f"gitstate: this session ({session}) is recorded by more than one agent "
            f"({', '.join(claimed)}), so it is bound to none of them: the agent whose session "
            "it is not should change its `session:` (`gitstate transition ID STATE --set "
            "session=...`).")


def _from_environment(session: str | None) -> tuple[str | None, str | None]:
    """(the agent GITSTATE_AGENT names, or None; its parent, when the session was started
    from another agent's session, GITSTATE_SESSION being not this one)."""
    env_agent = os.environ.get("GITSTATE_AGENT")
    if not env_agent:
        return None, None
    env_session = os.environ.get("GITSTATE_SESSION")
    if env_session and session and env_session != session:
        return None, env_agent.lower()   # started from another agent's session: its child
    return env_agent.lower(), None


def _unbound(repo, lc, head, parent: str | None, session: str | None) -> str:
    """The briefing of a session no agent is bound to: how to bind it."""
    lines = ["gitstate: no agent is bound to this session."]
    if parent:
        depth = _depth_note(repo, lc, head, parent)
        lines.append(f"This session was started by {parent}{depth}: register as its "
                     f"child with `gitstate spawn <your-id> --parent {parent} "
                     f"--session {session}`.")
    elif session:
        lines.append(f"Bind this session ({session}) to yourself with one command in "
                     f"your Bash tool: `gitstate spawn <your-id> --session {session}` "
                     f"(a new agent), or `gitstate transition <your-id> <its state> --set "
                     f"session={session}` (an agent you already are). gitstate's hooks "
                     "take the binding from your state file: your briefing follows that "
                     "command, and your context is measured from then on.")
    else:
        lines.append("Register with `gitstate spawn <your-id>` and set GITSTATE_AGENT to "
                     "it for your gitstate commands.")
    lines += society(repo, None, vacancies=True)
    return "\n".join(lines)


FRESH = ("startup", "clear", "compact")   # sources of a new context: its clock restarts


def _bind(repo, lc, agent: str, event: dict, front: dict | None = None) -> None:
    """Remember the session's binding (what the hooks read without git) and export it to the
    session's Bash."""
    gdir = _git_dir(repo)
    session = _session(event)
    if not (gdir and session):
        return
    memory.bind(gdir, session, _binding(lc, agent, event))
    if (event.get("source") or "startup") in FRESH:
        memory.remember_phase(gdir, agent, "fresh", 0)   # a new context: its clock restarts
    _export(agent, session, _depth(lc, front or {}))


def _binding(lc, agent: str, event: dict) -> dict:
    """What the hooks keep of the session's binding: its agent and what they need of the
    law (no git read)."""
    mort = lc.mortality
    return {
        "agent": agent, "window": lc.policies.context_window,
        "mortality": [mort.midlife, mort.legacy, mort.urgent], "model": event.get("model"),
        # what each phase asks, in this lifecycle's own ways out (the reminder reads no git)
        "asks": {p: phase_asks(lc, p, agent) for p in ("midlife", "legacy", "urgent")},
        # the reminder of the mortality clock, only where the lifecycle declares one
        "remind": lc.policies.mortality is not None,
        # the events the law gives rules (the others start no git: runtime/events.py)
        "events": sorted(lc.runtime),
        # the runtime's process: only its hooks report the session's events
        "pid": _runtime_pid(event)}


TITLES = {"resume": "resumed", "compact": "after compaction", "clear": "cleared"}


def _briefed(repo, lc, head, agent: str, front: dict, event: dict) -> str:
    """The briefing of a bound agent: where it stands, what it carries, what it should read."""
    source = event.get("source") or "startup"
    state = front.get("state") if isinstance(front.get("state"), str) else None
    pct = _pct(front)
    _bind(repo, lc, agent, event, front)
    recorded = _record_facts(repo, lc, agent, state, front, event)
    lines = [f"gitstate briefing ({TITLES.get(source, 'started')}) {agent}: {state} "
             f"({lc.roster_of(state) if state else '?'}); "
             f"next: {_next_moves(lc, state, front, pct)}."]
    lines += [recorded] if recorded else []
    lines += _carried(front, pct)
    lines += reading(repo, agent, state, source)
    lines += decisions(repo, lc, head)
    lines += _phase_asks(lc, agent, source, pct)
    lines += society(repo, agent, vacancies=source != "compact")
    return "\n".join(lines)


def _pct(front: dict) -> int | float | None:
    pct = front.get("context_pct")
    return pct if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None


def _next_moves(lc, state: str | None, front: dict, pct) -> str:
    if state not in lc.states:
        return "?"
    return ", ".join(lc.open_moves(state, role=statefile.as_text(front.get("role")),
                                   context_pct=pct))


def _phase_asks(lc, agent: str, source: str, pct) -> list[str]:
    asks = phase_asks(lc, "fresh" if source in FRESH else lc.mortality.phase(pct), agent)
    return [asks] if asks else []


def _carried(front: dict, pct: float | None) -> list[str]:
    """The agent's role, thread and summary, and its last recorded context."""
    lines = [f"{key}: {value}" for key in ("role", "thread", "summary")
             if (value := statefile.as_text(front.get(key)))]
    if pct is not None:
        lines.append(f"Last recorded context: {pct:g}%. The context hook measures it from "
                     "this session's transcript and records each phase crossing.")
    return lines



def _runtime_pid(event: dict) -> int | None:
    """The process of the runtime whose hook this is (None when run by hand: no event)."""
    if not event.get("session_id"):
        return None
    from gitstate.runtime.facts import runtime_pid
    return runtime_pid()


def _record_facts(repo, lc, agent: str, state: str | None, front: dict,
                  event: dict) -> str | None:
    """What the runtime knows of this session (its process, host, model, worktree), recorded
    once in the agent's state file: a commit only when a fact differs from the recorded one.
    None when nothing was to be recorded (run by hand, or no session: nothing is known of a
    runtime, and a briefing asked for as an MCP prompt only reads)."""
    if not event.get("session_id") or state is None or not _living(lc, state):
        return None
    from gitstate.runtime.facts import changed, of_session
    new = changed(front, of_session(event, str(repo.top) if repo.top else None))
    to = _started_to(lc, state, event)
    if not new and not to:
        return None
    return _facts_recorded(repo, agent, state, to, new)


def _living(lc, state: str) -> bool:
    return state in lc.states and not lc.states[state].terminal


def _facts_recorded(repo, agent: str, state: str, to: str | None, new: dict) -> str:
    """The facts and the move the session's start makes (`to`), one commit; the facts alone
    where the move is refused. What was not recorded is said on stderr too."""
    from gitstate.runtime.system_moves import record_facts
    said = record_facts(repo, agent, to or state, new)
    if to and new and "were not recorded" in said:   # the move refused: the facts alone
        said = record_facts(repo, agent, state, new) + f" (not {state} -> {to}: {said})"
    if "were not recorded" in said or "Not recorded" in said:
        print(said, file=sys.stderr)
    return said


def _started_to(lc, state: str, event: dict) -> str | None:
    """Where the session's start moves the agent (`runtime.session_start`), if anywhere: the
    facts and the move are one commit."""
    if not lc.runtime.get("session_start"):
        return None
    from gitstate.law.runtime_table import decide
    return decide(lc.runtime, "session_start", (str(event.get("source") or "startup"),),
                  state)[0]


def _depth_note(repo, lc, head, parent: str) -> str:
    """", so you are at depth N" from the parent's committed state file; where the lifecycle
    limits depth, the session's Bash is given it (`CLAUDE_AGENT_DEPTH`, the seed's: the
    parent's depth plus one)."""
    data = _at_head(repo, head, lc.state_path(parent))
    if data is None:
        return ""
    depth = (_depth(lc, statefile.parse_bytes(data, lc.state_path(parent)).front) or 0) + 1
    limit = lc.policies.max_depth
    if limit is None:
        return f", so you are at depth {depth}"
    from gitstate.runtime.bash_env import export
    export([f"export {DEPTH_VARIABLE}={depth}"])
    past = f", past this lifecycle's max_depth {limit}: you may not register"
    return f", so you are at depth {depth}" + (past if depth > limit else "")


DEPTH_VARIABLE = "CLAUDE_AGENT_DEPTH"   # the seed's (001): the agent's depth, in its Bash


def _depth(lc, front: dict) -> int | None:
    """The agent's depth where it has one: its `depth:`, else 0 where the lifecycle limits
    depth (`max_depth`); None elsewhere (nothing to export)."""
    depth = front.get("depth")
    if isinstance(depth, int) and not isinstance(depth, bool):
        return depth
    return 0 if lc.policies.max_depth is not None else None


def _export(agent: str, session: str, depth: int | None = None) -> None:
    """Bash calls of this session know who they are, and at which depth where it counts
    (`$CLAUDE_ENV_FILE`, SessionStart only): a runtime started from that Bash inherits them,
    so its own SessionStart knows its parent."""
    from gitstate.runtime.bash_env import export
    export([f"export GITSTATE_AGENT={agent}", f"export GITSTATE_SESSION={session}"]
           + ([f"export {DEPTH_VARIABLE}={depth}"] if depth is not None else []))


def agent_of_session(repo, session: str) -> str | None:
    """The agent whose committed state file records `session: SESSION`."""
    head = repo.head()
    return _find_by_session(repo, repo.lifecycle(head), head, session) if head else None


def bind_late(event: dict) -> str | None:
    """The briefing of a session that was not bound when it started, once a command of its
    own has bound it (`gitstate spawn ID --session SID`); None while it is still unbound."""
    session = event.get("session_id")
    if not isinstance(session, str):
        return None
    repo = open_managed(event.get("cwd"))
    if agent_of_session(repo, session) is None:
        return None
    return briefing({**event, "source": "startup"})
