"""The resident judge (gitstate/doors/resident.py) attacked: a socket that another user
listens on, a judge that runs another Python or another configuration of it. None of them may
judge a commit: the commit is judged in-process then, as without a judge, with the same
verdict and words."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import git, gitstate, managed_repo, set_state_line, snapshot
from test_resident_judge import judged, started_judge, status  # noqa: F401  (a fixture)

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
