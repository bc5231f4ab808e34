"""The read commands answered without click (`gitstate.cli.fast`) print exactly what the
whole command line prints, and the inbox kept under .git/gitstate follows new commits and
rewritten history."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import UNHOOKED, fill_freeze_state, git, gitstate, repo_with, walk


def timeless(data):
    """The output without what the clock changes between two runs (seconds in a state)."""
    if isinstance(data, dict):
        return {k: timeless(v) for k, v in data.items() if k != "seconds_in_state"}
    if isinstance(data, list):
        return [timeless(v) for v in data]
    return data


def masked(text: str) -> str:
    """Text output without what the clock changes between two runs (time in a state)."""
    import re
    return re.sub(r"\S+ in state", "_ in state", text)


def both(repo, *args):
    """(fast output, output through click) of `gitstate ARGS`."""
    fast = gitstate(repo, *args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITSTATE_CHECK_JSON", "1")           # the fast path steps aside for this
        slow = gitstate(repo, *args)
    return fast, slow


def _team(repo):
    for agent, role in (("alice", "architect"), ("bob", "librarian"), ("carol", "steward")):
        assert gitstate(repo, "spawn", agent, "--role", role).returncode == 0
    walk(repo, "alice", "inbox", "distill")
    walk(repo, "carol", "inbox", "distill")
    assert gitstate(repo, "freeze", "carol").returncode == 1        # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "carol.md")
    assert gitstate(repo, "freeze", "carol").returncode == 0
    git(repo, "commit", "-q", "--allow-empty", "-m", "review please @bob, cc @ALL")


@pytest.fixture
def team(tmp_path):
    """alice (architect, in distill), bob (librarian), carol (steward, frozen), and a message
    for bob and all."""
    return repo_with(tmp_path, "fast-reads-team", _team)


@pytest.mark.parametrize("args", [("status", "--json"), ("status", "alice", "--json"),
                                  ("roster", "--json"), ("vacancies", "--json"),
                                  ("inbox", "bob", "--json"), ("roster", "--at", "HEAD~2",
                                                              "--json"),
                                  ("roster", "--json", "--at=HEAD~1"),
                                  ("log", "--json"), ("log", "alice", "-n", "2", "--json"),
                                  ("log", "--json", "--newest-first", "--since", "yesterday"),
                                  ("log", "bob", "--reverse", "--limit", "1", "--json"),
                                  ("status", "--at", "HEAD~1", "--json"),
                                  ("status", "alice", "--at=HEAD~2", "--json"),
                                  ("inbox", "bob", "--at", "HEAD~1", "--json"),
                                  ("log", "alice", "--at", "HEAD~1", "--json")])
def test_fast_reads_print_what_the_command_line_prints(team, args):
    fast, slow = both(team, *args)
    assert fast.returncode == slow.returncode == 0, fast.stderr + slow.stderr
    assert timeless(json.loads(fast.stdout)) == timeless(json.loads(slow.stdout))


TEXT_FORMS = [("status",), ("status", "alice"), ("roster",), ("vacancies",), ("inbox", "bob"),
              ("roster", "--at", "HEAD~2"), ("log",), ("log", "alice", "-n", "2"),
              ("log", "--newest-first", "--since", "yesterday"), ("log", "--limit", "0"),
              ("status", "alice", "--at=HEAD~2"), ("inbox", "bob", "--at", "HEAD~1"),
              ("show", "carol"), ("show", "carol", "--json"), ("situations", "--no-sqlite"),
              ("situations", "--no-sqlite", "--json"), ("situations", "--at", "HEAD~1",
                                                        "--no-sqlite")]


@pytest.mark.parametrize("args", TEXT_FORMS)
def test_fast_reads_in_text_print_what_the_command_line_prints(team, args):
    """A person types the text forms: they take the fast way too, and print the same."""
    from gitstate.cli import fast
    assert fast.parse(list(args)) is not None, args     # answered without click
    fast_run, slow = both(team, *args)
    assert fast_run.returncode == slow.returncode == 0, fast_run.stderr + slow.stderr
    assert masked(fast_run.stdout) == masked(slow.stdout) and fast_run.stdout.strip()


def test_errors_and_odd_forms_go_through_the_command_line(team):
    for args in (("status", "nobody", "--json"), ("inbox", "--json"), ("log", "nobody", "--json"),
                 ("log", "-n", "x", "--json"), ("log", "--since", "garbage", "--json"),
                 ("roster", "--bogus", "--json"), ("-C", "/nonexistent", "roster", "--json")):
        fast, slow = both(team, *args)
        assert fast.returncode == slow.returncode != 0, args
        assert json.loads(fast.stdout) == json.loads(slow.stdout), args


def test_every_command_is_registered_by_its_module():
    from gitstate.cli import main
    from gitstate.cli.app import cli
    for module in main.FAMILIES:
        __import__(f"gitstate.cli.{module}")
    found = {name: cmd.callback.__module__.rsplit(".", 1)[1] for name, cmd in cli.commands.items()}
    assert found == main.COMMANDS


def test_the_kept_inbox_follows_new_commits_and_rewrites(team):
    first = json.loads(gitstate(team, "inbox", "bob", "--json").stdout)
    assert [m["subject"] for m in first["messages"]] == ["review please @bob, cc @ALL"]
    assert (team / ".git" / "gitstate" / "mentions" / "index").is_file()
    git(team, "commit", "-q", "--allow-empty", "-m", "second note for @bob")
    later = json.loads(gitstate(team, "inbox", "bob", "--json").stdout)
    assert [m["subject"] for m in later["messages"]][-1] == "second note for @bob"
    git(team, "reset", "-q", "--hard", "HEAD~2")      # history rewritten: both gone
    gone = json.loads(gitstate(team, "inbox", "bob", "--json").stdout)
    assert gone["messages"] == []
    git(team, *UNHOOKED, "commit", "-q", "--allow-empty", "-m", "@alice: hello @bob")
    assert [m["from"] for m in json.loads(gitstate(team, "inbox", "bob", "--json").stdout)
            ["messages"]] == ["alice"]
    # the same answer without the kept file, and with a file that was tampered with
    (team / ".git" / "gitstate" / "mentions" / "index").write_text("junk")
    assert json.loads(gitstate(team, "inbox", "bob", "--json").stdout)["messages"][0][
        "subject"] == "@alice: hello @bob"


def test_mark_read_moves_the_kept_inbox_on(team):
    assert gitstate(team, "inbox", "bob", "--mark-read").returncode == 0
    assert json.loads(gitstate(team, "inbox", "bob", "--json").stdout)["messages"] == []
    git(team, "commit", "-q", "--allow-empty", "-m", "one more @bob")
    msgs = json.loads(gitstate(team, "inbox", "bob", "--json").stdout)["messages"]
    assert [m["subject"] for m in msgs] == ["one more @bob"]


def test_the_kept_log_follows_new_commits_merges_and_rewrites(team):
    first = json.loads(gitstate(team, "log", "--json").stdout)
    assert (team / ".git" / "gitstate" / "moves" / "index").is_file()
    walk(team, "bob", "inbox")
    later = json.loads(gitstate(team, "log", "--json").stdout)
    assert later["commit"] != first["commit"]
    later = later["moves"]
    assert later[:len(first["moves"])] == first["moves"] and later[-1]["to"] == "inbox"
    assert later[-1]["from"] == "bootstrap"
    git(team, "reset", "-q", "--hard", "HEAD~1")
    assert json.loads(gitstate(team, "log", "--json").stdout) == first
    (team / ".git" / "gitstate" / "moves" / "index").write_text("junk")
    assert json.loads(gitstate(team, "log", "--json").stdout) == first


def test_the_whole_log_kept_as_printed_follows_new_commits_merges_and_rewrites(team):
    """Plain `log` and `log --json` are kept as printed (.git/gitstate/log-*.bin) and carried
    on by the moves since; after new commits, a merge, a rewrite and a forged file, each says
    exactly what the whole command line says."""
    kept = team / ".git" / "gitstate"

    def same():
        for args in (("log",), ("log", "--json")):
            fast, slow = both(team, *args)
            assert fast.returncode == slow.returncode == 0, (fast.stderr, slow.stderr)
            assert fast.stdout == slow.stdout, args
        return json.loads(gitstate(team, "log", "--json").stdout)

    first = same()
    assert (kept / "log-text" / "index").is_file() and (kept / "log-json" / "index").is_file()
    walk(team, "bob", "inbox")
    git(team, "commit", "-q", "--allow-empty", "-m", "ordinary work")
    later = same()
    assert later["moves"][:len(first["moves"])] == first["moves"]
    assert later["moves"][-1]["from"] == "bootstrap" and later["commit"] != first["commit"]
    git(team, "checkout", "-q", "-b", "side", "HEAD~2")
    (team / "side.txt").write_text("side\n")          # the line rule: a merge carries work
    git(team, "add", "side.txt")
    git(team, "commit", "-q", "-m", "side's work")
    git(team, "checkout", "-q", "-")
    git(team, "merge", "-q", "--no-edit", "side")
    assert same()["moves"] == later["moves"]
    git(team, "reset", "-q", "--hard", "HEAD~3")
    assert same() == first
    for pack in (*(kept / "log-text").glob("*.pack"), *(kept / "log-json").glob("*.pack")):
        pack.write_bytes(pack.read_bytes().replace(b"alice", b"mallory"))
    assert same() == first and "mallory" not in gitstate(team, "log").stdout


def test_a_shallow_clone_deepened_reads_the_history_beneath_its_tip(team, tmp_path):
    """A shallow clone's reads are kept for its tip; `fetch --unshallow` brings the history
    beneath that same tip, and log, inbox and roster then say what the whole history says."""
    shallow = tmp_path / "clone" / "repo"   # named as the original (roster says its project)
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{team}", str(shallow))
    reads = (("log",), ("log", "--json"), ("inbox", "bob", "--json"), ("roster", "--json"))
    for args in reads:
        assert gitstate(shallow, *args).returncode == 0
    git(shallow, "fetch", "-q", "--unshallow")
    for args in reads:
        fast, slow = both(shallow, *args)
        whole = gitstate(team, *args).stdout
        if args[-1] == "--json":
            fast, slow, whole = (timeless(json.loads(x)) for x in (fast.stdout, slow.stdout,
                                                                   whole))
        else:
            fast, slow = fast.stdout, slow.stdout
        assert fast == whole and slow == whole, args


def test_the_kept_log_folds_its_parts_and_says_the_same(team, monkeypatch):
    """Each step onward keeps the moves since as a part of their own; past FOLD parts they are
    written again as one, and the log says what the whole command line says throughout."""
    from gitstate.cli import printed
    monkeypatch.setattr(printed, "FOLD", 2)
    monkeypatch.setattr(printed, "CHUNK", 2)    # the log laid out anew two moves to a part
    index = team / ".git" / "gitstate" / "log-json" / "index"
    for state in ("inbox", "distill", "deep_work", "idle"):
        if state != "idle":
            walk(team, "bob", state)
        else:
            git(team, "commit", "-q", "--allow-empty", "-m", "ordinary work")
        for args in (("log",), ("log", "--json")):
            fast, slow = both(team, *args)
            assert fast.stdout == slow.stdout and fast.returncode == 0, (state, args)
        assert index.is_file()
    packs = list(index.parent.glob("*.pack"))
    assert 1 <= len(packs) <= 3, packs
    git(team, "reset", "-q", "--hard", "HEAD~3")     # printed anew: in parts of two moves
    fast, slow = both(team, "log", "--json")
    assert fast.stdout == slow.stdout and len(json.loads(fast.stdout)["moves"]) > 4


def click_params(args: list[str]):
    """(-C DIR, the click command, its name, parameters, their defaults) as click parses
    `args`, or None where it refuses them or only says something (`--help`). The fast paths'
    tests (reads here, moves in test_fast_moves.py) hold their parses to it."""
    import click

    from gitstate.cli import main
    from gitstate.cli.app import cli
    main.register(args)
    try:
        ctx = cli.make_context("gitstate", list(args))
        name, command, rest = cli.resolve_command(ctx, ctx._protected_args + ctx.args)
        sub = command.make_context(name, rest, parent=ctx)
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    defaults = {p.name: p.get_default(sub) for p in command.params}
    return ctx.params["directory"], command, name, sub.params, defaults


ALPHABETS = {
    "status": ["alice", "bob", "--json", "--at", "x", "-n", "--", "--at=HEAD"],
    "roster": ["--at", "HEAD~1", "--at=v1", "--json", "alice", "-x", "--at=", "--limit"],
    "vacancies": ["--at", "2026-11-01", "--json", "bob", "--at=HEAD"],
    "inbox": ["alice", "bob", "--json", "--mark-read", "--push", "-m", "--at"],
    "log": ["alice", "-n", "2", "--limit=3", "--since", "yesterday", "--newest-first",
            "--reverse", "--json", "-1", "--at=v1"],
    "board": ["carol", "bob", "-n", "2", "--limit=3", "--since", "yesterday", "--json",
              "--at=v1", "--newest-first"],
    "show": ["carol", "bob", "--json", "--at", "HEAD~1", "-x"],
    "situations": ["--no-sqlite", "--sqlite", "x.db", "--json", "--at=HEAD", "alice"],
}


def test_every_form_the_fast_path_takes_is_parsed_as_click_parses_it(tmp_path):
    """For every form the fast path answers, click reads the same command and parameters
    (those the fast path does not take at their defaults), so the answers cannot drift; a
    form click refuses, the fast path leaves to it."""
    import itertools

    from gitstate.cli import fast
    assert set(ALPHABETS) == set(fast.FORMS)
    taken = 0
    for command, alphabet in ALPHABETS.items():
        for n in range(5):
            for words in itertools.product(alphabet, repeat=n):
                for prefix in ([], ["-C", str(tmp_path)]):
                    args = [*prefix, command, *words]
                    ours = fast.parse(args)
                    if ours is None:
                        continue
                    theirs = click_params(args)
                    assert theirs is not None, args
                    directory, cmd, name, params, defaults = theirs
                    assert (ours[0], ours[1]) == (directory, name), args
                    assert ours[2] == {k: params[k] for k in ours[2]}, args
                    assert {k: v for k, v in params.items() if k not in ours[2]} == \
                        {k: defaults[k] for k in params if k not in ours[2]}, args
                    taken += 1
    assert taken > 1000


def test_a_known_agent_with_no_moves_since_a_date_has_an_empty_log(team):
    """Filtering by date leaves a known agent without moves, not unknown: kept moves and a
    read of history (`--at`) alike."""
    for extra in ([], ["--at", "HEAD"]):
        res = gitstate(team, "log", "alice", "--since", "2099-01-01", "--json", *extra)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["moves"] == []
    assert gitstate(team, "log", "nobody", "--since", "2099-01-01").returncode != 0
    rows = json.loads(gitstate(team, "log", "alice", "-n", "1", "--json").stdout)["moves"]
    assert [r["to"] for r in rows] == ["distill"] and rows[0]["time"].endswith("Z")


def test_an_agents_log_from_its_own_kept_moves_is_the_whole_log_filtered(team):
    """`log ID` unpacks only that agent's kept moves: the same as the whole log filtered, when
    the kept file is at HEAD, after new commits are packed in, and for an unknown agent."""
    def agent_log(agent):
        return json.loads(gitstate(team, "log", agent, "--json").stdout)["moves"]

    def filtered(agent):
        return [m for m in json.loads(gitstate(team, "log", "--json").stdout)["moves"]
                if m["agent"] == agent]

    for steps in (("inbox", "distill"), ("deep_work",)):
        for agent in ("alice", "bob", "carol"):
            assert agent_log(agent) == filtered(agent) != []
        walk(team, "bob", *steps)          # bob's blob packed again, not the others'
    assert agent_log("bob")[-1]["to"] == "deep_work" and agent_log("bob") == filtered("bob")
    assert gitstate(team, "log", "nobody", "--json").returncode != 0


def test_the_newest_moves_unpack_only_their_agents_and_equal_the_whole_logs_tail(team):
    whole = json.loads(gitstate(team, "log", "--json").stdout)["moves"]
    for n in (0, 1, 3, len(whole), len(whole) + 5):
        got = json.loads(gitstate(team, "log", "-n", str(n), "--json").stdout)["moves"]
        assert got == (whole[-n:] if n else []), n    # all of them where n is more
        read = json.loads(gitstate(team, "log", "-n", str(n), "--at", "HEAD", "--json").stdout)
        assert read["moves"] == got, n                  # as a read of the history says
    walk(team, "bob", "inbox")
    whole = json.loads(gitstate(team, "log", "--json").stdout)["moves"]
    assert json.loads(gitstate(team, "log", "-n", "2", "--json").stdout)["moves"] == whole[-2:]


def test_moves_packed_in_on_new_commits_equal_a_log_read_from_nothing(team):
    gitstate(team, "log", "--json")                               # kept at this tip
    walk(team, "bob", "inbox", "distill")
    walk(team, "alice", "deep_work")
    gitstate(team, "spawn", "dan")
    carried = [json.loads(gitstate(team, "log", *a, "--json").stdout)["moves"]
               for a in ([], ["dan"], ["-n", "3"])]
    shutil.rmtree(team / ".git" / "gitstate" / "moves")
    fresh = [json.loads(gitstate(team, "log", *a, "--json").stdout)["moves"]
             for a in ([], ["dan"], ["-n", "3"])]
    assert carried == fresh and carried[1][0]["to"] == "bootstrap"


def test_a_view_in_text_loads_no_more_than_it_needs(team):
    """A warm view in text loads neither click nor verify's machinery (its signing starts
    `subprocess` and `tempfile`), `pathlib` or `json`: each costs every read milliseconds."""
    import subprocess
    import sys
    probe = ("import io, sys\n"
             "from gitstate.cli.fast import run\n"
             "out, sys.stdout = sys.stdout, io.StringIO()\n"
             "code = run(sys.argv[1:])\n"
             "sys.stdout = out\n"
             "loaded = [m for m in ('click', 'gitstate.history.verify', 'pathlib', 'json',"
             " 'tempfile', 'yaml', 'sqlite3') if m in sys.modules]\n"
             "print(code, *loaded)\n")
    for args in (["roster"], ["vacancies"], ["status", "alice"], ["situations", "--no-sqlite"]):
        assert gitstate(team, *args).returncode == 0         # warm: the caches are written
        out = subprocess.run([sys.executable, "-c", probe, *args], cwd=team,
                             capture_output=True, text=True)
        assert out.stdout.split() == ["0"], (args, out.stdout, out.stderr)


def test_a_fast_path_that_breaks_says_so_under_the_tests(team, monkeypatch, capsys):
    """A bug of the fast path (an error that is not gitstate's own) is raised under
    $GITSTATE_FAST_LOUD, which the suite sets; elsewhere the whole command line answers."""
    from gitstate.cli import fast, text

    def broken(view):
        raise TypeError("a printer broken on purpose")
    monkeypatch.setattr(text, "print_roster", broken)
    with pytest.raises(RuntimeError, match="fell back"):
        fast.run(["-C", str(team), "roster"])
    monkeypatch.delenv(fast.LOUD)
    assert fast.run(["-C", str(team), "roster"]) is None
    monkeypatch.setenv(fast.LOUD, "1")
    assert fast.run(["-C", str(team), "status", "nobody"]) == 1   # gitstate's own refusal


ERRORS = [("status", "nobody"), ("log", "nobody"), ("inbox", "nobody"), ("show", "alice"),
          ("show", "nobody")]


@pytest.mark.parametrize("args", ERRORS)
@pytest.mark.parametrize("as_json", [(), ("--json",)])
def test_a_views_refusal_is_said_by_the_fast_path_as_the_command_line_says_it(
        team, args, as_json, capsys):
    """An unknown agent, or `show` of one without a freeze-state: the same words and exit
    code, without loading the whole command line."""
    from gitstate.cli import fast
    fast_run, slow = both(team, *args, *as_json)
    assert fast_run.returncode == slow.returncode == 1
    assert (fast_run.stdout, fast_run.stderr) == (slow.stdout, slow.stderr)
    assert ("nobody" in slow.stdout + slow.stderr) or "freeze-state" in slow.stdout + slow.stderr
    capsys.readouterr()
    assert fast.run(["-C", str(team), *args, *as_json]) == 1     # answered without click
    assert capsys.readouterr().err == ("" if as_json else slow.stderr)


@pytest.mark.parametrize("args", [("roster",), ("roster", "--json"), ("status",),
                                  ("status", "--json"), ("vacancies",), ("vacancies", "--json"),
                                  ("situations", "--no-sqlite"),
                                  ("situations", "--no-sqlite", "--json")])
def test_the_views_of_every_agent_kept_as_printed_follow_new_commits(team, args):
    """What `roster`, `status`, `vacancies` and `situations` printed is kept at its tip, and
    read anew at another (a new move, a rewritten history, a kept file edited)."""
    as_json = "--json" in args
    kept = team / ".git" / "gitstate" / f"shown-{args[0]}-{'json' if as_json else 'text'}"

    def read():
        fast_run, slow = both(team, *args)
        assert fast_run.returncode == slow.returncode == 0, fast_run.stderr + slow.stderr
        seen = [timeless(json.loads(r.stdout)) if as_json else masked(r.stdout)
                for r in (fast_run, slow)]
        assert seen[0] == seen[1]
        return seen[0]

    first = read()
    assert kept.is_file() and read() == first
    assert gitstate(team, "bury", "bob", "--summary", "indexed").returncode == 0
    buried = read()
    assert buried != first
    kept.write_bytes(kept.read_bytes().replace(b"bob", b"bib"))      # edited: not believed
    assert read() == buried
    git(team, "reset", "-q", "--hard", "HEAD~1")
    assert read() == first


@pytest.mark.parametrize("as_json", [False, True])
def test_a_kept_roster_says_each_time_in_state_as_of_now(team, monkeypatch, capsys, as_json):
    """The one thing in a kept view that moves with the clock is said again at each read."""
    import time

    from gitstate.cli import fast

    def roster_at(moment: float) -> str:
        monkeypatch.setattr(time, "time", lambda: moment)
        assert fast.run(["-C", str(team), "roster", *(["--json"] if as_json else [])]) == 0
        return capsys.readouterr().out

    start = time.time() + 3600
    made, kept = roster_at(start), roster_at(start + 90000)
    assert (team / ".git" / "gitstate" / f"shown-roster-{'json' if as_json else 'text'}").is_file()
    if as_json:
        rows = [(json.loads(made), json.loads(kept))]
        pairs = [(a, b) for x, y in rows for g in ("living", "freezer") for a, b in zip(x[g], y[g])]
        assert pairs and all(b["seconds_in_state"] - a["seconds_in_state"] == 90000
                             for a, b in pairs)
        assert timeless(json.loads(made)) == timeless(json.loads(kept))
    else:
        import re
        assert re.findall(r"(\S+) in state", kept) and all(
            d.startswith("1d") for d in re.findall(r"(\S+) in state", kept))
        assert masked(made) == masked(kept)


def test_a_kept_roster_says_each_time_in_state_as_the_printer_says_it():
    from gitstate.cli.shown import durations
    from gitstate.law.times import duration
    for seconds in (*range(0, 90000, 7), 86399, 86400, 86401, 90000, 3 * 86400 + 4 * 3600,
                    10 ** 9 + 12345):
        assert durations(seconds) == duration(seconds), seconds
