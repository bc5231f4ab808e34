"""How the doors and the command line print what verify found."""

from __future__ import annotations


def print_by_commit(bad: list[tuple[str, dict]], file) -> None:
    """(ref, problem) pairs as the doors print them: each commit once, its problems below."""
    shown = None
    for ref, p in bad:
        if p["commit"] != shown:
            shown = p["commit"]
            if p["commit"]:
                print(f"  {p['commit'][:10]} ({ref}) {p['subject'][:72]}", file=file)
        where = f"{p['where']}: " if p.get("where") else ""
        print(f"    [{p['rule']}] {where}{p['message']}", file=file)


def describe_problem(p: dict) -> str:
    where = f"{p['where']}: " if p.get("where") else ""
    return f"{p['commit'][:10]} [{p['rule']}] {where}{p['message']}  ({p['subject'][:60]})"
