"""Fixtures: real git in temporary repositories, never the user's HOME or config.

Two things keep the suite fast without making it less real:

- `gitstate()` runs the command line in this process (the very entry point `python -m
  gitstate` runs, with its own working directory, argv, stdin, stdout, stderr and
  environment): a fresh interpreter costs more than most commands. Whatever it commits still
  goes through git and the installed hooks, each in its own process. `gitstate(...,
  process=True)` runs a fresh process, for tests about the process itself;
  `GITSTATE_TESTS_SUBPROCESS=1` runs every call that way (the suite must pass both ways).
- `from_template()` builds a starting point (a managed repository, a hub and its clone...) once
  per session and copies it for each test: the copy is what the build made.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Callable

import pytest

from gitstate.law.movers import RUNTIME_MARKS

# No resident judge (gitstate/doors/resident.py) for what the session's own fixtures commit
# either (the viewer's demo, built once): a process that would outlive them. Each test's
# environment says the same (`isolate`); the judge's own tests switch it on.
os.environ["GITSTATE_JUDGE"] = "0"


def pytest_addoption(parser, pluginmanager):
    """The suite runs on every core through pytest-xdist (`-n auto` in pyproject's addopts).
    Without it (`-p no:xdist`, or not installed) those options are accepted and the tests run
    in this one process."""
    if not pluginmanager.has_plugin("xdist"):
        group = parser.getgroup("xdist (absent)")
        group._addoption("-n", "--numprocesses", dest="numprocesses", default=None,
                        help="ignored: pytest-xdist is not loaded")
        group.addoption("--dist", dest="dist", default="no",
                        help="ignored: pytest-xdist is not loaded")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: a worker more than there are cores, since a test spends part of its time
    waiting for git and the hooks (on 2 cores, 3 workers finish the suite ~15 % sooner than 2).
    PYTEST_XDIST_AUTO_NUM_WORKERS still decides when it is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection(session):
    """Every pytest-xdist worker imports every test module, and pytest rewrites each one's
    asserts (about 6 s of CPU for the suite) unless it finds the rewritten code cached: each
    worker first rewrites and caches its share of the modules, then collects, finding the
    others' shares cached. Where the environment forbids bytecode beside the sources
    (PYTHONDONTWRITEBYTECODE), the cache is the session's folder. Only a speed-up: a module
    not cached yet is rewritten as before."""
    config = session.config
    given = getattr(config, "workerinput", None)
    try:
        from _pytest.assertion import rewrite
        state = config.stash[rewrite.assertstate_key]
        index, count = int(given["workerid"][2:]), int(given["workercount"])
        tail, read, make, write = (rewrite.PYC_TAIL, rewrite._read_pyc, rewrite._rewrite_test,
                                   rewrite._write_pyc)
    except (ImportError, AttributeError, KeyError, TypeError, ValueError):
        return
    if sys.dont_write_bytecode:
        shared = Path(config.option.basetemp).parent / "rewritten"
        rewrite.get_cache_dir = lambda path: shared.joinpath(*path.parts[1:-1])
    files: set[Path] = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0])
        files.update(path.rglob("test_*.py") if path.is_dir() else
                     [path] if path.name.startswith("test_") and path.suffix == ".py" else [])
    for path in sorted(files)[index::count]:
        path = path.resolve()
        pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + tail)
        if read(path, pyc, state.trace) is None and rewrite.try_makedirs(pyc.parent):
            source, code = make(path, config)
            write(state, code, source, pyc)


# Seconds each test took in the last runs (setup, call and teardown), kept in pytest's cache
# (.pytest_cache) for the tests that took a second or more: the long ones start first.
_DURATIONS = "gitstate/durations"
_MEASURED: dict[str, float] = {}


def pytest_runtest_logreport(report):
    _MEASURED[report.nodeid] = _MEASURED.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session):
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _MEASURED:
        return              # a worker's reports reach the controller, which keeps them
    kept = {**cache.get(_DURATIONS, {}), **_MEASURED}
    cache.set(_DURATIONS, {k: round(v, 2) for k, v in kept.items() if v >= 1})


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Every pytest-xdist worker orders the tests by the same durations: read once, here."""
    cache = getattr(node.config, "cache", None)
    node.workerinput["gitstate_durations"] = cache.get(_DURATIONS, {}) if cache else {}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's worksteal, each worker is first given a contiguous share of the
    list and an idle one takes from the end of another's: the long tests go first in every
    worker's share, the longest first, dealt in turn, so that none of them starts last while
    the short ones are shared out at the end. Long: 2 s or more in the last runs (pytest's
    cache), else end to end (`e2e`). The same order on every worker, as xdist requires."""
    given = getattr(config, "workerinput", {})
    workers = int(given.get("workercount", 0))
    seconds = given.get("gitstate_durations") or {}

    def weight(item) -> float:
        return seconds.get(item.nodeid, 30.0 if item.get_closest_marker("e2e") else 0.0)
    slow = sorted((item for item in items if weight(item) >= 2), key=weight, reverse=True)
    if workers < 2 or not slow or len(slow) == len(items):
        return
    chosen = set(slow)
    fast = [item for item in items if item not in chosen]
    ordered, left = [], len(items)
    for k in range(workers):          # the shares worksteal hands out: left // workers left
        size = left // (workers - k)
        mine = slow[k::workers][:size]
        ordered += mine + fast[:size - len(mine)]
        del fast[:size - len(mine)]
        left -= size
    dealt = set(ordered)
    items[:] = ordered + [item for item in slow if item not in dealt] + fast


@pytest.fixture(autouse=True)
def _serial_runs_alone(request, tmp_path_factory):
    """Under pytest-xdist, a test marked `serial` runs while no other test runs (and waits
    for the running ones to end): it needs the whole machine, as the swarm's burst does.
    Every other test holds a shared lock while it runs; a serial one takes it exclusively,
    having first closed the gate to newcomers, so it is never starved."""
    if not hasattr(request.config, "workerinput"):     # one process: nothing runs beside it
        yield
        return
    shared = tmp_path_factory.getbasetemp().parent      # the session's, above each worker's
    serial = request.node.get_closest_marker("serial") is not None
    with open(shared / "serial.gate", "a") as gate, open(shared / "serial.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        finally:
            if not serial:
                fcntl.flock(gate, fcntl.LOCK_UN)
        _RUNNING[:] = [] if serial else [gate, lock]
        try:
            yield
        finally:
            _RUNNING[:] = []
            fcntl.flock(lock, fcntl.LOCK_UN)
            if serial:
                fcntl.flock(gate, fcntl.LOCK_UN)


# The gate and the lock of the test running in this worker (see `_serial_runs_alone`).
_RUNNING: list = []


@contextlib.contextmanager
def alone():
    """While inside, no other test of the session runs (under pytest-xdist; the running ones
    finish first): the part of a test that needs the whole machine, as the swarm's burst does,
    while its setup and its checks run beside other tests. Outside pytest-xdist, or in a test
    marked `serial`, nothing else runs anyway."""
    if not _RUNNING:
        yield
        return
    gate, lock = _RUNNING
    fcntl.flock(lock, fcntl.LOCK_UN)         # never wait for the gate holding the lock
    fcntl.flock(gate, fcntl.LOCK_EX)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_SH)    # no one else may take it: the gate is ours
    finally:
        fcntl.flock(gate, fcntl.LOCK_UN)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], object]) -> Path:
    """A folder `build(folder)` filled once per session, however many pytest-xdist workers ask
    for it: the first to ask builds it while the others wait for it (a file lock in the
    session's folder), then every one uses it. A build that failed is tried again by the next
    to ask (and fails its test again, with its own message)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    where, done = shared / f"built-{name}", shared / f"built-{name}.done"
    with open(shared / f"built-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                shutil.rmtree(where, ignore_errors=True)
                where.mkdir()
                build(where)
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return where


# Keep the user's git configuration and environment out of every test.
# An agent runtime's marks go too (the suite may run inside one): a test is a person at a
# terminal unless it says otherwise.
_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                 "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GITSTATE_PYTHON",
                 "GITSTATE_AGENT", "GITSTATE_DEBUG", *RUNTIME_MARKS)


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """The environment every test runs in, with `home` as HOME."""
    for key in _GIT_ENV_DROP:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    # the read commands' fast path raises where it would fall back on a bug of its own
    monkeypatch.setenv("GITSTATE_FAST_LOUD", "1")
    # no resident judge (gitstate/doors/resident.py): a process that would outlive the test; its
    # own tests (tests/doors/test_resident_judge.py) start one and stop it
    monkeypatch.setenv("GITSTATE_JUDGE", "0")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test Person")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.invalid")
    # The hooks must find this very interpreter (and the gitstate it imports).
    bindir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    isolate(monkeypatch, tmp_path_factory.mktemp("home"))
    # The Python processes a test starts (git's hooks, a hub's, `python -m gitstate`) keep
    # their bytecode for the session, in a folder of the session's own (never beside the
    # sources), even where the environment asks for none (PYTHONDONTWRITEBYTECODE): else
    # each of them compiles every module of gitstate it imports, again. One folder for all
    # pytest-xdist workers (a .pyc is written whole, then renamed into place).
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(shared / "pycache"))
    yield


# A clone without gitstate's hooks (none of them run): how an illegal commit reaches a hub or
# a history that `verify` audits. `--no-verify` alone no longer does: the ref guard still runs.
UNHOOKED = ("-c", "core.hooksPath=/dev/null")


@contextlib.contextmanager
def moves_on_this_branch(repo: Path, branch: str):
    """While inside, gitstate's moves in `repo` commit on `branch` (checked out) instead of
    landing on the team line: a clone that names `branch` its copy of the team line
    (`gitstate.teamBranch`), as anyone can, e.g. to make a side branch with moves of its own."""
    git(repo, "config", "gitstate.teamBranch", branch)
    try:
        yield
    finally:
        git(repo, "config", "--unset", "gitstate.teamBranch")


def git(repo: Path, *args: str, check: bool = True, input: str | None = None):
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, input=input,
                          errors="surrogateescape")
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


IN_PROCESS = os.environ.get("GITSTATE_TESTS_SUBPROCESS", "") in ("", "0")


def gitstate(repo: Path, *args: str, input: str | None = None,
             process: bool = False) -> subprocess.CompletedProcess:
    """Run the real command line in `repo`, as a user would: in this process (see the top of
    this file) unless `process` (a fresh `python -m gitstate`) or GITSTATE_TESTS_SUBPROCESS=1.
    Either way the answer is a CompletedProcess, with stdout and stderr as text."""
    if process or not IN_PROCESS:
        return subprocess.run([sys.executable, "-m", "gitstate", *args], cwd=repo,
                              capture_output=True, text=True, input=input,
                              stdin=None if input else subprocess.DEVNULL)
    return _in_process(Path(repo), list(args), input)


# What a fresh interpreter starts with: the warnings it would print (pytest's own filters are
# set per test, after this module is imported).
_FRESH_WARNING_FILTERS = list(warnings.filters)


def _in_process(cwd: Path, args: list[str], input: str | None) -> subprocess.CompletedProcess:
    """`python -m gitstate ARGS` in `cwd`, in this process: the same entry point, with stdin,
    stdout and stderr as a child with pipes has them (encodings and error handlers included),
    its own argv and working directory, the environment restored afterwards, and the state
    gitstate keeps per process (the cache key of this HOME, the progress line) reset."""
    from gitstate import __main__ as entry
    from gitstate.git import cache
    from gitstate.history import progress

    def stream(raw: io.BytesIO, like, errors: str) -> io.TextIOWrapper:
        return io.TextIOWrapper(raw, encoding=getattr(like, "encoding", None) or "utf-8",
                                errors=errors, newline="\n")

    out_errors = getattr(sys.__stdout__, "errors", None) or "strict"
    data = b"" if input is None else input.encode("utf-8")
    stdin = stream(io.BytesIO(data), sys.__stdin__, out_errors)
    stdout = stream(io.BytesIO(), sys.__stdout__, out_errors)
    stderr = stream(io.BytesIO(), sys.__stderr__, "backslashreplace")
    saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv, os.getcwd(), dict(os.environ))
    cache._KEY = None
    progress._stream, progress._shown = None, False
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    sys.argv = [entry.__file__, *args]
    try:
        os.chdir(cwd)
        with warnings.catch_warnings():
            warnings.filters[:] = _FRESH_WARNING_FILTERS
            try:
                code = entry.main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, (int, type(None))):
                    print(exc.code, file=sys.stderr)
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved[:4]
        os.chdir(saved[4])
        os.environ.clear()
        os.environ.update(saved[5])
        cache._KEY = None
        progress._stream, progress._shown = None, False
    stdout.flush()
    stderr.flush()

    def text(wrapper: io.TextIOWrapper) -> str:   # as subprocess.run(text=True) reads a pipe
        raw = wrapper.buffer.getvalue()
        return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")

    return subprocess.CompletedProcess([sys.executable, "-m", "gitstate", *args],
                                       code if code is not None else 0, text(stdout),
                                       text(stderr))


def make_repo(path: Path) -> Path:
    """A new repository whose user is zach (`git config user.name`): the human `gitstate init`
    names in the law when given no `--human`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "zach")
    git(path, "config", "commit.cleanup", "verbatim")
    git(path, "config", "commit.gpgsign", "false")
    return path


@pytest.fixture
def empty_repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


def managed_repo(path: Path, *init_args: str) -> Path:
    """A managed repository (preset haak unless `init_args` say otherwise) with one ordinary
    commit."""
    make_repo(path)
    (path / "README").write_text("hello\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    res = gitstate(path, "init", *init_args)
    assert res.returncode == 0, res.stderr
    return path


@pytest.fixture
def repo(tmp_path) -> Path:
    """A managed repository (preset haak) with one ordinary commit."""
    return from_template(tmp_path, "repo", lambda root: managed_repo(root / "repo")) / "repo"


def repo_with(tmp_path: Path, key: str, setup: Callable[[Path], object],
              *init_args: str) -> Path:
    """tmp_path/repo: a managed repository as the `repo` fixture gives it (`init_args` passed to
    `gitstate init`), after `setup(repo)`: built once per session under `key`, copied for each
    test."""
    def build(root: Path) -> None:
        setup(managed_repo(root / "repo", *init_args))
    return from_template(tmp_path, ("repo_with", key, init_args), build) / "repo"


# --- starting points built once per session -------------------------------------------------

_TEMPLATES: dict[object, Path] = {}
_TEMPLATE_ROOT: list[Path] = []


def from_template(dest: Path, key: object, build: Callable[[Path], object]) -> Path:
    """Copy into `dest` (a directory, made if need be) what `build(root)` made in an empty
    directory `root`: built once per session and `key`, in the environment tests run in (HOME
    aside, which is the build's own), then copied for each test, which may do with its copy
    whatever it likes. The copy is what the build made: symbolic links kept, the absolute paths
    git keeps (remotes, worktrees) moved to the copy, each index refreshed (the files' inodes
    changed), and what the build left in its HOME (gitstate's cache key, a git configuration)
    copied into this test's HOME. Returns `dest`."""
    if key not in _TEMPLATES:
        _TEMPLATES[key] = _template(key, build)
    where = _TEMPLATES[key]
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(where / "root", dest, symlinks=True, dirs_exist_ok=True)
    home = os.environ.get("HOME")
    if home:
        shutil.copytree(where / "home", home, symlinks=True, dirs_exist_ok=True,
                        copy_function=_copy_new)
    _move_git_paths(dest, str(where / "root"), str(dest))
    return dest


def _template(key: object, build: Callable[[Path], object]) -> Path:
    """The folder where `build` made the starting point `key` (its `root`, and the `home` it
    ran with): built once per session, whichever pytest-xdist worker asks first (the others
    wait for it), where the key names it the same in every worker; else once per worker."""
    if not _TEMPLATE_ROOT:
        _TEMPLATE_ROOT.append(Path(tempfile.mkdtemp(prefix="gitstate-templates-")))
        atexit.register(shutil.rmtree, _TEMPLATE_ROOT[0], True)
    name = repr(key)
    if _SESSION_DIR and " at 0x" not in name:    # no object's address: the same everywhere
        shared = _SESSION_DIR[0] / "templates"
        shared.mkdir(exist_ok=True)
        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        where, done = shared / digest, shared / f"{digest}.done"
        with open(shared / f"{digest}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)     # builds may nest: each key has its own lock
            try:
                if not done.exists():
                    shutil.rmtree(where, ignore_errors=True)
                    where.mkdir()
                    _build_template(where, build)
                    done.touch()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        return where
    where = Path(tempfile.mkdtemp(prefix="t", dir=_TEMPLATE_ROOT[0]))   # builds may nest
    _build_template(where, build)
    return where


def _build_template(where: Path, build: Callable[[Path], object]) -> None:
    (where / "home").mkdir()
    (where / "root").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, where / "home")
        build(where / "root")


# The folder of the session that every pytest-xdist worker shares (the session's own folder
# without xdist), once the session has started.
_SESSION_DIR: list[Path] = []


@pytest.fixture(autouse=True, scope="session")
def _session_dir(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    _SESSION_DIR[:] = [base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base]
    yield


def _move_git_paths(dest: Path, old: str, new: str) -> None:
    """Point what git keeps as absolute paths under `old` (a repository's config: remotes; the
    links between a repository and its worktrees) at `new`, and refresh every index."""
    for name in ("config", "gitdir", ".git"):
        for path in dest.rglob(name):
            if path.is_file() and not path.is_symlink() and (
                    name != "config" or (path.parent / "HEAD").is_file()):
                text = path.read_text(errors="surrogateescape")
                if old in text:
                    path.write_text(text.replace(old, new), errors="surrogateescape")
    for dotgit in dest.rglob(".git"):
        git(dotgit.parent, "update-index", "-q", "--refresh", check=False)


def _copy_new(src: str, dst: str) -> None:
    """Copy a file unless the destination has one already (a test's own HOME comes first)."""
    if not os.path.lexists(dst):
        shutil.copy2(src, dst, follow_symlinks=False)


def state_path(repo: Path, agent: str) -> Path:
    return repo / "agent" / agent / "_state.md"


def set_state_line(repo: Path, agent: str, key: str, value: str) -> None:
    """Edit one front-matter line by hand, as a user with an editor would."""
    path = state_path(repo, agent)
    lines = path.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(f"{key}:"):
            lines[i] = f"{key}: {value}\n"
            break
    else:
        lines.insert(1, f"{key}: {value}\n")
    path.write_text("".join(lines))


def snapshot(repo: Path) -> tuple:
    """Everything a rejected commit must leave untouched: HEAD, index, work tree status."""
    return (git(repo, "rev-parse", "HEAD", check=False).stdout,
            git(repo, "ls-files", "-s").stdout,
            git(repo, "status", "--porcelain", "--untracked-files=all").stdout,
            git(repo, "diff").stdout, git(repo, "diff", "--cached").stdout)


def walk(repo: Path, agent: str, *states: str) -> None:
    for s in states:
        res = gitstate(repo, "transition", agent, s, "-m", f"to {s}")
        assert res.returncode == 0, res.stderr


def fill_freeze_state(path: Path) -> None:
    """Write something real under every section of a freeze-state template, a condition to
    wake on (`wake_if`) and the time of the freeze (`frozen_at`), where the template left
    them null."""
    import time
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join("- written by hand\n" if ln.strip().startswith(("(", "- ("))
                            else "wake_if: the test asks\n" if ln == "wake_if: null\n"
                            else f"frozen_at: '{now}'\n" if ln == "frozen_at: null\n"
                            else ln for ln in lines))


def on_a_terminal(repo: Path, script: str) -> tuple[subprocess.CompletedProcess, bytes]:
    """Run a Python `script` in `repo` with its stderr on a pseudo-terminal, as a person at a
    terminal sees it: (the process, with stdout piped; what the terminal showed)."""
    import pty
    main, child = pty.openpty()
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, stdout=subprocess.PIPE,
                          stderr=child, stdin=subprocess.DEVNULL)
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:      # the terminal's other end is closed: all is read
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    return proc, seen
