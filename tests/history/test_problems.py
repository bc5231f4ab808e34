"""How problems are printed: each commit once, at most SHOWN problems of one rule, the rest
counted in one line (in the hub's refusal, the ref guard's, verify's text and the hooks')."""

from __future__ import annotations

import io

from gitstate.history.problems import SHOWN, More, describe_lines, folded, print_by_commit


def problem(commit: str, rule: str, n: int) -> dict:
    return {"commit": commit, "subject": f"subject of {commit}", "rule": rule,
            "message": f"message {n}", "where": f"agent/a{n}/_state.md:3"}


def printed(bad) -> list[str]:
    out = io.StringIO()
    print_by_commit(bad, out)
    return out.getvalue().splitlines()


def test_a_rule_with_many_problems_is_counted_after_the_first_few():
    many = [problem("c" * 40, "max-living", i) for i in range(1000)]
    one = problem("c" * 40, "multiple-agents", 0)
    lines = printed([("refs/heads/main", p) for p in many[:3] + [one] + many[3:]])
    assert lines == [
        f"  cccccccccc (refs/heads/main) subject of {'c' * 40}",
        *[f"    [max-living] agent/a{i}/_state.md:3: message {i}" for i in range(3)],
        "    [multiple-agents] agent/a0/_state.md:3: message 0",
        *[f"    [max-living] agent/a{i}/_state.md:3: message {i}" for i in range(3, SHOWN)],
        "    ... and 995 more [max-living] problems in this commit",
    ]


def test_a_few_more_than_shown_are_all_printed():
    for n, expected in ((SHOWN, SHOWN), (SHOWN + 1, SHOWN + 1), (SHOWN + 2, SHOWN + 1)):
        items = folded([problem("c" * 40, "depth", i) for i in range(n)])
        assert len(items) == expected
        assert isinstance(items[-1], More) == (n > SHOWN + 1)
    [*_, last] = folded([problem("c" * 40, "depth", i) for i in range(SHOWN + 2)])
    assert str(last) == "... and 2 more [depth] problems in this commit"
    assert str(More("depth", 1)) == "... and 1 more [depth] problem in this commit"


def test_each_commit_is_counted_on_its_own():
    a = [problem("a" * 40, "max-living", i) for i in range(SHOWN + 3)]
    b = [problem("b" * 40, "max-living", i) for i in range(SHOWN)]
    lines = describe_lines(a + b)
    assert len(lines) == SHOWN + 1 + SHOWN
    assert lines[SHOWN] == ("aaaaaaaaaa ... and 3 more [max-living] problems in this commit "
                            "(`--json` lists every one)")
    assert all(ln.startswith("bbbbbbbbbb [max-living] ") for ln in lines[SHOWN + 1:])


def test_refusals_without_a_commit_are_printed_as_before():
    bad = [("refs/heads/main", {"commit": "", "subject": "", "rule": "protected-ref",
                                "message": "refs/heads/main is protected", "where": None})]
    assert printed(bad) == ["    [protected-ref] refs/heads/main is protected"]
