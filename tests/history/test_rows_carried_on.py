"""The rows of roster, vacancies and status kept at a tip and carried on by the commits since
(history/kept_rows.py) say exactly what a read of everything says, whatever the commits."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import UNHOOKED, git, gitstate, repo_with
from hypothesis import HealthCheck, given, settings, strategies as st

from gitstate.git.repo import open_managed
from gitstate.history.status import status
from gitstate.history.views import roster, vacant_roles

AGENTS = ["alice", "bob", "carol", "dave", "erin"]
STATES = ["bootstrap", "idle", "inbox", "deep_work", "distill", "frozen", "dead", "nowhere"]
ROLES = ["architect", "librarian", "steward", "auditor", None]


def _spawn_team(repo: Path) -> None:
    for agent, role in (("alice", "architect"), ("bob", "librarian"), ("carol", "steward")):
        assert gitstate(repo, "spawn", agent, "--role", role).returncode == 0


def _front(agent: str, state: str, role: str | None, pct: int, n: int) -> str:
    return (f"---\nagent: {agent}\nstate: {state}\nrole: {role or 'null'}\nmodel: m\n"
            f"person: zach\ndepth: 0\nthread: t-{n}\ncontext_pct: {pct}\nsummary: step {n}\n"
            f"freeze_state: {'data/f.md' if state == 'frozen' else 'null'}\n"
            f"final_summary: {'done' if state == 'dead' else 'null'}\n---\n## Notes\n")


def _commit(repo: Path, subject: str) -> None:
    git(repo, *UNHOOKED, "commit", "-q", "--allow-empty", "-m", subject)


def _step(repo: Path, step: tuple, n: int) -> None:
    kind, who, state, role, pct = step
    path = repo / "agent" / who / "_state.md"
    if kind == "move":          # a tagged move (a spawn where the agent has no file yet)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_front(who, state, role, pct, n))
        git(repo, "add", "-A")
        _commit(repo, f"@{who}: [STATE:{state}] step {n}")
    elif kind == "edit":        # the state file changed by hand, without a tag
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_front(who, state, role, pct, n))
        git(repo, "add", "-A")
        _commit(repo, f"edit {who} by hand {n}")
    elif kind == "tag":         # a tag with no change to the state file
        _commit(repo, f"@{who}: [STATE:{state}] only the tag {n}")
    elif kind == "broken":      # a state file that does not read
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\nstate: [unclosed\n---\n")
        git(repo, "add", "-A")
        _commit(repo, f"@{who}: [STATE:{state}] broken {n}")
    elif kind == "remove" and path.exists():
        git(repo, "rm", "-q", "-r", str(path.parent))
        _commit(repo, f"remove {who} {n}")
    elif kind == "law":         # the lifecycle changes (a comment: read whole again)
        law = repo / "protocols" / "lifecycle.yaml"
        law.write_text(law.read_text() + f"# changed {n}\n")
        git(repo, "add", "-A")
        _commit(repo, f"lifecycle note {n}")
    elif kind == "reset":       # back to an older tip (the kept tip is no ancestor)
        git(repo, "reset", "-q", "--hard", f"HEAD~{min(pct % 3 + 1, _depth(repo) - 3)}")
    elif kind == "merge":       # a side line merged in
        git(repo, "checkout", "-q", "-b", f"side{n}")
        _step(repo, ("move", who, state, role, pct), n)
        git(repo, "checkout", "-q", "main")
        git(repo, *UNHOOKED, "merge", "-q", "--no-ff", "-m", f"merge side {n}", f"side{n}")
    elif kind == "many":        # several moves at once
        for i, other in enumerate(AGENTS):
            _step(repo, ("move", other, STATES[(i + pct) % 7], ROLES[(i + n) % 5], pct), n)


def _depth(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").stdout)


def _views(repo: Path, cold: bool) -> tuple:
    managed = open_managed(str(repo))
    if cold:
        managed.cache_dir = None
    r = roster(managed)
    for group in ("living", "freezer", "cemetery", "unknown"):
        for row in r.get(group, []):
            row.pop("seconds_in_state", None)
    return r, vacant_roles(managed), status(managed)


steps = st.lists(st.tuples(
    st.sampled_from(["move"] * 6 + ["edit", "tag", "broken", "remove", "law", "reset",
                                    "merge", "many"]),
    st.sampled_from(AGENTS), st.sampled_from(STATES), st.sampled_from(ROLES),
    st.integers(0, 100)), min_size=1, max_size=8)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(moves=steps, read_every=st.integers(1, 3))
def test_views_read_on_after_any_commits_are_the_cold_views(tmp_path, moves, read_every):
    where = tmp_path / "runs"
    shutil.rmtree(where, ignore_errors=True)
    repo = repo_with(where, "rows-carried-on", _spawn_team)
    _views(repo, cold=False)
    for n, step in enumerate(moves):
        _step(repo, step, n)
        if n % read_every == 0 or n == len(moves) - 1:
            assert _views(repo, cold=False) == _views(repo, cold=True), (n, step)


def test_a_printed_roster_after_new_commits_is_the_cold_one(tmp_path):
    repo = repo_with(tmp_path, "rows-carried-on", _spawn_team)
    assert gitstate(repo, "roster").returncode == 0
    _step(repo, ("move", "dave", "idle", "architect", 40), 1)
    _step(repo, ("move", "alice", "frozen", "architect", 90), 2)
    _step(repo, ("remove", "bob", "idle", None, 0), 3)
    warm = [gitstate(repo, "roster", *f).stdout for f in ((), ("--json",))]
    warm += [gitstate(repo, c).stdout for c in ("vacancies", "status")]
    shutil.rmtree(repo / ".git" / "gitstate")
    cold = [gitstate(repo, "roster", *f).stdout for f in ((), ("--json",))]
    cold += [gitstate(repo, c).stdout for c in ("vacancies", "status")]
    assert "freezer (1)" in warm[0] and "Role 'librarian'" in warm[2] and "bob" not in warm[3]
    assert [_timeless(t) for t in warm] == [_timeless(t) for t in cold]


def _timeless(text: str) -> str:
    import re
    return re.sub(r'[0-9dhms]+ in state|"seconds_in_state":\s*\d+', "", text)
