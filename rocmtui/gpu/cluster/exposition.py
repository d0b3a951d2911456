"""A Prometheus text exposition (an exporter's ``/metrics`` page) read into plain samples, never raising.

The parsing is prometheus_client's own (``text_string_to_metric_families``), loaded lazily: it is in the
``cluster`` extra. Only the lines of metrics that ``wanted`` accepts are parsed (an AMD exporter's page holds
hundreds of metrics the cluster view never reads). The page is parsed whole; when the parser refuses it,
each wanted line is parsed alone, so that one bad line costs that line only: it is counted as malformed, the
others are kept. Label values stay as the exporter wrote them: untrusted text for the caller to clean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rocmtui.errors import UsageError

MAX_SAMPLES = 100_000
"""Samples kept from one page at most: the rest of a page larger than any real exporter's is dropped."""
MAX_LINE_CHARS = 64 * 1024
"""A longer line is not parsed: counted as malformed."""


@dataclass(frozen=True)
class Sample:
    """One line of a page: the metric's name, its labels and its value."""

    name: str
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class Page:
    """What a page held: its samples of wanted metrics, and how many of its lines could not be read."""

    samples: tuple[Sample, ...]
    malformed: int = 0
    cut: bool = False
    """More than ``MAX_SAMPLES`` wanted samples: the rest was left out."""


def require_parser() -> Callable[[str], Iterable[object]]:
    """prometheus_client's parser, or one UsageError line saying how to install it."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        raise UsageError("the cluster view needs prometheus_client: pip install 'rocmtui[cluster]'") from None
    return text_string_to_metric_families


def metric_name(line: str) -> str:
    """The metric name a sample line starts with (up to ``{`` or a blank); '' for a comment or a blank line."""
    if not line or line[0] == "#":
        return ""
    end = len(line)
    for stop in ("{", " ", "\t"):
        at = line.find(stop, 0, end)
        if at != -1:
            end = at
    return line[:end]


def parse_page(text: str, wanted: Callable[[str], bool]) -> Page:
    """The samples of ``text`` whose metric ``wanted`` accepts; malformed lines counted, never raised."""
    parse = require_parser()
    lines: list[str] = []
    malformed = 0
    for raw in text.splitlines():
        line = raw.strip()
        name = metric_name(line)
        if not name or not wanted(name):
            continue
        if len(line) > MAX_LINE_CHARS:
            malformed += 1
            continue
        lines.append(line)
    samples: list[Sample] = []
    try:
        _collect(parse("\n".join(lines) + "\n"), samples)
    except Exception:  # the official parser raises ValueError (and at times others) for a bad line
        samples.clear()
        for line in lines:
            try:
                _collect(parse(line + "\n"), samples)
            except Exception:  # this line only: counted, and the page read on
                malformed += 1
    cut = len(samples) > MAX_SAMPLES
    return Page(tuple(samples[:MAX_SAMPLES]), malformed, cut)


def _collect(families: Iterable[object], into: list[Sample]) -> None:
    for family in families:
        for sample in getattr(family, "samples", ()):
            value = float(sample.value)
            if math.isfinite(value):
                into.append(Sample(str(sample.name), dict(sample.labels), value))
            if len(into) > MAX_SAMPLES:
                return
