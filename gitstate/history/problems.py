"""How the doors and the command line print what verify found.

One commit can break one rule many times (a commit spawning 10,000 agents breaks the pool cap
once per agent): each commit's problems are printed with at most `SHOWN` of each rule, and one
line counting the rest. `verify --json` keeps every problem.
"""

from __future__ import annotations

SHOWN = 5   # problems of one rule printed per commit before the rest are counted


class More:
    """Stands, in a folded list, for the problems of `rule` that are not printed."""

    __slots__ = ("rule", "count")

    def __init__(self, rule: str, count: int):
        self.rule, self.count = rule, count

    def __str__(self) -> str:
        """`... and 9,995 more [max-living] problems in this commit`."""
        return (f"... and {self.count:,} more [{self.rule}] "
                f"problem{'s' if self.count != 1 else ''} in this commit")


def folded(problems: list, rule_of=lambda p: p["rule"]) -> list:
    """The problems of one commit as they are printed, in their order: the first `SHOWN` of
    each rule, then a `More` counting the rest of that rule (a rule with at most one more than
    `SHOWN` is printed whole: a line saying "1 more" would not be shorter)."""
    from collections import Counter
    counts = Counter(rule_of(p) for p in problems)
    seen: dict[str, int] = {}
    out: list = []
    for p in problems:
        rule = rule_of(p)
        seen[rule] = n = seen.get(rule, 0) + 1
        if counts[rule] <= SHOWN + 1 or n <= SHOWN:
            out.append(p)
            if n == SHOWN and counts[rule] > SHOWN + 1:
                out.append(More(rule, counts[rule] - SHOWN))
    return out


def by_commit(items: list, commit_of) -> list[list]:
    """`items` cut into runs of the same commit, in their order."""
    runs: list[list] = []
    last = object()
    for item in items:
        commit = commit_of(item)
        if not runs or commit != last:
            runs.append([])
            last = commit
        runs[-1].append(item)
    return runs


def print_by_commit(bad: list[tuple[str, dict]], file) -> None:
    """(ref, problem) pairs as the doors print them: each commit once, its problems below,
    at most `SHOWN` of each rule and a line counting the rest."""
    for run in by_commit(bad, lambda b: b[1]["commit"]):
        ref, first = run[0]
        if first["commit"]:
            print(f"  {first['commit'][:10]} ({ref}) {first['subject'][:72]}", file=file)
        for item in folded(run, lambda b: b[1]["rule"]):
            if isinstance(item, More):
                print(f"    {item}", file=file)
                continue
            p = item[1]
            print(f"    [{p['rule']}] {_where(p)}{p['message']}", file=file)


def describe_lines(problems: list[dict]) -> list[str]:
    """verify's text: one line per problem (`describe_problem`), at most `SHOWN` of each rule
    per commit and a line counting the rest."""
    lines = []
    for run in by_commit(problems, lambda p: p["commit"]):
        lines += [f"{run[0]['commit'][:10]} {p} (`--json` lists every one)"
                  if isinstance(p, More) else describe_problem(p) for p in folded(run)]
    return lines


def describe_problem(p: dict) -> str:
    return f"{p['commit'][:10]} [{p['rule']}] {_where(p)}{p['message']}  ({p['subject'][:60]})"


def _where(p: dict) -> str:
    return f"{p['where']}: " if p.get("where") else ""
