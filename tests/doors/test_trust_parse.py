"""Free text (messages, author names) cannot change how a commit is read.

verify and the hub must read commits unambiguously: a control character in an author name or a
body must neither hide a commit nor forge the files it changed.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import git, walk
from trusthelp import (alice_in_inbox, assert_push_refused, assert_verify_flags, cached_hub, gs,
                       run_git, sha, sneak, sneak_state, verify_json)


@pytest.fixture
def inbox_hub(tmp_path):
    """(hub, work): alice in inbox, pushed."""
    return cached_hub(tmp_path, "alice-inbox", alice_in_inbox)


def _hidden_commit(work, where: str) -> str:
    """alice inbox -> idle (illegal: inbox allows distill, frozen, dead), with a \\x1e in the author
    name or in the body. Returns the commit."""
    env, body = None, ""
    if where == "author":
        env = {"GIT_AUTHOR_NAME": "Eve\x1eMallory", "GIT_COMMITTER_NAME": "Eve\x1eMallory"}
    else:
        body = "\n\nnothing to see\x1ehere\x1fand\x1dthere\n"
    bad = sneak_state(work, "alice", "@alice: [STATE:idle] gone" + body, env=env,
                      state="idle")
    raw = git(work, "cat-file", "commit", bad).stdout
    assert "\x1e" in raw, "setup: git dropped the control character"
    return bad


@pytest.mark.parametrize("where", ["author", "body"])
def test_trust_control_char_does_not_hide_a_commit_from_verify(inbox_hub, where):
    _hub, work = inbox_hub
    bad = _hidden_commit(work, where)
    assert_verify_flags(work, (bad, "illegal-transition"))


@pytest.mark.parametrize("where", ["author", "body"])
def test_trust_control_char_does_not_hide_a_commit_from_the_hub(inbox_hub, where):
    hub, work = inbox_hub
    _hidden_commit(work, where)
    assert_push_refused(work, hub, "illegal-transition")


def _forged_diff_line(work) -> tuple[str, str]:
    """An ordinary commit whose body forges a raw diff line (after a \\x1d) saying that it
    changed protocols/lifecycle.yaml to a relaxed law (inbox -> deep_work allowed) whose blob
    the same commit carries under another name; then alice takes inbox -> deep_work.
    Returns (the forging commit, the illegal move)."""
    law = (work / "protocols" / "lifecycle.yaml").read_text()
    relaxed = law.replace("  inbox: [distill, frozen, dead]\n",
                          "  inbox: [distill, frozen, dead, deep_work]\n")
    assert relaxed != law, "setup: the haak preset changed shape"
    (work / "notes").mkdir()
    (work / "notes" / "relaxed.yaml").write_text(relaxed)
    blob = git(work, "hash-object", "-w", "notes/relaxed.yaml").stdout.strip()
    real = git(work, "rev-parse", "HEAD:protocols/lifecycle.yaml").stdout.strip()
    forged = f"\x1d\n:100644 100644 {real} {blob} M\tprotocols/lifecycle.yaml\n"
    cover = sneak(work, "notes: a draft of the law\n\nsee the draft" + forged,
                  "notes/relaxed.yaml")
    assert git(work, "rev-parse", "HEAD:protocols/lifecycle.yaml").stdout.strip() == real
    bad = sneak_state(work, "alice", "@alice: [STATE:deep_work] skip", state="deep_work")
    return cover, bad


def test_trust_forged_diff_line_does_not_change_the_law_for_verify(inbox_hub):
    _hub, work = inbox_hub
    cover, bad = _forged_diff_line(work)
    assert_verify_flags(work, (bad, "illegal-transition"))
    _, problems = verify_json(work, "--no-cache")
    assert [p for p in problems if p["commit"] == cover] == [], \
        "an ordinary commit (adding a file) was judged as something else"


def test_trust_forged_diff_line_does_not_change_the_law_for_the_hub(inbox_hub):
    hub, work = inbox_hub
    _forged_diff_line(work)
    assert_push_refused(work, hub, "illegal-transition")


# --- the property: free text is judged as plain text is ------------------------------------

CONTROLS = [chr(c) for c in range(1, 32)] + ["\x7f", "\x85", "\u2028", "\u2029", "\ufeff",
                                             "\u200b", "\ufffd"]
ANY = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
CHARS = st.one_of(st.sampled_from(CONTROLS), ANY)
TEXT = st.text(CHARS, max_size=40)
LINE = st.text(CHARS.filter(lambda c: c != "\n"), max_size=20)
NAME = st.text(CHARS.filter(lambda c: c not in "<>\n"), max_size=20)


@pytest.fixture
def fork(repo):
    """A managed repo with alice in inbox, and the trees of a short story on top of it:
    inbox -> distill (legal), distill -> inbox (illegal-transition), then a tag with no
    change (tag-without-change)."""
    gs(repo, "spawn", "alice")
    walk(repo, "alice", "inbox")
    base = sha(repo)
    path = repo / "agent" / "alice" / "_state.md"
    text = path.read_text()
    trees = []
    for state in ("distill", "inbox"):
        path.write_text(text.replace("state: inbox", f"state: {state}")
                        .replace("updated:", "updated_by_hand: x\nupdated:"))
        git(repo, "add", "agent/alice/_state.md")
        trees.append(git(repo, "write-tree").stdout.strip())
    git(repo, "checkout", "-q", "HEAD", "--", "agent/alice/_state.md")
    when = git(repo, "log", "-1", "--format=%ct", base).stdout.strip()
    return repo, base, trees, when


def _chain(repo, base, trees, when, subjects_text, bodies, names) -> list[str]:
    steps = [("@alice: [STATE:distill] t", trees[0]), ("@alice: [STATE:inbox] t", trees[1]),
             ("@alice: [STATE:inbox] t", trees[1])]
    parent, made = base, []
    msg = repo.parent / "msg.txt"
    for (subject, tree), line, body, name in zip(steps, subjects_text, bodies, names):
        msg.write_text(f"{subject}{line}\n\n{body}", encoding="utf-8",
                       errors="surrogateescape")
        env = {"GIT_AUTHOR_NAME": f"A{name}Z", "GIT_COMMITTER_NAME": f"C{name}Z",
               "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
        parent = run_git(repo, "commit-tree", tree, "-p", parent, "-F", str(msg),
                         env=env).stdout.strip()
        made.append(parent)
    return made


@settings(max_examples=15, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(LINE, min_size=3, max_size=3), bodies=st.lists(TEXT, min_size=3, max_size=3),
       names=st.lists(NAME, min_size=3, max_size=3))
def test_trust_free_text_is_judged_like_plain_text(fork, lines, bodies, names):
    repo, base, trees, when = fork
    fancy = _chain(repo, base, trees, when, lines, bodies, names)
    plain = _chain(repo, base, trees, when, ["plain"] * 3, ["a plain body\n"] * 3, ["Plain"] * 3)
    assert len(set(fancy)) == 3 and not set(fancy) & set(plain)
    rc, problems = verify_json(repo, f"{base}..{fancy[-1]}", f"{base}..{plain[-1]}")

    def judged(chain):
        pos = {c: i for i, c in enumerate(chain, 1)}
        return sorted((pos[p["commit"]], p["rule"]) for p in problems if p["commit"] in pos)

    assert judged(plain) == [(2, "illegal-transition"), (3, "tag-without-change")], problems
    assert judged(fancy) == judged(plain)
    assert rc == 1
