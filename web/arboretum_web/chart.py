"""The charts: inline SVG (no script). The rating history, one line per bot version; a sequential
test's log-likelihood ratio against its bounds."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "llr_chart", "rating_chart"]

PALETTE = ("#2f6f3e", "#b5562d", "#3b5ba5", "#8a4f9e", "#b08a1c", "#2a8a8a", "#a33a5b")


def _nice_step(span: float, ticks: int = 5) -> float:
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def rating_chart(
    series: Mapping[str, Sequence[float]],
    labels: Mapping[str, str],
    *,
    initial: float = 1500.0,
    narrow: bool = False,
) -> str:
    """SVG markup: x is the game number of each version, y the Elo after that game.

    Every line starts at ``initial`` (game 0, before the first game). ``narrow``: the variant
    for phones (a narrower drawing, so its labels stay readable once scaled to the screen; the
    stylesheet shows one of the two).
    """
    width, height = (400, 300) if narrow else (720, 260)
    line = 21 if narrow else 16  # legend line height, for the font sizes of style.css
    pad_l, pad_r, pad_t, pad_b = (58, 10, 14, 44) if narrow else (52, 16, 14, 34)
    kind = "chart narrow" if narrow else "chart wide"
    if not series:
        return (
            f'<svg class="{kind}" viewBox="0 0 {width} 60" role="img" aria-label="no games yet">'
            f'<text x="{width / 2}" y="34" text-anchor="middle" class="muted">no games yet</text>'
            "</svg>"
        )
    values = [initial] + [v for s in series.values() for v in s]
    lo, hi = min(values), max(values)
    if hi - lo < 20:
        lo, hi = lo - 10, hi + 10
    step = _nice_step(hi - lo)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    n = max(len(s) for s in series.values())
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(i: int) -> float:
        return pad_l + plot_w * i / max(n, 1)

    def y(v: float) -> float:
        return pad_t + plot_h * (hi - v) / (hi - lo)

    # the legend goes under the plot, one line per version, never over the lines
    full = height + 6 + line * len(series)
    out = [
        f'<svg class="{kind}" viewBox="0 0 {width} {full}" role="img" '
        f'aria-label="live Elo history" xmlns="http://www.w3.org/2000/svg">'
    ]
    tick = lo
    while tick <= hi + 1e-9:
        out.append(
            f'<line class="grid" x1="{pad_l}" x2="{width - pad_r}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}"/><text class="axis" x="{pad_l - 6}" y="{y(tick) + 4:.1f}" '
            f'text-anchor="end">{tick:.0f}</text>'
        )
        tick += step
    xstep = max(1, int(_nice_step(n, 4 if narrow else 6)))
    for i in range(0, n + 1, xstep):
        out.append(
            f'<text class="axis" x="{x(i):.1f}" y="{height - pad_b + line}" '
            f'text-anchor="middle">{i}</text>'
        )
    out.append(
        f'<text class="axis" x="{pad_l + plot_w / 2}" y="{height - 4}" '
        f'text-anchor="middle">games played</text>'
    )
    for k, (vid, points) in enumerate(series.items()):
        colour = PALETTE[k % len(PALETTE)]
        coords = [(x(0), y(initial))] + [(x(i + 1), y(v)) for i, v in enumerate(points)]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in coords)
        label = escape(labels.get(vid, vid[:8]))
        out.append(
            f'<polyline class="series" points="{path}" stroke="{colour}" fill="none">'
            f"<title>{label}</title></polyline>"
        )
        lx, ly = coords[-1]
        out.append(f'<circle cx="{lx:.1f}" cy="{ly:.1f}" r="3.5" fill="{colour}"/>')
        out.append(
            f'<text class="legend" x="{pad_l}" y="{height + 2 + line * (k + 1)}" '
            f'fill="{colour}">'
            f"&#9632; {label} ({points[-1]:.0f})</text>"
        )
    out.append("</svg>")
    return "".join(out)


def llr_chart(history: Sequence[float], lower: float, upper: float, *, narrow: bool = False) -> str:
    """A sequential test's chart: x is the pairs counted, y the log-likelihood ratio after each;
    the bounds (H0 below, H1 above) are lines. ``narrow`` as for :func:`rating_chart`."""
    width, height = (400, 260) if narrow else (720, 240)
    pad_l, pad_r, pad_t, pad_b = (62, 12, 12, 40) if narrow else (52, 16, 12, 34)
    kind = "chart narrow" if narrow else "chart wide"
    if not history:
        return (
            f'<svg class="{kind}" viewBox="0 0 {width} 60" role="img" aria-label="no pairs yet">'
            f'<text x="{width / 2}" y="34" text-anchor="middle" class="muted">no pairs yet</text>'
            "</svg>"
        )
    lo = min(lower * 1.15, min(history))
    hi = max(upper * 1.15, max(history))
    n = len(history)
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(i: float) -> float:
        return pad_l + plot_w * i / max(n, 1)

    def y(v: float) -> float:
        return pad_t + plot_h * (hi - v) / (hi - lo)

    out = [
        f'<svg class="{kind}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="log-likelihood ratio after each pair" xmlns="http://www.w3.org/2000/svg">'
    ]
    for value, name in ((upper, "H1"), (0.0, ""), (lower, "H0")):
        cls = "grid" if not name else "bound"
        out.append(
            f'<line class="{cls}" x1="{pad_l}" x2="{width - pad_r}" y1="{y(value):.1f}" '
            f'y2="{y(value):.1f}"/><text class="axis" x="{pad_l - 6}" y="{y(value) + 4:.1f}" '
            f'text-anchor="end">{value:+.2f}</text>'
        )
        if name:
            out.append(
                f'<text class="axis" x="{width - pad_r - 4}" y="{y(value) - 5:.1f}" '
                f'text-anchor="end">{escape(name)}</text>'
            )
    for i in range(0, n + 1, max(1, int(_nice_step(n, 4 if narrow else 6)))):
        out.append(
            f'<text class="axis" x="{x(i):.1f}" y="{height - pad_b + 16}" '
            f'text-anchor="middle">{i}</text>'
        )
    out.append(
        f'<text class="axis" x="{pad_l + plot_w / 2}" y="{height - 4}" '
        f'text-anchor="middle">pairs</text>'
    )
    points = [(x(0), y(0.0))] + [(x(i + 1), y(v)) for i, v in enumerate(history)]
    path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    out.append(f'<polyline class="series llr" points="{path}" fill="none"><title>LLR</title>')
    out.append("</polyline>")
    lx, ly = points[-1]
    out.append(f'<circle class="llr-end" cx="{lx:.1f}" cy="{ly:.1f}" r="3.5"/>')
    out.append("</svg>")
    return "".join(out)
