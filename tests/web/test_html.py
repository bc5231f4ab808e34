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


def _segments(path: str):
    """The straight segments of an SVG path of M, L, H and V commands (None for a curve)."""
    import re
    x = y = 0.0
    out = []
    for cmd, args in re.findall(r"([MLHVC])([^MLHVC]*)", path):
        nums = [float(n) for n in re.findall(r"-?[\d.]+", args)]
        if cmd == "C":
            return None
        if cmd == "M":
            x, y = nums
            continue
        nx, ny = (nums[0], nums[1]) if cmd == "L" else (nums[0], y) if cmd == "H" else (x, nums[0])
        out.append((x, y, nx, ny))
        x, y = nx, ny
    return out


def test_no_move_is_drawn_through_a_box_and_every_preset_fits_a_phone():
    from gitstate.web.svg import BOX_H, layout
    for name in presets():
        lc = load_lifecycle((preset_dir(name) / "lifecycle.yaml").read_text(encoding="utf-8"))
        drawn = layout(lc)
        assert drawn["width"] <= 360, name                  # a 390 px screen, less margins
        assert set(drawn["boxes"]) == set(lc.states)        # no state hidden
        crossings = 0
        for src, dst, path in drawn["edges"]:
            segments = _segments(path)
            if segments is None:
                assert src == dst                           # only a move to itself curves
                continue
            for x1, y1, x2, y2 in segments:
                for state, (bx, by, bw) in drawn["boxes"].items():
                    # strictly inside the box (its border may be touched where a line ends)
                    left, right, top, bottom = bx + 1, bx + bw - 1, by + 1, by + BOX_H - 1
                    if min(x1, x2) < right and max(x1, x2) > left \
                            and min(y1, y2) < bottom and max(y1, y2) > top:
                        crossings += 1
                        print(name, src, dst, state, (x1, y1, x2, y2))
        assert crossings == 0, name


def test_times_are_read_in_every_shape_the_views_give():
    from gitstate.law.times import iso
    from gitstate.web.clock import epoch, sha_of
    at = 1_795_539_600
    for shape in (at, float(at), str(at), "2026-11-24T17:00:00Z", "2026-11-24T17:00:00+00:00",
                  "2026-11-24T17:00:00", {"sha": "abc1234", "time": at},
                  {"sha": "abc1234", "time": "2026-11-24T17:00:00Z"}):
        assert epoch(shape) == at, shape
    assert iso(at) == "2026-11-24T17:00:00Z"
    for nothing in (None, True, "soon", {}, {"sha": "abc1234"}):
        assert epoch(nothing) is None, nothing
    assert sha_of({"sha": "abc1234", "time": at}) == "abc1234" == sha_of("abc1234")
    assert sha_of("2026-11-24T17:00:00Z") is None and sha_of({"time": at}) is None
