"""The shims' shell pre-filters never hide from Python what concerns gitstate.

The ref guard runs `grep -Ei` over a `git log` listing only when a shell `case` pattern
(`concerns_glob`) matches it first: that pattern must match every listing the grep would, or
a commit would reach a branch unjudged. Property-tested against the real `grep` and `sh`."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings, strategies as st

from gitstate.doors.shims import concerns_glob, paths_pattern
from gitstate.law.load import load_lifecycle
from gitstate.resources import read_shipped

SHA = "0123456789abcdef0123456789abcdef01234567"
SHA256 = "0123456789abcdef" * 4


def lifecycle(state_file: str = "agent/{id}/_state.md", atomic: bool = False):
    text = read_shipped("protocols", "haak", "lifecycle.yaml")
    text += f"\nlayout:\n  state_file: {state_file!r}\n"
    if atomic:
        text = text.replace("policies:\n", "policies:\n  atomic_commits: true\n", 1)
    return load_lifecycle(text)


def guard_pattern(lc) -> str:
    """The ERE the guard greps with (as its shim builds it)."""
    agent = "|^>@[A-Za-z0-9][A-Za-z0-9._-]*:" if lc.policies.atomic_commits else ""
    return ("^>[0-9a-f]{40,} [0-9a-f]{40}|^>.*\\[[[:space:]]*state[[:space:]]*:|"
            + paths_pattern(lc) + agent)


def verdicts(lc, listings: list[str]) -> list[tuple[bool, bool]]:
    """(grep matches, case pattern matches) for each listing, by the real tools."""
    script = ("for f in \"$@\"; do seen=$(cat \"$f\")\n"
              "  if grep -Eiq \"$P\" \"$f\"; then g=1; else g=0; fi\n"
              f"  case $seen in {concerns_glob(lc)}) c=1 ;; *) c=0 ;; esac\n"
              "  echo $g$c\ndone\n")
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, text in enumerate(listings):
            f = Path(tmp) / str(i)
            f.write_bytes(text.encode("utf-8", "surrogateescape"))
            files.append(str(f))
        out = subprocess.run(["sh", "-c", script, "sh", *files], check=True, text=True,
                             capture_output=True, env={"P": guard_pattern(lc), "PATH":
                                                       "/usr/bin:/bin"}).stdout.split()
    return [(o[0] == "1", o[1] == "1") for o in out]


CONCERNING = [
    f">{SHA} {SHA}\n>{SHA}\n>Merge branch 'x'\n",                    # a merge
    f">{SHA256} {SHA256}\n>{SHA256}\n>Merge branch 'x'\n",           # in a SHA-256 repo
    f">{SHA}\n>{SHA}\n>@alice: [STATE:inbox] hi\nagent/alice/_state.md\n",
    f">{SHA}\n>{SHA}\n>no tag [ State : idle ] here\nnotes.txt\n",
    f">{SHA}\n>{SHA}\n>work\nAGENT/ALICE/_STATE.MD\n",                  # case as grep -i
    f">{SHA}\n>{SHA}\n>work\n\"agent/caf\\303\\251/_state.md\"\n",       # a quoted path
    f">{SHA}\n>{SHA}\n>work\nprotocols/lifecycle.yaml\n",
    f">{SHA}\n>{SHA}\n>work\nProtocols/Allowed_Signers\n",
    f">{SHA}\n>{SHA}\n>work\n.githooks/deep/er/hook\n",
]
ORDINARY = [
    f">{SHA}\n>{SHA}\n>fix a bug in the parser\nsrc/parser.py\n",
    f">{SHA}\n>{SHA}\n>@alice: notes\nagent/alice/notes.md\n",
]


def test_the_case_pattern_sends_every_concerning_listing_on():
    for lc in (lifecycle(), lifecycle(atomic=True)):
        for listing, (grep, case) in zip(CONCERNING, verdicts(lc, CONCERNING), strict=True):
            assert grep and case, listing
    for listing, (grep, case) in zip(ORDINARY, verdicts(lifecycle(), ORDINARY), strict=True):
        assert not grep and not case, listing      # ordinary work starts no grep


def test_an_agent_subject_concerns_an_atomic_lifecycle_only():
    listing = [f">{SHA}\n>{SHA}\n>@alice: notes\nagent/alice/notes.md\n"]
    assert verdicts(lifecycle(atomic=True), listing) == [(True, True)]


ALPHABET = st.sampled_from(list("aAsStTeE_./-:[]@> \n01fF") + ["_state.md", "protocols/",
                                                              "lifecycle.yaml", ".githooks/",
                                                              "STATE", SHA, SHA256, "\\303"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(ALPHABET, max_size=12).map("".join), min_size=5, max_size=25),
       st.sampled_from(["agent/{id}/_state.md", "{id}/_state.md", "team/{id}.md", "a/{id}",
                        "{id}", "x{id}"]))
def test_whatever_grep_would_see_the_case_pattern_sees(listings, layout):
    lc = lifecycle(layout)
    for listing, (grep, case) in zip(listings, verdicts(lc, listings), strict=True):
        assert case or not grep, repr(listing)


def test_a_layout_of_bare_ids_sends_every_listing_on():
    """With `layout.state_file: '{id}'` any file at the top may be a state file: the case
    pattern may leave out no listing (the grep sees one in every path)."""
    listing = [f">{SHA}\n>{SHA}\n>work\nalice\n"]
    assert verdicts(lifecycle("{id}"), listing) == [(True, True)]


SEGMENTS = st.sampled_from(["agent", "alice", "_state.md", "protocols", "lifecycle.yaml",
                            "allowed_signers", ".githooks", "team", "a", "x", "x.md", "-x",
                            ":(top)x", ":(glob)*", "*", "[ab]", "caf\u00e9", "a b", 'a"b',
                            "a\\b", "_state.md\n", "a\nb", "A", "_STATE.md", "**"])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(SEGMENTS, min_size=1, max_size=4).map("/".join), min_size=1,
                max_size=30),
       st.sampled_from(["agent/{id}/_state.md", "{id}/_state.md", "team/{id}.md", "a/{id}",
                        "{id}", "x{id}", "a/x{id}.md"]))
def test_the_commit_hooks_pathspecs_name_every_path_python_judges(paths, layout):
    """pre-commit hands Python only the paths its pathspecs pick, and commit-msg then tells
    the guard that the commit was judged: every state file and every path of the law must be
    among them, whatever its name. Asked of the real `git diff`."""
    from gitstate.doors.shims import pathspecs
    from gitstate.law.lifecycle import is_law_path
    lc = lifecycle(layout)
    rx = lc.state_path_regex()
    paths = sorted({p for p in paths if ".git" not in p.lower().split("/")})
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "GIT_CONFIG_NOSYSTEM": "1"}

        def run(*args: str, data: bytes = b"") -> bytes:
            return subprocess.run(["git", *args], cwd=tmp, env=env, input=data, check=True,
                                  capture_output=True).stdout
        run("init", "-q")
        blob = run("hash-object", "-w", "--stdin").decode().strip()
        run("update-index", "-z", "--index-info",
            data=b"".join(f"100644 {blob}\t{p}\0".encode() for p in paths))
        staged = set(run("ls-files", "-z").decode().split("\0")) - {""}
        picked = set(run("diff", "--cached", "--name-only", "--no-renames", "-z", "--",
                         *pathspecs(lc)).decode().split("\0"))
    for p in staged:
        if rx.match(p) or is_law_path(p):
            assert p in picked, (layout, p)
