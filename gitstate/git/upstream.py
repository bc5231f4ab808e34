"""How a branch stands against its upstream as of the last fetch: what the read views note on
stderr when this clone is behind (or holds commits the upstream has not got).

One `git for-each-ref` answers it, from the remote-tracking ref alone (no network): the
branch, its upstream and git's own count of the commits each has that the other has not. A
branch with no upstream, or whose upstream is another local branch, costs that one call and
counts nothing.
"""

from __future__ import annotations

from gitstate.git.runner import Git

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
        if len(fields) != 5:
            continue
        current, name, upstream, short, track = fields
        if (current != "*") if ref == "HEAD" else (name != ref):
            continue
        if not upstream.startswith("refs/remotes/"):
            return None
        counts = {}
        for part in track.split(","):   # "ahead 2, behind 3", "behind 3", "gone", ""
            words = part.split()
            if len(words) == 2 and words[1].isdigit():
                counts[words[0]] = int(words[1])
        ahead, behind = counts.get("ahead", 0), counts.get("behind", 0)
        return (short, ahead, behind) if ahead or behind else None
    return None
