"""The hub is a place to look: every read command, its `--json` and the viewer work with `-C`
on a bare hub, reading its HEAD (the team line), and say there what a clone in step says."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import fill_freeze_state, from_template, git, gitstate
from hubs import hub_and_clones, pushed

READS = [("roster",), ("status",), ("status", "alice"), ("log",), ("log", "alice"),
         ("log", "-n", "2", "--newest-first"), ("vacancies",), ("inbox", "bob"),
         ("show", "carol"), ("situations", "--no-sqlite"), ("roster", "--at", "HEAD~2"),
         ("status", "carol", "--at", "HEAD~1")]


def _team(tmp_path):
    """A hub whose line holds alice (architect, in inbox, who wrote to @bob), bob (librarian,
    buried: the role is vacant) and carol (frozen); clone a is in step with it, b is not (a
    copy of one built once per session)."""
    from_template(tmp_path, "hub-reads-team", _build)
    return tmp_path / "hub.git", tmp_path / "c0", tmp_path / "c1"


def _build(root):
    hub, (a, _b) = hub_and_clones(root)
    for args in (("spawn", "alice", "--role", "architect"),
                 ("transition", "alice", "inbox", "-m", "hello @bob"),
                 ("spawn", "bob", "--role", "librarian"), ("transition", "bob", "inbox"),
                 ("transition", "bob", "distill"), ("bury", "bob", "--summary", "indexed"),
                 ("spawn", "carol"), ("transition", "carol", "inbox"),
                 ("transition", "carol", "distill")):
        code, out = pushed(a, *args)
        assert code == 0, out
    assert gitstate(a, "freeze", "carol").returncode == 1        # writes the template
    fill_freeze_state(a / "data" / "freeze-states" / "carol.md")
    git(a, "add", "data")
    assert pushed(a, "freeze", "carol")[0] == 0
    assert git(a, "rev-parse", "HEAD").stdout == git(hub, "rev-parse", "main").stdout


def timeless(text: str) -> str:
    """Without what the clock changes between two runs (time in a state)."""
    return re.sub(r"\S+ in state|\"seconds_in_state\":[0-9.]+", "_", text)


@pytest.mark.parametrize("checked", [False, True], ids=["fast", "click"])
def test_every_read_on_a_bare_hub_says_what_a_clone_in_step_says(tmp_path, monkeypatch,
                                                                 checked):
    hub, a, _b = _team(tmp_path)
    if checked:   # the whole command line, its output checked against its model
        monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")
    tip = git(hub, "rev-parse", "main").stdout.strip()
    for args in READS:
        for form in ((), ("--json",)):
            there = gitstate(tmp_path, "-C", str(hub), *args, *form)
            assert there.returncode == 0, (args, form, there.stderr)
            here = gitstate(a, *args, *form)
            assert timeless(there.stdout) == timeless(here.stdout), (args, form)
            assert there.stderr == here.stderr == ""
    roster = json.loads(gitstate(tmp_path, "-C", str(hub), "roster", "--json").stdout)
    assert roster["commit"] == tip
    assert [r["agent"] for r in roster["living"]] == ["alice"]
    assert [r["agent"] for r in roster["freezer"]] == ["carol"]
    assert [r["agent"] for r in roster["cemetery"]] == ["bob"]
    inbox = json.loads(gitstate(tmp_path, "-C", str(hub), "inbox", "bob", "--json").stdout)
    assert [m["subject"] for m in inbox["messages"]] == ["@alice: [STATE:inbox] hello @bob"]
    res = gitstate(tmp_path, "-C", str(hub), "vacancies")
    assert "Role 'librarian' is vacant. Last held by bob" in res.stdout
    # the hub's entity graph is kept in the hub's own gitstate folder, as a clone keeps its own
    res = gitstate(tmp_path, "-C", str(hub), "situations")
    assert res.returncode == 0 and (hub / "gitstate" / "entities.db").is_file()


def test_the_fast_path_answers_on_a_bare_hub(tmp_path, capsys):
    """Without click: `gitstate.cli.fast` answers itself (None would hand it to click)."""
    from gitstate.cli import fast
    hub, a, _b = _team(tmp_path)
    for args in (("roster",), ("roster", "--json"), ("log",), ("log", "--json"),
                 ("status", "alice", "--json"), ("inbox", "bob")):
        capsys.readouterr()
        assert fast.run(["-C", str(hub), *args]) == 0, args
        assert timeless(capsys.readouterr().out) == timeless(gitstate(a, *args).stdout)


def test_a_move_on_a_hub_is_refused_and_says_where_moves_are_made(tmp_path):
    hub, _a, _b = _team(tmp_path)
    tip = git(hub, "rev-parse", "main").stdout
    for args in (("transition", "alice", "distill"), ("inbox", "bob", "--mark-read"),
                 ("spawn", "dan")):
        res = gitstate(tmp_path, "-C", str(hub), *args)
        assert res.returncode == 1, args
        assert "is a bare repository (a hub)" in res.stderr and "--push" in res.stderr
    assert git(hub, "rev-parse", "main").stdout == tip


def test_the_viewer_shows_a_bare_hub_and_follows_its_line(tmp_path):
    pytest.importorskip("starlette", reason="pip install 'gitstate-agents[web]'")
    import urllib.request
    hub, a, b = _team(tmp_path)
    res = gitstate(tmp_path, "-C", str(hub), "site", "--out", str(tmp_path / "site"), "--json")
    assert res.returncode == 0, res.stderr
    built = json.loads(res.stdout)
    assert built["commit"] == git(hub, "rev-parse", "main").stdout.strip()
    assert built["agents"] == 3
    assert "carol" in (tmp_path / "site" / "index.html").read_text()

    proc = subprocess.Popen([sys.executable, "-m", "gitstate", "-C", str(hub), "serve",
                             "--port", "0"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()        # printed once it listens
        m = re.search(r"at (http://127\.0\.0\.1:\d+/) ", line)
        assert m, line + proc.stderr.read() if proc.poll() is not None else line
        url = m.group(1)

        def get(path: str):
            with urllib.request.urlopen(url + path, timeout=20) as r:
                return json.loads(r.read())
        assert timeless(json.dumps(get("api/roster"), separators=(",", ":"))) == timeless(
            json.dumps(json.loads(gitstate(a, "roster", "--json").stdout),
                       separators=(",", ":")))
        git(b, "pull", "-q", "--ff-only")
        assert pushed(b, "transition", "alice", "distill")[0] == 0     # the line moves on
        tip = git(hub, "rev-parse", "main").stdout.strip()
        assert get("api/tip")["commit"] == tip
        alice = [r for r in get("api/roster")["living"] if r["agent"] == "alice"]
        assert alice[0]["state"] == "distill"
    finally:
        proc.terminate()
        proc.wait(10)
