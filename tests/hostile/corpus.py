"""The hostile corpus of issue #9: the cases of `cases.toml`, the few files too big to commit
(made here at test time), and a runner that no case can take the machine down with.

Nothing here imports gitstate: the corpus is data, and the doors are judged from outside.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "cases.toml"

AGENT = "alice"
STATE_FILE = f"agent/{AGENT}/_state.md"
# What every state case tries: alice (spawned in bootstrap) moves to inbox, a legal move, so
# that the hostile part of the file is the only thing wrong with the commit.
SUBJECT = f"@{AGENT}: [STATE:inbox] hostile input"

# The front matter `gitstate spawn alice` writes, moved to inbox: what every state case carries.
STATE_FRONT = (
    "---\n"
    "agent: alice\n"
    "state: inbox\n"
    "role: null\n"
    "model: null\n"
    "person: null\n"
    "project: null\n"
    "parent: null\n"
    "depth: 0\n"
    "thread: null\n"
    "context_pct: 0\n"
    "summary: null\n"
    "last_read_commit: null\n"
    "freeze_state: null\n"
    "final_summary: null\n"
    "updated: '2026-11-22T06:32:49Z'\n"
)
STATE_CLOSE = "---\n## Notes\n\nhostile corpus\n"

GiB = 1 << 30
MEMORY_LIMIT = 2 * GiB       # per child process (RLIMIT_AS): a bomb fails, the machine stays up
TIMEOUT = 30                 # seconds: a door that takes longer is reported as hung


# ---------------------------------------------------------------------------------------
# The manifest


@dataclass(frozen=True)
class Case:
    id: str
    kind: str                 # state | symlink | lifecycle | layout | pattern | repo
    what: str
    rules: tuple[str, ...]    # acceptable rule ids of the refusal (the first is the usual one)
    expect: str = "refuse"    # refuse | accept | either (a pattern: refused at load, or linear)
    file: str | None = None   # committed file under tests/hostile/
    generate: str | None = None   # name of a generator below, for files too big to commit
    target: str | None = None     # symlink cases: where the link points
    slow: bool = False
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def data(self) -> bytes:
        if self.file:
            return (HERE / self.file).read_bytes()
        if self.generate:
            return GENERATORS[self.generate]()
        raise ValueError(f"case {self.id} has no file")

    def __str__(self) -> str:
        return self.id


def load_cases() -> list[Case]:
    raw = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    known = {"id", "kind", "what", "rules", "expect", "file", "generate", "target", "slow"}
    out = []
    for entry in raw["case"]:
        extra = {k: v for k, v in entry.items() if k not in known}
        out.append(Case(id=entry["id"], kind=entry["kind"], what=entry["what"],
                        rules=tuple(entry.get("rules", ())), expect=entry.get("expect", "refuse"),
                        file=entry.get("file"), generate=entry.get("generate"),
                        target=entry.get("target"), slow=entry.get("slow", False), extra=extra))
    return out


def cases(*kinds: str, expect: str | None = None) -> list[Case]:
    return [c for c in load_cases() if (not kinds or c.kind in kinds)
            and (expect is None or c.expect == expect)]


# ---------------------------------------------------------------------------------------
# Files too big to commit sensibly


def state_file(hostile: str, *, body: str = "") -> bytes:
    return (STATE_FRONT + hostile + STATE_CLOSE + body).encode("utf-8")


def nested_brackets_400k() -> bytes:
    """The file that made libyaml overflow its stack: ~400 KB of unclosed `[`."""
    return state_file("x: " + "[" * 400_000 + "\n")


def huge_key_100k() -> bytes:
    return state_file("k" * 100_000 + ": v\n")


def single_line_1mb() -> bytes:
    """One line of 1,000,000 characters: the whole file stays under 1 MiB, so only a limit on
    lines (or on front matter) catches it."""
    return state_file("scratch: " + "a" * 1_000_000 + "\n")


def front_matter_800k() -> bytes:
    """80,000 short keys: each line is harmless, the front matter is not."""
    return state_file("".join(f"k{i:05d}: v\n" for i in range(80_000)))


def state_file_2mb() -> bytes:
    """Harmless front matter, 2 MB of notes below it: a state file is a page, not a store."""
    return state_file("", body="notes that never end\n" * 100_000)


LIFECYCLE_BASE = (HERE / "lifecycle_base.yaml").read_text(encoding="utf-8") \
    if (HERE / "lifecycle_base.yaml").is_file() else ""


def lifecycle_20mb() -> bytes:
    """A valid lifecycle padded with 20 MB of comments."""
    line = "# " + "padding " * 9 + "\n"
    return (LIFECYCLE_BASE + line * (20_000_000 // len(line) + 1)).encode("utf-8")


def _names(n: int) -> list[str]:
    """n short state names (a letter, then base-36), to keep a big lifecycle small in bytes."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    i = 0
    while len(out) < n:
        k, s = i, ""
        while True:
            k, r = divmod(k, 36)
            s = digits[r] + s
            if k == 0:
                break
        out.append("s" + s)
        i += 1
    return out


def lifecycle_states(n: int) -> bytes:
    """A well-formed lifecycle of n states: a chain s0 -> s1 -> ... -> dead (terminal), with a
    freezer at the end of the chain. Checks that walk the graph once per state are quadratic
    here; linear ones are not. (5,000 states: ~0.1 MB; 20,000: ~0.5 MB.)"""
    names = _names(n - 2)
    lines = [f"name: chain-{n}", f"initial: {names[0]}", "states:"]
    lines += [f"  {s}: {{}}" for s in names]
    lines += ["  frozen: {roster: frozen}", "  dead: {roster: dead, terminal: true}",
              "transitions:"]
    lines += [f"  {a}: [{b}]" for a, b in zip(names, names[1:])]
    lines += [f"  {names[-1]}: [dead, frozen]", "  frozen: [dead]"]
    return ("\n".join(lines) + "\n").encode("ascii")


GENERATORS = {
    "nested_brackets_400k": nested_brackets_400k,
    "huge_key_100k": huge_key_100k,
    "single_line_1mb": single_line_1mb,
    "front_matter_800k": front_matter_800k,
    "state_file_2mb": state_file_2mb,
    "lifecycle_20mb": lifecycle_20mb,
    "lifecycle_5000_states": lambda: lifecycle_states(5_000),
    "lifecycle_10000_states": lambda: lifecycle_states(10_000),
    "lifecycle_20000_states": lambda: lifecycle_states(20_000),
}


# ---------------------------------------------------------------------------------------
# Running a door without letting it take the machine down


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(args: list[str], cwd: Path, *, timeout: float = TIMEOUT, input: bytes | None = None,
        env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a command in its own session, with at most MEMORY_LIMIT of address space per
    process; a command still running after `timeout` is killed with everything it started
    (git's hooks included) and reported as hung."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE if input is not None
                            else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_limit_child,
                            start_new_session=True)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        with _suppress():
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"hung: `{' '.join(str(a) for a in args)[:200]}` in {cwd} was "
                             f"still running after {timeout:g}s and was killed") from None
    finally:
        with _suppress():
            os.killpg(proc.pid, signal.SIGKILL)   # a hook left behind must not outlive us
    return subprocess.CompletedProcess(args, proc.returncode,
                                       out.decode("utf-8", "replace"),
                                       err.decode("utf-8", "replace"))


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is not None and issubclass(exc[0], (ProcessLookupError, PermissionError))


def git(repo: Path, *args: str, check: bool = True, timeout: float = TIMEOUT,
        input: bytes | None = None) -> subprocess.CompletedProcess:
    res = run(["git", *args], repo, timeout=timeout, input=input)
    if check and res.returncode != 0:
        raise AssertionError(f"setup step `git {' '.join(args)}` failed ({res.returncode}):\n"
                             f"{res.stdout}\n{res.stderr}")
    return res


def gitstate(repo: Path, *args: str, timeout: float = TIMEOUT,
             input: bytes | None = None) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "gitstate", *args], repo, timeout=timeout, input=input)


CRASH_MARKS = ("Traceback", "internal error", "Segmentation fault", "core dumped",
               "RecursionError", "MemoryError")


def assert_clean_exit(res: subprocess.CompletedProcess, what: str,
                      codes: tuple[int, ...] = (0, 1)) -> None:
    """Exit 0 or 1 (never a signal, never 139), and no traceback or crash on stderr."""
    out = res.stdout + res.stderr
    assert res.returncode >= 0, f"{what}: killed by signal {-res.returncode}\n{out[-2000:]}"
    assert res.returncode != 139, f"{what}: exit 139 (segmentation fault)\n{out[-2000:]}"
    for mark in CRASH_MARKS:
        assert mark not in out, f"{what}: {mark!r} in its output:\n{out[-3000:]}"
    assert res.returncode in codes, f"{what}: exit {res.returncode}, expected one of {codes}:\n" \
                                    f"{out[-3000:]}"


def rule_shown(text: str, rules: tuple[str, ...]) -> bool:
    return any(f"[{r}]" in text for r in rules)
