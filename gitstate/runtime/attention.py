"""Who waits for a person: Claude Code's `Notification` hook (`gitstate hook notification`)
records it, `gitstate attention`, the viewer's "Needs attention" and the briefing read it.

Claude Code sends `Notification` with `session_id`, `cwd`, `message`, an optional `title` and
`notification_type`. Five types mean that a person is wanted, and only these are recorded:

- `permission_prompt`: a tool call waits for the person's permission;
- `idle_prompt`: the session has waited at its prompt for the person's next words (Claude Code
  sends it after 60 s idle);
- `elicitation_dialog`: an MCP server asks the person a question;
- `agent_needs_input`: an agent asks for input;
- `agent_completed`: an agent is done and its work waits for a look.

The others say nothing a person must act on (`auth_success`: a login went through) and record
nothing; a payload without a type, or not from a session, is said on stderr and records
nothing. A session that no agent is bound to records nothing either: there is no agent to
name (its person is at its terminal).

Where: not a commit. A session can be notified every minute it waits; a commit each time
would fill the team line's history with noise and cost a landing on the hub per notice, and a
notice says nothing the law judges. So the hook writes one small JSON file per session (its
newest notice: agent, session, type, message, time), atomically, under the clone's common git
folder (`.git/gitstate/runtime/attention/`), shared by its worktrees, where a lead in the main
work tree sees agents in theirs; it runs no git. The price: a clone sees the notices of the
sessions run on it, not those of other machines.

Clearing: a notice waits while the agent has made no state commit since (any commit of its
state file on the line read, the agent's own move, the runtime's record of it, a lead's move
of it) and is not dead. Commit times have whole seconds, so a commit in the notice's second
counts as later: Claude Code notifies seconds after the moment that prompted it (the
permission notice after the dialog has waited some seconds, the idle notice after 60 s), so
a commit in that same second comes after it. A prompt the person submits in the session
clears it too (`memory.clear_attention`, for the prompt hook to call).

`waiting` is the one reader: what waits now, with the agent's state.
"""

from __future__ import annotations

import os
import sys
import time

from gitstate.runtime import memory

WANTED = {
    "permission_prompt": "permission to use a tool",
    "idle_prompt": "input (idle at its prompt)",
    "elicitation_dialog": "an answer (an MCP server asks)",
    "agent_needs_input": "input",
    "agent_completed": "a look at its finished work",
}
MESSAGE_CHARS = 500


def _text(value) -> str | None:
    """One line of plain text: control characters (a terminal's escapes, line breaks) become
    spaces, so a notice shown to a person or told to an agent stays the one line it is."""
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join("".join(c if c.isprintable() else " " for c in value).split())[
        :MESSAGE_CHARS] or None


def notice(event: dict, agent_of) -> None:
    """The `Notification` hook: record that the session's agent waits for a person, with no
    commit, and no git where SessionStart bound the session. `agent_of(event, gdir)` finds the
    session's agent as the other hooks do (`claude_code.session_agent`)."""
    kind = event.get("notification_type")
    session = event.get("session_id")
    if _passed_over(kind, session):
        return None
    cwd = event.get("cwd")
    gdir = memory.git_dir(cwd if isinstance(cwd, str) else None)
    if gdir is None:
        return None
    agent = agent_of(event, gdir)
    if agent is None:
        return None
    memory.note_attention(gdir, str(session), {
        "agent": agent, "session": session, "kind": kind, "message": _text(event.get("message")),
        "title": _text(event.get("title")), "at": time.time()})
    return None


def _passed_over(kind, session) -> bool:
    """Whether a notification records nothing: it has no type or no session (said on
    stderr), or nothing a person must act on."""
    if not isinstance(kind, str) or not kind:
        print("gitstate: notification hook: the event has no notification_type; nothing "
              "recorded", file=sys.stderr)
        return True
    if kind not in WANTED:
        return True          # nothing a person must act on
    if not isinstance(session, str) or not session:
        print("gitstate: notification hook: the event names no session_id; nothing recorded",
              file=sys.stderr)
        return True
    return False


def pending(notices: list[dict], records: list[dict]) -> list[dict]:
    """The notices that still wait, given the roster's records (a state commit of the agent
    at or after the notice's second, or its death, clears one), oldest first. A notice not
    of ours (a hand-made or damaged file) is skipped."""
    by_agent = {r["agent"]: r for r in records}
    out = []
    for n in filter(_ours, notices):
        r = by_agent.get(n["agent"]) or {}
        if not _cleared(n, r):
            out.append(_waits(n, r))
    return out


def _ours(n: dict) -> bool:
    if not isinstance(n, dict):
        return False
    at, kind = n.get("at"), n.get("kind")
    return isinstance(at, (int, float)) and not isinstance(at, bool) and 0 <= at < 1e11 \
        and isinstance(n.get("agent"), str) and isinstance(kind, str) and kind in WANTED


def _cleared(n: dict, r: dict) -> bool:
    """Whether the agent died, or made a state commit since (in the notice's second, too)."""
    from gitstate.law.times import parse_iso
    last = r.get("last_commit_at")
    return r.get("roster") == "dead" or (isinstance(last, str)
                                         and parse_iso(last) >= int(n["at"]))


def _waits(n: dict, r: dict) -> dict:
    from gitstate.law.times import iso
    return {"agent": n["agent"], "state": r.get("state"), "session": str(n.get("session")),
            "kind": n["kind"], "waits_for": WANTED[n["kind"]],
            "message": _text(n.get("message")), "title": _text(n.get("title")),
            "since": iso(int(n["at"]))}


def waiting(repo, records: list[dict] | None = None, commit: str | None = None) -> dict:
    """`gitstate attention`: who waits for a person now, read at the line's tip (or with the
    roster `records` read at `commit`, by a caller that has them). No notice: no history read."""
    gdir = os.path.dirname(repo.cache_dir) if repo.cache_dir else None
    notices = memory.attention_notices(gdir) if gdir else []
    if records is None:
        if notices:
            from gitstate.history.views import agent_records
            records, commit, _lc = agent_records(repo)
        else:
            records, commit = [], repo.head()
    return {"commit": commit, "waiting": pending(notices, records)}


def waits_of(repo, records: list[dict], commit: str | None, now: int) -> dict[str, list[str]]:
    """Agent (of the roster `records`, read at `commit`) -> what it waits for a person for, in
    words (`what`), as of `now`."""
    known = {r["agent"] for r in records}
    found: dict[str, list[str]] = {}
    for w in waiting(repo, records, commit)["waiting"]:
        if w["agent"] in known:
            found.setdefault(w["agent"], []).append(what(w, now))
    return found


def what(w: dict, now: int | None = None) -> str:
    """What one agent waits for, how long, and what Claude Code said: `waits for permission to
    use a tool, 3m: Claude needs your permission to use Bash`."""
    from gitstate.law.times import duration, parse_iso
    now = int(time.time()) if now is None else now
    said = f": {w['message']}" if w.get("message") else ""
    return (f"waits for {w['waits_for']}, {duration(max(0, now - parse_iso(w['since'])))}"
            f"{said}")


def words(w: dict, now: int | None = None) -> str:
    """One waiting agent in a line: `alice (deep_work) waits for ...` (`what`)."""
    state = f" ({w['state']})" if w.get("state") else ""
    return f"{w['agent']}{state} {what(w, now)}"
