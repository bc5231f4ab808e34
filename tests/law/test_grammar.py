"""The commit grammar: subjects, ids, trailers, mentions (pure, property-tested)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from gitstate.errors import InvalidId
from gitstate.law.grammar import canonical_id, format_message, is_valid_id, parse_message

ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True).filter(
    lambda s: s.lower() != "all" and not s.endswith("."))
states = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True)
words = st.text(st.characters(whitelist_categories=("L", "N"), max_codepoint=0x2FF), min_size=1,
                max_size=12)


def test_canonical_subject():
    m = parse_message("@ERA-1: [STATE:deep_work] roster: fold tags\n\nbody @bob and @ALL\n")
    assert (m.prefix, m.tag, m.text) == ("era-1", "deep_work", "roster: fold tags")
    assert m.mentions == {"bob", "all"}


@pytest.mark.parametrize("subject, reason", [
    ("[STATE:inbox] no prefix", "must open the subject"),
    ("@alice: fixed [STATE:inbox]", "must open the subject"),
    ("@alice: [state:inbox] lower", "must open the subject"),
    ("@alice: [STATE:] empty", "names no state"),
])
def test_malformed_tags_are_reported(subject, reason):
    m = parse_message(subject)
    assert m.tag is None and reason in m.malformed and m.has_tag


def test_ordinary_subjects_have_no_tag():
    m = parse_message("@alice: fixed the parser, thanks @bob.\n")
    assert m.prefix == "alice" and not m.has_tag and m.mentions == {"bob"}


def test_emails_and_comments_are_not_mentions():
    """A comment line is dropped from a message git has yet to clean (the commit-msg hook's
    file); a committed message is read as stored, where a kept `#` line is text."""
    raw = "fix\n\nmail bob@example.com\n# @carol in a comment\n"
    assert parse_message(raw, cleanup=True).mentions == frozenset()
    assert parse_message(raw).mentions == {"carol"}


def test_the_subject_is_what_git_calls_the_subject():
    """Every reader of history (`git log --format=%s`) sees the first paragraph, joined: so
    does the judge, and a `#` first line kept by `commit -m` is the subject, not a comment."""
    m = parse_message("# new task\n\n@alice: [STATE:deep_work] go\n")
    assert m.subject == "# new task" and not m.has_tag
    assert parse_message("# new task\n\n@alice: [STATE:deep_work] go\n", cleanup=True).tag \
        == "deep_work"
    m = parse_message("\n\n@alice:\n[STATE:deep_work] go  \n\nbody\n")
    assert (m.subject, m.prefix, m.tag, m.body) == ("@alice: [STATE:deep_work] go", "alice",
                                                    "deep_work", "body")
    m = parse_message("@alice: [STATE:inbox] x\r\nsecond line\r\n\r\nApproved-by: zach\r\n")
    assert m.subject == "@alice: [STATE:inbox] x second line"
    assert m.trailer("approved-by") == ["zach"]


def test_trailers_come_from_the_last_paragraph():
    m = parse_message("@c: [STATE:bootstrap] wake\n\nsome text: not a trailer here\nmore\n\n"
                      "Approved-by: zach\nReviewed-by: amy\n")
    assert m.trailer("approved-by") == ["zach"] and m.trailer("Reviewed-By") == ["amy"]
    assert parse_message("x\n\nnot: a\nplain line\n").trailers == {}


def test_ids():
    assert canonical_id("ERA-1") == "era-1"
    for bad in ("", "-x", "a/b", "../x", "a" * 65, "ALL", "a b", "é"):
        assert not is_valid_id(bad)
        with pytest.raises(InvalidId):
            canonical_id(bad)


def test_scissors_cut_the_message():
    m = parse_message("@a: [STATE:x] y\n# ------------------------ >8 ------------------------\n"
                      "@bob diff below\n", cleanup=True)
    assert m.mentions == frozenset()


@given(agent=ids, state=states, text=st.lists(words, max_size=5).map(" ".join),
       mentioned=st.lists(ids, max_size=3))
def test_format_then_parse_round_trips(agent, state, text, mentioned):
    body = " ".join(f"@{m}" for m in mentioned)
    msg = format_message(agent, state, text, body, [("Approved-by", "zach")])
    m = parse_message(msg)
    assert (m.prefix, m.tag, m.text) == (agent.lower(), state, " ".join(text.split()))
    assert m.trailer("approved-by") == ["zach"]
    assert m.mentions == {x.lower() for x in mentioned}
