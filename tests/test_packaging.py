"""A wheel built from the repository carries its data and works on its own."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.e2e       # pip builds the wheel: the whole system, a few seconds


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                          str(ROOT)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    [whl] = out.glob("gitstate_agents-*.whl")
    return whl


def test_wheel_contains_the_shipped_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("gitstate/_shipped/protocols/haak/lifecycle.yaml",
                   "gitstate/_shipped/protocols/haak/deep_work.md",
                   "gitstate/_shipped/agent/_state.md",
                   "gitstate/_shipped/agent/README.md",
                   "gitstate/_shipped/data/freeze-state.md",
                   "gitstate/_shipped/githooks/pre-commit",
                   "gitstate/_shipped/githooks/commit-msg",
                   "gitstate/web/static/style.css",      # the viewer needs no network
                   "gitstate/web/static/live.js"):
        assert needed in names, needed


def test_the_installed_wheel_runs_the_demo(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    probe = subprocess.run([sys.executable, "-c", "import gitstate.resources as r; "
                            "print(r.shipped('protocols'))"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert probe.stdout.strip() == str(site / "gitstate" / "_shipped" / "protocols")
    res = subprocess.run([sys.executable, "-m", "gitstate", "demo", "--dir", str(tmp_path / "d")],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Done." in res.stdout
