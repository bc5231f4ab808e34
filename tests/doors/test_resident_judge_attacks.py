"""The resident judge (gitstate/doors/resident.py) attacked: a socket that another user
listens on, a judge that runs another Python or another configuration of it. None of them may
judge a commit: the commit is judged in-process then, as without a judge, with the same
verdict and words."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import git, gitstate, managed_repo, set_state_line, snapshot
from test_resident_judge import judged, move, started_judge, status, until  # noqa: F401  (a fixture)

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")

NOBODY = 65534

# A listener that answers every client "judged, exit code 0" and says on its stdout how many
# bytes of request each sent (a judge's environment, arguments and streams would reach it).
FAKE = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[2]))   # listen as that user
s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    data, fds, _f, _a = socket.recv_fds(c, 1 << 20, 3)
    for fd in fds:
        os.close(fd)
    if data:                                    # (a client may connect and say nothing)
        print(len(data), flush=True)
    try:
        c.sendall(b"J\0")
    except OSError:
        pass
    c.close()
"""


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = managed_repo(tmp_path / "repo")
    assert gitstate(repo, "spawn", "alice").returncode == 0
    return repo


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs a second user (run as root)")
def test_a_socket_another_user_listens_on_is_never_told_a_commit(repo, tmp_path, monkeypatch):
    """A commit staged in an index kept in a shared folder (GIT_INDEX_FILE=/tmp/...) looks for
    its judge beside that index, where anyone may have put a socket: the client must not hand
    that user its environment and streams, nor take its "judged, 0" for a verdict."""
    monkeypatch.setenv("GITSTATE_JUDGE", "1")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    theirs = shared / "gitstate"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    sock = theirs / "judge.sock"
    fake = subprocess.Popen([sys.executable, "-c", FAKE, str(sock), str(NOBODY)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout.readline() == "ready\n"
        index = shared / "index"
        shutil.copy(repo / ".git" / "index", index)
        monkeypatch.setenv("GIT_INDEX_FILE", str(index))
        set_state_line(repo, "alice", "state", "deep_work")      # bootstrap -> deep_work
        head = git(repo, "rev-parse", "HEAD").stdout
        res = git(repo, "commit", "-qam", "@alice: [STATE:deep_work] on", check=False)
        assert res.returncode == 1 and "[illegal-transition]" in res.stderr, res.stderr
        assert git(repo, "rev-parse", "HEAD").stdout == head
    finally:
        fake.kill()
        told = fake.communicate()[0]
    assert told == "", f"another user's listener was sent requests of {told.split()} bytes"


def _other_python(where: Path) -> Path:
    """A Python (a venv of this one) that imports another gitstate, whose hooks refuse all."""
    venv.EnvBuilder(with_pip=False).create(where)
    lib = where / "other"
    (lib / "gitstate" / "doors").mkdir(parents=True)
    (lib / "gitstate" / "__init__.py").write_text("")
    (lib / "gitstate" / "doors" / "__init__.py").write_text("")
    (lib / "gitstate" / "doors" / "hooks.py").write_text(
        "import sys\ndef main():\n    print('the other gitstate refuses', file=sys.stderr)\n"
        "    return 1\n")
    site = next(where.glob("lib/python*/site-packages"))
    (site / "other.pth").write_text(str(lib) + "\n")
    return where / "bin" / "python"


def test_a_commit_whose_hooks_run_another_python_is_not_judged_by_this_ones_judge(
        repo, tmp_path, judged, monkeypatch):  # noqa: F811
    started_judge(repo, judged)
    monkeypatch.setenv("GITSTATE_PYTHON", str(_other_python(tmp_path / "other-venv")))
    set_state_line(repo, "alice", "state", "distill")
    before = snapshot(repo)
    res = git(repo, "commit", "-qam", "@alice: [STATE:distill] on", check=False)
    assert res.returncode == 1 and "the other gitstate refuses" in res.stderr, res.stderr
    assert snapshot(repo) == before and status(repo)["served"] == 0


@pytest.mark.parametrize("name,value", [
    ("PYTHONIOENCODING", "ascii"),            # how the hook's words reach the terminal
    ("PYTHONUTF8", "0"),
    ("LC_ALL", "POSIX"),
])
def test_a_commit_whose_python_is_configured_otherwise_is_not_judged_by_the_judge(
        repo, judged, monkeypatch, name, value):  # noqa: F811
    """Python reads these at its start: a judge started without them would not judge (or
    word) a commit as its in-process hook would."""
    started_judge(repo, judged)
    monkeypatch.setenv(name, value)
    said = []
    for judge in ("1", "0"):                                     # by the judge, in-process
        monkeypatch.setenv("GITSTATE_JUDGE", judge)
        set_state_line(repo, "alice", "state", "dead")           # no final_summary
        res = git(repo, "commit", "-qam", "@alice: [STATE:dead] gone", check=False)
        said.append((res.returncode, res.stderr))
        git(repo, "checkout", "-q", "--", ".")
    assert said[0] == said[1] and said[0][0] == 1
    assert status(repo)["served"] == 0


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs a second user (run as root)")
def test_no_judge_settles_in_a_folder_another_user_may_write_in(tmp_path, monkeypatch):
    """Beside an index in a shared folder, `gitstate/` may be another user's: a judge there
    would write its status where that user can point it elsewhere, and listen where that user
    can replace it. It does not start; the commits there are judged in-process."""
    from gitstate.doors.resident_server import Judge
    monkeypatch.chdir(tmp_path)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    for folder in (theirs, shared):
        assert Judge(str(folder / "judge.sock"), 60).serve() == 1
        assert list(folder.iterdir()) == []
    assert Path.cwd() == tmp_path


# Sequences of commands (sh, in the work tree; `st X` writes alice's state) run in two copies
# of one repository, one with a judge and one without: each says the same, step by step. The
# first step of each is a legal move, which starts the judge that serves the rest.
ST = 'st() { sed -i "s/^state: .*/state: $1/" agent/alice/_state.md; }; '
WARM = "st inbox && git commit -qam '@alice: [STATE:inbox] reading'"
SEQUENCES = {
    "partial": [WARM,
                "echo x > notes && git add notes && st deep_work && "
                "git commit -qm '@alice: [STATE:deep_work] x' agent/alice/_state.md",
                "git commit -qm '@alice: [STATE:distill] lies' -- agent/alice/_state.md",
                "st distill && git commit -qm '@alice: [STATE:distill] y' -- agent/alice",
                "git commit -qm 'notes only' -- notes", "git log --format=%s"],
    "all": [WARM, "st distill && echo y > other && git add other && git commit -qam untagged",
            "git commit -qam '@alice: [STATE:distill] d'", "git log --format=%s"],
    "amend": [WARM, "st distill && git commit -qam '@alice: [STATE:distill] a'",
              "st deep_work && git commit -q --amend -am '@alice: [STATE:deep_work] skip'",
              "git commit -q --amend -m '@alice: [STATE:distill] again'",
              "git commit -q --amend -am '@alice: [STATE:inbox] back'",
              "git log --format=%s"],
    "trailers": [WARM, "st distill && git commit -qam '@alice: [STATE:distill] t\n\n"
                       "Approved-by: alice'",
                 "git commit -qam '@alice: [STATE:distill] t\n\nCo-authored-by: x <x@y>'",
                 "git commit -qam '@alice: [STATE:distill] t\n\nGitstate-Operation: z'",
                 "git log --format=%s%n%b"],
    "agent": [WARM, "st distill && GITSTATE_AGENT=bob git commit -qam 'no prefix'",
              "GITSTATE_AGENT=alice git commit -qam '[STATE:distill] as alice'",
              "st deep_work && git commit -qam 'by nobody'",
              "GITSTATE_AGENT=bob git commit -qam '@alice: [STATE:deep_work] bob for alice'",
              "git log --format=%s"],
    "git-dir": [WARM, "st distill && GIT_DIR=$PWD/.git GIT_WORK_TREE=$PWD "
                      "git commit -qam '@alice: [STATE:deep_work] lies'",
                "cd agent && GIT_DIR=../.git GIT_WORK_TREE=.. "
                "git commit -qam '@alice: [STATE:distill] from below'", "git log --format=%s"],
    "worktree": ["git worktree add -q ../wt-${PWD##*/} -b side && cd ../wt-${PWD##*/} && "
                 + WARM,
                 "cd ../wt-${PWD##*/} && st deep_work && git commit -qam '@alice: [STATE:x] w'",
                 "cd ../wt-${PWD##*/} && st distill && git commit -qam '@alice: [STATE:distill] w'",
                 "cd ../wt-${PWD##*/} && git log --format=%s"],
    "umask": [WARM, "umask 077 && st distill && git commit -qam '@alice: [STATE:distill] u' "
                    "&& ls -l .git/gitstate-expect | cut -c1-10"],
    "odd-bytes": [WARM, "git config core.quotePath false && d=agent/$(printf 'b\\377') && "
                        "mkdir $d && sed 's/alice/b/' agent/alice/_state.md > $d/_state.md && "
                        "git add -A && git commit -qm '@alice: [STATE:inbox] odd'",
                  "git commit -qm 'odd, untagged'", "git log --format=%s"],
    "merge": [WARM, "git checkout -qb side && st distill && "
                    "git commit -qam '@alice: [STATE:distill] side'",
              "git checkout -q - && echo m > m && git add m && git commit -qm ordinary",
              "git merge -q --no-edit side -m '@alice: [STATE:distill] merged'",
              "git log --format=%s"],
}


def _stop_all(folder: Path) -> None:
    for found in folder.glob("**/.git/**/judge.json"):
        try:
            os.kill(json.loads(found.read_text())["pid"], signal.SIGKILL)
        except (OSError, ValueError):
            pass


def _same(text: str, tmp_path: Path, judge: str) -> str:
    """Words as both copies would say them: their folders and commit ids (the commits' times
    differ) written alike."""
    text = text.replace(str(tmp_path), "TMP").replace(f"copy-{judge}", "C")
    if text.startswith("Traceback"):    # a bug: its frames differ, never what it says
        text = text.strip().splitlines()[-1]
    return re.sub(r"\b[0-9a-f]{7,64}\b", "H", text)


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_the_judge_says_what_the_in_process_hook_says_step_by_step(tmp_path, judged,  # noqa: F811
                                                                   monkeypatch, request, name):
    base = managed_repo(tmp_path / "base")
    assert gitstate(base, "spawn", "alice").returncode == 0
    said = {}
    request.addfinalizer(lambda: _stop_all(tmp_path))      # linked worktrees' judges too
    for judge in ("1", "0"):
        copy = tmp_path / f"copy-{judge}"
        shutil.copytree(base, copy, symlinks=True)
        judged.append(copy)
        monkeypatch.setenv("GITSTATE_JUDGE", judge)
        steps = []
        for step in SEQUENCES[name]:
            res = subprocess.run(["sh", "-c", ST + step], cwd=copy, capture_output=True,
                                 text=True, errors="surrogateescape")
            steps.append((step, res.returncode, res.stdout, _same(res.stderr, tmp_path, judge)))
            if judge == "1" and len(steps) == 1:        # the judge the first step started
                assert until(lambda c=copy: list(c.glob(".git/**/judge.json")))
        said[judge] = steps
    for by_judge, in_process in zip(said["1"], said["0"], strict=True):
        assert by_judge == in_process, f"\n{by_judge}\n{in_process}"
    served = [json.loads(p.read_text())["served"]
              for p in (tmp_path / "copy-1").glob(".git/**/judge.json")]
    assert served and max(served) >= 1, said["1"]


def test_a_judge_settles_beside_an_index_whose_folder_its_group_may_write_in(repo, judged):  # noqa: F811
    """A umask of 002 makes gitstate's folders group-writable: the judge still serves there
    (its clients make sure it is their user's), and writes its status to a file of its own,
    never through one planted at its name."""
    folder = repo / ".git" / "gitstate"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o775)
    started_judge(repo, judged)
    assert move(repo, "alice", "distill").returncode == 0
    assert status(repo)["served"] == 1


def test_the_judges_status_is_never_written_through_a_planted_link(tmp_path, monkeypatch):
    from gitstate.doors.resident_server import Judge
    folder = tmp_path / "gitstate"
    folder.mkdir(mode=0o775)
    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    monkeypatch.chdir(folder)
    (folder / f"judge.json.{os.getpid()}.tmp").symlink_to(victim)
    judge = Judge(str(folder / "judge.sock"), 60)
    judge._say()
    assert victim.read_text() == "mine\n"
    assert json.loads((folder / "judge.json").read_text())["pid"] == os.getpid()


@pytest.mark.parametrize("judge", ["1", "0"])
def test_a_gitstate_committed_at_the_top_of_the_work_tree_judges_nothing(repo, judged,  # noqa: F811
                                                                        monkeypatch, judge):
    """The hooks run at the top of the work tree. A `gitstate/` package committed there (an
    ordinary commit: no Python runs for it) must not be the gitstate that judges the next
    state commit, by the judge or in-process: Python's start must not look in that folder."""
    judged.append(repo)
    monkeypatch.setenv("GITSTATE_JUDGE", judge)
    fake = repo / "gitstate" / "doors"
    fake.mkdir(parents=True)
    (repo / "gitstate" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "hooks.py").write_text("def main():\n    return 0\n")
    (fake / "resident_server.py").write_text("")
    git(repo, "add", "gitstate")
    git(repo, "commit", "-qm", "a helper package")
    for _ in range(2):                                # in-process, then by a judge if any
        set_state_line(repo, "alice", "state", "deep_work")          # bootstrap -> deep_work
        before = snapshot(repo)
        res = git(repo, "commit", "-qam", "@alice: [STATE:deep_work] skipping", check=False)
        assert res.returncode == 1 and "[illegal-transition]" in res.stderr, res.stderr
        assert snapshot(repo) == before
    # nor the ref guard's, which judges a commit the commit hooks never saw
    res = git(repo, "commit", "--no-verify", "-qam", "@alice: [STATE:deep_work] skipping",
              check=False)
    assert res.returncode != 0 and "illegal-transition" in res.stderr, res.stderr
    assert snapshot(repo) == before


def test_a_commit_with_an_environment_too_large_for_the_judge_is_judged_in_process(
        repo, judged, monkeypatch):  # noqa: F811
    """A request over the judge's limit (an environment of more than 1 MiB) is answered "not
    served": judged in-process, never failed, and the judge keeps none of the commit's
    streams (a caller reading git's output to its end does not wait for the judge)."""
    started_judge(repo, judged)
    for i in range(10):
        monkeypatch.setenv(f"GITSTATE_TEST_BULK_{i}", "x" * 120_000)
    said = []
    for state in ("deep_work", "distill"):           # illegal from inbox, then legal
        set_state_line(repo, "alice", "state", state)
        res = subprocess.run(["git", "commit", "-qam", f"@alice: [STATE:{state}] big"],
                             cwd=repo, capture_output=True, text=True, timeout=30)
        said.append(res.returncode)
        git(repo, "checkout", "-q", "--", ".")
        if state == "deep_work":
            assert "[illegal-transition]" in res.stderr, res.stderr
    assert said == [1, 0] and status(repo)["served"] == 0
    for i in range(10):
        monkeypatch.delenv(f"GITSTATE_TEST_BULK_{i}")
    assert move(repo, "alice", "deep_work").returncode == 0
    assert status(repo)["served"] == 1


@pytest.mark.skipif(not shutil.which("unshare") or not hasattr(os, "geteuid")
                    or os.geteuid() != 0, reason="needs a mount namespace (run as root)")
def test_a_commit_made_where_paths_name_other_folders_is_not_judged_by_the_judge(
        repo, tmp_path, judged, monkeypatch):  # noqa: F811
    """A commit from another mount namespace (a container, a sandbox) reaches the judge
    through the same socket, but its folder and its GIT_* paths name other folders there: here
    `copy` is the repository itself inside, and a copy where alice is further along outside.
    The judge must not judge it (in `copy` outside, alice's move would be legal)."""
    started_judge(repo, judged)                                     # alice: inbox
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns("judge.*"))
    monkeypatch.setenv("GITSTATE_JUDGE", "0")
    set_state_line(copy, "alice", "state", "distill")
    git(copy, "commit", "-qam", "@alice: [STATE:distill] ahead")     # copy's alice: distill
    monkeypatch.setenv("GITSTATE_JUDGE", "1")
    set_state_line(repo, "alice", "state", "deep_work")             # inbox -> deep_work
    script = (f'mount --bind "{repo}" "{copy}" && cd "{copy}" && '
              "git commit -qam '@alice: [STATE:deep_work] from inside'")
    res = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 1 and "[illegal-transition]" in res.stderr, res.stderr
    assert status(repo)["served"] == 0
    # the judge that commit's hook started inside finds this one answering, and goes
    assert until(lambda: not _judges_on(copy / ".git" / "gitstate" / "judge.sock"))


def _judges_on(sock: Path) -> list[int]:
    """The processes started to judge on `sock`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.fsencode(sock) in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_request_the_judge_cannot_take_the_place_of_is_answered_not_served(repo, judged,  # noqa: F811
                                                                             tmp_path):
    """A client whose folder the judge cannot enter gets "not served" (it then judges
    in-process), and the judge stays for the next commit."""
    from gitstate.doors.resident import TAG
    started_judge(repo, judged)
    python = git(repo, "config", "gitstate.python").stdout.strip()
    env = [k + b"=" + v for k, v in os.environb.items()]
    request = b"\0".join([TAG, os.fsencode(python), os.fsencode(tmp_path / "gone"),
                          b"%d" % os.getpid(), b"18", b"1", b"pre-commit"] + env)
    with socket.socket(socket.AF_UNIX) as conn, open(os.devnull, "rb") as null:
        conn.connect(str(repo / ".git" / "gitstate" / "judge.sock"))
        socket.send_fds(conn, [len(request).to_bytes(4, "big") + request], [null.fileno()] * 3)
        assert conn.recv(2) == b"N"
    assert move(repo, "alice", "distill").returncode == 0
    assert status(repo)["served"] == 1


def test_a_judge_that_serves_none_of_the_commits_it_is_asked_goes_when_idle(repo, judged,  # noqa: F811
                                                                            monkeypatch):
    """Its clients judge in-process and cannot start a judge of their own while it answers:
    only a commit it judged keeps it."""
    from test_resident_judge import _alive
    monkeypatch.setenv("GITSTATE_JUDGE_IDLE", "2")
    pid = started_judge(repo, judged)["pid"]
    monkeypatch.setenv("LC_ALL", "POSIX")                   # another locale: not served
    set_state_line(repo, "alice", "state", "deep_work")

    def asked_and_gone() -> bool:
        res = git(repo, "commit", "-qam", "@alice: [STATE:deep_work] on", check=False)
        assert res.returncode == 1 and "[illegal-transition]" in res.stderr
        return not _alive(pid)

    assert until(asked_and_gone, seconds=30)
    assert status(repo) is None or status(repo)["pid"] != pid


def test_an_index_in_a_shared_folder_keeps_the_verdicts_in_the_git_dir(repo, tmp_path,
                                                                       monkeypatch):
    """With GIT_INDEX_FILE in a folder other users may write in (sticky, as /tmp is), the hooks
    keep what they leave between them in the git dir: links planted in the shared folder under
    the names of the verdict files are neither followed nor read, and the commit is judged."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    planted = ("gitstate-ordinary", "gitstate-expect")
    for name in planted:
        (shared / name).symlink_to(victim)
    (shared / "gitstate").mkdir()
    (shared / "gitstate" / "pending.json").write_text("{not a journal of this repository")
    index = shared / "index"
    shutil.copy(repo / ".git" / "index", index)
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    head = git(repo, "rev-parse", "HEAD").stdout
    set_state_line(repo, "alice", "state", "deep_work")       # bootstrap -> deep_work: illegal
    res = git(repo, "commit", "-qam", "@alice: [STATE:deep_work] on", check=False)
    assert res.returncode == 1 and "[illegal-transition]" in res.stderr, res.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == head
    set_state_line(repo, "alice", "state", "inbox")            # bootstrap -> inbox: legal
    res = git(repo, "commit", "-qam", "@alice: [STATE:inbox] to work", check=False)
    assert res.returncode == 0, res.stderr
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "@alice: [STATE:inbox] to work"
    assert victim.read_text() == "mine\n"
    assert all((shared / name).is_symlink() for name in planted)
    assert sorted(p.name for p in shared.iterdir()) == sorted(
        [*planted, "gitstate", "index"]), "the hooks left files in the shared folder"
