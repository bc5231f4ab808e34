"""Text for people: the layouts of every view (status, roster, vacancies, log, inbox,
situations, show) and of a move. No click here: the read commands' fast path
(`cli/fast.py`) prints with these same functions without loading it."""

from __future__ import annotations

import sys

from gitstate.law.times import duration, when


def echo(text: str = "", err: bool = False, nl: bool = True) -> None:
    """A line for a person (stderr with `err`), flushed as it is written."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + ("\n" if nl else ""))
    stream.flush()


def json_text(data) -> str:
    """A command's `--json` output, newline-ended: pretty for a person at a terminal, compact
    (and several times faster) for programs."""
    import json
    if sys.stdout.isatty():
        return json.dumps(data, indent=2, default=str) + "\n"
    return json.dumps(data, separators=(",", ":"), default=str) + "\n"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def print_move(record: dict, says: str | None = None) -> None:
    """One line for a move that landed here (`says` replaces `from -> to` for a move that
    keeps the state, e.g. a hand-over), and what its mortality phase asks."""
    frm = f"{record['from']} -> " if record["from"] else ""
    move = f"{says}, stays {record['to']}" if says else f"{frm}{record['to']}"
    on = f" on {record['line']}" if record.get("line") else ""
    echo(f"{record['agent']}: {move}  ({record['commit'][:10]}){on}")
    if record.get("advice"):
        echo(f"  mortality: {record['advice']}")
    if record["also_committed"]:
        echo(f"  also committed: {also_committed(record['also_committed'])}")


def print_landing(record: dict, says: str | None = None) -> None:
    """A move made with `--push` (one of three outcomes): landed, the move as a plain move
    prints it (naming the landed commit) and where it landed, on stdout; else, on stderr, why
    not and what is left."""
    landing = record["push"]
    up = landing["upstream"]
    earlier = landing.get("earlier") or []
    for e in earlier:   # what the branch held before the move: landed first, one by one
        _print_earlier(e, up)
    if landing["outcome"] == "landed":
        print_move(record, says)
        _print_landed(landing)
    elif landing["outcome"] == "illegal":
        _print_illegal(landing, any(e["outcome"] == "replayed" for e in earlier))
    else:
        echo(f"gitstate: gave up landing the move: {landing['reason']}", err=True)


def _print_earlier(e: dict, up: str) -> None:
    """A commit the branch held before the move: landed first, replayed here, or not."""
    line = f"{e['subject']}  ({(e['new'] or e['commit'])[:10]})"
    if e["outcome"] == "landed":
        echo(f"landed first on {up}: {line}")
    elif e["outcome"] == "replayed":
        echo(f"replayed here, not landed: {line}" + (f"\n  {e['reason']}"
                                                     if e["reason"] else ""))
    else:
        echo(f"gitstate: did not land ({e['outcome']}): {e['subject']}  "
             f"({e['commit'][:10]})\n  {e['reason']}" + _kept_on(e), err=True)


def _print_landed(landing: dict) -> None:
    """Where a move or a message landed, after how many attempts, and (on stderr) why this
    branch could not follow, if it could not."""
    echo(f"landed on {landing['upstream']}"
         + (f" after {plural(landing['attempts'], 'attempt')}" if landing["attempts"] > 1
            else ""))
    if landing.get("reason"):
        echo(f"  {landing['reason']}", err=True)


def _print_illegal(landing: dict, replayed: bool) -> None:
    """On stderr: why the move did not land, and where it is kept."""
    up = landing["upstream"]
    echo(f"gitstate: the move did not land on {up}: {landing['reason']}", err=True)
    where = f"your branch holds what landed on {up}, and what was replayed here" if replayed \
        else f"your branch is in step with {up}"
    staged = f", and its work is staged ({', '.join(landing['staged'])})" \
        if landing["staged"] else ""
    echo(f"  {where}; the unlanded commit is kept on branch {landing['kept']}{staged}"
         ": `gitstate sync` lands it once it is legal again", err=True)


def print_said(record: dict) -> None:
    """`say`: the subject as committed and the commit; with `--push`, where it landed, or (on
    stderr) why not."""
    landing = record.get("push")
    if landing is None or landing["outcome"] == "landed":
        echo(f"{record['subject']}  ({record['commit'][:10]})")
    if landing is None:
        return
    up = landing["upstream"]
    if landing["outcome"] == "landed":
        _print_landed(landing)
    elif landing["outcome"] == "illegal":
        echo(f"gitstate: the message did not land on {up}: {landing['reason']}; it is kept "
             f"on branch {landing['kept']}", err=True)
    else:
        echo(f"gitstate: gave up landing the message: {landing['reason']}", err=True)


def upstream_note(upstream: str, ahead: int, behind: int) -> str:
    """The line a view adds (on stderr) when this branch and its upstream differ, as of the
    last fetch."""
    they = "it" if behind == 1 else "them"
    if behind and ahead:
        return (f"note: {upstream} has {plural(behind, 'commit')} this clone has not got (as "
                f"of the last fetch), and {ahead} here {'is' if ahead == 1 else 'are'} not on "
                f"it: `gitstate sync` brings this branch in step and lands its moves")
    if behind:
        return (f"note: {upstream} has {plural(behind, 'commit')} this clone has not got (as "
                f"of the last fetch): `git pull` brings {they}")
    return (f"note: {plural(ahead, 'commit')} here {'has' if ahead == 1 else 'have'} not "
            f"landed on {upstream}: `gitstate sync` lands the moves among them")


def also_committed(paths: list[str], shown: int = 8) -> str:
    """"src/a.py, protocols/lifecycle.yaml (a change of the law)", shortened past `shown`."""
    from gitstate.law.lifecycle import is_law_path
    named = [f"{p} (a change of the law)" if is_law_path(p) else p for p in paths[:shown]]
    more = f", and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(named) + more


def print_status(r: dict, detailed: bool) -> None:
    if r['problem'] and r['state'] is None:
        echo(f"{r['agent']}: unreadable state file: {r['problem']}")
        return
    echo("  ".join(_status_bits(r)))
    if detailed:
        _print_status_details(r)
    if r['advice'] and r['roster'] == "living":   # a crossed threshold is said wherever status is
        echo(f"  mortality: {r['advice']}")
    if r['problem']:
        echo(f"  problem: {r['problem']}")


def _status_bits(r: dict) -> list[str]:
    bits = [f"{r['agent']}: {r['state']} ({r['roster']})"]
    if r['role']:
        bits.append(f"role {r['role']}")
    if r['context_pct'] is not None:
        bits.append(f"context {r['context_pct']:g}% {r['phase']}")
    return bits


def _print_status_details(r: dict) -> None:
    for key in ("thread", "summary"):
        if r[key]:
            echo(f"  {key}: {r[key]}")
    echo(f"  next: {', '.join(r['next']) if r['next'] else 'nothing (terminal)'}")
    if r.get("retry"):
        rt = r["retry"]
        echo(f"  retry: {' or '.join(rt['to'])} (retry {rt['retries'] + 1} of {rt['max']}), "
             f"{_retry_legal(rt['due_in'])}")


def _retry_legal(due: int | None) -> str:
    if due is None:
        return "legal once its backoff has passed"
    return "legal now" if due == 0 else f"legal in {duration(due, exact=True)}"


ROSTER_GROUPS = (("living", "living"), ("freezer", "freezer"), ("cemetery", "cemetery"),
                 ("unknown", "unreadable"))


def print_roster(view: dict) -> None:
    groups = [(key, title, view.get(key) or []) for key, title in ROSTER_GROUPS]
    everyone = [r for _, _, rows in groups for r in rows]
    columns = _roster_columns(everyone)
    for key, title, rows in groups:
        _print_roster_group(title, rows, key == "living", columns)
    if columns[2]:
        _note_foreign(columns[2])
    if not everyone:
        echo("no agents yet: `gitstate spawn <id>` registers one")


def _roster_columns(everyone: list[dict]) -> tuple[int, int, list[dict]]:
    return (max((len(r["agent"]) for r in everyone), default=0),
            max((len(_role(r)) for r in everyone), default=0), _foreign(everyone))


def _print_roster_group(title: str, rows: list[dict], living: bool, columns: tuple) -> None:
    """A roster group's title and its rows, in columns (agent and role as wide as their
    widest), the rows read from another format (an adopted history) said as such."""
    width, roles, foreign = columns
    if rows:
        echo(f"{title} ({len(rows)})")
    for r in rows:
        bits = [f"  {r['agent']:<{width}}  {r['state'] or '?':<10}",
                *_roster_who(r, living, roles), *_roster_when(r)]
        if r in foreign:
            bits.append("state from its last tag")
        elif r.get("problem"):
            bits.append(f"problem: {r['problem']}")
        echo("  ".join(bits).rstrip())


def _foreign(rows: list[dict]) -> list[dict]:
    """The state files in another format (an adopted history), when there are several: said
    once, not once per agent."""
    foreign = [r for r in rows if (r.get("problem") or "").startswith("[unreadable]")]
    return foreign if len(foreign) > 1 else []


def _note_foreign(foreign: list[dict]) -> None:
    paths = ", ".join(r["path"] for r in foreign[:3]) + (", ..." if len(foreign) > 3 else "")
    echo(f"note: {len(foreign)} state files ({paths}) are not in gitstate's format "
         "(YAML front matter between '---' lines); each agent's state is read from "
         "its last tagged commit instead, and its other fields are unknown. "
         "`gitstate roster --json` has each file's problem.")


def _role(r: dict) -> str:
    return f"{r['role']} #{r.get('instance', 1)}" if r.get("role") else ""


def _roster_who(r: dict, living: bool, width: int) -> list[str]:
    """A roster row's role (a column as wide as the widest, `-` for none, when any agent holds
    one), context, thread (of the living) and task."""
    bits = [f"{_role(r) or '-':<{width}}"] if width else []
    if r.get("context_pct") is not None:
        bits.append(f"{r['context_pct']:g}% {r['phase']}")
    if living and r.get("thread"):
        bits.append(f"thread {r['thread']}")
    if r.get("task"):
        bits.append(f"task \"{r['task']}\"")
    return bits


def _roster_when(r: dict) -> list[str]:
    """A roster row's span of life, time in its state, freeze-state and final summary."""
    bits = []
    if r.get("started"):
        bits.append(f"{r['started']} .. {r.get('ended') or 'now'}")
    if r.get("seconds_in_state") is not None:
        bits.append(f"{duration(r['seconds_in_state'])} in state")
    if r.get("freeze_state"):
        bits.append(f"freeze-state {r['freeze_state']}")
    if r.get("final_summary"):
        bits.append(f"\"{r['final_summary']}\"")
    return bits


def print_status_view(data: dict, agent: str | None) -> None:
    """`status` (of everyone, or of one agent in detail)."""
    if agent:
        print_status(data, detailed=True)
        return
    if not data["agents"]:
        echo("no agents yet: `gitstate spawn <id>` registers one")
    for r in data["agents"]:
        print_status(r, detailed=False)
    for w in data.get("warnings") or ():
        echo(f"warning: {w}")


def print_vacancies(view: dict) -> None:
    from gitstate.history.fold import vacancy_notice
    for v in view["vacancies"]:
        echo(vacancy_notice(v))
    if not view["vacancies"]:
        echo("no vacant roles")


def print_log(data: dict, since: str | None = None, limit: int | None = None) -> None:
    """`log`: a line per move, oldest first unless asked otherwise."""
    for r in data["moves"]:
        echo(_log_line(r))
    if not data["moves"]:
        echo(_none_asked("moves", since, limit, "no state commits yet"))


def _log_line(r: dict) -> str:
    plain = f"{r['from']} -> {r['to']}"
    move = plain if r["from"] else f"born in {r['to']}"
    # a move made without -m has the move itself as its text: said once
    text = f"  {r['text']}" if r["text"] not in ("", None, plain) else ""
    return f"{when(r['time'])}  {r['commit'][:10]}  {r['agent']}: {move}{text}  ({r['author']})"


def print_board(data: dict, since: str | None = None, limit: int | None = None) -> None:
    """`board`: a line per notice, oldest first."""
    for n in data["notices"]:
        echo(f"{when(n['time'])}  {n['commit'][:10]}  {n['agent']}: {n['text']}")
    if not data["notices"]:
        echo(_none_asked("notices", since, limit, "no notices yet"))


def _none_asked(what: str, since: str | None, limit: int | None, never: str) -> str:
    """What a log or the board says when it has nothing to list."""
    if since is not None:
        return f"no {what} since {since}"
    return f"no {what} asked for (--limit 0)" if limit == 0 else never


def print_inbox(view: dict) -> None:
    pushed = view.get("push")
    if pushed and pushed["outcome"] != "landed":
        echo(f"gitstate: the checkpoint did not land ({pushed['outcome']}): "
             f"{pushed['reason']}" + _kept_on(pushed), err=True)
    since = f"since {view['last_read_commit'][:10]}" if view["last_read_commit"] \
        else "from the beginning"
    echo(f"{view['agent']}: {plural(len(view['messages']), 'message')} {since}")
    for m in view["messages"]:
        _print_message(m)
    if view.get("marked_read"):
        echo(f"marked read up to {view['commit'][:10]}: `gitstate inbox "
             f"{view['agent']}` now lists only newer messages (commit "
             f"{view['marked_read']['commit'][:10]})")


def _kept_on(landing: dict) -> str:
    return f"; kept on branch {landing['kept']}" if landing["kept"] else ""


def _print_message(m: dict) -> None:
    echo(f"  {m['commit'][:10]}  {when(m['time'])}  {m['subject']}")
    for line in m["body"].splitlines():
        if "@" in line:  # the lines that speak to someone
            echo(f"      {line.strip()}")


def print_situations(data: dict) -> None:
    owned: dict[str, list[dict]] = {}   # by owner: one pass, not one per session
    for b in data["belongings"]:
        owned.setdefault(b["owner"], []).append(b)
    for e in data["entities"]:
        if e["id"].startswith("situation:session-"):
            echo(_situation_line(e, owned.get(e["id"], [])))
    if "sqlite" in data:
        s = data["sqlite"]
        echo(f"wrote {s['path']}: {s['entities']} entities, {s['belongings']} belongings")


def _situation_line(e: dict, links: list[dict]) -> str:
    bits = [f"{b['quality']} {b['member']}" for b in links if b["quality"] != "description"]
    return (f"{e['id']}  [{e['quality'] or '?'}]  {e['started_at'] or '?'} .. "
            f"{e['ended_at'] or '?'}" + (f"  ({', '.join(bits)})" if bits else ""))


def print_freeze_state(view: dict, repo) -> None:
    """`show`: the freeze-state file as committed, byte for byte as text."""
    from gitstate.law import statefile
    if view.get("written_by"):
        echo(f"note: {view['path']} was written by {view['written_by']}, not by "
             f"{view['agent']}: its sections hold nothing {view['agent']} wrote")
    data = repo.git.cat_files([f"{view['commit']}:{view['path']}"])[0]
    echo(statefile.decode(data, view["path"]), nl=False)
