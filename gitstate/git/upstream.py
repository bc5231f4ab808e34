"""How a branch stands against its upstream: the upstream a move lands on (`--push`, `sync`),
and, as of the last fetch, what the read views note on stderr when this clone is behind (or
holds commits the upstream has not got).

One `git for-each-ref` answers it, from the remote-tracking ref alone (no network): the
branch, its upstream and git's own count of the commits each has that the other has not. A
branch with no upstream, or whose upstream is another local branch, costs that one call and
counts nothing.
"""

from __future__ import annotations

from gitstate.errors import GitstateError
from gitstate.git.runner import Git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

_FORMAT = "%(HEAD)%00%(refname)%00%(upstream)%00%(upstream:short)%00%(upstream:track,nobracket)"


def standing(git: Git, ref: str = "HEAD") -> tuple[str, int, int] | None:
    """(the upstream's short name, commits of the branch it has not got, commits it has that
    the branch has not) for the branch `ref` names (`HEAD`: the one checked out here), when
    that branch tracks a remote-tracking branch and the two differ; else None."""
    where = ["--points-at", "HEAD", "refs/heads/"] if ref == "HEAD" else [ref]
    code, out, _ = git.call("for-each-ref", f"--format={_FORMAT}", *where)
    if code != 0:
        return None
    for line in out.decode("utf-8", "replace").splitlines():
        fields = line.split("\0")
        if len(fields) == 5 and _is_branch(fields, ref):
            return _upstream_standing(fields)
    return None


def _is_branch(fields: list[str], ref: str) -> bool:
    return fields[0] == "*" if ref == "HEAD" else fields[1] == ref


def _upstream_standing(fields: list[str]) -> tuple[str, int, int] | None:
    _current, _name, upstream, short, track = fields
    if not upstream.startswith("refs/remotes/"):
        return None
    ahead, behind = _track(track)
    return (short, ahead, behind) if ahead or behind else None


def _track(track: str) -> tuple[int, int]:
    """(ahead, behind) of git's `%(upstream:track,nobracket)`: "ahead 2, behind 3",
    "behind 3", "gone", ""."""
    counts = {}
    for part in track.split(","):
        words = part.split()
        if len(words) == 2 and words[1].isdigit():
            counts[words[0]] = int(words[1])
    return counts.get("ahead", 0), counts.get("behind", 0)


# -- the upstream a move lands on (`--push`, `gitstate sync`) -------------------------------

class Upstream:
    """The hub's branch a move lands on, and where this clone tracks it."""
    __slots__ = ("remote", "ref", "tracking", "branch", "line")

    def __init__(self, remote: str, ref: str, tracking: str, branch: str,
                 line: bool = False) -> None:
        self.remote = remote
        self.ref = ref              # the branch on the hub, e.g. refs/heads/main
        self.tracking = tracking    # its remote-tracking ref here, e.g. refs/remotes/origin/main
        self.branch = branch        # the local branch, e.g. refs/heads/main
        self.line = line   # the team line seen from another branch: moves go onto it by ref

    @property
    def name(self) -> str:
        return self.tracking.removeprefix("refs/remotes/")


HUB_MARK_REF = "refs/gitstate/hub"      # a hub with a landing queue has this ref
PLAIN = "plain "   # (the memory's line of a hub that took a queued move as a ref of its own)


def hub_queues(git: Git, up: Upstream, *, ask: bool = False) -> bool:
    """Whether the hub keeps a landing queue: it says so itself, with `HUB_MARK_REF`. A hub
    that said so is remembered (`<git dir>/gitstate/queueing-hubs`, by its URL), so a move
    costs no extra talk with it; one that did not is asked again. `ask`: ask it now, and
    remember its answer (a move whose queued push was not answered as a queue's asks)."""
    if not ask:
        known, url = _remembered(git), _url(git, up)
        if up.remote in git.hubs_queueing or url in known:
            git.hubs_queueing.add(up.remote)
            return True
        if PLAIN + url in known:    # it wrote a queued move as a ref of its own
            return False
    # (the hub moves are pushed to: its push URL where the remote has one of its own)
    code, out, _ = git.call("ls-remote", git.config(f"remote.{up.remote}.pushurl") or up.remote,
                            HUB_MARK_REF)
    queueing = code == 0 and bool(out.strip())
    if queueing:
        git.hubs_queueing.add(up.remote)
    else:
        git.hubs_queueing.discard(up.remote)
    _remember(git, up, queueing)
    return queueing


def keeps_no_queue(git: Git, up: Upstream) -> None:
    """The hub at `up` wrote a queued move as a ref of its own: it keeps no queue, whatever
    `HUB_MARK_REF` says there (anyone who may push to a plain hub may push that ref). Its
    moves go to the branch from now on, with no question asked of it first."""
    git.hubs_queueing.discard(up.remote)
    _remember(git, up, False, plain=True)


def _memory(git: Git) -> Path:
    from gitstate.git.atomic import git_dir
    return git_dir(git) / "gitstate" / "queueing-hubs"


def _url(git: Git, up: Upstream) -> str:
    """The URL of the hub moves are pushed to."""
    return git.config(f"remote.{up.remote}.pushurl") or git.config(f"remote.{up.remote}.url") \
        or up.remote


def _remembered(git: Git) -> set[str]:
    try:
        with open(_memory(git), encoding="utf-8") as fh:
            return set(fh.read().splitlines())
    except (OSError, UnicodeDecodeError):
        return set()


def _remember(git: Git, up: Upstream, queueing: bool, *, plain: bool = False) -> None:
    """Keep (or forget) that the hub at `up`'s URL queues, or (`plain`) that it wrote a queued
    move as a ref of its own; written whole, then renamed."""
    known, url = _remembered(git), _url(git, up)
    if "\n" in url:
        return
    wanted = (known - {url, PLAIN + url}) | ({url} if queueing else set()) \
        | ({PLAIN + url} if plain else set())
    if wanted == known:
        return
    from gitstate.git.atomic import write_file
    known = wanted
    try:
        write_file(_memory(git), "".join(f"{u}\n" for u in sorted(known)).encode())
    except OSError:
        pass   # only a memory: the hub is asked again next time


def upstream_of(git: Git, line: str | None = None) -> Upstream:
    """The current branch's upstream (or, with `line`, the team line's: moves made in a
    worktree on another branch land there); a clear error (nothing done) when there is
    none."""
    branch = line or _head_branch(git)
    if not branch:
        raise GitstateError("--push needs a branch, but HEAD is detached; nothing was done",
                            hint="switch to a branch that tracks the hub (`git switch main`)")
    short = branch.removeprefix("refs/heads/")
    remote = git.config(f"branch.{short}.remote")
    ref = git.config(f"branch.{short}.merge")
    if not remote or not ref or remote == ".":
        raise GitstateError(f"--push needs an upstream for branch '{short}', and it has none; "
                            "nothing was done",
                            hint=f"`git branch --set-upstream-to=origin/main {short}`, or "
                                 "clone from the hub")
    tracking = git.text("rev-parse", "--symbolic-full-name", f"{short}@{{upstream}}",
                        check=False) or f"refs/remotes/{remote}/{ref.removeprefix('refs/heads/')}"
    return Upstream(remote, ref, tracking, branch, line=bool(line))


def _head_branch(git: Git) -> str:
    if git.head_read is not None:   # as the command read it, while it moved no ref
        named = git.head_read[1]
        return named if named.startswith("refs/") else ""
    code, out, _ = git.call("symbolic-ref", "-q", "HEAD")
    return out.decode().strip() if code == 0 else ""


def local_upstream(git: Git, line: str) -> bool:
    """Whether the team line `line` (a ref) lands nowhere beyond this repository: it has no
    upstream, or a local one."""
    remote = git.config(f"branch.{line.removeprefix('refs/heads/')}.remote")
    return not remote or remote == "."


def ahead_of(git: Git, up: Upstream) -> int:
    """How many commits the branch holds that its upstream (as last fetched) has not got."""
    tip = up.branch if up.line else "HEAD"
    code, out, _ = git.call("rev-list", "--count", f"{up.tracking}..{tip}")
    if code == 0:   # (one process where the upstream was fetched: the usual case)
        return int(out.decode().strip() or 0)
    if not git.rev(up.tracking):
        return 0
    return int(git.text("rev-list", "--count", f"{up.tracking}..{tip}") or 0)


def check_in_step(git: Git, up: Upstream) -> None:
    """Refuse before committing when the branch holds commits the hub has not got: `land`
    replays only the move itself, and must never drop someone's earlier commits (a chain of
    them is landed by `moves.chain.land_chain`)."""
    ahead = ahead_of(git, up)
    if ahead:
        raise GitstateError(f"{up.branch.removeprefix('refs/heads/')} has {ahead} commit(s) "
                            f"that {up.name} has not got; this landing takes one move, "
                            "so nothing was done",
                            hint="land them first (`gitstate sync`), then move again with "
                                 "--push")


def hub_upstream(git: Git, line: str | None = None) -> bool:
    """Whether the current branch's upstream (or, with `line`, the team line's) is a remote's
    branch (a hub), not a local one."""
    branch = line.removeprefix("refs/heads/") if line else ""
    code, out, _ = git.call("rev-parse", "--symbolic-full-name", f"{branch}@{{upstream}}")
    return code == 0 and out.startswith(b"refs/remotes/")
