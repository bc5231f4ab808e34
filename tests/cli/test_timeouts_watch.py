"""`gitstate watch`: timeouts without cron. A round makes what is due as the system, sweep
before reap (an idle session is suspended, never reaped); it is quiet when nothing is due,
says a move it cannot make once, speaks one JSON line per round, lands each move on a hub with
--push (after getting in step with it), refuses to run on the hub itself, stops on Ctrl-C or
SIGTERM with exit 0, and writes a systemd user service and timer. Times are controlled by
committing with past dates, never by waiting."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import from_template, git, gitstate, make_repo
from hubs import hub_subjects, make_hub
from test_presets import ago, at, managed, ok, roster


def squad_with_sleepers(tmp_path: Path) -> Path:
    """squad: a specialist idle for 45m (napper), one silent in `active` for 45m (worker), and
    a core session idle for an hour (keaton): the timeout and the heartbeat are 30m each."""
    repo = managed(tmp_path, "squad")
    ok(repo, "team", "load", "keaton")
    for agent in ("napper", "worker"):
        ok(repo, "spawn", agent, "--role", "specialist")
    ok(repo, "transition", "napper", "active")
    at(repo, ago(45), "transition", "napper", "idle", "-m", "turn ended")
    at(repo, ago(45), "transition", "worker", "active", "-m", "working")
    at(repo, ago(60), "transition", "keaton", "idle", "-m", "still here")
    return repo


def authors(repo: Path, n: int) -> list[str]:
    return git(repo, "log", f"-{n}", "--format=%an <%ae>|%s").stdout.splitlines()


def test_a_round_sweeps_then_reaps_as_the_system_and_is_quiet_after(tmp_path):
    repo = squad_with_sleepers(tmp_path)
    out = ok(repo, "watch", "--once").stdout.splitlines()
    assert len(out) == 2
    assert out[0].startswith("napper: idle -> suspended (in idle since ")
    assert out[1].startswith("worker: active -> error (no heartbeat for 45m")
    made = authors(repo, 2)
    assert all(line.startswith("gitstate <gitstate@localhost>|") for line in made)
    assert made[0].split("|")[1].startswith("@worker: [STATE:error] reaped: no heartbeat")
    assert made[1].split("|")[1] == "@napper: [STATE:suspended] timeout: idle -> suspended " \
                                    "after 30m"
    states = {r["agent"]: r["state"] for r in roster(repo)["freezer"]}
    assert states == {"napper": "suspended", "worker": "error"}
    assert {r["agent"] for r in roster(repo)["living"]} == {"keaton"}   # core stays warm
    head = git(repo, "rev-parse", "HEAD").stdout
    res = ok(repo, "watch", "--once")            # nothing is due: nothing said, nothing made
    assert (res.stdout, res.stderr) == ("", "")
    assert git(repo, "rev-parse", "HEAD").stdout == head


def test_a_round_in_json_says_what_was_due_and_what_was_done(tmp_path, monkeypatch):
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")   # the command checks its own model too
    repo = squad_with_sleepers(tmp_path)
    res = ok(repo, "watch", "--once", "--json")
    assert res.stdout.count("\n") == 1              # one line per round
    data = json.loads(res.stdout)
    assert data["round"] == 1 and data["ok"] is True and data["error"] is None
    assert [(d["by"], d["agent"], d["from"], d["to"]) for d in data["due"]] == [
        ("sweep", "napper", "idle", "suspended"), ("reap", "worker", "active", "error")]
    assert data["due"][0]["why"] == "timeout 30m"
    assert [(m["agent"], m["from"], m["to"]) for m in data["moves"]] == [
        ("napper", "idle", "suspended"), ("worker", "active", "error")]
    assert data["commit"] == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert data["moves"][1]["commit"] == data["commit"]
    again = json.loads(ok(repo, "watch", "--once", "--json").stdout)
    assert (again["due"], again["moves"], again["left"]) == ([], [], [])
    from gitstate.schema.models import json_schema
    assert json_schema("watch")["title"] == "WatchRound"


STUCK = textwrap.dedent("""\
    name: stuck
    initial: work
    states:
      work: {roster: living}
      done: {roster: dead, terminal: true}
    transitions:
      work: [done]
    policies:
      heartbeat: 1m
    """)


def stuck_repo(tmp_path: Path) -> Path:
    """A lifecycle where a silent agent has no failure state to go to (reap leaves it)."""
    def build(root: Path) -> None:
        repo = make_repo(root / "stuck")
        (repo / "life.yaml").write_text(STUCK)
        assert gitstate(repo, "init", "--lifecycle", str(repo / "life.yaml")).returncode == 0
    repo = from_template(tmp_path, "stuck-lifecycle", build) / "stuck"
    at(repo, ago(5), "spawn", "quiet")
    return repo


def watching(repo: Path, *args: str) -> subprocess.Popen:
    # Ctrl-C as at a terminal: a suite started in the background by a shell without job
    # control ignores SIGINT, and the watch would inherit that
    return subprocess.Popen([sys.executable, "-m", "gitstate", "watch", *args], cwd=repo,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def stopped(proc: subprocess.Popen, how: int) -> tuple[int, str]:
    proc.send_signal(how)
    _out, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_the_loop_says_a_move_it_cannot_make_once_and_stops_on_ctrl_c(tmp_path):
    repo = stuck_repo(tmp_path)
    proc = watching(repo, "--every", "0.01", "--json")
    first, second = (json.loads(proc.stdout.readline()) for _ in range(2))
    code, err = stopped(proc, signal.SIGINT)
    assert code == 0 and "Traceback" not in err, err
    assert (first["round"], second["round"]) == (1, 2)
    for r in (first, second):   # due each round, made in none
        assert [(d["by"], d["agent"], d["to"]) for d in r["due"]] == [("reap", "quiet", None)]
        assert r["moves"] == []
    assert len(first["left"]) == 1 and first["left"][0].startswith("quiet: no heartbeat for 5m")
    assert first["left"][0].endswith("(heartbeat 1m), but from work no failure state is one "
                                     "move away; left as it is")
    assert second["left"] == []                     # said once, not every round


def test_sigterm_ends_the_loop_with_exit_0(tmp_path):
    repo = stuck_repo(tmp_path)
    proc = watching(repo)                           # every 30s: it waits when the signal comes
    assert proc.stdout.readline().startswith("quiet: no heartbeat for 5m")
    code, err = stopped(proc, signal.SIGTERM)
    assert (code, err) == (0, "")


def test_the_options_that_do_not_go_together_are_refused(tmp_path):
    repo = stuck_repo(tmp_path)
    for args, words in ((("--once", "--every", "5s"), "--once runs one round"),
                        (("--every", "soon"), "--every takes a duration"),
                        (("--systemd", "--once"), "--systemd writes units")):
        res = gitstate(repo, "watch", *args)
        assert res.returncode == 2 and words in res.stderr, res.stderr


def test_a_hub_is_watched_through_a_clone_with_push(tmp_path):
    hub = make_hub(tmp_path / "hub.git")
    res = gitstate(hub, "watch", "--once")
    assert res.returncode == 2
    assert "run the watch in a clone of the hub, with --push" in res.stderr
    seed = managed(tmp_path / "seed", "squad")
    git(seed, "remote", "add", "origin", str(hub))
    git(seed, "push", "-q", "-u", "origin", "main")
    watcher = tmp_path / "watcher"
    git(tmp_path, "clone", "-q", str(hub), str(watcher))
    assert gitstate(watcher, "init").returncode == 0
    # an agent's moves land on the hub after the watcher cloned it: it must fetch to see them
    ok(seed, "spawn", "napper", "--role", "specialist", "--push")
    ok(seed, "transition", "napper", "active", "--push")
    at(seed, ago(45), "transition", "napper", "idle", "--push")   # idle 45m, by its date
    idle = git(hub, "rev-parse", "main").stdout.strip()
    res = gitstate(watcher, "watch", "--once")
    assert res.returncode == 0 and res.stdout == "" and "gets them with --push" in res.stderr
    # the hub received that idle a moment ago: by its own clock the timeout is not due, so
    # the move is not made (said, and dropped: no side branch is left for it)
    res = gitstate(watcher, "watch", "--once", "--push")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("napper: idle -> suspended was not made: it does not land on "
                                 "origin/main: the hub refused it: [timeout]")
    assert git(hub, "rev-parse", "main").stdout.strip() == idle
    assert git(watcher, "for-each-ref", "refs/heads/gitstate/").stdout == ""
    # a loop says the refusal once, and tries the move again each round
    proc = watching(watcher, "--push", "--every", "0.01", "--json")
    first = json.loads(proc.stdout.readline())
    assert [line.split(" was not made")[0] for line in first["left"]] == [
        "napper: idle -> suspended"]
    # the next rounds say it no more (a round that fails, e.g. a hub too busy to answer on a
    # loaded machine, ends there and the next one tries again)
    later = [json.loads(proc.stdout.readline())]
    while not later[-1]["ok"] and len(later) < 20:
        later.append(json.loads(proc.stdout.readline()))
    assert [(r["left"], r["moves"]) for r in later] == [([], [])] * len(later), later
    assert later[-1]["ok"], [r["error"] for r in later]
    # half an hour later by the hub's record of when it received it: due, and landed
    git(hub, "notes", "--ref=refs/notes/gitstate-received", "add", "-f", "-m",
        f"received {int(ago(31)[1:].split()[0])}", idle)
    rounds = []
    for _ in range(100):
        rounds.append(json.loads(proc.stdout.readline()))
        if rounds[-1]["moves"] or rounds[-1]["synced"]:
            break
    code, err = stopped(proc, signal.SIGINT)
    assert code == 0 and "Traceback" not in err, err
    # made and landed in one round; or, when that round's push did not get through (a loaded
    # machine), made then and landed by the next round's sync: on the hub either way
    landed = rounds[-1]
    assert [(m["agent"], m.get("to", "suspended")) for m in landed["moves"] or landed["synced"]] \
        == [("napper", "suspended")], [r["error"] or r["left"] for r in rounds]
    assert hub_subjects(hub)[0] == "@napper: [STATE:suspended] timeout: idle -> suspended " \
                                   "after 30m"
    assert git(hub, "log", "-1", "--format=%an", "main").stdout.strip() == "gitstate"
    assert ok(watcher, "watch", "--once", "--push").stdout == ""


def test_systemd_units_run_one_round_in_this_clone_on_a_timer(tmp_path):
    repo = stuck_repo(tmp_path)
    out = ok(repo, "watch", "--systemd", "--push", "--every", "20s").stdout
    where = Path(tmp_path_home_config()) / "systemd" / "user"
    service, timer = sorted(where.glob("gitstate-watch-stuck-*.service")) + sorted(
        where.glob("gitstate-watch-stuck-*.timer"))
    assert f"wrote {service}" in out and f"wrote {timer}" in out
    assert f"systemctl --user enable --now {timer.name}" in out
    text = service.read_text()
    assert f"WorkingDirectory={repo}\n" in text
    assert f"ExecStart={sys.executable} -m gitstate watch --once --push\n" in text
    assert "Type=oneshot" in text
    assert "OnUnitActiveSec=20s" in timer.read_text()
    assert "are up to date" in ok(repo, "watch", "--systemd", "--push", "--every", "20s").stdout
    analyze = subprocess.run(["systemd-analyze", "verify", str(service), str(timer)],
                             capture_output=True, text=True) if _has("systemd-analyze") else None
    if analyze is not None:
        assert analyze.returncode == 0, analyze.stderr


def test_a_unit_names_an_odd_folder_as_systemd_reads_it(tmp_path):
    from gitstate.runtime.systemd import units
    odd = tmp_path / "100% $HOME team"
    found = units(odd, 30, False, python="/opt/my py/bin/python")
    service = next(t for name, t in found.items() if name.endswith(".service"))
    assert f"WorkingDirectory={str(odd).replace('%', '%%')}\n" in service
    assert 'ExecStart="/opt/my py/bin/python" -m gitstate watch --once\n' in service
    with pytest.raises(Exception, match="line break"):
        units(tmp_path / "a\nb", 30, False)


def tmp_path_home_config() -> str:
    import os
    return os.environ["XDG_CONFIG_HOME"]


def _has(program: str) -> bool:
    import shutil
    return shutil.which(program) is not None


def test_init_writes_the_watch_units_where_the_lead_asks(tmp_path, monkeypatch):
    monkeypatch.setenv("GITSTATE_CHECK_JSON", "1")
    repo = stuck_repo(tmp_path)
    data = json.loads(ok(repo, "init", "--watch", "--json").stdout)
    [entry] = data["integrations"]
    timer = Path(entry["path"])
    assert (entry["kind"], entry["name"], entry["changed"]) == ("watch", "systemd", True)
    assert entry["added"] == [timer.with_suffix(".service").name, timer.name]
    assert entry["then"].endswith(f"systemctl --user enable --now {timer.name}")
    service = timer.with_suffix(".service").read_text()
    assert "watch --once\n" in service                   # no upstream: the moves stay here
    again = ok(repo, "init", "--watch").stdout
    assert f"{timer} (watch systemd): nothing to change" in again and "start it: " in again
    hub = make_hub(tmp_path / "hub.git")
    res = gitstate(hub, "init", "--server", "--watch")
    assert res.returncode == 2 and "watched through a clone" in res.stderr
