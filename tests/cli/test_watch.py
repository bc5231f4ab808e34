"""`gitstate roster --watch`: the roster drawn, then drawn again when the team line moves, trouble
first; each roster once, ended by a blank line, when not on a terminal; the screen cleared on
one; a line of JSON per redraw with `--json`; `--count N` stops after N; Ctrl-C stops it with 0.
On a hub it watches the hub's line; in a clone of a hub, the hub's branch, fetched.

Each test runs the real command in a process of its own and reads what it prints as it prints
it, with a deadline: nothing waits a fixed time for it."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading

from conftest import git, gitstate
from hubs import hub_and_clones, pushed

DEADLINE = 60     # seconds a line may take to come (a loaded machine); never waited out


def at_a_terminal() -> None:
    """Ctrl-C as at a terminal: a suite started in the background by a shell without job
    control ignores SIGINT, and a child would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def watching(where, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gitstate", *args], cwd=where,
                            stdin=subprocess.DEVNULL, stdout=kw.pop("stdout", subprocess.PIPE),
                            stderr=kw.pop("stderr", subprocess.PIPE), text=True,
                            preexec_fn=at_a_terminal, **kw)


class Reader:
    """The lines a process prints, handed over as they come."""

    def __init__(self, stream):
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def line(self) -> str:
        got = self.lines.get(timeout=DEADLINE)
        assert got is not None, "the watch ended before printing it"
        return got

    def block(self) -> list[str]:
        """One roster: the lines up to the blank line that ends it."""
        out = []
        while (line := self.line()) != "\n":
            out.append(line.rstrip("\n"))
        return out


def moved(repo, *args: str) -> None:
    res = gitstate(repo, *args)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_roster_is_drawn_again_when_the_line_moves_trouble_first(repo):
    moved(repo, "spawn", "alice", "--role", "architect")
    moved(repo, "spawn", "bob")
    proc = watching(repo, "roster", "--watch", "--count", "2")
    try:
        out = Reader(proc.stdout)
        first = out.block()
        head = git(repo, "rev-parse", "HEAD").stdout.strip()
        assert first[0].startswith(f"roster at {head[:10]} (lifecycle haak)")
        assert first[1] == "living (2)" and "Needs attention" not in "\n".join(first)
        assert any(line.split()[:2] == ["bob", "bootstrap"] for line in first)
        moved(repo, "transition", "bob", "inbox", "--set", "context_pct=95", "-m", "full")
        second = out.block()
        head = git(repo, "rev-parse", "HEAD").stdout.strip()
        assert second[0].startswith(f"roster at {head[:10]}")
        # trouble first: the viewer's words, above the roster
        assert second[1:3] == ["Needs attention (1)", "  bob: urgent context (95%)"]
        assert second[3] == "living (2)"
        assert any(line.split()[:4] == ["bob", "inbox", "-", "95%"] for line in second)
        assert proc.wait(DEADLINE) == 0        # --count 2: two drawings, then it stops
        assert out.lines.get(timeout=DEADLINE) is None and proc.stderr.read() == ""
    finally:
        proc.kill()
        proc.wait()


def test_with_json_each_redraw_is_one_line_of_the_roster_json(repo, monkeypatch):
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")       # each line checked by its model
    moved(repo, "spawn", "alice")
    proc = watching(repo, "roster", "--watch", "--json", "--count", "2")
    try:
        out = Reader(proc.stdout)
        first = json.loads(out.line())
        assert timeless(first) == timeless(json.loads(gitstate(repo, "roster", "--json").stdout))
        moved(repo, "transition", "alice", "inbox")
        second = json.loads(out.line())
        assert second["commit"] == git(repo, "rev-parse", "HEAD").stdout.strip()
        assert second["commit"] != first["commit"]
        assert [(r["agent"], r["state"]) for r in second["living"]] == [("alice", "inbox")]
        assert proc.wait(DEADLINE) == 0
        assert out.lines.get(timeout=DEADLINE) is None
    finally:
        proc.kill()
        proc.wait()


def timeless(view: dict) -> dict:
    """A roster without what the clock changes between two reads (time in a state)."""
    return {k: [{f: v for f, v in r.items() if f != "seconds_in_state"} for r in rows]
            if isinstance(rows, list) else rows for k, rows in view.items()}


def test_ctrl_c_stops_it_cleanly_with_0(repo):
    moved(repo, "spawn", "alice")
    proc = watching(repo, "roster", "--watch")
    try:
        Reader(proc.stdout).block()               # it is watching
        proc.send_signal(signal.SIGINT)
        assert proc.wait(DEADLINE) == 0
        err = proc.stderr.read()
        assert "Traceback" not in err and "Aborted" not in err and err == ""
    finally:
        proc.kill()
        proc.wait()


def test_on_a_terminal_each_roster_replaces_the_last(repo):
    moved(repo, "spawn", "alice")
    leader, follower = os.openpty()
    proc = watching(repo, "roster", "--watch", "--count", "1", stdout=follower)
    os.close(follower)
    seen = b""
    try:
        while True:                               # until it ends (EIO once the pty closes)
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(DEADLINE) == 0
    finally:
        os.close(leader)
        proc.kill()
        proc.wait()
    shown = seen.decode()
    assert shown.startswith("\x1b[H\x1b[2J")      # the screen cleared, then the roster
    assert "Ctrl-C stops" in shown and "alice" in shown and "living (1)" in shown


def test_count_and_at_are_refused_where_they_mean_nothing(repo):
    res = gitstate(repo, "roster", "--count", "2")
    assert res.returncode == 2 and "--count goes with --watch" in res.stderr
    res = gitstate(repo, "roster", "--watch", "--at", "HEAD")
    assert res.returncode == 2 and "--at" in res.stderr
    res = gitstate(repo, "roster", "--no-follow")
    assert res.returncode == 2 and "--no-follow goes with --watch" in res.stderr


def test_a_lead_watches_the_hub_while_a_clone_pushes(tmp_path):
    hub, (a, _b) = hub_and_clones(tmp_path)
    proc = watching(tmp_path, "-C", str(hub), "roster", "--watch", "--json", "--count", "2")
    try:
        out = Reader(proc.stdout)
        assert json.loads(out.line())["living"] == []
        code, landed = pushed(a, "spawn", "ana", "--role", "architect")
        assert code == 0, landed
        second = json.loads(out.line())
        assert second["commit"] == git(hub, "rev-parse", "main").stdout.strip()
        assert [r["agent"] for r in second["living"]] == ["ana"]
        assert proc.wait(DEADLINE) == 0
    finally:
        proc.kill()
        proc.wait()


def test_in_a_clone_of_a_hub_the_hubs_branch_is_watched(tmp_path):
    """A lead's clone, never pulled: a move another clone pushes is drawn all the same (the
    hub's branch fetched every two seconds), and the clone's own branch is left as it was."""
    hub, (a, b) = hub_and_clones(tmp_path)
    before = git(a, "rev-parse", "HEAD").stdout.strip()
    proc = watching(a, "roster", "--watch", "--count", "2")
    try:
        out = Reader(proc.stdout)
        first = out.block()
        assert first[0].endswith(f", following origin/main on {hub}") and first[1].startswith("no agents yet")
        code, landed = pushed(b, "spawn", "ana", "--role", "architect")
        assert code == 0, landed
        second = out.block()
        assert second[0].startswith(f"roster at {git(hub, 'rev-parse', 'main').stdout[:10]}")
        assert second[1] == "living (1)" and second[2].split()[:2] == ["ana", "bootstrap"]
        assert proc.wait(DEADLINE) == 0
    finally:
        proc.kill()
        proc.wait()
    assert git(a, "rev-parse", "HEAD").stdout.strip() == before
    # --no-follow: the clone's own branch, which has not got ana
    res = gitstate(a, "roster", "--watch", "--no-follow", "--count", "1", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["commit"] == before
    assert json.loads(res.stdout)["living"] == []
