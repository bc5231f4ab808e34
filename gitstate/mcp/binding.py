"""Whom the MCP server moves as (docs/how-to/mcp.md). An agent runtime starts a stdio server
for one session; the server moves only as that session's agent, judged as the commands judge
a session bound to it (`not-yours`), and signs only with that agent's key:

- `gitstate mcp --agent ID`: a server registered for one agent (one worktree's own
  registration; the one `.mcp.json` serves every worktree of a repository, so it names none);
- the runtime's session: Claude Code (2.1.154 and later) gives a stdio server its session's id
  in `CLAUDE_CODE_SESSION_ID`, and the server is bound to the agent whose state file records
  that `session:` at the repository's HEAD, asked at each call (a session that registers after
  the server started is bound from then on). A sub-agent's calls reach the server of its
  parent's session, so they move as the parent;
- `GITSTATE_AGENT` in the server's environment, unless `GITSTATE_SESSION` says it was exported
  for another session (a runtime started from an agent's Bash inherits that agent's).

Bound to none, the server reads and refuses every move (`unbound-mover`), saying how to bind.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gitstate.errors import Rejected
from gitstate.git.repo import Managed
from gitstate.law.grammar import canonical_id
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import Violation

SESSION_VAR = "CLAUDE_CODE_SESSION_ID"


def bound_to(repo: Managed, flag: str | None,
             env: Mapping[str, str] = os.environ) -> tuple[str | None, str]:
    """(the agent this server moves as, how it is bound), or (None, why it is bound to none)."""
    if flag:
        return canonical_id(flag), "gitstate mcp --agent"
    session = _var(env, SESSION_VAR) or None
    found = _agent_of(repo, session)
    if found:
        return found, f"its runtime session {session} (session: in {found}'s state file)"
    agent = _var(env, "GITSTATE_AGENT").lower()
    exported = _var(env, "GITSTATE_SESSION")
    if agent and not _for_another(exported, session):
        return agent, "GITSTATE_AGENT"
    return None, _why_unbound(session, agent, exported)


def _for_another(exported: str, session: str | None) -> bool:
    """Was GITSTATE_AGENT exported for a session other than this server's?"""
    return bool(exported and session and exported != session)


def _var(env: Mapping[str, str], name: str) -> str:
    return (env.get(name) or "").strip()


def _agent_of(repo: Managed, session: str | None) -> str | None:
    """The agent whose state file records `session` at HEAD."""
    if not session:
        return None
    from gitstate.runtime.briefing import agent_of_session
    return agent_of_session(repo, session)


def _why_unbound(session: str | None, agent: str, exported: str) -> str:
    how = ("register this session as your agent with one command in your Bash tool: "
           f"`gitstate spawn <your-id> --session {session}` (a new agent), or `gitstate "
           f"transition <your-id> <its state> --set session={session}` (an agent you already "
           "are)" if session else
           "this server was given no runtime session id (CLAUDE_CODE_SESSION_ID, passed by "
           "Claude Code 2.1.154 and later)")
    inherited = (f"; GITSTATE_AGENT={agent} was exported for another session "
                 f"({exported}) and binds nothing here" if agent else "")
    return (f"{how}{inherited}; or start the server bound to one agent: `gitstate mcp "
            "--agent ID`, or GITSTATE_AGENT=ID in its environment (for a server "
            "registered per worktree)")


def unbound(tool: str, why: str) -> Rejected:
    """The refusal of a move asked of a server bound to no agent."""
    return Rejected([Violation(Rule.UNBOUND_MOVER, "this MCP server is bound to no agent, so it "
                               "reads and does not move (a move is made as the session's own "
                               f"agent, never as whoever it names): {why}")], action=tool)
