"""Every command a shipped protocol doc tells an agent to run works as written: each
`` `gitstate ...` `` of protocols/<preset>/<state>.md is run in a repository managed by that
preset, by an agent standing where the doc speaks to it (in that state, or, for the command
that enters it, one move before), with the doc's placeholders filled in."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections import deque

import pytest

from conftest import fill_freeze_state, git, gitstate
from gitstate.law.load import load_lifecycle
from gitstate.resources import preset_dir
from test_presets import managed

PRESETS = ("haak", "era", "registry", "squad", "maos")
FILLS = {"<you>": "ada", "<commit>": "abc1234", "<thread>": "parser", "<name>": "parser",
         "<n>": "62", "<human>": "zach", "<pid>": "4194305",   # above Linux's pid_max
         "<host>": socket.gethostname(), "<id>": "helper", "<type>": "researcher",
         "<whom>": "bob", "<role>": "strategist"}
ROLE = {"registry": "general", "squad": "specialist", "maos": "engineer"}
COMMAND = re.compile(r"`(gitstate [^`]+)`")


def commands(preset: str) -> list[tuple[str, str]]:
    """(state, command line) of every command in the preset's protocol docs."""
    out = []
    for doc in sorted(preset_dir(preset).glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        out += [(doc.stem, m.group(1)) for m in COMMAND.finditer(text.replace("\n  ", " "))]
    return out


CASES = [(p, s, c) for p in PRESETS for s, c in commands(p)]


def test_the_docs_have_commands_to_run():
    assert {p for p, _, _ in CASES} == set(PRESETS)
    assert ("era", "distill", 'gitstate logout <you> --note "..."') \
        in CASES


def _argv(line: str) -> list[str]:
    for key, value in FILLS.items():
        line = line.replace(key, value)
    assert "<" not in line, f"an unknown placeholder in `{line}`"
    return shlex.split(line)[1:]


def _target(lc, argv: list[str]) -> str | None:
    verb = argv[0]
    if verb == "transition":
        return argv[2]
    entered = {"freeze": lambda spec: "freeze_state" in spec.requires,
               "bury": lambda spec: spec.terminal and "final_summary" in spec.requires,
               "logout": lambda spec: bool(spec.log)}.get(verb)
    return next((n for n, spec in lc.states.items() if entered(spec)), None) if entered \
        else None


def _path(lc, goal: str) -> list[str]:
    back, todo = {lc.initial: None}, deque([lc.initial])
    while todo:
        s = todo.popleft()
        for t in lc.targets(s):
            if t not in back:
                back[t] = s
                todo.append(t)
    path = [goal]
    while back[path[-1]] is not None:
        path.append(back[path[-1]])
    return path[::-1][1:]


def _move(repo, lc, state: str, then: str | None) -> None:
    """Move ada to `state` as an agent of the preset would; dated an hour ago when the next
    move is a timed one (so that it is due)."""
    spec = lc.states[state]
    if spec.roster == "frozen" and "freeze_state" in spec.requires:
        gitstate(repo, "freeze", "ada")
        fill_freeze_state(repo / "data" / "freeze-states" / "ada.md")
        args = ["freeze", "ada"]
    elif spec.log:
        args = ["logout", "ada", "--note", "on my way"]
    elif "final_summary" in spec.requires:
        args = ["bury", "ada", "--summary", "done"]
    else:
        args = ["transition", "ada", state]
    current = _state(repo)
    if lc.needs_approval(current, state):
        args = ["wake", "ada", "--approved-by", "zach", "--state", state]
    timed = then is not None and lc.policies.timeout(state, then) is not None
    if timed:
        when = f"@{int(time.time()) - 7200} +0000"
        env = dict(os.environ, GIT_COMMITTER_DATE=when, GIT_AUTHOR_DATE=when)
        res = subprocess.run([sys.executable, "-m", "gitstate", *args], cwd=repo, env=env,
                             capture_output=True, text=True)
    else:
        res = gitstate(repo, *args)
    assert res.returncode == 0, res.stdout + res.stderr


def _state(repo) -> str:
    text = (repo / "agent" / "ada" / "_state.md").read_text()
    return re.search(r"^state: (\S+)", text, re.M).group(1)


@pytest.mark.parametrize("preset,state,line", CASES,
                         ids=[f"{p}/{s}: {c}" for p, s, c in CASES])
def test_a_protocol_docs_command_works_as_written(tmp_path, preset, state, line):
    repo = managed(tmp_path, preset)
    lc = load_lifecycle((repo / "protocols" / "lifecycle.yaml").read_text())
    argv = _argv(line)
    if argv[:2] == ["spawn", "ada"]:             # the agent's own birth
        res = gitstate(repo, *argv)
        assert res.returncode == 0, res.stdout + res.stderr
        return
    role = argv[1] if argv[0] == "handover" else ROLE.get(preset)   # ada gives her role
    res = gitstate(repo, "spawn", "ada", *(["--role", role] if role else []))
    assert res.returncode == 0, res.stderr
    gitstate(repo, "spawn", "bob")
    if argv[0] == "handover":
        gitstate(repo, "spawn", argv[argv.index("--to") + 1])
    target = _target(lc, argv)
    stand = state
    if target == state and lc.roster_of(state) != "living":   # the command that enters it
        stand = next(s for s in lc.states if state in lc.targets(s) and s != state
                     and lc.roster_of(s) == "living")
    if argv[0] == "await" and not lc.states[stand].terminal:   # run once the agent ended
        stand = next(s for s, spec in lc.states.items() if spec.terminal)
    path = _path(lc, stand)
    if argv[0] == "transition" and target and lc.policies.timeout(stand, target):
        path = path or [stand]
    for i, step in enumerate(path):
        nxt = path[i + 1] if i + 1 < len(path) else target
        _move(repo, lc, step, nxt)
    if target and "freeze_state" in lc.states[target].requires:
        fs = repo / "data" / "freeze-states" / "ada.md"
        if not fs.exists():
            gitstate(repo, "freeze", "ada")
        fill_freeze_state(fs)
        git(repo, "add", "-A")
    res = gitstate(repo, *argv)
    # await exits 1 when the awaited agent ended in a failure: what the doc says it reports
    codes = (0, 1) if argv[0] == "await" else (0,)
    assert res.returncode in codes, \
        f"`{line}` (ada in {_state(repo)}):\n{res.stdout}{res.stderr}"
