"""The moves made without click (`gitstate.cli.fast_moves`) are read, made and said exactly as
the whole command line reads, makes and says them: the same parameters for every form either
takes, the same output (text and `--json`), stream and exit code for a legal move, a refused
one, a usage error and a move landed on a hub with `--push`."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import fill_freeze_state, gitstate, repo_with, walk
from hubs import hub_and_clones
from test_fast_reads import click_params

# the words each move's forms are made of: its arguments, every spelling of its options, values,
# and forms the fast path leaves to click (`--help`, `-mX`, `--`, `-`, `--push=1`, `--key`)
ODD = ["--help", "-h", "--", "-", "--json", "--push", "--push=1", "--bogus", "-x", "--json=1"]
ALPHABETS = {
    "spawn": ["alice", "bob", "--role", "architect", "--new-role", "--model", "opus",
              "--parent=alice", "--session", "s1", "--task", "index", "--instructions=do it",
              "--wait", "1.5", "3", "-1", "--wait=0", "--key", "--key=new", "--set",
              "a=b", "--set=c=d", "-m", "hello", "--message", "-mhi"],
    "transition": ["alice", "inbox", "-m", "restored", "--message=x", "--body", "@bob look",
                   "--set", "context_pct=40", "--set=x=y", "--approved-by", "zach", "-mhi",
                   "--paths"],
    "freeze": ["alice", "-m", "night", "--situation", "parser", "--wake-if", "tomorrow",
               "--wake-if=x", "--set", "a=b", "--state"],
    "wake": ["carol", "--approved-by", "zach", "--approved-by=zach", "--state", "inbox",
             "-m", "back"],
    "bury": ["bob", "--summary", "done", "--summary=x", "--approved-by", "zach",
             "--transfer-role-to", "alice", "-m", "bye"],
    "handover": ["architect", "--to", "bob", "--to=dave", "--from", "alice", "-m", "leave",
                 "--approved-by", "zach"],
    "assume": ["dave", "architect", "--new-role", "-m", "vacant", "--message=x"],
    "logout": ["era-1", "--note", "half done", "--note=x", "--set", "a=b", "-m", "out"],
    "say": ["ana", "bob", "ALL", "please rebase", "-", "--push", "-m"],
    "inbox": ["bob", "alice", "--mark-read", "--push", "--at", "HEAD~1", "--at=v1", "-m"],
}


def test_every_declared_move_is_taken_without_click():
    from gitstate.cli import fast_moves
    assert set(fast_moves.MOVES) == set(ALPHABETS)


TAKEN: dict[str, int] = {}


@pytest.mark.parametrize("command", sorted(ALPHABETS))
@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_every_move_form_the_fast_path_takes_is_parsed_as_click_parses_it(command, data):
    """Whatever words a move is given, a form the fast path takes is the command and the
    parameters click reads from it (every parameter, defaults included); a form click
    refuses (or answers with its help), the fast path leaves to it."""
    from gitstate.cli import fast_moves
    words = data.draw(st.lists(st.sampled_from(ALPHABETS[command]), max_size=7))
    prefix = data.draw(st.sampled_from([[], ["-C", "."]]))
    args = [*prefix, command, *words]
    ours = fast_moves.parse(args)
    if ours is None:
        return
    theirs = click_params(args)
    assert theirs is not None, args
    directory, _command, name, params, _defaults = theirs
    assert (ours[0], ours[1]) == (directory, name), args
    assert ours[2] == params, args


# each move's arguments and the options it requires: every declared option is then tried
# in every place among them
BASES = {"spawn": [["alice"]], "transition": [["alice"], ["inbox"]], "freeze": [["alice"]],
         "wake": [["carol"], ["--approved-by", "zach"]], "bury": [["bob"], ["--summary", "x"]],
         "handover": [["architect"], ["--to", "bob"]], "assume": [["dave"], ["architect"]],
         "logout": [["era-1"], ["--note", "n"]], "say": [["ana"], ["bob"], ["hi there"]],
         "inbox": [["bob"], ["--mark-read"]]}


def _option_forms(command: str) -> list[list[str]]:
    """Each declared option of `command` as words, in each of the spellings the fast path
    reads (`--opt VALUE`, `--opt=VALUE`, `-m VALUE`, a flag), `--json` among them."""
    from gitstate.cli.declared import DECLARED
    forms = [["--json"]]
    for p in DECLARED[command].of("cli"):
        if not p.flags or p.click:
            continue
        for flag in p.flags:
            if p.kind is bool:
                forms.append([flag])
                continue
            value = "2.5" if p.kind is float else "a=b" if p.kind is list else "some text"
            forms.append([flag, value])
            if flag.startswith("--"):
                forms.append([f"{flag}={value}"])
    return forms


@pytest.mark.parametrize("command", sorted(BASES))
def test_every_declared_option_in_every_place_is_taken_and_read_as_click_reads_it(command):
    """Not only what the fast path takes is right: it takes every declared option (but one
    click reads in its own way, `spawn --key`), alone in each place among the arguments and
    two at a time, and reads each as click does."""
    from gitstate.cli import fast_moves
    units, forms = BASES[command], _option_forms(command)
    base = [word for unit in units for word in unit]
    tried = [[w for unit in [*units[:at], form, *units[at:]] for w in unit]
             for form in forms for at in range(len(units) + 1)]
    tried += [base + a + b for a in forms for b in forms]
    for words in tried:
        args = [command, *words]
        ours = fast_moves.parse(args)
        assert ours is not None, args
        assert ours[2] == click_params(args)[3], args
    assert len(tried) >= 10


@pytest.mark.parametrize("args", [
    ("transition", "alice", "inbox"), ("transition", "alice", "inbox", "--json", "--push"),
    ("-C", ".", "transition", "--set", "a=b", "alice", "--set=c=d", "inbox", "-m", "x"),
    ("spawn", "dave", "--role=architect", "--wait", "2.5", "--new-role"),
    ("wake", "carol", "--approved-by", "zach"), ("bury", "bob", "--summary", "done"),
    ("handover", "architect", "--to", "bob", "--from=alice"), ("assume", "dave", "architect"),
    ("say", "ana", "bob", "hello"), ("say", "ALL", "-"), ("logout", "e", "--note", "n"),
    ("inbox", "bob", "--mark-read"), ("inbox", "--push", "bob", "--json")])
def test_the_plain_forms_of_each_move_are_taken(args):
    """The forms people and agents type are answered without click (and read as click reads
    them)."""
    from gitstate.cli import fast_moves
    ours = fast_moves.parse(list(args))
    assert ours is not None, args
    assert ours[2] == click_params(list(args))[3]


@pytest.mark.parametrize("args", [
    ("transition", "alice"), ("transition", "alice", "inbox", "extra"),
    ("transition", "alice", "inbox", "-mhi"), ("transition", "alice", "inbox", "--help"),
    ("transition", "alice", "inbox", "-m", "-x"), ("transition", "--", "alice", "inbox"),
    ("spawn", "dave", "--key"), ("spawn", "dave", "--wait", "-1"), ("spawn", "dave", "--wait",
                                                                      "1e3"),
    ("wake", "carol"), ("bury", "bob"), ("say", "ana"), ("transition", "alice", "inbox",
                                                           "--push=yes"),
    ("-C", "/nonexistent", "transition", "alice", "inbox"), ("--version",),
    ("inbox", "bob"), ("inbox", "bob", "--json")])          # a view: cli/fast.py reads it
def test_forms_the_fast_path_does_not_read_exactly_go_to_click(args):
    from gitstate.cli import fast_moves
    assert fast_moves.parse(list(args)) is None


def _team(repo):
    for agent, role in (("alice", "architect"), ("bob", "librarian"), ("carol", "steward")):
        assert gitstate(repo, "spawn", agent, "--role", role).returncode == 0
    assert gitstate(repo, "spawn", "dave").returncode == 0
    walk(repo, "alice", "inbox", "distill")
    walk(repo, "carol", "inbox", "distill")
    assert gitstate(repo, "freeze", "carol").returncode == 1        # writes the template
    fill_freeze_state(repo / "data" / "freeze-states" / "carol.md")
    assert gitstate(repo, "freeze", "carol").returncode == 0
    assert gitstate(repo, "say", "bob", "ALL", "review please").returncode == 0


_SHA = re.compile(r"\b[0-9a-f]{7,64}\b")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def masked(text: str) -> str:
    """Output without what differs between two copies of a repository: commit ids, times."""
    return _TIME.sub("<time>", _SHA.sub("<sha>", text))


def _fast_and_click(tmp_path, build, args):
    """(the fast path's, the command line's answer) of `gitstate ARGS`, each in its own copy
    of the repositories `build(where)` makes (it returns the one to run in)."""
    fast = gitstate(build(tmp_path / "fast"), *args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITSTATE_CHECK_JSON", "1")           # the fast path steps aside for this
        slow = gitstate(build(tmp_path / "click"), *args)
    return fast, slow


def _same(fast, slow, args) -> None:
    assert fast.returncode == slow.returncode, (args, fast.stderr, slow.stderr)
    if "--json" in args and slow.stdout.strip():   # (the models that check it order its keys)
        assert json.loads(masked(fast.stdout)) == json.loads(masked(slow.stdout)), args
        assert masked(fast.stdout).count("\n") == masked(slow.stdout).count("\n"), args
    else:
        assert masked(fast.stdout) == masked(slow.stdout), args
    assert masked(fast.stderr) == masked(slow.stderr), args


CASES = [
    # legal moves
    (0, "transition", "alice", "deep_work", "-m", "on it", "--set", "context_pct=40",
     "--body", "@bob review please"),
    (0, "spawn", "erin", "--role", "auditor", "--model", "opus", "--parent", "alice"),
    (0, "wake", "carol", "--approved-by", "zach"),
    (0, "bury", "bob", "--summary", "indexed the docs"),
    (0, "handover", "architect", "--to", "dave", "-m", "going on leave"),
    (0, "say", "alice", "bob", "please rebase"),
    (0, "inbox", "bob", "--mark-read"),
    (1, "inbox", "nobody", "--mark-read"),
    (2, "inbox", "bob", "--mark-read", "--at", "HEAD~1"),
    # refused by a rule: the same words, stream and exit code
    (1, "transition", "alice", "bogus"),
    (1, "transition", "carol", "inbox"),
    (1, "spawn", "erin", "--role", "archtect"),
    (1, "freeze", "alice"),
    (1, "assume", "dave", "architect"),
    (1, "logout", "alice", "--note", "stopped"),
    (1, "transition", "nobody", "inbox"),
    # usage errors: the command line says them either way
    (2, "transition", "alice"),
    (1, "wake", "carol"),                     # (the law asks for its human: needs-approval)
    (2, "spawn"),
    (2, "transition", "alice", "inbox", "--bogus"),
]


@pytest.mark.parametrize("as_json", [(), ("--json",)])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(c[1:4]))
def test_a_move_made_without_click_says_what_the_command_line_says(tmp_path, case, as_json):
    code, *args = case
    args = [*args, *as_json]
    fast, slow = _fast_and_click(
        tmp_path, lambda where: repo_with(where, "fast-moves-team", _team), args)
    _same(fast, slow, args)
    assert fast.returncode == code, (fast.stdout, fast.stderr)
    if as_json:
        assert json.loads(fast.stdout)
    else:
        assert (fast.stdout if code == 0 else fast.stderr).strip()


def _hub_clone(where):
    hub, clones = hub_and_clones(where, 2)
    return clones[0]


@pytest.mark.parametrize("as_json", [(), ("--json",)])
def test_a_move_landed_on_a_hub_without_click_says_what_the_command_line_says(
        tmp_path, as_json):
    """`--push`: the move lands on the hub, said in the same words; a clone behind the hub
    lands its move after the other clone's."""
    def build(where):
        if not (where / "hub.git").exists():
            hub_and_clones(where, 2)
            c0, c1 = where / "c0", where / "c1"
            assert gitstate(c0, "spawn", "alice", "--push").returncode == 0
            assert gitstate(c1, "spawn", "bob", "--push").returncode == 0  # c0 is behind
        return where / "c0"
    for args in (["transition", "alice", "inbox", "--push", *as_json],
                 ["say", "bob", "hello", "--push", *as_json],
                 ["inbox", "bob", "--mark-read", "--push", *as_json],
                 ["transition", "alice", "dead", "--push", *as_json]):
        fast, slow = _fast_and_click(tmp_path, build, args)
        _same(fast, slow, args)
        if as_json and fast.returncode == 0:
            assert json.loads(fast.stdout)["push"]["outcome"] == "landed"
    assert fast.returncode != 0


def test_a_move_under_the_tests_is_made_without_click(tmp_path):
    """Under $GITSTATE_FAST_LOUD (the suite's), a plain move, in text, under `--json` and with
    `--set`, is made without ever loading click: it did not fall back."""
    repo = repo_with(tmp_path, "fast-moves-team", _team)
    probe = ("import sys\nfrom gitstate.__main__ import main\n"
             "code = main(sys.argv[1:])\n"
             "print(code, *[m for m in ('click', 'gitstate.cli.main') if m in sys.modules])\n")
    for args in (["transition", "alice", "deep_work"], ["transition", "alice", "inbox",
                                                         "--json", "--set", "context_pct=3"],
                 ["say", "bob", "hello"], ["transition", "alice", "bogus"]):
        out = subprocess.run([sys.executable, "-c", probe, *args], cwd=repo,
                             capture_output=True, text=True)
        code = "1" if args[-1] == "bogus" else "0"
        assert out.stdout.strip().splitlines()[-1].split() == [code], (args, out.stdout,
                                                                      out.stderr)


def test_a_bug_of_the_fast_moves_is_raised_under_the_tests(tmp_path, monkeypatch):
    """An error that is not gitstate's own is raised under $GITSTATE_FAST_LOUD; elsewhere it
    is said as the command line says an internal error."""
    from gitstate.cli import fast_moves, text
    repo = repo_with(tmp_path, "fast-moves-team", _team)

    def broken(record, says=None):
        raise TypeError("a printer broken on purpose")
    monkeypatch.setattr(text, "print_move", broken)
    with pytest.raises(TypeError, match="on purpose"):
        fast_moves.run(["-C", str(repo), "transition", "alice", "deep_work"])
    monkeypatch.delenv(fast_moves.LOUD)
    res = gitstate(repo, "transition", "alice", "inbox")
    assert res.returncode == 1 and "internal error: TypeError" in res.stderr
