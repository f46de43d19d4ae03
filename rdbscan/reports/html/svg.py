"""The SVG charts of the HTML pages, drawn in Python: horizontal bars, columns (histograms and
timelines), pairs of bars (old and new), signed bars (growth), stacked bars, lines; `chart_box`
frames one with its title.  The treemap and the slot heat map are drawn by the page's script
(assets/report.js) from the embedded data instead."""

from __future__ import annotations

from ..format import fmt_bytes, fmt_int, fmt_key
from .page import esc as _e

_PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
]


def hbars(title: str, rows: list[tuple[str, float, str]], width: int = 580) -> str:
    """Horizontal bars: (label, value, value text); the label shown left, the value right."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 18, 4, 190, 190
    height = len(rows) * (bar_h + gap) + 8
    top = max(v for _, v, _ in rows) or 1
    span = width - label_w - value_w - 10
    parts = [
        f'<svg class="chart" role="img" aria-label="{_e(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    ]
    for i, (label, value, text) in enumerate(rows):
        y = 4 + i * (bar_h + gap)
        w = max(1.0, span * value / top) if value else 0
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
            f'fill="{_PALETTE[i % len(_PALETTE)]}"/>'
            f'<text x="{label_w + w + 4:.1f}" y="{y + 13}">{_e(text)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def columns(
    title: str,
    rows: list[tuple[str, float, str]],
    width: int = 580,
    height: int = 180,
    marks: list[tuple[float, str]] | None = None,
    label_every: int = 1,
    values: bool = False,
) -> str:
    """Vertical bars (a histogram or a timeline); marks: (x position 0..1, tooltip) drawn as red
    lines; `values`: each bar's value written above it (where the bars are too narrow for
    that, above the five highest only), so that the chart reads without hovering."""
    if not rows:
        return ""
    pad_b, pad_t = 34, 8 + (14 if values else 0)
    n = len(rows)
    step = (width - 10) / n
    top = max(v for _, v, _ in rows) or 1
    span = height - pad_b - pad_t
    parts = [
        f'<svg class="chart" role="img" aria-label="{_e(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    ]
    written = set()
    if values:
        fits = all(len(fmt_int(v)) * 6 + 2 <= step for _, v, _ in rows if v)
        ranked = sorted(range(n), key=lambda i: -rows[i][1])
        written = {i for i in (range(n) if fits else ranked[:5]) if rows[i][1]}
    for i, (label, value, text) in enumerate(rows):
        h = span * value / top if value else 0
        if value and h < 1:
            h = 1
        x = 5 + i * step
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<rect x="{x + 1:.1f}" y="{pad_t + span - h:.1f}" width="{max(step - 2, 1):.1f}" '
            f'height="{h:.1f}" fill="#4e79a7"/></g>'
        )
        if i in written:
            parts.append(
                f'<text class="value" x="{x + step / 2:.1f}" y="{pad_t + span - h - 3:.1f}" '
                f'text-anchor="middle">{fmt_int(value)}</text>'
            )
        if i % label_every == 0:
            tick = _short(label, 14)
            # a label wider than the room left of its bar's middle starts at the bar instead
            left = x + step / 2 - len(tick) * 3 < 0
            parts.append(
                f'<text class="tick" x="{x if left else x + step / 2:.1f}" '
                f'y="{height - pad_b + 14}" text-anchor="{"start" if left else "middle"}">'
                f"{_e(tick)}</text>"
            )
    for pos, tip in marks or []:
        x = 5 + pos * (width - 10)
        parts.append(
            f'<g class="mark"><title>{_e(tip)}</title><line x1="{x:.1f}" x2="{x:.1f}" y1="{pad_t}" '
            f'y2="{pad_t + span}" stroke="#e15759" stroke-width="2"/></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


OLD_COLOR, NEW_COLOR = "#bab0ac", "#4e79a7"
GROW_COLOR, SHRINK_COLOR = "#e15759", "#59a14f"


def _svg_open(title: str, width: int, height: int) -> str:
    return (
        f'<svg class="chart" role="img" aria-label="{_e(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    )


def legend(items: list[tuple[str, str]]) -> str:
    """A legend under a chart: (name, colour) swatches."""
    return (
        '<div class="keys">'
        + "".join(
            f'<span><i class="swatch" style="background:{color}"></i>{_e(name)}</span>'
            for name, color in items
        )
        + "</div>"
    )


def pair_bars(
    title: str,
    rows: list[tuple[str, float, float, str]],
    names: tuple[str, str] = ("old", "new"),
    width: int = 580,
) -> str:
    """Two horizontal bars per label, old (grey) over new (blue): (label, old, new, value text)."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 9, 7, 190, 190
    height = len(rows) * (2 * bar_h + gap) + 8
    top = max(max(o, n) for _, o, n, _ in rows) or 1
    span = width - label_w - value_w - 10
    parts = [_svg_open(title, width, height)]
    for i, (label, old, new, text) in enumerate(rows):
        y = 4 + i * (2 * bar_h + gap)
        wo = max(1.0, span * old / top) if old else 0
        wn = max(1.0, span * new / top) if new else 0
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
            f'<rect class="old" x="{label_w}" y="{y}" width="{wo:.1f}" height="{bar_h}" '
            f'fill="{OLD_COLOR}"><title>{_e(label)}, {_e(names[0])}</title></rect>'
            f'<rect class="new" x="{label_w}" y="{y + bar_h}" width="{wn:.1f}" height="{bar_h}" '
            f'fill="{NEW_COLOR}"><title>{_e(label)}, {_e(names[1])}</title></rect>'
            f'<text x="{label_w + max(wo, wn) + 4:.1f}" y="{y + 13}">{_e(text)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts) + legend([(names[0], OLD_COLOR), (names[1], NEW_COLOR)])


def signed_bars(title: str, rows: list[tuple[str, float, str]], width: int = 580) -> str:
    """Horizontal bars from a zero line: growth to the right (red), shrinking to the left
    (green); (label, signed value, value text), the text in a column on the right."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 18, 4, 190, 150
    height = len(rows) * (bar_h + gap) + 8
    neg = max([-v for _, v, _ in rows if v < 0], default=0)
    pos = max([v for _, v, _ in rows if v > 0], default=0)
    span = width - label_w - value_w - 10
    scale = span / ((neg + pos) or 1)
    zero = label_w + neg * scale
    parts = [_svg_open(title, width, height)]
    for i, (label, value, text) in enumerate(rows):
        y = 4 + i * (bar_h + gap)
        w = max(1.0, abs(value) * scale) if value else 0
        x = zero if value >= 0 else zero - w
        color = GROW_COLOR if value > 0 else SHRINK_COLOR
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>'
            f'<text x="{width - value_w + 4}" y="{y + 13}">{_e(text)}</text></g>'
        )
    parts.append(
        f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="2" y2="{height - 2}" stroke="#59636e"/></svg>'
    )
    return "".join(parts)


def stacked_bars(
    title: str,
    rows: list[tuple[str, list[float], str]],
    names: list[tuple[str, str]],
    width: int = 580,
) -> str:
    """Horizontal bars of several parts, (label, [part values], value text); names: (part name,
    colour) for each part, drawn as the legend."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 18, 4, 190, 190
    height = len(rows) * (bar_h + gap) + 8
    top = max(sum(v) for _, v, _ in rows) or 1
    span = width - label_w - value_w - 10
    parts = [_svg_open(title, width, height)]
    for i, (label, values, text) in enumerate(rows):
        y = 4 + i * (bar_h + gap)
        x = float(label_w)
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
        )
        for value, (name, color) in zip(values, names):
            if not value:
                continue
            w = max(1.0, span * value / top)
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}">'
                f"<title>{_e(label)}: {fmt_int(value)} {_e(name)}</title></rect>"
            )
            x += w
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 13}">{_e(text)}</text></g>')
    parts.append("</svg>")
    return "".join(parts) + legend(names)


def line_chart(
    title: str,
    ticks: list[tuple[float, str]],
    series: list[tuple[str, list[float | None]]],
    fmt=fmt_bytes,
    width: int = 580,
    height: int = 240,
) -> str:
    """Lines over the x positions of `ticks` ((x, label), e.g. snapshot times); each series is
    (name, one value per tick, None where it has none); a point's tooltip names its value."""
    if not ticks or not series:
        return ""
    pad_l, pad_r, pad_t, pad_b = 70, 12, 10, 36
    xs = [x for x, _ in ticks]
    lo, hi = min(xs), max(xs)
    top = max((v for _, vals in series for v in vals if v is not None), default=0) or 1
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b

    def px(x: float) -> float:
        return pad_l + (plot_w / 2 if hi == lo else (x - lo) / (hi - lo) * plot_w)

    def py(v: float) -> float:
        return pad_t + plot_h - v / top * plot_h

    parts = [_svg_open(title, width, height)]
    for k in range(5):  # y grid: 0, 1/4 ... of the largest value
        v = top * k / 4
        parts.append(
            f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
            f'stroke="#e6e9ed"/><text class="tick" x="{pad_l - 4}" y="{py(v) + 3:.1f}" '
            f'text-anchor="end">{_e(fmt(round(v)))}</text>'
        )
    every = max(1, -(-len(ticks) // 6))
    for i, (x, label) in enumerate(ticks):
        if i % every == 0 or i == len(ticks) - 1:
            anchor = "end" if i == len(ticks) - 1 and i else "middle"
            parts.append(
                f'<text class="tick" x="{px(x):.1f}" y="{height - pad_b + 14}" '
                f'text-anchor="{anchor}">{_e(_short(label, 18))}</text>'
            )
    for n, (name, values) in enumerate(series):
        color = _PALETTE[n % len(_PALETTE)]
        runs: list[list[str]] = [[]]
        dots = []
        for (x, label), val in zip(ticks, values):
            if val is None:
                runs.append([])
                continue
            runs[-1].append(f"{px(x):.1f},{py(val):.1f}")
            dots.append(
                f'<circle cx="{px(x):.1f}" cy="{py(val):.1f}" r="3" fill="{color}">'
                f"<title>{_e(name)} at {_e(label)}: {_e(fmt(val))}</title></circle>"
            )
        parts.append(f'<g class="series"><title>{_e(name)}</title>')
        parts += [
            f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(r)}"/>'
            for r in runs
            if len(r) > 1
        ]
        parts += dots
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts) + legend(
        [(name, _PALETTE[n % len(_PALETTE)]) for n, (name, _) in enumerate(series)]
    )


def _short(text: str, n: int) -> str:
    text = fmt_key(text, 10_000)
    return text if len(text) <= n else text[: n - 1] + "…"


def chart_box(title: str, body: str, note: str = "") -> str:
    if not body:
        return ""
    note_html = f'<p class="note">{_e(note)}</p>' if note else ""
    return f'<figure class="box"><figcaption>{_e(title)}</figcaption>{body}{note_html}</figure>'
