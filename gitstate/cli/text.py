"""Text for people: the layouts of status, the roster and a move."""

from __future__ import annotations

import click

from gitstate.law.times import duration


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def print_move(record: dict, says: str | None = None) -> None:
    """One line for a move that landed here (`says` replaces `from -> to` for a move that
    keeps the state, e.g. a hand-over), and what its mortality phase asks."""
    frm = f"{record['from']} -> " if record["from"] else ""
    move = f"{says}, stays {record['to']}" if says else f"{frm}{record['to']}"
    click.echo(f"{record['agent']}: {move}  ({record['commit'][:10]})")
    if record.get("advice"):
        click.echo(f"  mortality: {record['advice']}")
    if record["also_committed"]:
        click.echo(f"  also committed: {also_committed(record['also_committed'])}")


def print_landing(record: dict) -> None:
    """How a move made with `--push` landed (one of three outcomes): on stdout where it
    landed, on stderr why not and what is left."""
    up = record["upstream"]
    if record["outcome"] == "landed":
        frm = f"{record['from']} -> " if record["from"] else ""
        click.echo(f"{record['agent']}: {frm}{record['to']}  ({record['commit'][:10]}) landed "
                   f"on {up}" + (f" after {plural(record['attempts'], 'attempt')}"
                                 if record["attempts"] > 1 else ""))
        if record.get("reason"):   # landed, but this branch could not follow
            click.echo(f"  {record['reason']}", err=True)
    elif record["outcome"] == "illegal":
        click.echo(f"gitstate: the move did not land on {up}: {record['reason']}", err=True)
        click.echo(f"  your branch is in step with {up}; the unlanded commit is kept on branch "
                   f"{record['kept']}" + (f", and its work is staged "
                                          f"({', '.join(record['staged'])})"
                                          if record["staged"] else "")
                   + ": `gitstate sync` lands it once it is legal again", err=True)
    else:
        click.echo(f"gitstate: gave up landing the move: {record['reason']}", err=True)


def also_committed(paths: list[str], shown: int = 8) -> str:
    """"src/a.py, protocols/lifecycle.yaml (a change of the law)", shortened past `shown`."""
    from gitstate.law.lifecycle import is_law_path
    named = [f"{p} (a change of the law)" if is_law_path(p) else p for p in paths[:shown]]
    more = f", and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(named) + more


def print_status(r: dict, detailed: bool) -> None:
    if r['problem'] and r['state'] is None:
        click.echo(f"{r['agent']}: unreadable state file: {r['problem']}")
        return
    bits = [f"{r['agent']}: {r['state']} ({r['roster']})"]
    if r['role']:
        bits.append(f"role {r['role']}")
    if r['context_pct'] is not None:
        bits.append(f"context {r['context_pct']:g}% {r['phase']}")
    click.echo("  ".join(bits))
    if detailed:
        if r['thread']:
            click.echo(f"  thread: {r['thread']}")
        if r['summary']:
            click.echo(f"  summary: {r['summary']}")
        click.echo(f"  next: {', '.join(r['next']) if r['next'] else 'nothing (terminal)'}")
    if r['advice'] and r['roster'] == "living":   # a crossed threshold is said wherever status is
        click.echo(f"  mortality: {r['advice']}")
    if r['problem']:
        click.echo(f"  problem: {r['problem']}")


ROSTER_GROUPS = (("living", "living"), ("freezer", "freezer"), ("cemetery", "cemetery"),
                 ("unknown", "unreadable"))


def print_roster(view: dict) -> None:
    everyone = [r for key, _ in ROSTER_GROUPS for r in view.get(key) or []]
    width = max((len(r["agent"]) for r in everyone), default=0)
    # state files in another format (an adopted history): said once, not once per agent
    foreign = [r for r in everyone if (r.get("problem") or "").startswith("[unreadable]")]
    foreign = foreign if len(foreign) > 1 else []
    for key, title in ROSTER_GROUPS:
        rows = view.get(key) or []
        if not rows:
            continue
        click.echo(f"{title} ({len(rows)})")
        for r in rows:
            bits = [f"  {r['agent']:<{width}}  {r['state'] or '?':<10}"]
            if r.get("role"):
                bits.append(f"{r['role']} #{r.get('instance', 1)}")
            if r.get("context_pct") is not None:
                bits.append(f"{r['context_pct']:g}% {r['phase']}")
            if key == "living" and r.get("thread"):
                bits.append(f"thread {r['thread']}")
            if r.get("task"):
                bits.append(f"task \"{r['task']}\"")
            if r.get("started"):
                bits.append(f"{r['started']} .. {r.get('ended') or 'now'}")
            if r.get("seconds_in_state") is not None:
                bits.append(f"{duration(r['seconds_in_state'])} in state")
            if r.get("freeze_state"):
                bits.append(f"freeze-state {r['freeze_state']}")
            if r.get("final_summary"):
                bits.append(f"\"{r['final_summary']}\"")
            if r in foreign:
                bits.append("state from its last tag")
            elif r.get("problem"):
                bits.append(f"problem: {r['problem']}")
            click.echo("  ".join(bits))
    if foreign:
        paths = ", ".join(r["path"] for r in foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        click.echo(f"note: {len(foreign)} state files ({paths}) are not in gitstate's format "
                   "(YAML front matter between '---' lines); each agent's state is read from "
                   "its last tagged commit instead, and its other fields are unknown. "
                   "`gitstate roster --json` has each file's problem.")
    if not everyone:
        click.echo("no agents yet: `gitstate spawn <id>` registers one")
