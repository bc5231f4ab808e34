"""Where each move came from, along its own line of history.

Read in one order, the tagged commits of two merged lines interleave; the state an agent
left is the one it had on the line the move was made on, which is not always the commit
printed just before. Read from one `git log` of every commit's parents, each commit's view
of every agent's last move is carried to its children: taken over where a commit has one
child, copied only where history forks, so a linear history costs one pass and no copy.
"""

from __future__ import annotations

from gitstate.git.runner import Git


def moves_from(git: Git, head: str, events: dict[str, tuple[str, str]]
               ) -> dict[str, str | None]:
    """sha -> the state its agent had before it, on the commit's own line, for each tagged
    commit in `events` (sha -> (agent, state)). The graph is read whole (ids and parents
    only, which git serves from its commit-graph): limiting it to the state files' folder
    would make git compare trees for every commit, many times slower."""
    order = [(sha, parents.split()) for sha, parents in git.log_records(
        ["%H", "%P"], "--reverse", "--topo-order", head, "--")]
    pending: dict[str, int] = {}
    for _sha, parents in order:
        for p in parents:
            pending[p] = pending.get(p, 0) + 1
    views: dict[str, dict[str, tuple[str, int]]] = {}
    out: dict[str, str | None] = {}
    place = 0
    for sha, parents in order:
        view = _inherit(views, pending, parents)
        if sha in events:
            agent, state = events[sha]
            out[sha] = view[agent][0] if agent in view else None
            place += 1
            view[agent] = (state, place)
        if pending.get(sha):
            views[sha] = view
    return out


def _inherit(views: dict, pending: dict[str, int], parents: list[str]) -> dict:
    """A commit's view: its first parent's (taken if no other child needs it, else copied),
    with each agent's later move from the other parents."""
    view: dict = {}
    for i, p in enumerate(parents):
        pending[p] -= 1
        theirs = views.pop(p, {}) if pending[p] == 0 else views.get(p, {})
        if i == 0:
            view = theirs if pending[p] == 0 else dict(theirs)
            continue
        for agent, (state, place) in theirs.items():
            if agent not in view or view[agent][1] < place:
                view[agent] = (state, place)
    return view
