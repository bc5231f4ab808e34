"""What the runtime hooks do when something must be judged or committed: record a measured
context as the system, and judge a sub-agent before it is spawned, by the very rules the git
hooks apply to the commit that would register it."""

from __future__ import annotations

import os

from gitstate.git.repo import GitContext, open_managed
from gitstate.law import statefile
from gitstate.law.grammar import parse_message
from gitstate.law.judge import Facts, judge
from gitstate.law.rule_ids import Rule
from gitstate.law.verdict import FileChange
from gitstate.runtime.replies import phase_asks

# The rules about a birth: what a spawn guard refuses before the sub-agent exists.
SPAWN_RULES = (Rule.MAX_DEPTH, Rule.SELF_SPAWN, Rule.MAX_LIVING, Rule.ROLE_MAX, Rule.UNKNOWN_ROLE,
               Rule.PARENT)


def _committed(cwd: str | None, agent: str):
    """(the clone at `cwd`, its HEAD, its lifecycle, `agent`'s state file as committed at HEAD
    or None)."""
    repo = open_managed(cwd)
    head = repo.head()
    lc = repo.lifecycle(head)
    data = repo.git.cat_files([f"{head}:{lc.state_path(agent)}"])[0] if head else None
    return repo, head, lc, data


def record_context(cwd: str | None, agent: str, pct: float, phase: str, tokens: int,
                   window: int) -> str:
    """One progress commit, authored by gitstate, that records the measured `context_pct`;
    returns what the agent is told."""
    repo, _head, lc, data = _committed(cwd, agent)
    if data is None:
        return f"gitstate: {agent} is not registered here; context is {pct:g}% ({phase})."
    doc = statefile.parse_bytes(data, lc.state_path(agent))
    state = doc.state
    measured = f"context {pct:g}% ({tokens:,} of {window:,} tokens)"
    note = ""
    if isinstance(state, str) and state in lc.states and not lc.states[state].terminal:
        note = _context_recorded(repo, lc, doc, agent, state, pct, tokens,
                                 f"{measured}: {phase}")
    asks = phase_asks(lc, phase, agent)
    return f"gitstate: {agent}: {measured}, mortality phase {phase}.{note} {asks}".strip()


def _context_recorded(repo, lc, doc, agent: str, state: str, pct: float, tokens: int,
                      text: str) -> str:
    """The progress commit of a measured context; a state with a token limit (era's
    deep_work) ends once `tokens` reach `max_tokens`."""
    from gitstate.law.mortality import token_budget
    budget = token_budget(lc, doc.get("max_tokens"))
    leave = lc.states[state].token_limit
    if not (leave and isinstance(budget, int) and tokens >= budget):
        return record_as_system(repo, agent, state, {"context_pct": pct, "tokens": tokens}, text)
    return record_as_system(repo, agent, leave, {"context_pct": pct, "tokens": tokens},
                            f"{text}; token limit {budget:,}: {state} ends") + (
        f" Your max_tokens ({budget:,}) is spent: you are in {leave} now.")


def record_as_system(repo, agent: str, state: str, sets: dict, text: str) -> str:
    """One move of `agent` to `state` (its own: a progress commit) setting `sets`, authored by
    gitstate and judged like every move, landed on the hub where there is one: what the agent
    is told. A refused move raises the move's refusal."""
    # the moves (and what they import) only when a commit is made: the spawn guard, which
    # imports this module too, judges without them (bench/runtime.py)
    from gitstate.moves.agent import transition
    os.environ["GITSTATE_AGENT"] = agent   # the agent's own move: signed by its key, if it has one
    return commit_as_system(repo, agent, lambda system: transition(
        system, agent, state, sets=sets, text=text, with_work=False, moved_by="runtime"))


def commit_as_system(repo, agent: str, move) -> str:
    """`move(repo as the system)` committed, and landed on the hub where there is one: what
    the agent is told. A refused move raises the move's refusal."""
    from gitstate.moves.operations import as_system
    with as_system(repo) as system:
        if hub_upstream(system.git, system.line_ref()):
            return land_measurement(system, agent, lambda: move(system))
        return f" Recorded as {move(system).sha[:10]} by gitstate."


def record_facts(repo, agent: str, state: str, facts: dict) -> str:
    """SessionStart's facts of the runtime (`runtime.facts`: only those that changed) as one
    progress commit by gitstate: what the agent is told, or why nothing was recorded (the move
    refused; never an error: the session goes on)."""
    from gitstate.errors import GitstateError
    said = ", ".join(f"{k} {v}" for k, v in facts.items()) or "session start"
    try:
        note = record_as_system(repo, agent, state, facts, f"runtime: {said}")
    except GitstateError as exc:
        return f"gitstate: the runtime's facts ({said}) were not recorded: {exc.message}"
    except Exception as exc:  # noqa: BLE001 — the briefing goes on whatever happens here
        return f"gitstate: the runtime's facts ({said}) were not recorded: {exc}"
    return f"gitstate: recorded what the runtime knows ({said}).{note}"


def hub_upstream(git, line: str | None = None) -> bool:
    """Whether the branch's upstream (the team line's, from a worktree on another branch) is
    a remote's branch (a hub): one git process, nothing imported (a hook without a hub pays no
    more); as `git.push.hub_upstream` says."""
    branch = line.removeprefix("refs/heads/") if line else ""
    code, out, _ = git.call("rev-parse", "--symbolic-full-name", f"{branch}@{{upstream}}")
    return code == 0 and out.startswith(b"refs/remotes/")


# A hook lands its move for the agent's sake, never in its way: a few quick tries, then the
# commit stays here for the agent's next `--push` (or `gitstate sync`) to land.
HOOK_ATTEMPTS, HOOK_SECONDS = 3, 10.0


def land_measurement(repo, agent: str, move) -> str:
    """Commit `move()` and land it on the hub as `--push` does (with the moves the branch
    holds that the hub has not got; never when it holds work of the agent's that landing would
    make again), best effort: what the agent is told. A move refused here is refused as
    without a hub; whatever else goes wrong leaves the commit here."""
    from gitstate.git.push import PushPolicy
    from gitstate.moves.chain import land_move
    made = []

    def once():
        made.append(move())
        return made[-1]
    try:
        landing, result = land_move(repo, agent, once, PushPolicy(HOOK_ATTEMPTS, HOOK_SECONDS),
                                    with_work=False)   # the agent's own commits stay as they are
    except Exception as exc:  # noqa: BLE001 — landing is best effort
        if not made:
            raise   # not committed: the move's own refusal, as without a hub
        return (f" Recorded as {made[-1].sha[:10]} by gitstate, not landed ({exc}): your next "
                "`--push` (or `gitstate sync`) lands it.")
    if landing.outcome == "landed":
        return f" Recorded as {(landing.commit or result.sha)[:10]} by gitstate, landed on " \
               f"{landing.upstream}."
    if landing.outcome == "illegal":
        return (f" Not recorded on {landing.upstream}: {landing.reason}; kept on branch "
                f"{landing.kept}.")
    why = (landing.reason or "").split("; ", 1)[0]
    return (f" Recorded as {result.sha[:10]} by gitstate, not landed on {landing.upstream} "
            f"yet ({why}): your next `--push` (or `gitstate sync`) lands it.")


def judge_spawn(cwd: str | None, parent: str, kind: str) -> tuple[str | None, int]:
    """(why the spawn is refused or None, the child's depth): the child as `gitstate spawn
    CHILD --parent PARENT --role KIND` would write it, judged at HEAD."""
    repo, head, lc, data = _committed(cwd, parent)
    if data is None:
        return None, 1
    front = statefile.parse_bytes(data, lc.state_path(parent)).front
    depth = front.get("depth")
    depth = (depth if isinstance(depth, int) and not isinstance(depth, bool) else 0) + 1
    child = _unused_id(repo, lc, head, f"{parent}-sub")
    found = _birth_verdicts(repo, head, lc, child, kind, parent, depth)
    if not found:
        return None, depth
    return " ".join(_sentence(v.rule, v.message, parent, child) for v in found), depth


def _birth_verdicts(repo, head, lc, child: str, kind: str, parent: str, depth: int) -> list:
    """The verdicts of SPAWN_RULES on the commit that would register `child`."""
    path = lc.state_path(child)
    new = (f"---\nagent: {child}\nstate: {lc.initial}\nrole: {kind}\nparent: {parent}\n"
           f"depth: {depth}\n---\n").encode()
    # the runtime names the kind itself: a kind the lifecycle does not declare is a new role
    # said explicitly (`New-role:`), taken where custom roles are allowed
    message = f"@{child}: [STATE:{lc.initial}] spawned as {kind} by {parent}" + (
        f"\n\nNew-role: {kind}\n" if kind not in lc.roles else "")
    context = GitContext(repo.git, head, tree=head, overrides={path: new}, lc=lc)
    return [v for v in judge(Facts(lc, [FileChange(path, None, new)],
                                   message=parse_message(message), context=context))
            if v.rule in SPAWN_RULES]


def _sentence(rule: str, message: str, parent: str, child: str) -> str:
    """One rule's refusal as one sentence about the sub-agent: the rule's reason, without the
    way out the command line offers (it speaks of `gitstate spawn`, not of a sub-agent) and
    without the id the guard made up for the child."""
    text = message.split(". ", 1)[0].rstrip(".")
    text = text.replace(f" ({parent} spawning {child})", "").replace(child, "the sub-agent")
    return f"[{rule}] {text[:1].upper()}{text[1:]}."


def _unused_id(repo, lc, head, base: str) -> str:
    """`BASE-N` for the first N whose state file is not committed (asked of git for a few
    candidates at once, not by listing every agent)."""
    n = 1
    while head:
        names = [f"{base}-{i}" for i in range(n, n + 8)]
        found = repo.git.cat_files([f"{head}:{lc.state_path(c)}" for c in names])
        free = next((c for c, data in zip(names, found) if data is None), None)
        if free:
            return free
        n += 8
    return f"{base}-{n}"
