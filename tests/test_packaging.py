"""The release checked as users get it: `python -m build` makes the sdist and the wheel,
`twine check` passes their metadata, and the wheel installed alone in a fresh virtual
environment carries its data, runs `gitstate demo` and `gitstate init`, and the README's tour."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import built_once

ROOT = Path(__file__).resolve().parents[1]

# build and pip fetch from the package index (hatchling; the wheel's dependencies): e2e
pytestmark = pytest.mark.e2e


def _build(out: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The release as users get it: `python -m build` makes the sdist, and the wheel from it
    (once per session, whichever pytest-xdist workers run these tests)."""
    return built_once(tmp_path_factory, "dist", _build)


@pytest.fixture(scope="module")
def wheel(dist) -> Path:
    [whl] = dist.glob("gitstate_agents-*.whl")
    return whl


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with only the wheel (and its dependencies from the
    package index) installed: its bin folder (made once per session)."""
    def install(where: Path) -> None:
        venv = where / "v"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        res = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                              str(wheel)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return built_once(tmp_path_factory, "venv", install) / "v" / "bin"


def test_the_release_metadata_passes_twine_check(dist):
    from gitstate import __version__
    files = sorted(dist.iterdir())
    assert [f.name for f in files] == [f"gitstate_agents-{__version__}-py3-none-any.whl",
                                       f"gitstate_agents-{__version__}.tar.gz"]
    res = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
                         capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.count("PASSED") == 2, res.stdout + res.stderr


def test_the_installed_wheel_runs_demo_and_init_from_its_own_data(installed, tmp_path):
    """`gitstate demo` and `gitstate init` from the wheel alone: its presets, protocol docs,
    hook shims and the viewer's assets, nothing of this checkout."""
    gitstate = str(installed / "gitstate")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITSTATE_CHECK_JSON")}
    env["PATH"] = str(installed) + os.pathsep + "/usr/bin:/bin"

    def run(*args, cwd=tmp_path):
        res = subprocess.run([gitstate, *args], cwd=cwd, env=env, capture_output=True,
                             text=True)
        assert res.returncode == 0, (args, res.stdout + res.stderr)
        return res.stdout
    where = run("--version")
    assert "gitstate" in where
    assert "Done." in run("demo", "--dir", str(tmp_path / "story"))
    import json
    presets = json.loads(run("presets", "--json"))["presets"]
    assert [p["name"] for p in presets] == ["era", "haak", "maos", "registry", "squad"]
    team = tmp_path / "team"
    subprocess.run(["git", "init", "-q", str(team)], check=True)
    run("init", "--lifecycle", "maos", "--human", "zach", cwd=team)
    assert (team / "protocols" / "lifecycle.yaml").is_file()
    assert any(p.suffix == ".md" for p in (team / "protocols").iterdir())
    assert "gitstate-shim" in (team / ".git" / "hooks" / "pre-commit").read_text()
    hooks_python = subprocess.run(["git", "config", "gitstate.python"], cwd=team,
                                  capture_output=True, text=True).stdout.strip()
    assert hooks_python.startswith(str(installed))      # the hooks run the installed gitstate
    run("spawn", "ada", cwd=team)                  # through the installed hooks
    run("site", "--out", str(tmp_path / "site"), cwd=team)
    assert (tmp_path / "site" / "index.html").is_file()
    assert any(tmp_path.joinpath("site").rglob("style.css"))   # the viewer's assets
    # nothing came from this checkout
    probe = subprocess.run([str(installed / "python"), "-c", "import gitstate.resources as r; "
                            "print(r.shipped('protocols'))"], env=env, capture_output=True,
                           text=True, cwd=tmp_path)
    assert probe.stdout.strip().startswith(str(installed.parent)), probe.stdout


def test_the_readme_tour_runs_from_the_installed_wheel(installed, tmp_path, monkeypatch):
    """The README's tour, typed as a user would, with the wheel's `gitstate` first on PATH."""
    import test_readme
    monkeypatch.setenv("PATH", str(installed) + os.pathsep + os.environ["PATH"])
    test_readme.as_zach(monkeypatch)
    session = test_readme.Session(tmp_path)
    assert session.run("command -v gitstate").strip() == str(installed / "gitstate")
    problems, ran = [], 0
    for block in (b for b in test_readme._blocks() if b["session"] == "tour"):
        if block["rest"].startswith("file "):
            continue
        for command, shown in test_readme._commands(block["body"]):
            got = session.run(command)
            ran += 1
            if not test_readme.matches(test_readme.normal(shown), test_readme.normal(got)):
                problems.append(f"$ {command}\n--- README shows:\n{shown}--- printed:\n{got}")
    assert ran >= 3 and not problems, "\n\n".join(problems)


def test_wheel_contains_the_shipped_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("gitstate/_shipped/protocols/haak/lifecycle.yaml",
                   "gitstate/_shipped/protocols/haak/deep_work.md",
                   "gitstate/_shipped/agent/_state.md",
                   "gitstate/_shipped/agent/README.md",
                   "gitstate/_shipped/data/freeze-state.md",
                   "gitstate/_shipped/data/systemd/gitstate-watch.service",   # watch --systemd
                   "gitstate/_shipped/data/systemd/gitstate-watch.timer",
                   "gitstate/_shipped/githooks/pre-commit",
                   "gitstate/_shipped/githooks/commit-msg",
                   "gitstate/web/static/style.css",      # the viewer needs no network
                   "gitstate/web/static/live.js",
                   "gitstate/claude_plugin/.claude-plugin/plugin.json",   # the Claude Code plugin
                   "gitstate/claude_plugin/hooks/hooks.json",
                   "gitstate/claude_plugin/.mcp.json",
                   "gitstate/claude_plugin/bin/gitstate",
                   "gitstate/claude_plugin/commands/transition.md"):
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


def test_the_extras_are_named_as_this_gitstate_was_installed(tmp_path):
    """`pip install .` (or `-e .`) in a clone: the hints name that folder, since the package
    index may not have gitstate; a gitstate with no record of a folder is named as on the
    index."""
    from gitstate.resources import install_extra
    named = install_extra("mcp")
    assert named.endswith("[mcp]'") and named.startswith("'")
    where = named[1:-len("[mcp]'")]
    assert where == "gitstate-agents" or (Path(where) / "pyproject.toml").is_file(), named
