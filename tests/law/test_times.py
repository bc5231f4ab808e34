"""Lengths of time and moments: one spelling for the command line, the viewer and the law."""

from __future__ import annotations

from hypothesis import given, strategies as st

from gitstate.law.times import parse_duration
from gitstate.law.times import duration, when


def test_a_duration_is_its_largest_unit_and_the_next():
    assert [duration(s) for s in (0, 5, 60, 569, 3725, 3605, 90000, 100000)] == \
        ["0s", "5s", "1m", "9m29s", "1h2m", "1h", "1d1h", "1d3h"]


def test_an_exact_duration_keeps_every_unit():
    assert [duration(s, exact=True) for s in (1800, 3600, 5400, 100000)] == \
        ["30m", "1h", "1h30m", "1d3h46m40s"]


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from("smhd"))
def test_a_lifecycle_duration_is_said_as_it_reads(n, unit):
    seconds = parse_duration(f"{n}{unit}")
    said = duration(seconds, exact=True)
    assert sum(parse_duration(part + u) for part, u in _parts(said)) == seconds


def _parts(text: str):
    number = ""
    for c in text:
        if c.isdigit():
            number += c
        else:
            yield number, c
            number = ""


def test_a_moment_is_said_in_utc_to_the_minute():
    assert when(0) == "1970-01-01 00:00" and when(1_790_000_000) == "2026-09-21 14:13"
