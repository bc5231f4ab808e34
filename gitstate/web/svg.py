"""The lifecycle drawn as inline SVG (no script, no network), each state with how many agents
stand in it.

The layout is our own and keeps every line out of every box: the states stand in one column
(living ones first, in the order of their distance from the initial state, then frozen, then
dead); a move to the next state down is a
short arrow between the two boxes; every other move runs in a lane of its own beside the
column (forward moves on the right, moves back on the left), entering and leaving boxes only
at their sides. Lanes are shared by moves whose spans do not overlap (interval colouring), so
the drawing stays narrow: a preset fits a 390 px phone without hiding a state.
"""

from __future__ import annotations

from gitstate.law.diagram import gates
from gitstate.law.lifecycle import Lifecycle
from gitstate.web.html import Safe, join, render

BOX_H, ROW_GAP, LANE, MARGIN, CHAR_W, TOP = 44, 30, 11, 8, 8.2, 30
SCALE = 1.4     # drawn larger than its units where there is room; a phone scales it down
_ROSTER_ORDER = {"living": 0, "frozen": 1, "dead": 2}


def layers(lc: Lifecycle) -> list[list[str]]:
    """States by their distance from the initial state (breadth first); within a layer,
    living before frozen before dead, then in the order the lifecycle declares them."""
    depth = _depths(lc)
    order = list(lc.states)
    rows: list[list[str]] = [[] for _ in range(max(depth.values()) + 1)]
    for name in sorted(lc.states, key=lambda n: (_ROSTER_ORDER.get(lc.states[n].roster, 3),
                                                 order.index(n))):
        rows[depth[name]].append(name)
    return [r for r in rows if r]


def _depths(lc: Lifecycle) -> dict[str, int]:
    """state -> its distance from the initial state; the unreachable (a lifecycle would be
    refused) one further than the furthest."""
    assert lc.initial is not None   # a loaded lifecycle has one (law/checks.py)
    depth = {lc.initial: 0}
    queue = [lc.initial]
    while queue:
        state = queue.pop(0)
        for nxt in lc.targets(state):
            if nxt not in depth:
                depth[nxt] = depth[state] + 1
                queue.append(nxt)
    last = max(depth.values(), default=0)
    for name in lc.states:
        depth.setdefault(name, last + 1)
    return depth


def _lanes(spans: list[tuple[int, int, int]]) -> dict[int, int]:
    """edge index -> lane (0 nearest the boxes) for spans (lo row, hi row, edge index): two
    edges share a lane only when their rows do not touch; shorter spans nearer the boxes."""
    ends: list[int] = []        # per lane, the last row it is used to
    out: dict[int, int] = {}
    for lo, hi, i in sorted(spans, key=lambda s: (s[1] - s[0], s[0])):
        for lane, end in enumerate(ends):
            if all(not (lo <= b and a <= hi) for a, b, j in spans if out.get(j) == lane):
                out[i] = lane
                ends[lane] = max(end, hi)
                break
        else:
            out[i] = len(ends)
            ends.append(hi)
    return out


def layout(lc: Lifecycle) -> dict:
    """Boxes, edges and the drawing's size: {"boxes": {state: (x, y, w)}, "edges": [(src,
    dst, path, kind)], "width", "height"}; every path stays out of every box but its own
    ends."""
    plan = _Column(lc)
    edges = [(a, b, plan.path(i, a, b)) for i, (a, b) in enumerate(plan.moves)]
    height = TOP + len(plan.order) * (BOX_H + ROW_GAP) - ROW_GAP + MARGIN
    return {"boxes": plan.boxes, "edges": edges, "width": plan.width, "height": height}


def _column_order(lc: Lifecycle) -> list[str]:
    depth = {s: i for i, row in enumerate(layers(lc)) for s in row}
    declared = list(lc.states)
    return sorted(lc.states, key=lambda n: (
        _ROSTER_ORDER.get(lc.states[n].roster, 3), depth[n], declared.index(n)))


def _moves_between(lc: Lifecycle, row: dict[str, int]) -> list[tuple[str, str]]:
    """The lifecycle's moves whose both ends are drawn."""
    return [(a, b) for a, targets in lc.transitions.items() for b in targets
            if a in row and b in row]


class _Column:
    """The states in one column, and the lanes beside it that the moves run in."""

    def __init__(self, lc: Lifecycle):
        # living states first, by their distance from the initial state, then frozen, then
        # dead: the work loop reads downwards and every way out of it goes down too
        self.order = _column_order(lc)
        row = self.row = {s: i for i, s in enumerate(self.order)}
        self.moves = _moves_between(lc, row)
        self.straight = {(a, b) for a, b in self.moves if row[b] == row[a] + 1}
        self.lanes = self._lanes()
        box_w = max(120.0, max(len(n) for n in self.order) * CHAR_W + 24)
        x0 = MARGIN + 14 + self._lanes_wide("l")
        self.width = x0 + box_w + 14 + max(self._lanes_wide("r"), self._loop_room()) + MARGIN
        self.boxes = {s: (x0, TOP + i * (BOX_H + ROW_GAP), box_w)
                      for i, s in enumerate(self.order)}
        self.ports = self._ports()

    def _lanes_wide(self, side: str) -> int:
        return (max(self.lanes[side].values(), default=-1) + 1) * LANE

    def _loop_room(self) -> int:
        """Room on the right for the loop of a move from a state to itself, if any."""
        return 24 if any(a == b for a, b in self.moves) else 0

    def _side(self, a: str, b: str) -> str | None:
        """The side of the column a move runs along: "r" forward, "l" back; None for a move
        to the next state down (straight) or to itself."""
        if a == b or (a, b) in self.straight:
            return None
        return "r" if self.row[b] > self.row[a] else "l"

    def _lanes(self) -> dict[str, dict[int, int]]:
        """A side -> edge -> its lane on that side."""
        spans: dict[str, list[tuple[int, int, int]]] = {"r": [], "l": []}
        for i, (a, b) in enumerate(self.moves):
            side = self._side(a, b)
            if side is not None:
                lo, hi = sorted((self.row[a], self.row[b]))
                spans[side].append((lo, hi, i))
        return {side: _lanes(found) for side, found in spans.items()}

    def _ports(self) -> dict[tuple[str, str], list[int]]:
        """Where on its side each edge touches a box: spread along the side, nearest lane
        first. (box, side) -> the edges that touch it there."""
        ports: dict[tuple[str, str], list[int]] = {}
        for i, (a, b) in enumerate(self.moves):
            side = self._side(a, b)
            if side is not None:
                ports.setdefault((a, side), []).append(i)
                ports.setdefault((b, side), []).append(i)
        return ports

    def port_y(self, state: str, side: str, i: int) -> float:
        used = sorted(set(self.ports[(state, side)]), key=lambda j: self.lanes[side][j])
        return self.boxes[state][1] + BOX_H * (used.index(i) + 1) / (len(used) + 1)

    def path(self, i: int, a: str, b: str) -> str:
        """The path of move `i`, from `a` to `b`."""
        ax, ay, aw = self.boxes[a]
        bx, by, bw = self.boxes[b]
        if a == b:
            x, y = ax + aw, ay + BOX_H / 2
            return f"M{x:.0f},{y - 8:.0f} C{x + 22:.0f},{y - 22:.0f} {x + 22:.0f}," \
                   f"{y + 22:.0f} {x + 2:.0f},{y + 8:.0f}"
        if (a, b) in self.straight:
            cx = ax + aw / 2
            return f"M{cx:.0f},{ay + BOX_H:.0f} L{cx:.0f},{by - 2:.0f}"
        side = self._side(a, b) or "r"
        y1, y2 = self.port_y(a, side, i), self.port_y(b, side, i)
        if side == "r":
            lx = ax + aw + 10 + self.lanes["r"][i] * LANE
            return f"M{ax + aw:.0f},{y1:.1f} H{lx:.0f} V{y2:.1f} H{bx + bw + 2:.0f}"
        lx = ax - 10 - self.lanes["l"][i] * LANE
        return f"M{ax:.0f},{y1:.1f} H{lx:.0f} V{y2:.1f} H{bx - 2:.0f}"


def lifecycle_svg(lc: Lifecycle, counts: dict[str, int]) -> Safe:
    """The lifecycle with `counts[state]` agents in each state, as an accessible <svg>."""
    drawn = layout(lc)
    boxes = drawn["boxes"]
    edges = [_edge(lc, src, dst, path) for src, dst, path in drawn["edges"]]
    nodes = [_node(name, box, lc.states[name], counts.get(name, 0))
             for name, box in boxes.items()]
    assert lc.initial is not None   # a loaded lifecycle has one (law/checks.py)
    ix, iy, iw = boxes[lc.initial]
    start = render('<circle class="start" cx="{cx}" cy="{cy}" r="6"/>'
                   '<path class="edge" d="M{cx},{y1} L{cx},{y2}" marker-end="url(#arrow)"/>',
                   cx=ix + iw / 2, cy=iy - 22, y1=iy - 16, y2=iy - 2)
    total = sum(counts.values())
    desc = "; ".join(f"{s}: {counts.get(s, 0)}" for s in lc.states)
    return render(
        '<svg class="lifecycle" role="img" aria-labelledby="lc-title lc-desc" '
        'viewBox="0 0 {w:.0f} {h:.0f}" width="{sw:.0f}" height="{sh:.0f}" '
        'xmlns="http://www.w3.org/2000/svg">'
        '<title id="lc-title">Lifecycle {name}: {total} agents</title>'
        '<desc id="lc-desc">Agents in each state: {desc}</desc>'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>'
        '</defs>{start}{edges}{nodes}</svg>',
        w=drawn["width"], h=drawn["height"], sw=drawn["width"] * SCALE,
        sh=drawn["height"] * SCALE, name=lc.name, total=total, desc=desc, start=start,
        edges=join(edges), nodes=join(nodes))


def _edge(lc: Lifecycle, src: str, dst: str, path: str) -> Safe:
    """A move's arrow, marked as gated (a human's approval, a time) when it waits for one."""
    bits = gates(lc, src, dst)
    return render('<path class="{kind}" d="{d}" marker-end="url(#arrow)">'
                  '<title>{src} to {dst}{note}</title></path>',
                  kind="edge gated" if bits else "edge", d=path, src=src, dst=dst,
                  note=f" ({', '.join(bits)})" if bits else "")


def _node(name: str, box: tuple, spec, n: int) -> Safe:
    """A state's box, with how many agents stand in it (a terminal state: a double border)."""
    x, y, w = box
    who = f"{n} agent{'s' if n != 1 else ''}"
    extra = render('<rect class="inner" x="{x}" y="{y}" width="{w}" height="{h}" rx="6"/>',
                   x=x + 3, y=y + 3, w=w - 6, h=BOX_H - 6) if spec.terminal else Safe("")
    return render(
        '<g class="state {roster}{busy}"><title>{name}: {who} ({roster})</title>'
        '<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="9"/>{extra}'
        '<text class="name" x="{cx}" y="{ty}" text-anchor="middle">{name}</text>'
        '<text class="count" x="{cx}" y="{cy}" text-anchor="middle">{who}</text></g>',
        roster=spec.roster, busy=" busy" if n else "", name=name, who=who, x=x, y=y, w=w,
        h=BOX_H, extra=extra, cx=x + w / 2, ty=y + 19, cy=y + 36)
