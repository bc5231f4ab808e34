"""A hub served over smart HTTP (nginx + fcgiwrap + `git http-backend`, on 127.0.0.1) judges
every push with its own hooks, as under `git daemon`: a commit that breaks the lifecycle is
refused with the rule and the hub's words, and the landing queue answers `--push` through
git's push report with the landed commit or the rule."""

from __future__ import annotations

import json

import pytest
from conftest import git, gitstate
from test_swarm import swarm

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(swarm.http_missing() is not None,
                                 reason=f"smart HTTP hub: {swarm.http_missing()} "
                                        "(`.ci/run` installs them as root)")]


@pytest.fixture
def http_clone(tmp_path):
    hub = swarm.make_hub(tmp_path)
    server = swarm.HttpHub(tmp_path)
    try:
        clones = []
        for name in ("a", "b"):
            c = tmp_path / name
            git(tmp_path, "clone", "-q", server.url("hub.git"), str(c))
            assert gitstate(c, "init").returncode == 0
            clones.append(c)
        yield hub, clones
    finally:
        server.stop()


def test_an_illegal_push_over_http_is_refused_with_the_rule(http_clone):
    hub, (a, _b) = http_clone
    res = gitstate(a, "spawn", "alice", "--push")
    assert res.returncode == 0 and "landed on origin/main" in res.stdout, res.stderr
    state = a / "agent" / "alice" / "_state.md"
    state.write_text(state.read_text().replace("state: bootstrap", "state: deep_work"))
    # a clone without hooks: only the hub stands in the way
    git(a, "-c", "core.hooksPath=/dev/null", "commit", "-qam", "@alice: [STATE:deep_work] skip")
    tip = git(hub, "rev-parse", "main").stdout
    res = git(a, "-c", "core.hooksPath=/dev/null", "push", "origin", "HEAD:main", check=False)
    assert res.returncode != 0 and "pre-receive hook declined" in res.stderr
    assert "[illegal-transition]" in res.stderr and "alice is in bootstrap" in res.stderr
    assert git(hub, "rev-parse", "main").stdout == tip


def test_the_queue_answers_over_http_with_the_rule(http_clone):
    hub, (a, b) = http_clone
    res = gitstate(a, "spawn", "arch1", "--role", "architect", "--push", "--json")
    assert json.loads(res.stdout)["push"]["outcome"] == "landed"
    res = gitstate(b, "spawn", "arch2", "--role", "architect", "--push", "--json")
    out = json.loads(res.stdout)["push"]              # b was behind: decided at the hub
    assert res.returncode == 1 and out["outcome"] == "illegal" and out["rule"] == "role-max"
    assert "arch2" not in git(hub, "log", "--format=%s", "main").stdout
