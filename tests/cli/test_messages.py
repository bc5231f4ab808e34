"""What the commands say to a person: once, with what was judged, without doubled words."""

from __future__ import annotations

import socket

from conftest import git, gitstate, make_repo, walk


def test_serve_on_a_busy_port_says_so_before_anything_else(repo):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = gitstate(repo, "serve", "--port", str(port))
    assert res.returncode == 1
    assert "serving" not in res.stdout
    assert f"cannot serve at 127.0.0.1:{port}" in res.stderr and "--port" in res.stderr


def test_init_says_the_approvals_banner_once(empty_repo):
    first = gitstate(empty_repo, "init", "--human", "zach")
    assert first.returncode == 0 and "approvals: an Approved-by: trailer" in first.stdout
    again = gitstate(empty_repo, "init")
    assert again.returncode == 0 and "approvals:" not in again.stdout
    assert "(nothing to change)" in again.stdout


def test_init_server_says_what_guards_the_hub(tmp_path):
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    res = gitstate(hub, "init", "--server")
    assert res.returncode == 0
    assert "each push is judged by the lifecycle committed in its own history" in res.stdout
    assert "(as committed" not in res.stdout


def test_shutdown_says_where_each_agent_came_from(repo):
    assert gitstate(repo, "spawn", "arch").returncode == 0
    walk(repo, "arch", "inbox", "distill")
    res = gitstate(repo, "shutdown")
    assert res.returncode == 0, res.stderr
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("arch:")][-1]
    assert line.startswith("arch: distill -> "), line


def test_a_move_without_a_message_is_logged_once(repo):
    assert gitstate(repo, "spawn", "ann").returncode == 0
    assert gitstate(repo, "transition", "ann", "inbox").returncode == 0
    line = gitstate(repo, "log", "ann").stdout.splitlines()[-1]
    assert line.count("bootstrap -> inbox") == 1, line
    assert gitstate(repo, "transition", "ann", "distill", "-m", "done reading").returncode == 0
    assert "inbox -> distill  done reading" in gitstate(repo, "log", "ann").stdout


def test_verify_without_a_committed_lifecycle_says_what_it_judged(tmp_path):
    work = make_repo(tmp_path / "work")
    assert gitstate(work, "init", "--no-commit").returncode == 0
    res = gitstate(work, "verify")
    assert res.returncode == 0
    assert "ok:" not in res.stdout and "no lifecycle is committed yet" in res.stdout
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "law: lifecycle")
    res = gitstate(work, "verify")
    assert res.stdout.startswith("ok: every commit follows the lifecycle (")
