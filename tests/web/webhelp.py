"""Shared by the viewer's tests: the demo's repository, an HTTP client on the app, and a real
server on a free port of this machine."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from html import unescape
from pathlib import Path

import pytest

from conftest import gitstate


def make_demo(path: Path) -> Path:
    """`gitstate demo` in `path`: alice dead (architect, handed to dan), bob and dan living, carol
    frozen (steward, vacant)."""
    res = gitstate(path.parent, "demo", "--dir", str(path))
    assert res.returncode == 0, res.stdout + res.stderr
    return path


def client(repo: Path):
    pytest.importorskip("starlette", reason="pip install 'gitstate-agents[web]' to test the server")
    from starlette.testclient import TestClient
    from gitstate.git.repo import open_managed
    from gitstate.web.asgi import create_app
    from gitstate.web.asgi import LOCAL_HOSTS
    return TestClient(create_app(open_managed(str(repo)), hosts=LOCAL_HOSTS + ["testserver"]))


def section(html: str, key: str) -> str:
    """The HTML of one roster section (living, freezer, cemetery)."""
    m = re.search(rf'<section aria-labelledby="h-{key}".*?</section>', html, re.S)
    assert m, f"no section {key}"
    return m.group(0)


def text(html: str) -> str:
    """What a reader sees: tags dropped, entities decoded, spaces squeezed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """uvicorn serving the app in a thread, on 127.0.0.1, until stopped."""

    def __init__(self, repo: Path):
        import uvicorn
        from gitstate.git.repo import open_managed
        from gitstate.web.asgi import create_app
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(open_managed(str(repo))), host="127.0.0.1",
                                port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        for _ in range(200):                  # up to ~10 s for the socket to listen
            if self.server.started:
                return self
            self.thread.join(0.05)
        raise AssertionError("the server did not start")

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


def env_for_subprocess() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


__all__ = ["make_demo", "client", "section", "text", "LiveServer", "free_port", "subprocess",
           "env_for_subprocess"]
