"""Text for people: the layouts of status, the roster and a move."""

from __future__ import annotations

import click

from gitstate.law.times import duration


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def print_move(result, as_json: bool, extra: dict | None = None,
               command: str = "transition", says: str | None = None) -> None:
    """One line for a landed move (`says` replaces `from -> to` for a move that keeps the
    state, e.g. a hand-over), or its JSON record."""
    from gitstate.cli.app import emit
    info = result.plan.info
    if getattr(result, "detached", False):
        click.echo(f"gitstate: warning: detached HEAD: {result.sha[:10]} is on no branch; "
                   "`git switch -c NAME` keeps it", err=True)
    advice = phase_advice(info)
    if as_json:
        emit(command, {"commit": result.sha, "agent": info["agent"], "from": info["from"],
                       "to": info["to"], "path": info["path"],
                       "subject": result.plan.message.split("\n", 1)[0],
                       **({"advice": advice} if advice else {}),
                       "also_committed": list(getattr(result, "also", [])), **(extra or {})})
    else:
        frm = f"{info['from']} -> " if info["from"] else ""
        move = f"{says}, stays {info['to']}" if says else f"{frm}{info['to']}"
        click.echo(f"{info['agent']}: {move}  ({result.sha[:10]})")
        if advice:
            click.echo(f"  mortality: {advice}")
        also = getattr(result, "also", [])
        if also:
            click.echo(f"  also committed: {also_committed(also)}")


def also_committed(paths: list[str], shown: int = 8) -> str:
    """"src/a.py, protocols/lifecycle.yaml (a change of the law)", shortened past `shown`."""
    from gitstate.law.lifecycle import is_law_path
    named = [f"{p} (a change of the law)" if is_law_path(p) else p for p in paths[:shown]]
    more = f", and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(named) + more


def phase_advice(info: dict) -> str | None:
    """What the mortality phase asks, when this move crossed into a new one."""
    from gitstate.law.lifecycle import PHASE_ADVICE
    phase = info.get("phase_to")
    if phase is None or phase == info.get("phase_from"):
        return None
    return PHASE_ADVICE.get(phase)


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


def commit_move(repo, agent: str, move, *, push: bool, as_json: bool,
                extra: dict | None = None, command: str = "transition") -> int:
    """Run `move()` (one commit) and print it; with `push`, land it on the hub first and
    say which of the three outcomes it had (landed 0, illegal 1, gave up 1)."""
    from gitstate.cli.app import emit
    if not push:
        result = move()
        print_move(result, as_json, extra, command)
        return 0
    from gitstate.moves.landing import push_move
    landing = push_move(repo, agent, move)
    result = landing.result
    info = result.plan.info if result is not None else {}
    if as_json:
        emit("landing", {"outcome": landing.outcome, "attempts": landing.attempts,
                         "commit": landing.commit, "upstream": landing.upstream,
                         "reason": landing.reason, "kept": landing.kept,
                         "staged": landing.staged, "agent": info.get("agent"),
                         "from": info.get("from"), "to": info.get("to"),
                         "path": info.get("path"), **(extra or {})})
        return landing.exit_code
    if landing.outcome == "landed":
        frm = f"{info['from']} -> " if info.get("from") else ""
        click.echo(f"{info['agent']}: {frm}{info['to']}  ({landing.commit[:10]}) landed on "
                   f"{landing.upstream}" + (f" after {plural(landing.attempts, 'attempt')}"
                                            if landing.attempts > 1 else ""))
        return 0
    if landing.outcome == "illegal":
        click.echo(f"gitstate: the move did not land on {landing.upstream}: {landing.reason}",
                   err=True)
        click.echo(f"  your branch is in step with {landing.upstream}; the unlanded commit is "
                   f"kept on branch {landing.kept}"
                   + (f", and its work is staged ({', '.join(landing.staged)})"
                      if landing.staged else ""), err=True)
    else:
        click.echo(f"gitstate: gave up landing the move: {landing.reason}", err=True)
    return landing.exit_code
