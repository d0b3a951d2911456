"""Text formatters for the screens: bars and meters; units, durations and accuracy come from ``base.units``."""

from __future__ import annotations

from rich.text import Text

from rocmtui.base.units import (
    NA,
    fmt_acc,
    fmt_bytes,
    fmt_duration,
    fmt_pct,
    fmt_power,
    fmt_span,
    fmt_temp,
    fmt_used_total,
)

__all__ = [
    "NA",
    "bar",
    "dim_tracks",
    "fmt_acc",
    "fmt_bytes",
    "fmt_duration",
    "fmt_pct",
    "fmt_power",
    "fmt_rate",
    "fmt_span",
    "fmt_temp",
    "fmt_used_total",
    "meter",
    "ratio",
]

BAR_FULL = "█"
BAR_PARTS = " ▏▎▍▌▋▊▉"
BAR_EMPTY = "░"


def fmt_rate(images_per_s: float | None) -> str:
    """Throughput as ``12,345 img/s``."""
    return "- img/s" if not images_per_s else f"{images_per_s:,.0f} img/s"


def bar(fraction: float | None, width: int) -> str:
    """A horizontal bar of ``width`` cells with eighth-cell resolution on a light track; blank when unknown."""
    if width <= 0:
        return ""
    if fraction is None:
        return " " * width
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    text = BAR_FULL * full + (BAR_PARTS[part] if part else "")
    return text.ljust(width, BAR_EMPTY)


def meter(label: str, fraction: float | None, value: str, width: int, label_width: int = 6) -> str:
    """``util  ██████     62%``: a label, a bar filling the width left, then the value."""
    bar_width = max(3, width - label_width - len(value) - 2)
    return f"{label:<{label_width}}{bar(fraction, bar_width)} {value}"


def ratio(part: float | None, whole: float | None) -> float | None:
    """part/whole, or None when either is unknown or whole is zero."""
    if part is None or not whole:
        return None
    return part / whole


def dim_tracks(text: Text) -> Text:
    """Dim the empty part of every bar in ``text`` (in place), so the filled part stands out."""
    text.highlight_regex(f"{BAR_EMPTY}+", style="dim")
    return text
