"""The commands that commit, each a function returning its `--json` record: what `gitstate
spawn|transition|freeze|wake|bury|handover|logout|sweep` and `inbox --mark-read` print under
`--json` (gitstate/cli/ prints the same record as text) and what the MCP tools return. The
records' shapes are the models Move, Burial, Inbox and SweepResult of
gitstate/schema/models.py (with `--push`, a Move holds how it landed under `push`).

`warn` takes what a command says on stderr along the way (a detached HEAD, a role one typo
away from a declared one, waiting for a free slot).
"""

from __future__ import annotations

import sys

from gitstate.errors import GitstateError, UsageError
from gitstate.law.grammar import canonical_id
from gitstate.moves import agent as moves
from gitstate.moves.fields import first_few, parse_sets

# What only some commands need is imported by them: a move is what an agent runs most, and a
# plain one needs neither the landing (`--push`), nor the views, nor the other commands' moves.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gitstate.git.atomic import Result
    from gitstate.git.repo import Managed


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def spawn(repo: Managed, agent: str, *, role: str | None = None, model: str | None = None,
          parent: str | None = None, sets=(), text: str | None = None,
          session: str | None = None, task: str | None = None,
          instructions: str | None = None, wait: float | None = None, push: bool = False,
          warn: Callable[[str], None] = _stderr, key: str | None = None,
          new_role: bool = False) -> dict:
    """Register `agent` in the initial state (one commit); `wait`: seconds to wait for a free
    slot of a full pool; `key`: its public key, or `new` to make a key pair
    (docs/explanation/movers.md)."""
    values = parse_sets(sets)
    if key:
        from gitstate.law.grammar import canonical_id
        from gitstate.moves.principals import given_key, new_key
        values["key"] = new_key(canonical_id(agent)) if key == "new" else given_key(key)
    if new_role:
        _note_near_role(repo, role, warn)
    if session:
        values["session"] = session   # the runtime's session id: its hooks find the agent
    options: dict[str, Any] = dict(role=role, model=model, parent_agent=parent, sets=values,
                                   text=text, task=task, instructions=instructions,
                                   new_role=new_role)
    if wait:
        from gitstate.moves.operations import spawn_when_free
        return committed(repo, agent, lambda: spawn_when_free(repo, agent, wait, warn,
                                                              **options), push=push, warn=warn)
    return committed(repo, agent, lambda: moves.spawn(repo, agent, **options), push=push,
                     warn=warn)


def _note_near_role(repo: Managed, role: str | None, warn: Callable[[str], None]) -> None:
    """A new role (`--new-role`) one typo away from a declared one may still be that one: say
    so (the spawn goes ahead where custom roles are allowed; elsewhere the law refuses it)."""
    if not role:
        return
    try:
        lc = repo.lifecycle(repo.head())
    except GitstateError:
        return
    from gitstate.law.suggest import closest
    best = closest(role, lc.roles)
    if role not in lc.roles and best and lc.policies.custom_roles:
        warn(f"gitstate: note: '{role}' is not a declared role, so it is a custom one; "
             f"did you mean '{best}'?")


def transition(repo: Managed, agent: str, state: str, *, text: str | None = None,
               body: str = "", sets=(), approved_by: str | None = None, push: bool = False,
               warn: Callable[[str], None] = _stderr,
               files: dict[str, bytes] | None = None) -> dict:
    """Move `agent` to `state`: one atomic commit of its state file and whatever is staged
    (and `files`, as given)."""
    values = parse_sets(sets)
    return committed(repo, agent, lambda: moves.transition(
        repo, agent, state, text=text, sets=values, approved_by=approved_by, body=body,
        files=files), push=push, warn=warn)


def freeze(repo: Managed, agent: str, *, text: str | None = None, situation: str | None = None,
           wake_if: str | None = None, sets=(), push: bool = False,
           warn: Callable[[str], None] = _stderr) -> dict:
    """Freeze `agent` with its freeze-state file, in one commit."""
    from gitstate.moves.freezer import freeze as frozen
    values = parse_sets(sets)
    return committed(repo, agent, lambda: frozen(repo, agent, text=text, situation=situation,
                                                 wake_if=wake_if, sets=values),
                     push=push, warn=warn)


def wake(repo: Managed, agent: str, approved_by: str, *, state: str | None = None,
         text: str | None = None, push: bool = False,
         warn: Callable[[str], None] = _stderr) -> dict:
    """Resume a frozen `agent`: a human's decision."""
    return committed(repo, agent, lambda: moves.wake(repo, agent, approved_by, text=text,
                                                     state=state), push=push, warn=warn)


def bury(repo: Managed, agent: str, summary: str, *, approved_by: str | None = None,
         transfer_to: str | None = None, text: str | None = None, push: bool = False,
         warn: Callable[[str], None] = _stderr) -> dict:
    """`agent` dies with a final summary; `vacancies`: the notices of the roles it left
    vacant, told from the history the move landed in."""
    from gitstate.history.fold import vacancy_notice
    from gitstate.history.views import vacant_roles
    who = canonical_id(agent)
    notices: list[str] = []

    def move() -> Result:
        result = moves.bury(repo, agent, summary, text=text, approved_by=approved_by,
                            transfer_to=transfer_to)
        notices[:] = [vacancy_notice(v) for v in vacant_roles(repo)["vacancies"]
                      if v.get("last_holder") == who]
        return result
    record = committed(repo, agent, move, push=push, extra={"vacancies": notices}, warn=warn)
    landing = record.get("push")
    if landing and landing["outcome"] == "landed" and notices:
        record["vacancies"] = _notices_at(repo, who, record["commit"], result_of=notices)
    return record


def _notices_at(repo: Managed, who: str, landed: str, *, result_of: list[str]) -> list[str]:
    """The vacancy notices of the roles `who` left, told from the history its burial landed in
    (naming the landed commit); the ones told here, with the landed commit named, when that
    history cannot be read here (the branch could not fetch it)."""
    from gitstate.history.fold import vacancy_notice
    from gitstate.history.views import vacant_roles
    try:
        return [vacancy_notice(v) for v in vacant_roles(repo, landed)["vacancies"]
                if v.get("last_holder") == who]
    except GitstateError:
        local = repo.head() or ""
        return [n.replace(f"since {local[:10]})", f"since {landed[:10]})") if local else n
                for n in result_of]


def handover(repo: Managed, role: str, to: str, *, giver: str | None = None,
             text: str | None = None, approved_by: str | None = None, push: bool = False,
             warn: Callable[[str], None] = _stderr) -> dict:
    """A holder of `role` hands it to `to` in one commit, and stays in its state; a frozen
    giver or taker (haak) needs a human's approval."""
    from gitstate.moves import succession
    return committed(repo, to, lambda: succession.handover(repo, role, to, giver=giver, text=text,
                                                      approved_by=approved_by),
                     push=push, warn=warn)


def assume(repo: Managed, agent: str, role: str, *, text: str | None = None,
           push: bool = False, warn: Callable[[str], None] = _stderr,
           new_role: bool = False) -> dict:
    """A living agent without a role takes a vacant one (trailer `Assumes-role:`; with
    `new_role`, one the lifecycle does not declare: `New-role:`)."""
    if new_role:
        _note_near_role(repo, role, warn)
    from gitstate.moves import succession
    return committed(repo, agent, lambda: succession.assume(repo, agent, role, text=text,
                                                            new_role=new_role),
                     push=push, warn=warn)


def logout(repo: Managed, agent: str, note: str, *, text: str | None = None, sets=(),
           push: bool = False, warn: Callable[[str], None] = _stderr) -> dict:
    """Append `note` to the lifecycle's log and move to the state that keeps it."""
    from gitstate.moves.logbook import logout as log_out
    values = parse_sets(sets)
    return committed(repo, agent, lambda: log_out(repo, agent, note, text=text,
                                                  sets=values)[0], push=push, warn=warn)


def inbox(repo: Managed, agent: str, *, mark_read: bool = False, push: bool = False,
          at: str | None = None) -> dict:
    """The messages to `agent` since its `last_read_commit` (up to HEAD, or as they were at
    `at`); `mark_read` moves that to HEAD with a progress commit (none when there is nothing
    to read), `push` lands it."""
    if at is not None and (mark_read or push):
        raise UsageError("--at reads the inbox as it was; --mark-read moves it on now: "
                         "give one of them")
    from gitstate.history.views import inbox as messages
    view = messages(repo, agent, at)
    if not (mark_read and view["messages"]):
        return view

    def move() -> Result:
        return moves.mark_read(repo, view["agent"], view["commit"], len(view["messages"]))
    if not push:
        view["marked_read"] = {"commit": move().sha, "last_read_commit": view["commit"]}
        return view
    return _marked_read_landed(repo, view, move)


def _marked_read_landed(repo: Managed, view: dict, move: Callable[[], Result]) -> dict:
    """The inbox `view` with its checkpoint moved by `move`, landed on the hub."""
    from gitstate.moves.chain import land_move
    landing, _result = land_move(repo, view["agent"], move)
    view["push"] = landing.as_plain()
    if landing.outcome == "landed":
        view["marked_read"] = {"commit": landing.commit, "last_read_commit": view["commit"]}
    return view


def sweep(repo: Managed, *, dry_run: bool = False, push: bool = False) -> dict:
    """The timed transitions that are due, each committed as the system unless `dry_run`."""
    from gitstate.moves.chain import committer
    from gitstate.moves.operations import due_timeouts, sweep as commit_due
    head = repo.head()
    due = due_timeouts(repo)
    if not dry_run:
        commit_due(repo, lambda line: None, committer(repo, push))
    return {"commit": head, "due": due, "committed": not dry_run}


def committed(repo: Managed, agent: str, move: Callable[[], Result], *, push: bool = False,
              extra: dict | None = None, warn: Callable[[str], None] = _stderr) -> dict:
    """Run `move()` (one commit): its record (a Move). With `push`, land it on the hub first:
    the same record, naming the landed commit when it landed (else the one made here), and
    under `push` how it landed (landed, illegal or gave-up)."""
    if push:
        from gitstate.moves.chain import land_move
        landing, result = land_move(repo, agent, move)
        record = _record(repo, result, extra, warn)
        if landing.outcome == "landed" and landing.commit:
            record["commit"] = landing.commit
        return {**record, "push": landing.as_plain()}
    result = move()
    if result.line:
        _note_left_staged(repo, result, warn)
    if result.detached:
        warn(f"gitstate: warning: detached HEAD: {result.sha[:10]} is on no branch; "
             "`git switch -c NAME` keeps it")
    return _record(repo, result, extra, warn)


def _record(repo: Managed, result: Result, extra: dict | None,
            warn: Callable[[str], None]) -> dict:
    """The record of the move `result` committed (a Move)."""
    warn_unknown_mentions(repo, result.plan.message, result.sha, warn)
    info = result.plan.info
    advice = phase_advice(repo, info)
    return {"commit": result.sha, "agent": info["agent"], "from": info["from"],
            "to": info["to"], "path": info["path"],
            "subject": result.plan.message.split("\n", 1)[0],
            **({"advice": advice} if advice else {}), "also_committed": list(result.also),
            **({"line": result.line} if result.line else {}), **(extra or {})}


def _note_left_staged(repo: Managed, result: Result, warn: Callable[[str], None]) -> None:
    """A move made onto the team line from a worktree on another branch takes nothing staged
    there: say what stays (it reaches the line with the branch)."""
    staged = repo.git.staged_changes(repo.git.head())
    if staged:
        warn(f"gitstate: note: the move is on {result.line}; what is staged here stays on "
             f"this branch ({first_few(staged, 5)}): commit it here, and it reaches "
             f"{result.line} when the branch is merged")


def warn_unknown_mentions(repo: Managed, message: str, rev: str,
                          warn: Callable[[str], None]) -> None:
    """A message to an agent that does not exist reaches no inbox: say so (moves and `say`)."""
    from gitstate.history.mentions import unknown_mentions
    nobody = unknown_mentions(repo, message, rev)
    if nobody:
        warn(f"gitstate: note: no agent is called {', '.join(nobody)}: that message reaches "
             "no inbox (committed as it is)")


def phase_advice(repo: Managed, info: dict) -> str | None:
    """What the mortality phase asks (in the words of the lifecycle's own ways out), when
    this move crossed into a new one."""
    phase = info.get("phase_to")
    if phase is None or phase == info.get("phase_from"):
        return None
    return repo.lifecycle(repo.head()).phase_advice(phase, info["agent"])
