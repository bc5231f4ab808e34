"""`gitstate serve` in a clone whose branch tracks a hub: the viewer follows the hub.

A lead's clone changes only when they pull; the hub's team line changes with every landing.
So, when the team line's branch (or else the current branch) has an upstream on another
repository, the server fetches that branch every two seconds into its remote-tracking ref
(`git fetch --no-tags REMOTE +refs/heads/X:refs/remotes/REMOTE/X`: never the local branch,
the index or the work tree) and the pages read that ref where they would read HEAD. A bare hub
served with `-C` reads its own HEAD, the line, and fetches nothing.
"""

from __future__ import annotations

import threading

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed, team_branch
from gitstate.git.runner import Git
from gitstate.git.upstream import Upstream
from gitstate.law.lifecycle import Lifecycle

EVERY = 2.0     # seconds between two fetches


def hub_upstream(repo: Managed) -> Upstream | None:
    """The upstream the viewer follows: that of the team line's branch, else that of the
    current branch, when it is a branch of another repository (not `.`, this one); None in a
    bare repository or where neither has one."""
    if repo.top is None:
        return None
    git, team = repo.git, _team_of(repo)
    code, out, _ = git.call("symbolic-ref", "-q", "--short", "HEAD")
    current = out.decode("utf-8", "replace").strip() if code == 0 else None
    found = (_upstream_of(git, b) for b in dict.fromkeys((team, current)) if b)
    return next((up for up in found if up is not None), None)


def _team_of(repo: Managed) -> str | None:
    try:
        return team_branch(repo.git, repo.lifecycle())
    except GitstateError:
        return None


def _upstream_of(git: Git, short: str) -> Upstream | None:
    """Branch `short`'s upstream, when it is a branch of another repository."""
    remote = git.config(f"branch.{short}.remote")
    merge = git.config(f"branch.{short}.merge") or ""
    if not remote or remote == "." or not merge.startswith("refs/heads/") \
            or git.config(f"remote.{remote}.url") is None:
        return None
    return Upstream(remote, merge, f"refs/remotes/{remote}/{merge[len('refs/heads/'):]}",
                    f"refs/heads/{short}")


def where(git: Git, up: Upstream) -> str:
    """What the viewer follows, in words: `origin/main on /srv/team.git`."""
    return f"{up.name} on {git.config(f'remote.{up.remote}.url')}"


def fetch(git: Git, up: Upstream) -> str | None:
    """One fetch of the hub's branch into its remote-tracking ref; None when it worked, else
    what git said. It asks for no password or passphrase (a server has no one to ask: ssh in
    batch mode, unless an ssh command of the user's is set) and starts no maintenance."""
    import os
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    if not os.environ.get("GIT_SSH_COMMAND") and git.config("core.sshCommand") is None:
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    code, _, err = git.call("-c", "maintenance.auto=false", "-c", "gc.auto=0", "fetch",
                            "--quiet", "--no-tags", "--no-write-fetch-head", up.remote,
                            f"+{up.ref}:{up.tracking}", env=env)
    return None if code == 0 else _git_said(code, err)


def _git_said(code: int, err: bytes) -> str:
    """What a failed git command said first, in a line: its error, else its first line."""
    said = [line.strip() for line in err.decode("utf-8", "replace").splitlines()
            if line.strip()]
    first = next((line for line in said if line.startswith(("fatal:", "error:"))),
                 said[0] if said else f"git fetch exited with {code}")
    return first.removeprefix("fatal: ").removeprefix("error: ")


class FollowingGit(Git):
    """git in the clone, where HEAD (and the branch that tracks the hub) is read as the hub's
    branch as last fetched: `HEAD`, `HEAD~3`, `main` name the remote-tracking ref's commits."""

    def __init__(self, git: Git, up: Upstream):
        super().__init__(git.cwd, git.env)
        self.up = up
        self._local = {up.branch, up.branch.removeprefix("refs/heads/")}

    def rev(self, rev: str) -> str | None:
        if rev == "HEAD" or rev.startswith(("HEAD~", "HEAD^")):
            rev = self.up.tracking + rev[4:]
        elif rev in self._local:
            rev = self.up.tracking
        return super().rev(rev)


class Following(Managed):
    """The clone read at its hub's branch (`FollowingGit`), its law included."""

    def __init__(self, repo: Managed, up: Upstream):
        super().__init__(FollowingGit(repo.git, up), repo.top, repo.cache_dir)
        self.upstream = up

    def head(self) -> str | None:
        """The hub's branch as last fetched (what the views read here)."""
        return self.git.head()

    def lifecycle(self, rev: str | None = "HEAD", *, index: bool = True,
                  worktree: bool = True) -> Lifecycle:
        if rev == "HEAD":
            rev = self.git.head()
        return super().lifecycle(rev, index=index, worktree=worktree)


class Follower:
    """Fetches the hub's branch every `every` seconds in a thread until stopped; says (with
    `echo`) when fetching stops working, and when it works again."""

    def __init__(self, git: Git, up: Upstream, *, every: float = EVERY, echo=print):
        self.git, self.up, self.every, self.echo = git, up, every, echo
        self.failing: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def step(self) -> bool:
        """One fetch; True when it worked."""
        error = fetch(self.git, self.up)
        self.note(error)
        return error is None

    def note(self, error: str | None) -> None:
        """How a fetch went (None: it worked), said when that changes."""
        if error and not self.failing:
            self.echo(f"gitstate: warning: cannot fetch {self.up.name} ({error}); the pages "
                      "show it as last fetched, and fetching goes on")
        elif not error and self.failing:
            self.echo(f"gitstate: fetching {self.up.name} works again")
        self.failing = error

    def start(self) -> None:
        def run() -> None:
            while not self._stop.wait(self.every):
                try:
                    self.step()
                except (GitstateError, OSError) as exc:   # never the server's end
                    self.failing = str(exc)
        self._thread = threading.Thread(target=run, name="gitstate-follow", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.every + 30)


def follow(repo: Managed, *, echo=print) -> tuple[Managed, Follower | None, str | None]:
    """(the repository the pages read, the follower to start, what it follows in words):
    the clone read at its hub's branch, fetched once now; the clone as it is where it tracks
    no hub, or where the hub's branch could never be fetched (said with `echo`)."""
    up = hub_upstream(repo)
    if up is None:
        return repo, None, None
    follower = Follower(repo.git, up, echo=echo)
    error = fetch(repo.git, up)
    if error is not None and repo.git.rev(up.tracking) is None:
        echo(f"gitstate: warning: cannot fetch {up.name} ({error}), and it was never "
             f"fetched, so the pages show this clone's {up.branch.removeprefix('refs/heads/')} "
             f"(`git fetch {up.remote}`, then serve again, follows the hub)")
        return repo, None, None
    follower.note(error)
    return Following(repo, up), follower, where(repo.git, up)
