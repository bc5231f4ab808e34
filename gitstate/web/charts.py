"""Time as a picture, drawn on the server as SVG (no script): an agent's states as bands over
time with its context below, and the team's count of agents in each state over time. Each
picture is paired with words: a legend in HTML, and a table of the same numbers."""

from __future__ import annotations

from collections import Counter

from gitstate.law.lifecycle import Lifecycle
from gitstate.web.clock import epoch
from gitstate.web.html import Safe, join, render, when

# Okabe and Ito's colours (told apart with the common kinds of colour blindness), with Tol's
# indigo and wine, in an order where each colour and the next differ in lightness by a
# contrast of at least 2.3:1 (states declared one after the other are drawn side by side)
PALETTE = ("#0072B2", "#E69F00", "#882255", "#009E73", "#332288", "#56B4E9", "#555555",
           "#CC79A7", "#F0E442", "#D55E00")
# and a pattern each, so that no state is told from another by its colour alone: the marks
# of each tile (8 x 8 units), drawn over the colour
PATTERNS = (
    ("solid", ""),
    ("diagonal", '<path d="M-2,2 L2,-2 M0,8 L8,0 M6,10 L10,6" stroke="{m}" '
                 'stroke-width="1.6"/>'),
    ("dots", '<circle cx="4" cy="4" r="1.7" fill="{m}"/>'),
    ("horizontal", '<path d="M0,4 H8" stroke="{m}" stroke-width="1.8"/>'),
    ("back-diagonal", '<path d="M-2,6 L2,10 M0,0 L8,8 M6,-2 L10,2" stroke="{m}" '
                      'stroke-width="1.6"/>'),
    ("cross-hatch", '<path d="M0,0 L8,8 M8,0 L0,8" stroke="{m}" stroke-width="1.2"/>'),
    ("vertical", '<path d="M4,0 V8" stroke="{m}" stroke-width="1.8"/>'),
    ("grid", '<path d="M4,0 V8 M0,4 H8" stroke="{m}" stroke-width="1.2"/>'),
    ("checks", '<path d="M0,0 H4 V4 H0 z M4,4 H8 V8 H4 z" fill="{m}"/>'),
    ("rings", '<circle cx="4" cy="4" r="2.3" fill="none" stroke="{m}" stroke-width="1.2"/>'),
)
SAMPLES = 48
W = 480                      # the drawing's width in its own units; it scales to the page


def looks(lc: Lifecycle) -> dict[str, tuple[str, int]]:
    """(colour, pattern number) of each state: the ten colours with the ten patterns, then
    the colours again with the patterns shifted, so that two states never look alike."""
    n = len(PALETTE)
    return {s: (PALETTE[i % n], (i + i // n) % len(PATTERNS)) for i, s in enumerate(lc.states)}


def _light(colour: str) -> bool:
    """Is the colour light (relative luminance above 0.3): its marks are then drawn dark."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.3


def fill_defs(lc: Lifecycle, states, prefix: str) -> tuple[Safe, dict[str, str]]:
    """SVG <pattern>s for `states` (ids `{prefix}-{n}`, from the state's place in the
    lifecycle: no state's name is put in an id) and state -> the `fill` that draws it."""
    seen = looks(lc)
    order = list(lc.states)
    defs, fills = [], {}
    for s in dict.fromkeys(states):
        colour, kind = seen.get(s, ("#777777", 0))
        name, marks = PATTERNS[kind]
        if not marks:
            fills[s] = colour
            continue
        pid = f"{prefix}-{order.index(s) if s in order else len(order) + len(fills)}"
        mark = "#1b1f24" if _light(colour) else "#ffffff"
        defs.append(render('<pattern id="{id}" data-pattern="{n}" width="8" height="8" '
                           'patternUnits="userSpaceOnUse"><path d="M0,0 H8 V8 H0 z" '
                           'fill="{c}"/>{marks}</pattern>', id=pid, n=name, c=colour,
                           marks=Safe(marks.format(m=mark))))
        fills[s] = f"url(#{pid})"
    return render("<defs>{d}</defs>", d=join(defs)) if defs else Safe(""), fills


def legend(lc: Lifecycle, states, counts: dict[str, int] | None = None,
           prefix: str = "key") -> Safe:
    """The key to a picture's colours and patterns, as an HTML list (readable at any width):
    each swatch drawn with the very fill the picture gives its state."""
    seen = looks(lc)
    items = []
    for s in states:
        defs, fills = fill_defs(lc, [s], prefix)
        colour, kind = seen.get(s, ("#777777", 0))
        items.append(render(
            '<li><span class="swatch" data-colour="{c}" data-pattern="{p}"><svg width="16" '
            'height="16" viewBox="0 0 16 16" aria-hidden="true">{defs}<rect width="16" '
            'height="16" fill="{f}"/></svg></span>{s}{n}</li>', c=colour,
            p=PATTERNS[kind][0], defs=defs, f=fills[s], s=s,
            n=f" ({counts[s]})" if counts is not None and s in counts else ""))
    return render('<ul class="legend">{i}</ul>', i=join(items))


def _x(t: int, t0: int, t1: int, left: float, right: float) -> float:
    return left + (right - left) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)


def _axis(t0: int, t1: int, y: float, left: float, right: float) -> Safe:
    return render('<text class="tick" x="{l}" y="{y}">{a}</text><text class="tick" x="{r}" '
                  'y="{y}" text-anchor="end">{b}</text>', l=left, r=right, y=y,
                  a=when(t0)[:10] if t1 - t0 > 86400 else when(t0),
                  b=when(t1)[:10] if t1 - t0 > 86400 else when(t1))


class _Scale:
    """Where a moment falls across an agent's timeline (`left` to `right`): to scale, or, when
    a band of a run of one state would be thinner than 3 units, one band per run, evenly."""

    def __init__(self, moves: list[dict], times: list[int], t1: int, left: float,
                 right: float):
        self.t0, self.t1, self.left, self.right = times[0], t1, left, right
        self.runs = _runs(moves)
        self.edges = [times[a] for a, _ in self.runs] + [t1]
        self.scaled = all((self.edges[k + 1] - self.edges[k]) / (t1 - self.t0)
                          * (right - left) >= 3 for k in range(len(self.runs)))
        self.where: dict[str, float] = {}   # each move's place on the even scale, in its run
        for k, (a, b) in enumerate(self.runs):
            for j in range(a, b):
                self.where[moves[j]["commit"]] = k + (j - a + 1) / (b - a + 1)

    def at(self, t: int, k: float | None = None) -> float:
        """Time `t` to scale, or place `k` (runs from the left) on the even scale."""
        if self.scaled or k is None:
            return _x(t, self.t0, self.t1, self.left, self.right)
        return self.left + (self.right - self.left) * k / len(self.runs)

    def _run_of(self, t: int) -> float:
        """Where time `t` falls on the even scale (its run, plus the fraction within it)."""
        edges, runs = self.edges, len(self.runs)
        for k in range(runs):
            if t < edges[k + 1] or k == runs - 1:
                span = max(edges[k + 1] - edges[k], 1)
                return k + min(max((t - edges[k]) / span, 0), 1)
        return float(runs)

    def x(self, t: int) -> float:
        return self.at(t, None if self.scaled else self._run_of(t))

    def x_move(self, t: int, sha: str | None) -> float:
        """A move's place (by its commit, on the even scale), else its time's."""
        if self.scaled or sha not in self.where:
            return self.x(t)
        return self.at(t, self.where[sha])

    def edge(self, k: int) -> float:
        """Where run `k` begins (`len(runs)`: the end)."""
        return self.at(self.edges[k], None if self.scaled else float(k))


def _runs(moves: list[dict]) -> list[tuple[int, int]]:
    """(first move, next run's first move) of each run of moves to one state."""
    runs: list[tuple[int, int]] = []
    for i in range(len(moves)):
        if i == 0 or moves[i]["to"] != moves[i - 1]["to"]:
            runs.append((i, i))
        runs[-1] = (runs[-1][0], i + 1)
    return runs


def timeline_svg(agent: str, moves: list[dict], context: list[tuple],
                 transfers: list[dict], lc: Lifecycle, end: int) -> Safe:
    """The agent's states as bands from each move to the next (the last to `end`, or to its
    death), its context (% of the window) at each move below, and a mark at each hand-over
    of a role. When moves came too close together for a band each to be seen to scale, the
    bands are drawn one per move, evenly, and the caption says so."""
    if not moves:
        return Safe("")
    defs, fills = fill_defs(lc, [m["to"] for m in moves], "tl")
    sc = _timeline_scale(moves, lc, end)
    ctx, height = (_context_chart(sc, context, lc), 150) if context else (Safe(""), 66)
    states = list(dict.fromkeys(m["to"] for m in moves))
    desc = "; ".join(f"{m['to']} from {when(epoch(m['time']) or 0)}" for m in moves[-12:])
    return render(
        '<figure class="chart"><svg class="timeline-chart" role="img" '
        'aria-labelledby="tl-title tl-desc" viewBox="0 0 {w} {h}" '
        'xmlns="http://www.w3.org/2000/svg"><title id="tl-title">States of {agent} over '
        'time</title><desc id="tl-desc">{desc}</desc>{defs}{bands}{marks}{ctx}{axis}</svg>'
        '<figcaption>{legend}<span class="note">Bands: the state from each move to the next, '
        '{notes}the table below has the same moves in words.</span>'
        '</figcaption></figure>', w=W, h=height, agent=agent, desc=desc, defs=defs,
        bands=_bands(sc, moves, fills), marks=_handovers(sc, transfers), ctx=ctx,
        axis=_axis(sc.t0, sc.t1, height - 4, sc.left, sc.right),
        legend=legend(lc, states, prefix="tl-key"), notes=_notes(sc, context, transfers))


def _timeline_scale(moves: list[dict], lc: Lifecycle, end: int) -> _Scale:
    """The timeline's scale: from the first move to `end`, or to just after a move to a
    terminal state."""
    times = [epoch(m["time"]) or 0 for m in moves]
    over = lc.states.get(moves[-1]["to"])
    last_end = times[-1] + 1 if over is not None and over.terminal else end
    return _Scale(moves, times, max(last_end, times[-1], times[0] + 1), 4.0, W - 4.0)


def _notes(sc: _Scale, context: list[tuple], transfers: list[dict]) -> str:
    """What the caption says of the drawing: evenly spaced bands, the context line, the
    hand-over marks, when it has them."""
    scale = "" if sc.scaled else "one band per change of state, evenly spaced (the moves " \
        "came too close together to draw to scale); "
    ctxnote = "the line: context used (% of the window) at each move; " if context else ""
    return scale + ctxnote + ("▼: a role handed over; " if transfers else "")


def _bands(sc: _Scale, moves: list[dict], fills: dict[str, str]) -> Safe:
    """A band for each run of a state."""
    return join(render('<rect x="{x:.1f}" y="10" width="{w:.1f}" height="30" fill="{c}">'
                       '<title>{s}: {a} to {b} UTC</title></rect>', x=sc.edge(k),
                       w=max(sc.edge(k + 1) - sc.edge(k), 1.5), c=fills[moves[a]["to"]],
                       s=moves[a]["to"], a=when(sc.edges[k]), b=when(sc.edges[k + 1]))
                for k, (a, _b) in enumerate(sc.runs))


def _handovers(sc: _Scale, transfers: list[dict]) -> Safe:
    """A mark at each hand-over of a role."""
    marks = []
    for t in transfers:
        tx = sc.x(epoch(t["time"]) or sc.t0)
        marks.append(render('<g class="handover"><path d="M{x:.1f},4 L{x:.1f},46"/>'
                            '<path d="M{a:.1f},0 L{b:.1f},0 L{x:.1f},8 z"/><title>{r} handed '
                            'from {f} to {to} at {w} UTC</title></g>', x=tx, a=tx - 5, b=tx + 5,
                            r=t["role"], f=t["from"], to=t["to"], w=when(epoch(t["time"]) or 0)))
    return join(marks)


def _context_chart(sc: _Scale, context: list[tuple], lc: Lifecycle) -> Safe:
    """The context (% of the window) at each move, (time, pct, commit): the commit places it
    on the even scale; with the mortality thresholds drawn across."""
    left, right, top, bottom = sc.left, sc.right, 58.0, 128.0

    def yv(p: float) -> float:
        return bottom - (bottom - top) * min(p, 100) / 100
    at = [(sc.x_move(c[0], c[2] if len(c) > 2 else None), yv(c[1]), c) for c in context]
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in at)
    mort = lc.mortality
    lines = join(render('<path class="mark {k}" d="M{l},{y:.1f} L{r},{y:.1f}"/>'
                        '<text class="tick" x="{r}" y="{ty:.1f}" text-anchor="end">{k} '
                        '{v}%</text>', k=k, v=v, l=left, r=right - 3, y=yv(v),
                        ty=yv(v) + (12 if k == "legacy" else -3))
                 for k, v in (("legacy", mort.legacy), ("urgent", mort.urgent)))
    dots = join(render('<circle cx="{x:.1f}" cy="{y:.1f}" r="3"><title>{p:g}% at {w} UTC'
                       '</title></circle>', x=x, y=y, p=c[1], w=when(c[0]))
                for x, y, c in at)
    return render('<g class="context"><rect class="frame" x="{l}" y="{t}" width="{w}" '
                  'height="{h}"/>{lines}<polyline points="{pts}"/>{dots}'
                  '<text class="tick" x="{l2}" y="{t2}">context %</text></g>',
                  l=left, t=top, w=right - left, h=bottom - top, lines=lines, pts=pts,
                  dots=dots, l2=left + 3, t2=bottom - 4)


def team_series(moves: list[dict], lc: Lifecycle, end: int, samples: int = SAMPLES) -> dict:
    """Agents in each state at `samples` evenly spaced moments from the first move to `end`
    (each agent counted in the state its last move up to then put it in)."""
    if not moves:
        return {"times": [], "counts": {s: [] for s in lc.states}, "states": list(lc.states)}
    t0 = epoch(moves[0]["time"]) or 0
    t1 = max(end, t0 + 1)
    times = [t0 + (t1 - t0) * (i + 1) // samples for i in range(samples)]
    counts = _counted(moves, times, {s: [] for s in lc.states})
    return {"start": t0, "times": times, "counts": counts, "states": list(counts)}


def _counted(moves: list[dict], times: list[int],
             counts: dict[str, list[int]]) -> dict[str, list[int]]:
    """`counts` (state -> its agents at each of `times`), states the lifecycle lacks added."""
    where: dict[str, str] = {}     # agent -> its state
    now: Counter[str] = Counter()  # state -> its agents
    i = 0
    for k, t in enumerate(times):
        while i < len(moves) and (epoch(moves[i]["time"]) or 0) <= t:
            _move(moves[i], where, now)
            counts.setdefault(moves[i]["to"], [0] * k)    # a state the lifecycle lacks
            i += 1
        for s in counts:
            counts[s].append(now[s])
    return counts


def _move(m: dict, where: dict[str, str], now: Counter[str]) -> None:
    if m["agent"] in where:
        now[where[m["agent"]]] -= 1
    where[m["agent"]] = m["to"]
    now[m["to"]] += 1


def team_svg(series: dict, lc: Lifecycle) -> Safe:
    """Living and frozen agents stacked by state over time (the dead only grow, so they are
    counted in the table, not stacked)."""
    times, counts = series["times"], series["counts"]
    shown = [s for s in series["states"] if _stacks(lc, s, counts)]
    if not times or not shown:
        return render('<p class="empty">No agent has lived here yet.</p>')
    defs, fills = fill_defs(lc, shown, "tc")
    left, right, top, bottom = 30.0, W - 6.0, 8.0, 180.0
    t1 = times[-1]
    start = series.get("start", times[0])
    peak = _peak(counts, shown, len(times))
    # steps: each sample's count holds from the moment before it up to it
    xs = [_x(t, start, t1, left, right) for t in [start] + times]

    def y(v: float) -> float:
        return bottom - (bottom - top) * v / peak
    areas, labels = _stacked(shown, counts, fills, xs, y)
    grid = render('<path class="mark" d="M{l},{t} L{r},{t}"/><text class="tick" x="{x}" '
                  'y="{ty}" text-anchor="end">{n}</text><text class="tick" x="{x}" y="{b}" '
                  'text-anchor="end">0</text>', l=left, r=right, t=top, x=left - 4,
                  ty=top + 10, n=peak, b=bottom)
    last = {s: counts[s][-1] for s in series["states"]}
    desc = "; ".join(f"{s}: {last[s]} now, at most {max(counts[s])}" for s in shown)
    return render(
        '<figure class="chart"><svg class="team-chart" role="img" aria-labelledby="tc-title '
        'tc-desc" viewBox="0 0 {w} 206" '
        'xmlns="http://www.w3.org/2000/svg"><title id="tc-title">Agents in each state over '
        'time</title><desc id="tc-desc">{desc}</desc>{defs}{areas}{labels}{grid}{axis}</svg>'
        '<figcaption>{legend}<span class="note">Living and frozen agents, stacked by state, '
        'each state in a colour and a pattern of its own (named on the chart where there is '
        'room); the table below gives the numbers.</span></figcaption></figure>',
        w=W, desc=desc, defs=defs, areas=join(areas), labels=join(labels), grid=grid,
        axis=_axis(start, t1, 200, left, right), legend=legend(lc, shown, last, prefix="tc-key"))


def _stacks(lc: Lifecycle, s: str, counts: dict[str, list[int]]) -> bool:
    """Is state `s` drawn in the team chart: living or frozen, and ever held?"""
    return lc.roster_of(s) in ("living", "frozen") and any(counts[s])


def _peak(counts: dict[str, list[int]], shown: list[str], n: int) -> int:
    """The most agents stacked at any of the `n` moments (at least 1)."""
    return max(max(sum(counts[s][k] for s in shown) for k in range(n)), 1)


def _stacked(shown: list[str], counts: dict[str, list[int]], fills: dict[str, str],
             xs: list[float], y) -> tuple[list[Safe], list[Safe]]:
    """Each state's area stacked on those below it (steps: each sample's count holds from the
    moment before it up to it), and its name where it fits inside."""
    base = [0] * (len(xs) - 1)
    areas, labels = [], []
    for s in shown:
        upper = [b + n for b, n in zip(base, counts[s])]
        areas.append(render('<polygon points="{p}" fill="{c}" data-state="{s}"><title>{s}: up '
                            'to {m} agents</title></polygon>', p=_outline(xs, upper, base, y),
                            c=fills[s], s=s, m=max(counts[s])))
        spot = label_spot(xs, [y(v) for v in upper], [y(v) for v in base], len(s) * 6.6 + 6)
        if spot is not None:
            labels.append(render('<text class="label" x="{x:.1f}" y="{y:.1f}" '
                                 'text-anchor="middle" aria-hidden="true">{s}</text>',
                                 x=spot[0], y=spot[1], s=s))
        base = upper
    return areas, labels


def _outline(xs: list[float], upper: list[int], base: list[int], y) -> str:
    """A stacked area's points, in steps: along its top, then back along its bottom."""
    top_pts = [f"{xs[k + d]:.1f},{y(v):.1f}" for k, v in enumerate(upper) for d in (0, 1)]
    low_pts = [f"{xs[k + d]:.1f},{y(v):.1f}" for k, v in reversed(list(enumerate(base)))
               for d in (1, 0)]
    return " ".join(top_pts + low_pts)


def label_spot(xs: list[float], tops: list[float], bottoms: list[float],
               width: float, height: float = 13.0) -> tuple[float, float] | None:
    """Where a band's name fits inside it: the middle of the widest run of steps (step k
    spans xs[k]..xs[k + 1], from tops[k] down to bottoms[k]) whose common height is at least
    `height`, if that run is at least `width` wide; else None (the legend names it)."""
    best: tuple[float, float, float] | None = None     # (width, x, y)
    for a in range(len(tops)):
        hi, lo = tops[a], bottoms[a]
        for b in range(a, len(tops)):
            hi, lo = max(hi, tops[b]), min(lo, bottoms[b])
            if lo - hi < height:
                break
            wide = xs[b + 1] - xs[a]
            if wide >= width and (best is None or wide > best[0]):
                best = (wide, (xs[a] + xs[b + 1]) / 2, (hi + lo) / 2 + 4)
    return None if best is None else (best[1], best[2])


def team_table(series: dict) -> Safe:
    """The team chart's numbers: a row per state, at most 8 moments as columns."""
    times = series["times"]
    if not times:
        return Safe("")
    step = max(1, len(times) // 8)
    picks = list(range(len(times) - 1, -1, -step))[:8][::-1]
    head = join(render('<th scope="col">{t}</th>', t=when(times[k])) for k in picks)
    rows = join(render('<tr><th scope="row">{s}</th>{cells}</tr>', s=s,
                       cells=join(render("<td>{n}</td>", n=series["counts"][s][k])
                                  for k in picks))
                for s in series["states"] if any(series["counts"][s]))
    return render('<details class="table-wrap"><summary>The numbers (UTC)</summary><div '
                  'class="scroll"><table class="numbers"><thead><tr><th scope="col">State</th>'
                  '{head}</tr></thead><tbody>{rows}</tbody></table></div></details>',
                  head=head, rows=rows)
