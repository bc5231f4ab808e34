"""`gitstate worktree add|remove`: an agent in its own worktree in one step, and ended in one.

`add` spawns the agent on the team line (bound to a new runtime session id), then makes a
worktree on a branch of the agent's name at the line's new tip, tracking the team line (its
hub's copy in a clone), and says the command that starts the runtime there. `remove` refuses a
worktree that holds uncommitted work, ends the agent as the lifecycle ends one (`bury`), and
removes the worktree; the branch stays, with its work, until it is merged or deleted.
"""

from __future__ import annotations

import shlex
import uuid
from pathlib import Path

from gitstate.errors import GitstateError, UsageError
from gitstate.git.repo import Managed
from gitstate.law.grammar import canonical_id, is_branch_name
from gitstate.moves import commands
from gitstate.moves.fields import first_few


class Starter:
    """How a runtime is started bound to an agent (from `gitstate.runtime.registry`, which
    the command line passes down): its `name` and `title`, the `start` command ({agent},
    {session}), and the `settings` a worktree needs committed, the first naming gitstate."""

    __slots__ = ("name", "title", "start", "settings")

    def __init__(self, name: str, title: str, start: str, settings: tuple[str, ...]):
        self.name, self.title, self.start, self.settings = name, title, start, settings


def add(repo: Managed, agent: str, *, role: str | None = None, runtime: Starter | None = None,
        path: str | None = None, task: str | None = None, push: bool = False) -> dict:
    """Spawn `agent` bound to a new session, and make its worktree; the record says where and
    how to start it (the model WorktreeAdded)."""
    git, top = repo.git, repo.work_tree
    agent = canonical_id(agent)
    line = _line_branch(repo)
    where = Path(path).resolve() if path else top.parent / f"{top.name}-{agent}"
    _refuse_taken(repo, agent, where)
    session = str(uuid.uuid4())
    move = commands.spawn(repo, agent, role=role, session=session, task=task, push=push)
    if _not_landed(move):
        return {"agent": agent, "path": None, "branch": None, "upstream": None,
                "session": session, "move": move, "start": None, "note": None}
    tip = move["commit"]
    code, _, err = git.call("worktree", "add", "-q", "-b", agent, str(where), tip)
    if code != 0:
        raise GitstateError(f"{agent} is spawned ({tip[:10]}), but git could not make its "
                            f"worktree: {err.decode('utf-8', 'replace').strip()}",
                            hint=f"make it by hand: `git worktree add -b {agent} {where} "
                                 f"{line}`")
    upstream = _track(git, agent, line)
    note = _unset_note(git, tip, runtime) if runtime else None
    return {"agent": agent, "path": str(where), "branch": agent, "upstream": upstream,
            "session": session, "move": move,
            "start": start_command(where, agent, session, runtime), "note": note}


def start_command(where: Path, agent: str, session: str, runtime: Starter | None) -> str:
    """The command that starts the agent's runtime in its worktree, bound to it."""
    cd = f"cd {shlex.quote(str(where))}"
    if runtime is not None:
        return f"{cd} && " + runtime.start.format(agent=agent, session=session)
    return f"{cd} && GITSTATE_AGENT={agent} YOUR-AGENT-COMMAND"


def _unset_note(git, tip: str, runtime: Starter) -> str | None:
    """What to do first when the team line lacks the runtime's gitstate settings (None: it
    has them)."""
    if b"gitstate" in (git.cat_files([f"{tip}:{runtime.settings[0]}"])[0] or b""):
        return None
    paths = " ".join(dict.fromkeys(p.split("/")[0] for p in runtime.settings))
    return (f"the team line has no {runtime.title} settings of gitstate's, so the session "
            f"will not run gitstate's hooks there: `gitstate init --runtime {runtime.name}` "
            f"writes them; commit them (`git add {paths} && git commit -m '{runtime.title} "
            "runs gitstate'`) and every worktree made after has them")


def _line_branch(repo: Managed) -> str:
    lc = repo.lifecycle(repo.head())
    from gitstate.git.repo import team_branch
    line = team_branch(repo.git, lc)
    if not line or not repo.git.rev(f"refs/heads/{line}"):
        raise GitstateError("this repository has no team line here (the law declares none, "
                            "or its branch does not exist in this clone)",
                            hint="add `line: main` to protocols/lifecycle.yaml (approved), "
                                 "or fetch the team line's branch")
    return line


def _refuse_taken(repo: Managed, agent: str, where: Path) -> None:
    if not is_branch_name(agent):
        raise UsageError(f"'{agent}' cannot name a branch", hint="choose a plainer id")
    if repo.git.rev(f"refs/heads/{agent}"):
        raise GitstateError(f"a branch '{agent}' exists already; nothing was done",
                            hint=f"remove it (`git branch -d {agent}`) or choose another id")
    if where.exists():
        raise GitstateError(f"{where} exists already; nothing was done",
                            hint="choose another place with --path")


def _track(git, branch: str, line: str) -> str:
    """The agent's branch tracks the team line: its hub's copy where the line has one."""
    remote = git.config(f"branch.{line}.remote")
    merge = git.config(f"branch.{line}.merge")
    if remote and remote != "." and merge:
        target = f"{remote}/{merge.removeprefix('refs/heads/')}"
    else:
        target = line
    code, _, _ = git.call("branch", "-q", f"--set-upstream-to={target}", branch)
    return target if code == 0 else ""


def remove(repo: Managed, agent: str, *, summary: str | None = None,
           approved_by: str | None = None, push: bool = False) -> dict:
    """End `agent` as the lifecycle ends one and remove its worktree (the model
    WorktreeRemoved); refused, with nothing done, when the worktree holds uncommitted work."""
    git = repo.git
    agent = canonical_id(agent)
    where = _another_worktree(repo, agent)
    _refuse_uncommitted(where, agent)
    move = None
    if _living_or_frozen(repo, agent):
        move = commands.bury(repo, agent, summary or f"worktree {where.name} removed",
                             approved_by=approved_by, push=push)
        if _not_landed(move):
            return {"agent": agent, "path": str(where), "removed": False, "move": move,
                    "unmerged": None}
    code, _, err = git.call("worktree", "remove", str(where))
    if code != 0:
        raise GitstateError(f"git could not remove {where}: "
                            f"{err.decode('utf-8', 'replace').strip()}")
    line = _line_branch(repo)
    unmerged = int(git.text("rev-list", "--count", f"{line}..refs/heads/{agent}") or 0)
    return {"agent": agent, "path": str(where), "removed": True, "move": move,
            "unmerged": unmerged}


def _another_worktree(repo: Managed, agent: str) -> Path:
    """The worktree that has the agent's branch checked out; refused when there is none, or
    it is this one."""
    where = _worktree_of(repo.git, agent)
    if where is None:
        raise GitstateError(f"no worktree has the branch '{agent}' checked out; nothing was "
                            "done", hint="`git worktree list` shows them")
    if where.resolve() == (repo.top or Path()).resolve():
        raise GitstateError(f"{where} is this worktree; nothing was done",
                            hint="run it from another worktree (the lead's)")
    return where


def _refuse_uncommitted(where: Path, agent: str) -> None:
    dirty = _uncommitted(where)
    if dirty:
        raise GitstateError(f"{where} holds uncommitted work ({first_few(dirty, 5)}); nothing "
                            "was done", hint=f"commit it on branch {agent} (or stash it), then "
                                             "remove the worktree again")


def _not_landed(move: dict) -> bool:
    return bool(move.get("push")) and move["push"]["outcome"] != "landed"


def _worktree_of(git, branch: str) -> Path | None:
    out = git.run("worktree", "list", "--porcelain", "-z").decode("utf-8", "surrogateescape")
    for record in out.split("\0\0"):
        fields = dict(f.partition(" ")[::2] for f in record.split("\0") if f)
        if fields.get("branch") == f"refs/heads/{branch}" and fields.get("worktree"):
            return Path(fields["worktree"])
    return None


def _uncommitted(where: Path) -> list[str]:
    from gitstate.git.runner import Git
    out = Git(where).run("status", "--porcelain", "-z", "--untracked-files=all")
    return [entry[3:] for entry in out.decode("utf-8", "surrogateescape").split("\0")
            if len(entry) > 3 and entry[2] == " "]


def _living_or_frozen(repo: Managed, agent: str) -> bool:
    lc, _path, doc = repo.agent_doc(agent, repo.head())
    state = doc.state
    spec = lc.states.get(state) if isinstance(state, str) else None
    return spec is None or spec.roster != "dead"
