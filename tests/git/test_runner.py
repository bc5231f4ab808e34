"""The one door to git: whatever a child writes, and however much, the call returns with all of
it; history is never read through replace objects or grafts."""

from __future__ import annotations

import os
import stat
import sys

from conftest import git, gitstate, make_repo

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


def _git_processes(trace) -> list[list[str]]:
    """The git processes git's trace (GIT_TRACE2_EVENT) names, each by its arguments."""
    import json
    if not trace.exists():
        return []
    return [e["argv"][1:] for e in map(json.loads, trace.read_text().splitlines())
            if e["event"] == "start"]


def test_config_is_listed_once_for_every_key_a_command_asks(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "r")
    git(repo, "config", "gitstate.pushSeconds", "7")
    git(repo, "config", "branch.Main.remote", "upper")    # a subsection keeps its case
    git(repo, "config", "branch.main.remote", "lower")
    git(repo, "config", "--add", "x.many", "first")
    git(repo, "config", "--add", "x.many", "last")
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    g = Git(repo)
    answers = [g.config(k) for k in ("gitstate.pushseconds", "GITSTATE.PUSHSECONDS",
                                     "branch.Main.remote", "branch.main.remote", "x.many",
                                     "x.none", "nokey")]
    assert answers == ["7", "7", "upper", "lower", "last", None, None]
    asked = [a for a in _git_processes(trace) if "config" in a]
    assert len(asked) == 2, asked   # one listing; `nokey` is no key: git says so itself


def test_config_changed_by_another_process_is_read_again(tmp_path):
    """A long-running command (the viewer, the MCP server) sees a `git config` made meanwhile,
    by itself or by anyone, and one the environment makes."""
    repo = make_repo(tmp_path / "r")
    g = Git(repo)
    assert g.config("gitstate.teamBranch") is None
    git(repo, "config", "gitstate.teamBranch", "team")
    assert g.config("gitstate.teamBranch") == "team"
    g.run("config", "gitstate.teamBranch", "line")
    assert g.config("gitstate.teamBranch") == "line"
    made_later = tmp_path / "global.gitconfig"   # a file git reads once it is there
    g.env = {**os.environ, "GIT_CONFIG_GLOBAL": str(made_later)}
    assert g.config("user.nickname") is None
    made_later.write_text("[user]\n\tnickname = zed\n")
    assert g.config("user.nickname") == "zed"
    g.env = {**g.env, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.nickname",
             "GIT_CONFIG_VALUE_0": "from-env"}
    assert g.config("user.nickname") == "from-env"


def test_a_local_move_starts_one_config_and_no_second_repository_lookup(tmp_path, monkeypatch):
    """The repository's facts are asked once per command: its config in one listing, its git
    dir as the command found the repository."""
    from conftest import gitstate, managed_repo
    repo = managed_repo(tmp_path / "r")
    assert gitstate(repo, "spawn", "ann").returncode == 0
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    assert gitstate(repo, "transition", "ann", "inbox").returncode == 0
    ran = _git_processes(trace)
    mine = [a for a in ran if "--no-replace-objects" in a]   # gitstate's, not the hooks'
    assert sum("config" in a for a in mine) <= 1, mine
    assert sum("--absolute-git-dir" in a for a in mine) == 1, mine
    assert sum("diff-index" in a for a in mine) == 1, mine


def test_git_started_by_a_process_whose_stdin_is_closed_still_reads_its_input(repo, tmp_path):
    """A command started with its stdin closed (fd 0 free): the pipe made for git's input is
    then fd 0, and closing it in the child after moving it there left git no stdin at all
    (cat-file answered nothing, and the move ended in an internal error)."""
    import subprocess
    assert gitstate(repo, "spawn", "a1").returncode == 0
    res = subprocess.run([sys.executable, "-m", "gitstate", "transition", "a1", "inbox"],
                         cwd=repo, capture_output=True, text=True, preexec_fn=lambda: os.close(0))
    assert res.returncode == 0, res.stderr
    assert git(repo, "log", "-1", "--format=%s").stdout.startswith("@a1: [STATE:inbox]")
    got = subprocess.run([sys.executable, "-c", "import os, sys\n"
                          "from gitstate.git.runner import Git\n"
                          "print(Git(sys.argv[1]).run('hash-object', '--stdin', "
                          "input=b'x\\n').decode().strip())", str(repo)],
                         capture_output=True, text=True, preexec_fn=lambda: os.close(0))
    assert got.stdout.strip() == git(repo, "hash-object", "--stdin", input="x\n").stdout.strip()
