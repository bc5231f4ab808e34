"""The team chart tells its states apart by pattern and name as well as by colour, its legend
drawn with the same fills, and colours side by side differ in lightness."""

from __future__ import annotations

import re

import pytest
from conftest import gitstate
from webhelp import client

pytest.importorskip("starlette", reason="pip install 'gitstate-agents[web]' to test the server")


def moved(repo, *args: str) -> None:
    res = gitstate(repo, *args)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_team_chart_tells_states_apart_by_pattern_and_name(repo):
    """Five agents in five states at once: each state's area has a fill of its own, a pattern
    for all but one, the legend's swatch draws that very look, and a state with room in the
    chart is named on it."""
    from gitstate.web.charts import PALETTE, PATTERNS
    for name in ("a1", "a2", "a3", "a4", "a5", "a6"):
        moved(repo, "spawn", name)
    for name in ("a2", "a3", "a4", "a5"):
        moved(repo, "transition", name, "inbox")
    for name in ("a3", "a4", "a5"):
        moved(repo, "transition", name, "distill")
    moved(repo, "transition", "a4", "deep_work")
    moved(repo, "transition", "a5", "idle")
    with client(repo) as web:
        page = web.get("/team").text
    chart = re.search(r'<svg class="team-chart".*?</svg>', page, re.S).group(0)
    fills = dict(re.findall(r'<polygon points="[^"]*" fill="([^"]+)" data-state="([^"]+)"',
                            chart))
    by_state = {state: fill for fill, state in fills.items()}
    assert set(by_state) == {"bootstrap", "inbox", "distill", "deep_work", "idle"}
    assert len(set(by_state.values())) == 5                    # no two alike
    patterns = dict(re.findall(r'<pattern id="(tc-\d+)" data-pattern="([a-z-]+)"', chart))
    used = [patterns[f[5:-1]] for f in by_state.values() if f.startswith("url(#")]
    assert len(used) == 4 and len(set(used)) == 4              # one solid, four patterns
    # the legend: a swatch per state, drawn with the same colour and pattern
    legend = re.search(r'<ul class="legend">(.*?)</ul>', page, re.S).group(1)
    items = {m.group(3): m for m in re.finditer(
        r'<li><span class="swatch" data-colour="(#[0-9A-Fa-f]+)" data-pattern="([a-z-]+)">'
        r'(?:(?!</?li>).)*?</span>([a-z_]+) \(\d+\)</li>', legend)}
    assert set(items) == set(by_state)
    for state, fill in by_state.items():
        item = items[state]
        if fill.startswith("url(#"):
            assert item.group(2) == patterns[fill[5:-1]]
            assert f'fill="{item.group(1)}"' in chart.split(f'id="{fill[5:-1]}"')[1][:200]
        else:
            assert item.group(2) == "solid" and fill == item.group(1)
    # named on the chart where there is room: a1 and a6 stood in bootstrap, the lowest band,
    # from the first moment to the last
    named = re.findall(r'<text class="label"[^>]*>([^<]+)</text>', chart)
    assert "bootstrap" in named and set(named) <= set(by_state)
    assert len(PATTERNS) == len(PALETTE) and len({p for p, _ in PATTERNS}) == len(PATTERNS)


def _luminance(colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_neighbouring_colours_differ_strongly_and_no_two_states_look_alike():
    """States declared one after the other are stacked side by side: their colours differ in
    lightness (a contrast of 2:1 at least, seen by every eye), and a lifecycle with more
    states than colours still gives each its own (colour, pattern)."""
    from gitstate.law.load import read_lifecycle
    from gitstate.web.charts import PALETTE, looks
    for a, b in zip(PALETTE, PALETTE[1:]):
        hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
        assert (hi + 0.05) / (lo + 0.05) >= 2.0, (a, b)
    states = [f"s{i}" for i in range(25)]
    law = ("name: many\ninitial: s0\nstates:\n"
           + "".join(f"  s{i}: {{roster: living}}\n" for i in range(24))
           + "  s24: {roster: dead, terminal: true}\ntransitions:\n"
           + "".join(f"  s{i}: [s{i + 1}]\n" for i in range(24)))
    lc = read_lifecycle(law.encode(), "protocols/lifecycle.yaml")
    seen = looks(lc)
    assert list(seen) == states and len(set(seen.values())) == len(states)

