"""The one door to git: whatever a child writes, and however much, the call returns with all of
it; history is never read through replace objects or grafts."""

from __future__ import annotations

import os
import stat
import sys

from conftest import git, make_repo
from gitstate.git.runner import Git


def _fake_git(bindir, script: str) -> None:
    """A `git` on PATH that is this Python running `script` (the door runs whatever PATH says)."""
    bindir.mkdir()
    exe = bindir / "git"
    exe.write_text(f"#!{sys.executable}\n{script}")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def test_a_child_filling_both_pipes_returns_everything(tmp_path, monkeypatch):
    """1 MB on stderr while stdout is still open (and 1 MB on stdout): reading one pipe to its
    end before the other would wait forever once stderr's pipe buffer (64 KiB) is full."""
    _fake_git(tmp_path / "bin", "import sys\n"
              "sys.stderr.write('e' * 1_000_000); sys.stderr.flush()\n"
              "sys.stdout.write('o' * 1_000_000); sys.stdout.flush()\n"
              "sys.stderr.write('E' * 1_000_000); sys.exit(3)\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    code, out, err = Git(tmp_path).call("anything")
    assert code == 3
    assert out == b"o" * 1_000_000
    assert err == b"e" * 1_000_000 + b"E" * 1_000_000


def test_a_large_input_and_large_outputs_go_through_together(tmp_path, monkeypatch):
    _fake_git(tmp_path / "bin", "import sys\n"
              "data = sys.stdin.buffer.read()\n"
              "sys.stderr.buffer.write(data); sys.stdout.buffer.write(data[::-1])\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    data = os.urandom(300_000)
    code, out, err = Git(tmp_path).call("anything", input=data)
    assert (code, out, err) == (0, data[::-1], data)


def test_a_long_read_goes_through_files_and_returns_everything(tmp_path, monkeypatch):
    """A long read (verify's batches of objects) hands git its input and takes its output
    through files; both pipes' worth, the exit code and the options bounding git's memory
    arrive as they would through pipes."""
    _fake_git(tmp_path / "bin", "import sys\n"
              "data = sys.stdin.buffer.read()\n"
              "sys.stderr.buffer.write(' '.join(sys.argv[1:]).encode() + data[:10])\n"
              "sys.stdout.buffer.write(data[::-1] * 4); sys.exit(5)\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    data = os.urandom(300_000)
    code, out, err = Git(tmp_path).call("anything", input=data, long_read=True)
    assert (code, out) == (5, data[::-1] * 4)
    assert b"core.deltaBaseCacheLimit" in err and err.endswith(data[:10])


def test_history_is_read_without_replace_objects_or_grafts(tmp_path):
    repo = make_repo(tmp_path / "r")
    for name in ("one", "two", "three"):
        (repo / name).write_text(name)
        git(repo, "add", name)
        git(repo, "commit", "-q", "-m", name)
    shas = git(repo, "rev-list", "HEAD").stdout.split()   # three, two, one
    # git itself now sees `two` as `one` (a replace ref) and `three` as parentless (a graft)
    git(repo, "replace", shas[1], shas[2])
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(shas[0] + "\n")
    assert git(repo, "rev-list", "HEAD").stdout.split() == [shas[0]]
    g = Git(repo)
    assert g.text("rev-list", "HEAD").split() == shas
    assert g.cat_files([f"{shas[1]}:two"]) == [b"two"]
    assert [s.decode() for s in g.stream("rev-list", "HEAD")] == shas
