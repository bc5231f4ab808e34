"""Issue #9: hypothesis fuzzing of the three readers of untrusted text (the front-matter
reader, the lifecycle loader, the subject grammar). Whatever the input, each returns or raises
gitstate's own error (a GitstateError), and none hangs. How fast each reader is belongs in
bench/ (bench/hostile.py), not here: a test bound by the wall clock fails on a loaded machine.

Besides free text, the strategies aim at the shapes of the hostile corpus: deep nesting, alias
chains, explicit tags, merge keys, long numbers, odd line breaks and encodings, big state
graphs, and grammar.accept patterns with nested quantifiers.

Everything runs in this process, so each call is guarded: a watchdog (SIGALRM) turns a call
still running after WATCHDOG seconds into a failure ("hung"), and the address space is capped
while these tests run, so that an alias bomb fails with MemoryError instead of taking the
machine down. Nesting stays below the depth at which libyaml overflows the C stack (that one
is covered, in a child process, by tests/doors/test_hostile_doors.py).
"""

from __future__ import annotations

import contextlib
import resource
import signal

import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from gitstate.errors import GitstateError

try:   # the package is being reorganised into layers (see /work/notes/contract.md)
    from gitstate.law.statefile import parse_bytes
except ModuleNotFoundError:
    from gitstate.statefile import parse_bytes
try:
    from gitstate.law.load import load_lifecycle
except ModuleNotFoundError:
    from gitstate.lifecycle import load_lifecycle
try:
    from gitstate.law.grammar import parse_message
except ModuleNotFoundError:
    from gitstate.grammar import parse_message

WATCHDOG = 30.0           # seconds: a call still running is hung (a loop, a quadratic blow-up)
MEMORY_HEADROOM = 3 << 29  # 1.5 GiB more address space than the test process already has
MAX_NESTING = 4000         # libyaml's C stack overflows somewhere past 10,000 (a segfault here)

FUZZ = settings(max_examples=200, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
# Shapes that are slow on main: no shrinking (each slow attempt would cost seconds, and the
# generated example already reads plainly: a depth, a count, a number of digits).
SHAPES = settings(FUZZ, max_examples=60,
                  phases=[Phase.explicit, Phase.reuse, Phase.generate])


class Hung(Exception):
    """Not a GitstateError: a call that runs past the watchdog fails its test."""


@contextlib.contextmanager
def watchdog(seconds: float = WATCHDOG):
    armed = [True]

    def fire(signum, frame):
        if armed[0]:
            raise Hung(f"still running after {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, fire)
    # repeating: if the first alarm lands where an exception cannot propagate (a finaliser),
    # the next one stops the call
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.25)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _address_space() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


@pytest.fixture(autouse=True)
def memory_cap():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + MEMORY_HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def only_gitstate_errors(call, *args):
    """Run call(*args): it may return or raise a GitstateError; nothing else."""
    try:
        with watchdog():
            return call(*args)
    except GitstateError:
        return None
    except Hung as exc:
        # raised by a signal, its traceback may hold entries without a line number, which
        # pytest cannot print: say where it was, and raise it afresh from here
        raise Hung(f"{exc}, in {_where(exc.__traceback__)}") from None


def _where(tb) -> str:
    frames = []
    while tb is not None:
        if tb.tb_lineno is not None:
            frames.append(f"{tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}"
                          f" ({tb.tb_frame.f_code.co_name})")
        tb = tb.tb_next
    return " < ".join(reversed(frames[-4:])) or "an unknown place"


# ---------------------------------------------------------------------------------------
# Text that looks like YAML, and hostile shapes

TOKENS = [
    "\n", "\n", "\n", " ", "  ", "    ", ": ", ":", "- ", "-", "[", "]", "{", "}", ", ", ",",
    "&a ", "&b ", "*a", "*b", "<<: ", "<<", "? ", "|", "|-", ">", "'", "''", '"', "\\", "#",
    " # c", "%YAML 1.1\n", "%TAG ! tag:x,2002:\n", "---", "...", "!!python/object/apply:os.system ",
    "!!python/name:os.system", "!!binary ", "!!str ", "!!int ", "!!map ", "!x ", "!<tag:x> ",
    "\r\n", "\r", "\x85", "\u2028", "\u2029", "\ufeff", "\t", "\x00", "\x1b", "\ud800",
    "agent", "state", "alice", "inbox", "dead", "context_pct", "depth", "parent", "role",
    "last_read_commit", "freeze_state", "final_summary", "0", "-1", "1e9", "0x1F", "0o17",
    "1_000", "190:20:30", ".inf", ".nan", "null", "~", "true", "on", "no", "2026-11-22",
    "99999999999999999999", "é", "😀",
]

yamlish = st.lists(st.one_of(st.sampled_from(TOKENS),
                             st.text(alphabet="abcxyz019_.-/ ", max_size=8)),
                   max_size=80).map("".join)


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")   # a lone surrogate becomes ED A0 80


def front(text: str) -> bytes:
    return encode("---\nagent: alice\nstate: inbox\n" + text + "\n---\nnotes\n")


@st.composite
def nested(draw, max_depth=MAX_NESTING):
    depth = draw(st.integers(1, max_depth))
    kind = draw(st.sampled_from(["list", "map", "mixed", "block"]))
    closed = draw(st.booleans())
    if kind == "list":
        text = "[" * depth + ("]" * depth if closed else "")
    elif kind == "map":
        text = "{a: " * depth + ("1" + "}" * depth if closed else "")
    elif kind == "mixed":
        text = "[{a: " * (depth // 2) + ("1" + "}]" * (depth // 2) if closed else "")
    else:
        depth = min(depth, 300)   # block nesting costs depth**2 bytes of indentation
        return "x:\n" + "".join("  " * (i + 1) + "- \n" for i in range(depth)) + \
            "  " * (depth + 1) + "- 1"
    return "x: " + text


@st.composite
def alias_chain(draw, key_prefix=""):
    """levels of `name: &name [*prev, *prev, ...]`, fanout aliases each: fanout**levels
    paths for a reader that expands them."""
    levels = draw(st.integers(1, 9))
    fanout = draw(st.integers(1, 9))
    lines = [f'{key_prefix}a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"{key_prefix}a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fanout) + "]")
    return "\n".join(lines)


@st.composite
def long_number(draw):
    digits = draw(st.integers(1, 8000))
    body = "7" * digits
    form = draw(st.sampled_from(["{d}", "-{d}", "[{d}]", "{{n: {d}}}", "0x{d}", "1_{d}",
                                 "{d}.5", "0.{d}", "1e{d}", "{d}:30", "0o{d}", "'{d}'"]))
    key = draw(st.sampled_from(["tokens", "context_pct", "depth", "pid", "max_living"]))
    return f"{key}: " + form.format(d=body)


@st.composite
def odd_text(draw):
    tag = draw(st.sampled_from([
        "x: !!python/object/apply:os.system ['true']", "x: !!python/object/new:tuple [[1]]",
        "x: !!binary aGVsbG8=", "x: !vault abc", "x: !!set {a, b}", "x: !!omap [a: 1]",
        "<<: {summary: merged}", "base: &x {summary: m}\n<<: *x", "? [a, b]\n: c",
        "? {a: 1}\n: c", "x: 2026-11-22", "x: 2026-11-22T10:00:00Z", "summary: a\x85b: c",
        "summary: a\u2028b: c", "state: dead", "agent: bob", "x: \ud800", "\ufeffx: 1",
        "x: " + "a" * 200_000, "k" * 100_000 + ": v", "x: 1\r\ny: 2", "x: |\n  a\n  b",
        "%YAML 1.1\n---\nx: 1", "x: 1\n---\ny: 2", "x: 1\n...\n"]))
    return tag


state_front = st.one_of(yamlish, nested(), alias_chain(), long_number(), odd_text())


# ---------------------------------------------------------------------------------------
# The front-matter reader


@FUZZ
@given(data=st.binary(max_size=3000))
def test_state_file_reader_on_any_bytes(data):
    only_gitstate_errors(parse_bytes, data, "agent/alice/_state.md")


@FUZZ
@given(text=yamlish)
def test_state_file_reader_on_yaml_like_front_matter(text):
    only_gitstate_errors(parse_bytes, front(text), "agent/alice/_state.md")


@FUZZ
@given(text=st.text(max_size=400))
def test_state_file_reader_on_any_text(text):
    only_gitstate_errors(parse_bytes, front(text), "agent/alice/_state.md")


CORPUS_BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] +
    [f"{k}: &{k} [" + ",".join([f"*{p}"] * 9) + "]" for p, k in zip("abcdefgh", "bcdefghi")])
CORPUS_SHAPES = [
    CORPUS_BOMB,                                   # the 342-byte alias bomb of the corpus
    "x: " + "[" * 3000 + "]" * 3000,               # nesting past Python's recursion limit
    "tokens: " + "7" * 5000,                       # a 5,000-digit integer
    "k" * 100_000 + ": v",                         # a 100 KB key
]


def with_examples(values, name="text"):
    def decorate(f):
        for v in reversed(values):
            f = example(**{name: v})(f)
        return f
    return decorate


@SHAPES
@given(text=st.one_of(nested(), alias_chain(), long_number(), odd_text()))
@with_examples(CORPUS_SHAPES)
def test_state_file_reader_on_hostile_shapes(text):
    only_gitstate_errors(parse_bytes, front(text), "agent/alice/_state.md")


@SHAPES
@given(parts=st.lists(state_front, min_size=2, max_size=4))
@example(parts=["x: !!binary aGVsbG8=", CORPUS_BOMB])
def test_state_file_reader_on_hostile_mixtures(parts):
    only_gitstate_errors(parse_bytes, front("\n".join(parts)), "agent/alice/_state.md")


# ---------------------------------------------------------------------------------------
# The lifecycle loader

BASE_LIFECYCLE = """name: fuzz
initial: bootstrap
states:
  bootstrap: {roster: living}
  inbox: {roster: living}
  frozen: {roster: frozen, requires: [freeze_state]}
  dead: {roster: dead, terminal: true, requires: [final_summary]}
transitions:
  bootstrap: [inbox]
  inbox: [frozen, dead]
  frozen: [bootstrap, dead]
policies:
  humans: [zach]
  approval: ["frozen -> *"]
"""

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6), st.floats(),
                    st.text(max_size=12), st.sampled_from(["living", "frozen", "dead", "*",
                                                           "a -> b", "30m", "{id}"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)
state_names = st.from_regex(r"\A[a-z][a-z0-9_]{0,6}\Z")


@st.composite
def lifecycle_like(draw):
    """A mapping shaped like a lifecycle, with wrong types and names anywhere."""
    names = draw(st.lists(state_names, min_size=0, max_size=8, unique=True))
    states = {n: draw(st.one_of(
        st.fixed_dictionaries({}, optional={
            "roster": st.one_of(st.sampled_from(["living", "frozen", "dead"]), values),
            "terminal": st.one_of(st.booleans(), values),
            "requires": st.one_of(st.lists(st.text(max_size=6), max_size=3), values),
            "outcome": st.one_of(st.sampled_from(["success", "failure"]), values)}),
        values)) for n in names}
    transitions = {n: draw(st.one_of(st.lists(st.sampled_from(names or ["x"]), max_size=3),
                                     values)) for n in names}
    doc = {"name": draw(values), "initial": draw(st.one_of(st.sampled_from(names or ["x"]),
                                                           values)),
           "states": states, "transitions": transitions}
    for key in ("roles", "policies", "layout", "grammar"):
        if draw(st.booleans()):
            doc[key] = draw(st.one_of(values, st.fixed_dictionaries({}, optional={
                "max": values, "max_living": values, "humans": values, "approval": values,
                "timeouts": values, "mortality": values, "state_file": values,
                "accept": st.one_of(values, st.lists(st.text(max_size=20), max_size=2))})))
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def chain(n: int) -> str:
    lines = ["name: big", "initial: s0", "states:"]
    lines += [f"  s{i}: {{}}" for i in range(n - 1)]
    lines += ["  end: {roster: dead, terminal: true}", "transitions:"]
    lines += [f"  s{i}: [s{i + 1}]" for i in range(n - 2)]
    lines += [f"  s{n - 2}: [end]"]
    return "\n".join(lines) + "\n"


@st.composite
def big_lifecycle(draw):
    """A well-formed chain of n states: linear checks load it in milliseconds."""
    return chain(draw(st.integers(2, 4000)))


@FUZZ
@given(text=yamlish)
def test_lifecycle_loader_on_yaml_like_text(text):
    only_gitstate_errors(load_lifecycle, text, "protocols/lifecycle.yaml")


@FUZZ
@given(text=st.text(max_size=400))
def test_lifecycle_loader_on_any_text(text):
    only_gitstate_errors(load_lifecycle, BASE_LIFECYCLE + text, "protocols/lifecycle.yaml")


@FUZZ
@given(text=lifecycle_like())
def test_lifecycle_loader_on_lifecycle_shaped_data(text):
    only_gitstate_errors(load_lifecycle, text, "protocols/lifecycle.yaml")


@SHAPES
@given(text=st.one_of(nested(), alias_chain(key_prefix="x-"), long_number(), odd_text()))
@with_examples(["\n".join("x-" + line for line in CORPUS_BOMB.split("\n"))] + CORPUS_SHAPES[1:])
def test_lifecycle_loader_on_hostile_shapes(text):
    # appended as top-level keys: unknown ones, but the loader must read them to say so
    only_gitstate_errors(load_lifecycle, BASE_LIFECYCLE + text + "\n", "protocols/lifecycle.yaml")


@SHAPES
@given(text=big_lifecycle())
@example(text=chain(4000))
def test_lifecycle_loader_reads_a_graph_of_thousands_of_states(text):
    lc = only_gitstate_errors(load_lifecycle, text, "protocols/lifecycle.yaml")
    assert lc is not None, "a well-formed lifecycle must load"


# ---------------------------------------------------------------------------------------
# The subject grammar, and grammar.accept patterns from a lifecycle

subjects = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(["@", "alice", "ALL", ":", " ", "[STATE:", "[state:", "]", "[",
                              "inbox", "\n", "\n\n", "Approved-by: zach", "# ", "\r\n",
                              "# ------------------------ >8 ------------------------",
                              "Role-transfer: a -> b", "\x85", "\u2028", "@" * 3, "a" * 70,
                              "[STATE:" * 5, "\t", "x@y.z"]),
             max_size=60).map("".join))


@FUZZ
@given(message=subjects)
def test_subject_grammar_on_any_message(message):
    only_gitstate_errors(parse_message, message)


@FUZZ
@given(message=subjects)
def test_subject_grammar_with_an_accept_pattern(message):
    lc = load_lifecycle(BASE_LIFECYCLE + "grammar:\n  accept:\n"
                        "    - '^@(?P<id>[\\w-]+)\\s*\\[(?P<state>\\w+)(?:/\\S+)?\\]:'\n",
                        "protocols/lifecycle.yaml")
    only_gitstate_errors(parse_message, message, lc.accept_patterns())


NESTED_QUANTIFIERS = [r"(\w+)+", r"(\w*)*", r"(a+)+", r"(a|a)+", r"(a|aa)+", r"(\w|\d)+",
                      r"(.*)*", r"(?:\w+\s?)+", r"([a-z]+)*", r"(\w+\w+)+"]


@st.composite
def backtracking_pattern(draw):
    inner = draw(st.sampled_from(NESTED_QUANTIFIERS))
    where = draw(st.sampled_from(["id", "state", "before"]))
    if where == "id":
        return rf"^@(?P<id>{inner})\s*\[(?P<state>\w+)\]:"
    if where == "state":
        return rf"^@(?P<id>\w+)\s*\[(?P<state>{inner})\]:"
    return rf"^@{inner}(?P<id>\w)\s*\[(?P<state>\w+)\]:"


@SHAPES
@given(pattern=backtracking_pattern(), n=st.integers(10, 60),
       filler=st.sampled_from(["a", "1", "ab"]), tail=st.sampled_from(["!", " ", "[", "-"]))
@example(pattern=r"^@(?P<id>(\w+)+)\s*\[(?P<state>\w+)\]:", n=38, filler="a", tail="!")
def test_a_grammar_accept_pattern_cannot_backtrack_catastrophically(pattern, n, filler, tail):
    """Refused at load (a GitstateError), or matched in linear time on an adversarial subject."""
    text = BASE_LIFECYCLE + "grammar:\n  accept:\n    - '" + pattern.replace("'", "''") + "'\n"
    lc = only_gitstate_errors(load_lifecycle, text, "protocols/lifecycle.yaml")
    if lc is None:
        return
    head = (filler * n)[:n]
    for subject in ("@" + head + tail, "@x [" + head + tail, "@" + head + " [" + head + tail):
        only_gitstate_errors(parse_message, subject, lc.accept_patterns())
