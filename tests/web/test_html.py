"""The viewer's pure parts: templates that escape every value, and the lifecycle's layout."""

from __future__ import annotations

from hypothesis import given, strategies as st

from gitstate.law.load import load_lifecycle
from gitstate.resources import presets, preset_dir
from gitstate.web.html import Safe, render
from gitstate.web.svg import layers, lifecycle_svg


@given(st.text())
def test_every_value_is_escaped_unless_it_is_markup(value):
    out = render("<td title=\"{v}\">{v}</td>", v=value)
    inner = out[len('<td title="'):]
    assert "<" not in inner[:inner.index('">')] and '"' not in inner[:inner.index('">')]
    assert render("<p>{m}</p>", m=Safe("<b>x</b>")) == "<p><b>x</b></p>"
    assert render("{n:.0f}", n=2.6) == "3"


def test_every_preset_is_drawn_in_layers_from_its_initial_state():
    for name in presets():
        lc = load_lifecycle((preset_dir(name) / "lifecycle.yaml").read_text(encoding="utf-8"))
        rows = layers(lc)
        assert rows[0] == [lc.initial]
        assert sorted(s for row in rows for s in row) == sorted(lc.states)
        svg = lifecycle_svg(lc, {lc.initial: 2})
        assert f"<title>{lc.initial}: 2 agents" in svg and svg.count("<g class=\"state") == len(
            lc.states)
