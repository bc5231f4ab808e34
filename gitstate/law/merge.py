"""Merges: an agent moves on one line of history (the README's "What gitstate promises").

In a merge, each agent's state file must be the version of the one parent that moved it since
the merge base, or unchanged if none did. Two parents that both moved one agent are refused
(`divergent`: rebase instead); a merge that writes any other version — an older one that revives
a dead agent, or one of its own — is refused (`merge-state`). What a merge takes from a parent
other than the first was judged on that parent's line; the rules about the whole society
(roles, pool, lineage) are judged again on the merged result by the caller.
"""

from __future__ import annotations

from gitstate.law.verdict import Violation
from gitstate.rule_ids import Rule

TYPE_CHECKING = False  # typing costs a hook ~3 ms to import (bench/README.md, "Hook latency")
if TYPE_CHECKING:
    from gitstate.law.lifecycle import Lifecycle

Versions = tuple  # (base blob or None, [each parent's blob or None], merged blob or None)


def judge_merge(lc: Lifecycle, versions: dict[str, Versions],
                parents: list[str]) -> tuple[list[Violation], list[str]]:
    """(violations, paths the merge takes from a parent other than the first).

    `versions` maps each state file path that any parent or the merge changed to the blob ids
    (or contents: anything comparable) at the merge base, at each parent, and in the merge.
    """
    rx = lc.state_path_regex()
    out: list[Violation] = []
    taken: list[str] = []
    for path in sorted(versions):
        m = rx.match(path)
        if m is None:
            continue
        base, ours, merged = versions[path]
        agent = m.group("id")
        movers = [i for i, v in enumerate(ours) if v != base]
        if len(movers) > 1:
            lines = ", ".join(parents[i][:10] for i in movers)
            out.append(Violation(Rule.DIVERGENT, f"{agent} moved on more than one line of history "
                                 f"(parents {lines}); an agent moves on one line: rebase one "
                                 "branch onto the other instead of merging", path))
            continue
        expected = ours[movers[0]] if movers else base
        if merged != expected:
            if movers:
                msg = (f"the merge must keep {agent}'s state file as {parents[movers[0]][:10]} "
                       "left it (the one parent that moved it), not another version")
            else:
                msg = (f"no parent moved {agent}, but the merge changes its state file; make "
                       "that change in a commit of its own")
            out.append(Violation(Rule.MERGE_STATE, msg, path))
        elif movers and movers[0] != 0:
            taken.append(path)
    return out, taken
