"""A run card as one SVG image (``rocmtui runs RUN --card``): readable on its own wherever it is posted.

Plain SVG 1.1 text, no script, no external reference: each curve is a polyline through the mean of its
buckets (``base/series.py``, at most one group per two pixels) over a band from each group's lowest to its
highest value, so a spike that the downsampling would hide is still drawn. Every string from the run folder
goes through ``plain`` (control characters visible, length bounded) and is then XML-escaped.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace
from xml.sax.saxutils import escape

from rocmtui.base.series import SeriesView
from rocmtui.base.text import plain
from rocmtui.base.ticks import nice_ticks
from rocmtui.export.card_data import Card, Chart

WIDTH = 880
CHART_TOP = 86
CHART_HEIGHT = 250
LINE_HEIGHT = 20
MARGIN = 24
COLOURS = ("#1f6fb4", "#e4572e", "#2a9d8f")
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
TEXT_LIMIT = 140
"""Characters of one line of text on the card (a longer name or message is cut with an ellipsis)."""
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 58, 12, 40, 36
"""The plot area's inset in its panel: room for the y labels, the title and legend, the x labels."""
LEGEND_SWATCH, LEGEND_GAP, LEGEND_CHAR = 23, 14, 7.4
"""Legend entries: a swatch and its gap to the name, the gap to the next entry, a character's width (12px bold)."""
LOG_RATIO = 300.0
"""A panel whose highest value is more than this many times its lowest (all positive) is drawn on a log scale."""
MAX_DOTS = 30
"""A curve of at most this many points gets a dot at each (epochs, a short run, a single value)."""


QUOTES = {'"': "&quot;", "'": "&#39;"}
"""Quotes escaped besides ``&``, ``<`` and ``>``: the text may be an attribute's value."""


def text(value: object, limit: int = TEXT_LIMIT) -> str:
    """Outside text as XML character data or an attribute value: plain, bounded, escaped."""
    return escape(plain(value, limit=limit), QUOTES)


@dataclass(frozen=True)
class Frame:
    """A plot area in pixels and the data range it shows."""

    left: float
    top: float
    width: float
    height: float
    x_low: float
    x_high: float
    y_low: float
    y_high: float

    def point(self, x: float, y: float) -> tuple[float, float]:
        """Pixel coordinates of a data point, rounded to a tenth of a pixel (as written in the SVG)."""
        return round(self.left + self.width * _share(x, self.x_low, self.x_high), 1), round(
            self.top + self.height * (1 - _share(y, self.y_low, self.y_high)), 1
        )


def _share(value: float, low: float, high: float) -> float:
    """Where ``value`` lies from ``low`` (0) to ``high`` (1); the middle of an empty range. Computed in halves,
    so that no difference of two finite values overflows (a logged 1e308 beside -1e308)."""
    span = high / 2 - low / 2
    return (value / 2 - low / 2) / span if span > 0 else 0.5


def tick_label(value: float, percent: bool) -> str:
    if percent:
        return f"{100 * value:.4g}%"
    return f"{value:,.0f}" if 1000 <= abs(value) < 1e9 else f"{value:.4g}"


def views(chart: Chart, width: float) -> list[tuple[str, SeriesView]]:
    """Each curve's buckets, gathered into at most one group per two pixels of ``width``."""
    limit = max(2, int(width // 2))
    return [(name, series.view(limit=limit)) for name, series in chart.curves if len(series)]


def frame_for(
    chart_views: list[tuple[str, SeriesView]],
    left: float,
    top: float,
    width: float,
    *,
    from_zero: bool = False,
    x_end: float = -math.inf,
) -> Frame:
    """The plot area of a panel at (left, top), its range fitted to the data with a little room. The x axis
    starts at 0 where that costs little width, or always (``from_zero``: epochs, whose first ends at 1), and
    reaches at least ``x_end`` (the panels of a run share their epochs)."""
    xs = [x for _, view in chart_views for x in view.x]
    lows = [v for _, view in chart_views for v in view.low]
    highs = [v for _, view in chart_views for v in view.high]
    y_low, y_high = min(lows), max(highs)
    pad = (y_high / 2 - y_low / 2) * 0.1 or abs(y_high) * 0.05 or 1.0
    x_low, x_high = min(xs), max(*xs, x_end)
    if x_low >= 0 and (from_zero or x_low <= (x_high - x_low) / 4):
        x_low = 0.0
    return Frame(
        left + PLOT_LEFT, top + PLOT_TOP, width - PLOT_LEFT - PLOT_RIGHT, CHART_HEIGHT - PLOT_TOP - PLOT_BOTTOM,
        x_low, x_high, max(y_low - pad, -sys.float_info.max), min(y_high + pad, sys.float_info.max),
    )  # fmt: skip


def curve_points(frame: Frame, view: SeriesView) -> list[tuple[float, float]]:
    """The polyline of a curve: each group's mean at its last step."""
    return [frame.point(x, y) for x, y in zip(view.x, view.mean, strict=True)]


def band_points(frame: Frame, view: SeriesView) -> list[tuple[float, float]]:
    """The band from each group's lowest to its highest value (highs left to right, then lows back)."""
    top = [frame.point(x, y) for x, y in zip(view.x, view.high, strict=True)]
    bottom = [frame.point(x, y) for x, y in zip(view.x, view.low, strict=True)]
    return top + bottom[::-1]


def _points(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{x:g},{y:g}" for x, y in points)


def chart_svg(chart: Chart, left: float, width: float, x_end: float = -math.inf) -> list[str]:
    """One panel: title and legend, axes with round ticks, each curve's band and line."""
    top = CHART_TOP
    out = [f'<rect x="{left}" y="{top}" width="{width}" height="{CHART_HEIGHT}" rx="6" fill="#f7f8fa"/>']
    chart_views = views(chart, width - PLOT_LEFT - PLOT_RIGHT)
    log = not chart.percent and spans_decades(chart_views)
    mark = ' <tspan class="tick">log scale</tspan>' if log else ""
    out.append(f'<text x="{left + 12}" y="{top + 22}" class="chart-title">{text(chart.title, 60)}{mark}</text>')
    if not chart_views:
        out.append(f'<text x="{left + 12}" y="{top + 60}" class="note">no finite values</text>')
        return out
    chart_views = [(name, log10_view(view)) for name, view in chart_views] if log else chart_views
    frame = frame_for(chart_views, left, top, width, from_zero=chart.x_name == "epoch", x_end=x_end)
    out += _axes(frame, chart.percent, chart.x_name, log)
    for index, (name, view) in reversed(list(enumerate(chart_views))):
        out += _curve(frame, name, view, index)
    if len(chart_views) > 1 or chart_views[0][0] != chart.title:  # one curve named as its chart: no legend
        room = width - 36 - LEGEND_CHAR * (len(plain(chart.title, limit=60)) * 1.2 + (9 if log else 0))
        out += legend_svg([name for name, _ in chart_views], left + width - 12, top + 22, room)
    return out


def _style(index: int) -> tuple[str, str]:
    """The colour of the ``index``-th curve and its dash attribute (every curve after the first dashed)."""
    return COLOURS[index % len(COLOURS)], ' stroke-dasharray="5 3"' if index else ""


def _curve(frame: Frame, name: str, view: SeriesView, index: int) -> list[str]:
    """A curve's band (where a group spans values), its line, and a dot at each point of a short one."""
    colour, dash = _style(index)
    out: list[str] = []
    if any(low != high for low, high in zip(view.low, view.high, strict=True)):
        band = _points(band_points(frame, view))
        out.append(f'<polygon class="band" fill="{colour}" fill-opacity="0.18" points="{band}"/>')
    points = curve_points(frame, view)
    out.append(
        f'<polyline class="curve" data-series="{text(name, 60)}" fill="none" stroke="{colour}" stroke-width="1.6"'
        f'{dash} points="{_points(points)}"/>'
    )
    if len(points) <= MAX_DOTS:
        out += [f'<circle class="dot" cx="{x:g}" cy="{y:g}" r="2.6" fill="{colour}"/>' for x, y in points]
    return out


def legend_svg(names: list[str], right: float, y: float, room: float) -> list[str]:
    """Each name after a short line in its curve's colour and dash, ending at ``right``: names cut to share
    ``room`` pixels."""
    share = room / len(names) - LEGEND_SWATCH - LEGEND_GAP
    shown = [plain(name, limit=max(6, min(40, int(share / LEGEND_CHAR)))) for name in names]
    x = right - sum(LEGEND_SWATCH + LEGEND_CHAR * len(name) for name in shown) - LEGEND_GAP * (len(names) - 1)
    out: list[str] = []
    for index, name in enumerate(shown):
        colour, dash = _style(index)
        out.append(
            f'<line class="swatch" x1="{x:.1f}" y1="{y - 4}" x2="{x + 18:.1f}" y2="{y - 4}" stroke="{colour}" '
            f'stroke-width="2.4"{dash}/>'
        )
        label = escape(name, QUOTES)  # made plain above, where its width was measured
        out.append(f'<text x="{x + 23:.1f}" y="{y}" class="legend" style="fill: {colour}">{label}</text>')
        x += LEGEND_SWATCH + LEGEND_CHAR * len(name) + LEGEND_GAP
    return out


def spans_decades(chart_views: list[tuple[str, SeriesView]]) -> bool:
    """Whether the panel is drawn on a log scale: positive values spanning more than two decades (a loss that
    falls from 12 to 0.01 is a line along the floor on a linear one)."""
    lows = [low for _, view in chart_views for low in view.low]
    highs = [high for _, view in chart_views for high in view.high]
    return bool(lows) and min(lows) > 0 and max(highs) / min(lows) > LOG_RATIO


def log10_view(view: SeriesView) -> SeriesView:
    """The view with each value's common logarithm (the mean's, not the mean of the logarithms)."""
    logs = [[math.log10(value) for value in values] for values in (view.low, view.high, view.last, view.mean)]
    return replace(view, low=logs[0], high=logs[1], last=logs[2], mean=logs[3], smoothed=[])


def _axes(frame: Frame, percent: bool, x_name: str, log: bool = False) -> list[str]:
    out: list[str] = []
    right = frame.left + frame.width
    for value in nice_ticks(frame.y_low, frame.y_high, whole=log):
        _, y = frame.point(frame.x_low, value)
        out.append(f'<line x1="{frame.left}" y1="{y}" x2="{right}" y2="{y}" class="grid"/>')
        label = f"{10**value:g}" if log else tick_label(value, percent)
        out.append(f'<text x="{frame.left - 6}" y="{y + 4}" class="tick" text-anchor="end">{label}</text>')
    bottom = frame.top + frame.height
    for value in nice_ticks(frame.x_low, frame.x_high, whole=x_name == "step"):
        x, _ = frame.point(value, frame.y_low)
        out.append(
            f'<text x="{x}" y="{bottom + 16}" class="tick" text-anchor="middle">{tick_label(value, False)}</text>'
        )
    centre = frame.left + frame.width / 2
    out.append(f'<text x="{centre}" y="{bottom + 30}" class="axis-name" text-anchor="middle">{x_name}</text>')
    out.append(f'<line x1="{frame.left}" y1="{bottom}" x2="{right}" y2="{bottom}" class="axis"/>')
    return out


STYLE = f"""<style>
text {{ font-family: {FONT}; fill: #1d232b; }}
.title {{ font-size: 22px; font-weight: bold; }}
.sub {{ font-size: 13px; fill: #4a5563; }}
.chart-title {{ font-size: 14px; font-weight: bold; }}
.legend {{ font-size: 12px; font-weight: bold; }}
.tick {{ font-size: 11px; fill: #5b6573; }}
.axis-name {{ font-size: 11px; font-style: italic; fill: #5b6573; }}
.best {{ font-size: 16px; font-weight: bold; }}
.line {{ font-size: 13px; }}
.mono {{ font-family: {MONO}; font-size: 11px; fill: #333b45; }}
.note {{ font-size: 13px; fill: #8a5a00; }}
.grid {{ stroke: #dde1e6; stroke-width: 1; }}
.axis {{ stroke: #8b949e; stroke-width: 1; }}
</style>"""


def bench_lines(line: str, width: int = 118) -> list[str]:
    """The bench line cut at its ``|`` separators into lines of at most ``width`` characters."""
    parts = line.split(" | ")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 3 + len(part) > width:
            lines.append(part)
        else:
            lines[-1] += " | " + part
    return lines


def _footer_lines(card: Card) -> list[tuple[str, str]]:
    """(class, text) of each line under the charts."""
    body = card.body
    lines = [("best", body.best)]
    lines += [("line", body.milestones)] if body.milestones else []
    lines += [("line", line) for line in card.gpu]
    lines += [("note" if card.state == "failed" else "line", note) for note in card.notes]
    lines += [("mono", part) for part in bench_lines(body.bench)] if body.bench else []
    return lines


def card_svg(card: Card) -> str:
    """The card as SVG text."""
    lines = _footer_lines(card)
    height = CHART_TOP + CHART_HEIGHT + 24 + LINE_HEIGHT * len(lines) + 30
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(card.started_at)) if card.started_at else ""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}">',
        STYLE,
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="38" class="title">{text(card.title, 70)}</text>',
        f'<text x="{WIDTH - MARGIN}" y="38" class="sub" text-anchor="end">{text(card.state, 20)}'
        f"{' · ' + when if when else ''}</text>",
        f'<text x="{MARGIN}" y="62" class="sub">{text(card.body.recipe)}</text>',
    ]
    charts = card.body.charts
    if not charts:
        out.append(f'<text x="{MARGIN}" y="{CHART_TOP + 40}" class="note">no series logged</text>')
    gap = 16
    panel = (WIDTH - 2 * MARGIN - gap * (len(charts) - 1)) / max(1, len(charts))
    epochs_end = max(
        (series.last_x or 0.0 for c in charts if c.x_name == "epoch" for _, series in c.curves), default=0.0
    )
    for index, chart in enumerate(charts):
        x_end = epochs_end if chart.x_name == "epoch" else -math.inf
        out += chart_svg(chart, MARGIN + index * (panel + gap), panel, x_end)
    y = CHART_TOP + CHART_HEIGHT + 30
    for kind, line in lines:
        limit = 160 if kind == "mono" else TEXT_LIMIT
        out.append(f'<text x="{MARGIN}" y="{y}" class="{kind}">{text(line, limit)}</text>')
        y += LINE_HEIGHT
    out.append(
        f'<text x="{WIDTH - MARGIN}" y="{height - 12}" class="tick" text-anchor="end">'
        f"rocmtui · {text(card.folder, 80)}</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"
