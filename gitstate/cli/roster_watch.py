"""`gitstate roster --watch`: the roster redrawn whenever the team line moves, trouble first
(the viewer's "Needs attention", from gitstate/web/trouble.py, with who waits for a person:
gitstate/runtime/attention.py), for a lead who lives in a terminal and for a program that
reads a line per change.

The line is polled, not read: one `git rev-parse` a second of the commit the views read (the
same answer `roster` gives), and the roster is read again only when that commit changes, or
when the clock alone puts an agent in trouble or takes it out (silent past the heartbeat, past
a timeout), or its runtime says it waits for a person. On a terminal each roster replaces the
last (the screen is cleared); elsewhere (a pipe, an agent's Bash) each is printed once, ended
by a blank line; with `--json`, each is one line of JSON (JSON Lines), the object `roster
--json` prints. In a clone whose branch tracks a hub, the hub's branch is watched, fetched
every two seconds, as `serve` follows it (gitstate/web/follow.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import click

from gitstate.errors import GitstateError
from gitstate.git.repo import Managed
from gitstate.history import views

CLEAR = "\033[H\033[2J"    # cursor home, erase the screen
EVERY = 1.0                # seconds between two looks at the line


def tip(repo: Managed) -> str | None:
    """The commit the views read now (what `roster` without `--at` shows)."""
    return views.resolve_at(repo, None)[0]


_laws: dict = {}    # the law of the roster drawn last, by its commit


def troubles(repo: Managed, view: dict, now: int) -> list[tuple[str, list[tuple[str, str]]]]:
    """(agent, [(kind, words)]) of every agent of `view` in trouble as of `now`, the worst
    first: the viewer's "Needs attention"."""
    from gitstate.web.pages import GROUPS, flagged_agents
    from gitstate.web.trouble import worst
    if view.get("commit") is None:
        return []
    lc = _laws.get(view["commit"])
    if lc is None:     # read once per roster drawn, not once a second
        _laws.clear()
        lc = _laws[view["commit"]] = repo.lifecycle(view["commit"], index=False,
                                                    worktree=False)
    from gitstate.runtime.attention import waits_of
    records = [r for key, _, _ in GROUPS for r in view.get(key, [])]
    waits = waits_of(repo, records, view["commit"], now)   # no git: the runtime's notes
    found = flagged_agents(view, GROUPS, lc, now, waits)
    return sorted(found.items(), key=lambda x: (-worst(x[1]), x[0]))


def _kinds(found: list[tuple[str, list[tuple[str, str]]]]) -> set[tuple[str, str]]:
    """What a redraw would change: who is in which kind of trouble (not the words, whose
    durations grow every second)."""
    return {(agent, kind) for agent, kinds in found for kind, _ in kinds}


def draw(view: dict, found: list, *, as_json: bool, tty: bool,
         follows: str | None = None) -> None:
    from gitstate.cli.text import print_roster
    if as_json:
        from gitstate.cli.app import emit_line
        emit_line("roster", view)
    else:
        if tty:
            click.echo(CLEAR, nl=False)
        _print_heading(view, found, tty, follows)
        print_roster(view)
        if not tty:
            click.echo("")
    sys.stdout.flush()


def _print_heading(view: dict, found: list, tty: bool, follows: str | None) -> None:
    """Which roster this is, as of when, and who needs attention."""
    from gitstate.law.times import iso
    sha = (view.get("commit") or "none")[:10]
    click.echo(f"roster at {sha} (lifecycle {view.get('lifecycle')}) as of "
               f"{iso(int(time.time()))}" + (f", following {follows}" if follows else "")
               + ("; Ctrl-C stops" if tty else ""))
    if found:
        click.echo(f"Needs attention ({len(found)})")
    for agent, kinds in found:
        click.echo(f"  {agent}: {'; '.join(words for _, words in kinds)}")


def watch(repo: Managed, *, as_json: bool, count: int | None = None,
          every: float = EVERY, follow: bool = True) -> int:
    """Draw the roster, then again each time the line moves (or trouble comes or goes with
    the clock); after `count` drawings, or at Ctrl-C, stop with 0. `follow`: in a clone of a
    hub, watch the hub's branch, fetched every two seconds."""
    tty = sys.stdout.isatty() and not as_json
    try:
        follower, follows = None, None
        if follow:
            from gitstate.web.follow import follow as following
            repo, follower, follows = following(repo, echo=lambda line: click.echo(line,
                                                                                  err=True))
        _redraws(repo, follower, count, every, lambda view, found: draw(
            view, found, as_json=as_json, tty=tty, follows=follows))
    except KeyboardInterrupt:
        if tty:
            click.echo("")
    return 0


def _redraws(repo: Managed, follower, count: int | None, every: float,
             drawing: Callable[[dict, list], None]) -> None:
    """Draw the roster each time the line moves or trouble comes or goes, `count` times (or
    for ever); `follower` fetched when it is due."""
    drawn, shown, seen = 0, None, set()
    view: dict = {}
    fetched = time.monotonic()
    while True:
        fetched = _fetched(follower, fetched)
        now_tip = tip(repo)
        if shown is None or now_tip != shown \
                or _kinds(troubles(repo, view, int(time.time()))) != seen:
            read = _roster(repo, drawn)
            if read is None:
                shown = now_tip
            else:
                view, found = read, troubles(repo, read, int(time.time()))
                drawing(view, found)
                drawn, shown, seen = drawn + 1, view["commit"], _kinds(found)
                if count is not None and drawn >= count:
                    return
        time.sleep(every)


def _fetched(follower, fetched: float) -> float:
    """When `follower` last fetched: now, if it was due and has."""
    if follower is None or time.monotonic() - fetched < follower.every:
        return fetched
    follower.step()
    return time.monotonic()


def _roster(repo: Managed, drawn: int) -> dict | None:
    """The roster now; None when it cannot be read after a first drawing (said, and watched
    on)."""
    try:
        return views.roster(repo, None)
    except GitstateError as exc:
        if drawn == 0:
            raise
        click.echo(f"gitstate: {exc} (still watching)", err=True)
        return None
