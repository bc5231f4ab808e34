"""A commit that spawns 10,000 agents at once, made in a clone with every hook off: one commit
moves one agent (`multiple-agents`), and each new agent also overfills the pool
(`max-living`). The hub refuses it and `verify --no-cache` flags it, each saying the first few
problems of a rule and counting the rest, not printing 10,000 lines; `verify --json` keeps
them all. (How long each door takes is measured in `bench/wide.py`, not here.)"""

from __future__ import annotations

import subprocess

from conftest import gitstate
from trusthelp import NO_HOOKS, assert_push_refused, cached_hub, gs, push_lawful, sha, \
    verify_json

WIDE = 10_000
SHOWN = 5


def alice_spawned(work) -> None:
    gs(work, "spawn", "alice")
    push_lawful(work)


def spawn_many(work, n: int) -> str:
    """One commit on main spawning n agents, each state file alice's with the id changed,
    written by `git fast-import` with every hook off. Returns its id."""
    alice = (work / "agent" / "alice" / "_state.md").read_text()
    ids = [f"w{i:05d}" for i in range(n)]
    msg = f"@{ids[0]}: [STATE:bootstrap] {n} at once".encode()
    parts = [b"commit refs/heads/main\n",
             b"committer Test Person <test@example.invalid> 1790000000 +0000\n",
             f"data {len(msg)}\n".encode(), msg, b"\n", f"from {sha(work)}\n".encode()]
    for a in ids:
        text = alice.replace("agent: alice\n", f"agent: {a}\n").encode()
        parts += [f"M 100644 inline agent/{a}/_state.md\n".encode(),
                  f"data {len(text)}\n".encode(), text, b"\n"]
    subprocess.run(["git", *NO_HOOKS, "fast-import", "--quiet"], cwd=work, check=True,
                   input=b"".join(parts))
    return sha(work)


def test_a_commit_of_ten_thousand_agents_is_refused_in_few_words(tmp_path):
    hub, work = cached_hub(tmp_path, "alice-spawned", alice_spawned)
    before = sha(work)
    wide = spawn_many(work, WIDE)
    assert wide != before

    # the hub: refused, named, summarised, and no ref of the hub moved
    stderr = assert_push_refused(work, hub, ["multiple-agents", "max-living"])
    assert f"... and {WIDE - SHOWN:,} more [max-living] problems in this commit" in stderr
    assert stderr.count("[max-living] agent/") == SHOWN
    assert len(stderr.splitlines()) < 30, stderr[:3000]

    # verify --no-cache, text: exit 1, the same summary
    res = gitstate(work, "verify", "--no-cache")
    assert res.returncode == 1, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) < 20, res.stdout[:3000]
    assert any(ln.startswith(f"{wide[:10]} [multiple-agents] ") for ln in lines)
    assert sum(ln.startswith(f"{wide[:10]} [max-living] ") for ln in lines) == SHOWN
    assert f"{wide[:10]} ... and {WIDE - SHOWN:,} more [max-living] problems in this commit" \
        in res.stdout
    assert lines[-1] == "1 commit broke the rules"

    # verify --no-cache --json: every problem, for machine readers
    rc, problems = verify_json(work, "--no-cache")
    assert rc == 1
    assert {p["commit"] for p in problems} == {wide}
    rules = [p["rule"] for p in problems]
    assert rules.count("multiple-agents") == 1
    assert rules.count("max-living") == WIDE
    assert len(rules) == WIDE + 1
    assert {p["where"] for p in problems if p["rule"] == "max-living"} == \
        {f"agent/w{i:05d}/_state.md:3" for i in range(WIDE)}

