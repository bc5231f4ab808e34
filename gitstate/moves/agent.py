"""The write commands' core: spawn an agent, move it to a new state.

Each is one atomic commit (see `git/atomic.py`), judged by the same validator as the hooks before
anything is written, so an illegal move is refused with the same words either way.
"""

from __future__ import annotations

import time

from gitstate.errors import GitstateError, InvalidFile
from gitstate.git.atomic import Plan, Result, reject_if
from gitstate.git.repo import GitContext, Managed
from gitstate.law import statefile
from gitstate.law.grammar import canonical_id, format_message, parse_message
from gitstate.law.judge import Facts, judge
from gitstate.law.lifecycle import SIGNERS_PATH, is_law_path
from gitstate.law.movers import KEY_FIELD, agent_session
from gitstate.law.retry import fields as retried
from gitstate.law.rule_ids import Rule
from gitstate.law.rules import FileChange, legal_moves
from gitstate.moves.fields import now_iso, parse_sets  # noqa: F401  (the commands' names)
from gitstate.moves.principals import given_key, must_sign, new_key, session_env, signing_key
from gitstate.moves.workfile import at_commit, commit_move, current, kept_edits, staged_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def spawn(repo: Managed, agent: str, *, role: str | None = None, model: str | None = None,
          parent_agent: str | None = None, sets: dict[str, Any] | None = None,
          text: str | None = None, task: str | None = None,
          instructions: str | None = None, key: str | None = None,
          new_role: bool = False) -> Result:
    """Register `agent` in the lifecycle's initial state, in one commit, with what it is
    for (`task`, `instructions`) and when it `started`. `key`: its public key (`new`: make a
    key pair, kept in the user's config directory), recorded at birth. `new_role`: `role` is
    meant though the lifecycle does not declare it (trailer `New-role:`)."""
    agent = canonical_id(agent)
    parent_agent = canonical_id(parent_agent) if parent_agent else None
    sets = dict(sets or {})
    if key is not None:
        sets["key"] = new_key(agent) if key == "new" else given_key(key)

    def prepare(head: str | None) -> Plan:
        lc = repo.lifecycle(head)
        assert lc.initial is not None   # a loaded lifecycle has one (law/checks.py)
        path = lc.state_path(agent)
        old, work = current(repo, head, path)
        if old is not None:
            raise _exists(lc, agent, statefile.parse_bytes(old, path).state)
        fields: dict[str, Any] = {"agent": agent, "state": lc.initial}
        if role is not None:
            fields["role"] = role
        if model is not None:
            fields["model"] = model
        fields["parent"] = parent_agent
        fields["depth"] = _depth_of(repo, lc, head, parent_agent)
        fields.update(_birth_defaults(repo, lc))
        if task is not None:
            fields["task"] = task
        if instructions is not None:
            fields["instructions"] = instructions
        fields["started"] = now_iso()
        fields.update(sets)
        fields["updated"] = now_iso()
        if work is not None:  # a hand-written file: keep its notes and keys
            base = statefile.parse_bytes(work, path)
        else:
            from gitstate.resources import read_shipped
            base = statefile.parse(read_shipped("agent", "_state.md"), path)
        new = statefile.with_fields(base, fields).encode()
        desc = (f"spawned{f' as {role}' if role else ''}"
                f"{f' by {parent_agent}' if parent_agent else ''}")
        trailers = [("New-role", role)] if new_role and role else []
        message = format_message(agent, lc.initial, text or desc, trailers=trailers)
        _judge(repo, lc, head, path, old, new, message, "spawn")
        signer = signing_key(repo, lc, head, agent, fields, (None, lc.initial))
        return Plan({path: new}, message, {"agent": agent, "from": None, "to": lc.initial,
                                          "path": path}, key=signer)

    return commit_move(repo, prepare, reflog="gitstate spawn")


def _exists(lc, agent: str, state: Any) -> GitstateError:
    """Why `agent` cannot be spawned again, and what to do instead: an id is never reused."""
    spec = lc.states.get(state) if isinstance(state, str) else None
    if spec is not None and spec.roster == "dead":
        return GitstateError(f"agent '{agent}' is dead ({state}): an id is never reused, its "
                             "history stays with it",
                             hint=f"spawn it under a new id (e.g. `gitstate spawn {agent}-2`); "
                                  f"`gitstate log {agent}` shows what it did")
    if spec is not None and spec.roster == "frozen":
        how = _way_back(lc, agent, state)
        return GitstateError(f"agent '{agent}' already exists and is {state} ({spec.roster})",
                             hint=f"bring it back with {how}" if how else
                             f"{legal_moves(lc, state)}")
    return GitstateError(f"agent '{agent}' already exists (state {state})",
                         hint=f"move it with `gitstate transition {agent} STATE`")


def _way_back(lc, agent: str, state: str) -> str:
    """The command that brings a frozen agent back to life; "" when none is one move away."""
    back = next((t for t in lc.targets(state) if lc.states[t].roster == "living"), None)
    if not back:
        return ""
    if lc.needs_approval(state, back):
        return f"`gitstate wake {agent} --approved-by HUMAN`"
    return f"`gitstate transition {agent} {back}`"


def _birth_defaults(repo: Managed, lc) -> dict[str, Any]:
    """The lifecycle's `defaults`; failing those, the person is the name git writes as the
    author (user.name, or GIT_AUTHOR_NAME where set) and the project the repository's folder,
    so that the entity graph knows whom and what for."""
    out = dict(lc.defaults)
    if not statefile.is_filled(out.get("person")):
        name = _author_name(repo)
        if name:
            out["person"] = name
    if not statefile.is_filled(out.get("project")) and repo.top is not None:
        out["project"] = repo.top.name
    return out


def _author_name(repo: Managed) -> str | None:
    """The name of `git var GIT_AUTHOR_IDENT` ("Name <email> time zone"), as a commit gets it."""
    ident = repo.git.run("var", "GIT_AUTHOR_IDENT", check=False).decode("utf-8", "replace")
    name = ident.rsplit("<", 1)[0].strip() if "<" in ident else ""
    return name or None


def _depth_of(repo: Managed, lc, head: str | None, parent_agent: str | None) -> int:
    if parent_agent is None:
        return 0
    data = repo.git.cat_files([f"{head}:{lc.state_path(parent_agent)}"])[0] if head else None
    if data is None:
        raise GitstateError(f"parent agent '{parent_agent}' does not exist",
                            hint="spawn the parent first, or leave out --parent")
    depth = statefile.parse_bytes(data, lc.state_path(parent_agent)).get("depth")
    return (depth if isinstance(depth, int) and not isinstance(depth, bool) else 0) + 1


def transition(repo: Managed, agent: str, state: str, *, text: str | None = None,
               sets: dict[str, Any] | None = None, approved_by: str | None = None,
               body: str = "", files: dict[str, bytes] | None = None,
               with_work: bool = True, action: str = "transition",
               moved_by: str | None = None,
               trailers: list[tuple[str, str]] | None = None) -> Result:
    """Move `agent` to `state` in one commit, together with whatever is staged and `files`.
    Without `with_work` (a measurement the system records), only the committed state file
    changes: nothing staged and no edit in the work tree comes along. `moved_by`: the team
    operation making the move (`sweep`, `reap`, `shutdown`), or the runtime's hooks
    (`runtime`); trailer `Moved-by:`."""
    agent = canonical_id(agent)
    sets = dict(sets or {})
    files = dict(files or {})

    def prepare(head: str | None) -> Plan:
        lc = repo.lifecycle(head)
        path = lc.state_path(agent)
        old, work = current(repo, head, path)
        if old is None:
            raise repo.unknown_agent(agent, head, lc)
        staged = staged_version(repo, path) if with_work else None   # None onto the line
        base_bytes = staged if staged is not None else old
        base = statefile.parse_bytes(base_bytes, path)
        old_state = _state_or_none(old, path)
        sets.update({k: v for k, v in retried(lc, base.front, old_state, state).items()  # a retry
                     if k not in sets})
        from gitstate.law.times import iso
        at = iso(repo.git.committer_time())   # the commit's own time: what the law compares
        if state in lc.states and lc.states[state].terminal and old_state != state:
            sets.setdefault("ended", at)          # the log's end stamp
        stamp = lc.states[state].stamp if state in lc.states else None
        if stamp and old_state != state:
            sets.setdefault(stamp, at)            # era: idle_since
        fields = {"state": state, **sets, "updated": now_iso()}
        new = statefile.with_fields(base, fields).encode()
        if new == old:   # a progress update in the same second as the last: a finer stamp
            fields["updated"] = now_iso(precise=True)
            new = statefile.with_fields(base, fields).encode()
        said = list(trailers or [])
        said += [("Approved-by", approved_by)] if approved_by else []
        said += [("Moved-by", f"gitstate {moved_by}")] if moved_by else []
        message = format_message(agent, state, text or f"{old_state} -> {state}", body, said)
        _judge(repo, lc, head, path, old, new, message, action, files, with_work)
        front = statefile.parse_bytes(old, path).front
        sign = must_sign(repo, lc, head, agent, old_state, state, approved_by, moved_by,
                         keyed=bool(front.get(KEY_FIELD)))
        signer = None if sign else signing_key(repo, lc, head, agent, front, (old_state, state))
        return Plan({path: new, **files}, message, {
            "agent": agent, "from": old_state, "to": state, "path": path,
            "phase_from": _phase(lc, old, path), "phase_to": _phase(lc, new, path)},
                    with_staged=with_work, sign=sign, key=signer,
                    work=kept_edits(work, base_bytes, fields, path))

    return commit_move(repo, prepare, reflog="gitstate transition")



def _phase(lc, data: bytes, path: str) -> str:
    """The mortality phase a state file's `context_pct` puts its agent in."""
    try:
        pct = statefile.parse_bytes(data, path).get("context_pct")
    except InvalidFile:
        return "unknown"
    return lc.mortality.phase(pct if isinstance(pct, (int, float))
                              and not isinstance(pct, bool) else None)


def _state_or_none(data: bytes, path: str) -> str | None:
    try:
        s = statefile.parse_bytes(data, path).state
        return s if isinstance(s, str) else None
    except InvalidFile:
        return None


def _judge(repo: Managed, lc, head: str | None, path: str, old: bytes | None, new: bytes,
           message: str, action: str, files: dict[str, bytes] | None = None,
           staged: bool = True) -> None:
    """Refuse before committing, with exactly the hook's words; staged state files count."""
    files = files or {}
    changes, law = _changes(repo, lc, head, FileChange(path, old, new), files, staged)
    # onto the team line from another branch: the line's tree is what the move joins (this
    # worktree's index is its branch's), and the moment is now, not the tip's date
    line = repo.line_ref() is not None
    context = GitContext(repo.git, head, tree=head if line else None,
                         overrides={**files, path: new}, lc=lc,
                         now=time.time() if line else None)
    bound, mark = agent_session(session_env())
    found = judge(Facts(lc, changes, message=parse_message(message), context=context,
                        law_changed=sorted(law) if head is not None else [],
                        bound=bound, mark=mark, signers_known=lambda: head is not None and
                        repo.git.cat_files([f"{head}:{SIGNERS_PATH}"])[0] is not None))
    reject_if(as_said_to_the_command(found), action)


def _changes(repo: Managed, lc, head: str | None, change: FileChange, files: dict[str, bytes],
             staged: bool) -> tuple[list[FileChange], list[str]]:
    """The move's state-file changes (its own, the other state files it writes and, with
    `staged`, those staged here) and the law files it changes."""
    rx = lc.state_path_regex()
    extra = [p for p in files if rx.match(p)]
    changes = [change] + [FileChange(p, o, files[p])
                          for p, o in zip(extra, at_commit(repo, head, extra))]
    law = [p for p in files if is_law_path(p, lc)]
    if staged and not repo.line_ref():   # a move onto the line takes nothing staged here
        _add_staged(repo, lc, head, {change.path, *extra}, changes, law)
    return changes, law


def _add_staged(repo: Managed, lc, head: str | None, moved: set[str],
                changes: list[FileChange], law: list[str]) -> None:
    """The state-file changes and law files staged here, added to the move's."""
    staged_paths = repo.git.staged_changes(head)
    changes += repo.staged_state_changes(lc, head, moved, staged_paths)
    law += [p for p in staged_paths if is_law_path(p, lc) and p not in law]


_TRAILER_ADVICE = "add the trailer 'Approved-by: <human>' naming one of "


def as_said_to_the_command(violations: list) -> list:
    """The hooks' words, for someone running a gitstate command rather than `git commit`:
    the trailer the hook asks for is the command's `--approved-by`."""
    for v in violations:
        if v.rule == Rule.NEEDS_APPROVAL and _TRAILER_ADVICE in v.message:
            head, _, humans = v.message.partition(_TRAILER_ADVICE)
            v.message = f"{head}pass --approved-by HUMAN, one of {humans}"
            v.where = None
    return violations


def mark_read(repo: Managed, agent: str, head: str, count: int) -> Result:
    """Move the inbox checkpoint to `head`: a progress update in the agent's current state."""
    agent = canonical_id(agent)
    lc = repo.lifecycle(head)
    data = repo.git.cat_files([f"{head}:{lc.state_path(agent)}"])[0]
    state = _state_or_none(data, lc.state_path(agent)) if data else None
    if state is None:
        raise GitstateError(f"cannot read {agent}'s state to move its checkpoint")
    text = f"inbox: read {count} message{'s' if count != 1 else ''}"
    return transition(repo, agent, state, text=text, sets={"last_read_commit": head})


# ---------------------------------------------------------------------------------------
# The named moves of the lifecycle: wake, bury (freeze: moves/freezer.py)


def current_state(repo: Managed, agent: str) -> tuple[Any, str, Any]:
    """(lifecycle, state, front matter) of a committed agent at HEAD."""
    lc, _path, doc = repo.agent_doc(canonical_id(agent), repo.head())
    return lc, doc.state, doc.front


def move_to_roster(lc, state: str, roster: str, *, terminal: bool | None = None,
                   verb: str) -> str:
    """The state to go to from `state` whose roster is `roster` (the first the lifecycle
    lists); a clear error naming the legal moves when there is none."""
    for target in lc.targets(state):
        spec = lc.states[target]
        if spec.roster == roster and (terminal is None or spec.terminal == terminal):
            return target
    raise GitstateError(f"cannot {verb} from {state}: no {roster} state is one move away; "
                        f"{legal_moves(lc, state)}")


def wake(repo: Managed, agent: str, approved_by: str, *, text: str | None = None,
         state: str | None = None) -> Result:
    """Leave the frozen state for a living one, with a human's approval."""
    lc, current, _ = current_state(repo, agent)
    if lc.roster_of(current) != "frozen":
        raise GitstateError(f"{canonical_id(agent)} is not frozen (it is in {current})")
    target = state or move_to_roster(lc, current, "living", verb="wake")
    return transition(repo, agent, target, text=text or f"woken by {approved_by}",
                      approved_by=approved_by, action="wake")


def bury(repo: Managed, agent: str, summary: str, *, text: str | None = None,
         approved_by: str | None = None, transfer_to: str | None = None) -> Result:
    """Die: move to the terminal dead state with a final summary. With `transfer_to`, the role
    goes to that agent in the same commit: never vacant, never held twice."""
    lc, current, front = current_state(repo, agent)
    target = move_to_roster(lc, current, "dead", terminal=True, verb="die")
    if not (summary or "").strip() and "final_summary" in lc.states[target].requires:
        who = canonical_id(agent)
        raise GitstateError(f"{who} dies with a final summary ('{target}' requires one), and "
                            "none was given; nothing was done",
                            hint=f"`gitstate bury {who} --summary TEXT`")
    sets: dict[str, Any] = {"final_summary": summary}
    files: dict[str, bytes] = {}
    body = ""
    if transfer_to:
        files, more, body = _role_transfer(repo, lc, front, _held_role(agent, front),
                                           transfer_to)
        sets.update(more)
    return transition(repo, agent, target, text=text or "died", sets=sets,
                      approved_by=approved_by, files=files, action="bury",
                      trailers=[("Role-transfer", body)] if body else None)


def _held_role(agent: str, front: dict) -> str:
    role = statefile.as_text(front.get("role"))
    if not role:
        raise GitstateError(f"{canonical_id(agent)} holds no role to hand over")
    return role


def _role_transfer(repo: Managed, lc, front: dict, role: str,
                   to: str) -> tuple[dict[str, bytes], dict[str, Any], str]:
    """(the receiver's new state file, the giver's new fields, the `Role-transfer:` trailer's
    value) of handing `role`
    to `to`. The giver keeps the role it held in `past_roles`, so that the record of who held
    what (the entity graph) outlives the hand-over."""
    to = canonical_id(to)
    to_path = lc.state_path(to)
    old_to, work_to = current(repo, repo.head(), to_path)
    if old_to is None:
        raise repo.unknown_agent(to, repo.head(), lc,
                                 hint=f"spawn it first (without the role): `gitstate spawn {to}`")
    base = statefile.parse_bytes(work_to if work_to is not None else old_to, to_path)
    held = statefile.as_text(base.get("role"))
    if held and held != role:
        raise GitstateError(f"{to} holds role '{held}'; an agent holds one role at a time",
                            hint=f"have {to} hand '{held}' on first, or choose another agent")
    new_to = statefile.with_fields(base, {"role": role, "updated": now_iso()}).encode()
    if new_to == old_to:    # already a holder, in the same second: a finer stamp
        new_to = statefile.with_fields(base, {"role": role,
                                              "updated": now_iso(precise=True)}).encode()
    giver = {"role": None, "past_roles": _past_roles(front, role)}
    return {to_path: new_to}, giver, f"{role} -> {to}"


def _past_roles(front: dict, role: str) -> list[str]:
    """The giver's `past_roles`, with the `role` it hands over."""
    past = front.get("past_roles")
    past = [str(r) for r in past] if isinstance(past, list) else []
    return past if role in past else past + [role]


