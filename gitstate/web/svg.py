"""The lifecycle drawn as inline SVG: a layered layout of the state graph computed here (no
script, no network), each state with how many agents stand in it."""

from __future__ import annotations

from gitstate.law.lifecycle import Lifecycle
from gitstate.law.times import duration
from gitstate.web.html import Safe, join, render

BOX_H, ROW_GAP, COL_GAP, MARGIN, CHAR_W = 46, 70, 36, 40, 8.2
_ROSTER_ORDER = {"living": 0, "frozen": 1, "dead": 2}


def layers(lc: Lifecycle) -> list[list[str]]:
    """States by their distance from the initial state (breadth first); within a layer,
    living before frozen before dead, then in the order the lifecycle declares them."""
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
    for name in lc.states:                       # unreachable (a lifecycle would be refused)
        depth.setdefault(name, last + 1)
    order = list(lc.states)
    rows: list[list[str]] = [[] for _ in range(max(depth.values()) + 1)]
    for name in sorted(lc.states, key=lambda n: (_ROSTER_ORDER.get(lc.states[n].roster, 3),
                                                 order.index(n))):
        rows[depth[name]].append(name)
    return [r for r in rows if r]


def layout(lc: Lifecycle) -> tuple[dict[str, tuple[float, float, float]], float, float]:
    """state -> (x, y, width) of its box (x, y: top left), and the drawing's width, height."""
    rows = layers(lc)
    widths = {n: max(120.0, len(n) * CHAR_W + 28) for n in lc.states}
    row_w = [sum(widths[n] for n in r) + COL_GAP * (len(r) - 1) for r in rows]
    width = max(row_w) + 2 * MARGIN + 120      # room on both sides for edges that go back
    boxes: dict[str, tuple[float, float, float]] = {}
    for i, row in enumerate(rows):
        x = MARGIN + 60 + (max(row_w) - row_w[i]) / 2
        y = MARGIN + i * (BOX_H + ROW_GAP)
        for name in row:
            boxes[name] = (x, y, widths[name])
            x += widths[name] + COL_GAP
    height = MARGIN * 2 + len(rows) * BOX_H + (len(rows) - 1) * ROW_GAP + 40  # arcs below
    return boxes, width, height


def _edge(lc: Lifecycle, src: str, dst: str, boxes, back_index: int) -> tuple[str, tuple]:
    """An SVG path for one move, and where its label goes."""
    sx, sy, sw = boxes[src]
    dx, dy, dw = boxes[dst]
    if src == dst:
        x, y = sx + sw, sy + BOX_H / 2
        return (f"M{x:.0f},{y - 10:.0f} C{x + 40:.0f},{y - 30:.0f} {x + 40:.0f},{y + 30:.0f} "
                f"{x:.0f},{y + 10:.0f}"), (x + 44, y)
    if dy > sy:                                   # down to a later layer
        x1, y1, x2, y2 = sx + sw / 2, sy + BOX_H, dx + dw / 2, dy
        mid = (y1 + y2) / 2
        return (f"M{x1:.0f},{y1:.0f} C{x1:.0f},{mid:.0f} {x2:.0f},{mid:.0f} {x2:.0f},{y2:.0f}",
                ((x1 + x2) / 2, mid))
    if dy == sy:                                  # along one layer: an arc below
        x1, x2, y = sx + sw / 2, dx + dw / 2, sy + BOX_H
        drop = 34 + 10 * back_index
        return (f"M{x1:.0f},{y:.0f} C{x1:.0f},{y + drop:.0f} {x2:.0f},{y + drop:.0f} "
                f"{x2:.0f},{y:.0f}"), ((x1 + x2) / 2, y + drop * 0.75)
    # back up to an earlier layer: from the source's top into the target's nearer side,
    # bulging outwards, so that it passes beside the states in between rather than through
    left = sx + sw / 2 < dx + dw / 2
    x1, y1 = (sx + sw * 0.25 if left else sx + sw * 0.75), sy   # beside the arrows coming in
    x2, y2 = (dx - 4, dy + BOX_H / 2) if left else (dx + dw + 4, dy + BOX_H / 2)
    reach = 45 + 14 * back_index
    cx = x2 - reach if left else x2 + reach
    return (f"M{x1:.0f},{y1:.0f} C{x1:.0f},{y1 - 50:.0f} {cx:.0f},{y2:.0f} {x2:.0f},{y2:.0f}",
            ((x1 + cx) / 2, (y1 + y2) / 2))


def lifecycle_svg(lc: Lifecycle, counts: dict[str, int]) -> Safe:
    """The lifecycle with `counts[state]` agents in each state, as an accessible <svg>."""
    boxes, width, height = layout(lc)
    edges, labels = [], []
    back = 0
    for src, targets in lc.transitions.items():
        for dst in targets:
            if src not in boxes or dst not in boxes:
                continue
            is_back = boxes[dst][1] <= boxes[src][1] and src != dst
            path, (lx, ly) = _edge(lc, src, dst, boxes, back)
            back += is_back
            bits = []
            if lc.needs_approval(src, dst):
                bits.append("approval")
            if (timed := lc.policies.timeout(src, dst)) is not None:
                bits.append(f"after {duration(timed.after, exact=True)}")
            kind = "edge gated" if bits else "edge"
            edges.append(render('<path class="{kind}" d="{d}" marker-end="url(#arrow)">'
                                '<title>{src} to {dst}{note}</title></path>', kind=kind, d=path,
                                src=src, dst=dst, note=f" ({', '.join(bits)})" if bits else ""))
            if bits:
                labels.append(render('<text class="edge-label" x="{x:.0f}" y="{y:.0f}" '
                                     'text-anchor="middle">{t}</text>', x=lx, y=ly + 4,
                                     t=", ".join(bits)))
    nodes = []
    for name, (x, y, w) in boxes.items():
        spec = lc.states[name]
        n = counts.get(name, 0)
        who = f"{n} agent{'s' if n != 1 else ''}"
        extra = render('<rect class="inner" x="{x}" y="{y}" width="{w}" height="{h}" rx="6"/>',
                       x=x + 3, y=y + 3, w=w - 6, h=BOX_H - 6) if spec.terminal else Safe("")
        nodes.append(render(
            '<g class="state {roster}{busy}"><title>{name}: {who} ({roster})</title>'
            '<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="9"/>{extra}'
            '<text class="name" x="{cx}" y="{ty}" text-anchor="middle">{name}</text>'
            '<text class="count" x="{cx}" y="{cy}" text-anchor="middle">{who}</text></g>',
            roster=spec.roster, busy=" busy" if n else "", name=name, who=who, x=x, y=y, w=w,
            h=BOX_H, extra=extra, cx=x + w / 2, ty=y + 19, cy=y + 36))
    assert lc.initial is not None   # a loaded lifecycle has one (law/checks.py)
    ix, iy, iw = boxes[lc.initial]
    start = render('<circle class="start" cx="{cx}" cy="{cy}" r="7"/>'
                   '<path class="edge" d="M{cx},{y1} L{cx},{y2}" marker-end="url(#arrow)"/>',
                   cx=ix + iw / 2, cy=iy - 30, y1=iy - 23, y2=iy)
    total = sum(counts.values())
    desc = "; ".join(f"{s}: {counts.get(s, 0)}" for s in lc.states)
    return render(
        '<svg class="lifecycle" role="img" aria-labelledby="lc-title lc-desc" '
        'viewBox="0 0 {w:.0f} {h:.0f}" width="{w:.0f}" height="{h:.0f}" '
        'xmlns="http://www.w3.org/2000/svg">'
        '<title id="lc-title">Lifecycle {name}: {total} agents</title>'
        '<desc id="lc-desc">Agents in each state: {desc}</desc>'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>'
        '</defs>{start}{edges}{nodes}{labels}</svg>',
        w=width, h=height, name=lc.name, total=total, desc=desc, start=start,
        edges=join(edges), nodes=join(nodes), labels=join(labels))
