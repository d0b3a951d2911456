"""A Prometheus text exposition (an exporter's ``/metrics`` page) read into plain samples, never raising.

The parsing is prometheus_client's own (``text_string_to_metric_families``), loaded lazily: it is in the
``cluster`` extra. Only the lines of metrics that ``wanted`` accepts are read (an AMD exporter's page holds
hundreds of metrics the cluster view never reads), each line on its own, so that a bad line costs that line
only: it is counted as malformed, the others are kept.

Why a ``LabelCache``: the official parser reads labels a character at a time (0.1 ms for a dcgm-exporter
line of seven labels on the 2-core CPU box), and an exporter prints the same names and labels at every scrape,
only the values change. So each line's ``name{labels}`` is parsed once and kept; the value (and timestamp, if
any) after it is read by the parser's own rule (no ``_``, ``int`` else ``float``). A head in its plainest form
(``name{k="v",...}``: no blank, no escape, no label twice) is read by a regular expression, as the official
parser reads it (a hypothesis test holds them together); any other goes to the official parser, which reads it
or refuses it.
Label values stay as the exporter wrote them: untrusted text for the caller to clean.

Why ``Page.lines``: between two scrapes of one exporter most lines are the very same text (a GPU's name, clocks,
memory; often all but the utilisation). Given the host's last ``lines``, a line seen there is taken as it was read
then, without being split or its value parsed again (a changed dcgm-exporter page of 8 GPUs, one value a GPU
changed: about 0.6 ms a page read and mapped before, 0.45 ms with this, 0.26 ms with the mapping's ``Names.steps``
too, on the 2-core CPU box). A changed line of the form ``name{labels} value`` whose ``name{labels}`` was read
whole before is read from ``LabelCache.lines``: its head looked up, its value read, nothing else done again.

Why ``read_page``: a page as it arrives is split at its newlines as bytes and compared piece by piece with the
host's last page (both in C: no decoding, no hashing of the 160 lines of a dcgm-exporter page of 8 GPUs); only the
pieces that differ are decoded and read, and put in place in the last page's samples (about 100 µs a changed page
read as text with the last ``lines`` at hand, about 40 µs this way, on the 2-core CPU box). It gives what
``parse_page`` gives for the page decoded, and falls back on it whenever a changed line would change which lines
hold samples (one wanted now and not before, one malformed), or a page holds a line break other than a newline
(``str.splitlines`` breaks a line there, the bytes' split does not). A changed piece ``name{labels} value`` whose
ASCII head was read so before (``LabelCache.raw_lines``) and whose value is digits, signs, points and exponents
alone is read as bytes, not decoded (a changed line about 1 µs, against 2.5 µs decoded and read as text).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from operator import ne

from rocmtui.base.errors import UsageError

MAX_SAMPLES = 100_000
"""Samples kept from one page at most: the rest of a page larger than any real exporter's is dropped."""
MAX_LINE_CHARS = 64 * 1024
"""A longer line is not parsed: counted as malformed."""
MAX_CACHED = 200_000
"""Heads kept by a LabelCache (256 hosts of 8 GPUs hold about 23,000); past it, it starts again empty."""


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
    lines: Mapping[str, Sample | None] = field(default_factory=dict, repr=False, compare=False)
    """Each line of the page read without fault -> its sample (None: a line not wanted, a comment, a value that
    is not finite), for reading the same exporter's next page (``parse_page``'s ``last``); empty where ``pieces``
    are kept instead."""
    kinds: Sequence[int] = field(default=(), repr=False, compare=False)
    """For each line: where its sample is in ``samples``, ``NO_SAMPLE`` or ``MALFORMED``."""
    pieces: Sequence[bytes] | None = field(default=None, repr=False, compare=False)
    """The page as it arrived split at its newlines, when these are its lines (``read_page``); else None."""


NO_SAMPLE = -1
"""A line that holds no sample (not wanted, a comment, a blank, a value that is not finite)."""
MALFORMED = -2


def require_parser() -> Callable[[str], Iterable[object]]:
    """prometheus_client's parser, or one UsageError line saying how to install it."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        raise UsageError("the cluster view needs prometheus_client: pip install 'rocmtui[cluster]'") from None
    return text_string_to_metric_families


class LabelCache:
    """``name{labels}`` -> (name, labels), as the official parser reads them; None for a head it refuses."""

    def __init__(self) -> None:
        self._parse = require_parser()
        self._heads: dict[str, tuple[str, dict[str, str]] | None] = {}
        self.lines: dict[str, tuple[str, str, dict[str, str]]] = {}
        """``name{labels}`` of lines read whole as ``name{labels} value`` -> (the name ``wanted`` was asked about,
        the sample's name, its labels): a line of that form with a new value is read from here (``_read_line``)."""
        self.raw_lines: dict[bytes, tuple[str, str, dict[str, str]]] = {}
        """The ASCII heads of ``lines`` as bytes, each once a changed line of a page was read from it: a changed
        piece ``name{labels} value`` of the next page with such a head and a plain value is read without being
        decoded (``_read_changed``)."""

    def head(self, text: str) -> tuple[str, dict[str, str]] | None:
        if text in self._heads:
            return self._heads[text]
        found = _plain_head(text)
        if found is None:
            try:
                samples = [s for family in self._parse(text + " 0\n") for s in getattr(family, "samples", ())]
                found = (str(samples[0].name), dict(samples[0].labels)) if len(samples) == 1 else None
            except Exception:  # the official parser raises ValueError (and at times others) for a bad line
                found = None
        if len(self._heads) >= MAX_CACHED:
            self._heads.clear()
            self.lines.clear()
            self.raw_lines.clear()
        self._heads[text] = found
        return found

    def remember_raw(self, head: bytes) -> None:
        """Keep ``head`` (ASCII) as bytes for the entry of ``lines`` it reads as, if there is one."""
        known = self.lines.get(head.decode("ascii"))
        if known is not None:
            self.raw_lines[head] = known


_LABEL = r'(?!__)[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*"'
_PLAIN_HEAD = re.compile(rf"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{{((?:{_LABEL},)*{_LABEL})\}})?")
_LABELS = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\\n]*)"')


def _plain_head(text: str) -> tuple[str, dict[str, str]] | None:
    """``name{labels}`` in its plainest form (no blank, no escape, no label twice, no empty braces, no label name
    that the official parser reserves, ``__...``), read as the official parser reads it but without going a
    character at a time (the first page of 256 hosts held about 23,000 heads: 1 s of CPU through the official
    parser on the 2-core box); None for any other head, which the official parser then reads (or refuses)."""
    match = _PLAIN_HEAD.fullmatch(text)
    if match is None:
        return None
    name, body = match.group(1), match.group(2)
    if body is None:
        return name, {}
    labels = dict(_LABELS.findall(body))
    return (name, labels) if len(labels) == body.count('="') else None


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


def _number(token: str) -> float:
    """The official parser's rule for a value or a timestamp: no ``_``; an int, else a float. ValueError."""
    if "_" in token:
        raise ValueError(token)
    try:
        return int(token)
    except ValueError:
        return float(token)


_PLAIN_CHARS = b"0123456789.eE+-"


def _plain_number(token: bytes) -> float | None:
    """``float(_number(token))`` for a token of digits, signs, points and exponents alone (as ASCII text it reads
    as the official parser reads it); None for any other token, or one that does not read as a number."""
    if not token or token.translate(None, _PLAIN_CHARS):
        return None
    try:
        return float(int(token))
    except ValueError:
        try:
            return float(token)
        except ValueError:
            return None
    except OverflowError:
        return None


def _split(line: str) -> tuple[str, list[str]]:
    """(``name{labels}``, the tokens after it)."""
    close = line.rfind("}") if "{" in line else -1
    if close != -1:
        return line[: close + 1], line[close + 1 :].split()
    name, _, rest = line.partition(" ") if " " in line else line.partition("\t")
    return name, rest.split()


def parse_page(
    text: str,
    wanted: Callable[[str], bool],
    cache: LabelCache | None = None,
    last: Mapping[str, Sample | None] | None = None,
) -> Page:
    """The samples of ``text`` whose metric ``wanted`` accepts; malformed lines counted, never raised.

    ``last``: the ``lines`` of the same exporter's previous page, whose lines are not read again."""
    cache = cache or LabelCache()
    last = last or {}
    seen: dict[str, Sample | None] = {}
    samples: list[Sample] = []
    kinds: list[int] = []
    malformed = 0
    for raw in text.splitlines():
        known = last.get(raw, _UNSEEN)
        if known is _UNSEEN:
            try:
                known = _read_line(raw, wanted, cache)
            except (ValueError, OverflowError):
                malformed += 1
                kinds.append(MALFORMED)
                continue
        seen[raw] = known
        if known is None:
            kinds.append(NO_SAMPLE)
        else:
            kinds.append(len(samples))
            samples.append(known)
            if len(samples) > MAX_SAMPLES:
                return Page(tuple(samples[:MAX_SAMPLES]), malformed, cut=True)
    return Page(tuple(samples), malformed, lines=seen, kinds=kinds)


_OTHER_BREAK = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
"""What ``str.splitlines`` breaks a line at besides a newline."""


def read_page(
    raw: bytes, wanted: Callable[[str], bool], cache: LabelCache, last: Page | None = None
) -> tuple[Page, tuple[int, ...] | None]:
    """``parse_page`` of ``raw`` decoded (UTF-8, invalid bytes replaced), and where its samples differ from
    ``last``'s (None: not known, any may). With ``last`` (the same exporter's last page) whose lines are as many,
    only the lines that changed are decoded and read."""
    pieces = raw.split(b"\n")
    if last is not None and last.pieces is not None and len(pieces) == len(last.pieces):
        again = _read_changed(pieces, wanted, cache, last)
        if again is not None:
            return again
    text = raw.decode("utf-8", errors="replace")
    page = parse_page(text, wanted, cache, last.lines if last is not None else None)
    if page.cut or _OTHER_BREAK.search(text):
        return page, None
    kinds = page.kinds if len(page.kinds) == len(pieces) else [*page.kinds, NO_SAMPLE]  # the blank after the last
    return replace(page, lines={}, kinds=kinds, pieces=pieces), None  # the pieces instead of the lines: as much kept


def _read_changed(
    pieces: list[bytes], wanted: Callable[[str], bool], cache: LabelCache, last: Page
) -> tuple[Page, tuple[int, ...]] | None:
    """The page whose lines are ``pieces``, from ``last``'s and the pieces that differ from its; None when a
    changed line holds a sample where the last one did not (or none where it did), or is malformed where the last
    one was not (or not where it was), or holds another line break."""
    assert last.pieces is not None
    kinds = last.kinds
    samples: list[Sample] | None = None
    changed: list[int] = []
    raw_lines = cache.raw_lines
    for i in compress(range(len(pieces)), map(ne, pieces, last.pieces)):
        piece = pieces[i]
        head, space, token = piece.rpartition(b" ")
        known = raw_lines.get(head)
        read = _plain_number(token) if known is not None and len(piece) <= MAX_LINE_CHARS else None
        if known is not None and read is not None and wanted(known[0]):
            sample = Sample(known[1], known[2], read) if math.isfinite(read) else None  # as ``_read_line`` reads it
        else:
            line = piece.decode("utf-8", errors="replace")
            if _OTHER_BREAK.search(line):
                return None
            try:
                sample = _read_line(line, wanted, cache)
            except (ValueError, OverflowError):
                if kinds[i] != MALFORMED:
                    return None
                continue
            if sample is not None and space and head.isascii():
                cache.remember_raw(head)
        if sample is None or kinds[i] < 0:
            if sample is not None or kinds[i] != NO_SAMPLE:
                return None
            continue
        if samples is None:
            samples = list(last.samples)
        samples[kinds[i]] = sample
        changed.append(kinds[i])
    held = last.samples if samples is None else tuple(samples)
    return Page(held, last.malformed, lines=last.lines, kinds=kinds, pieces=pieces), tuple(changed)


_UNSEEN = Sample("", {}, 0.0)
"""Not a line of the last page (a line's sample may be None)."""


def _read_line(raw: str, wanted: Callable[[str], bool], cache: LabelCache) -> Sample | None:
    """The sample of one line; None for a line not wanted (or a value that is not finite); ValueError if bad.

    A line ``name{labels} value`` whose ``name{labels}`` was read whole before (``LabelCache.lines``; most changed
    lines: a new value) is read as it would be again: the same name asked about, the same head, the value by the
    same rule."""
    head, space, token = raw.rpartition(" ")
    known = cache.lines.get(head) if space else None
    if known is not None and len(raw) <= MAX_LINE_CHARS and wanted(known[0]):
        try:
            read = float(_number(token))
        except (ValueError, OverflowError):
            pass  # not one value (``1\t1700000000``: a value and a timestamp): read the whole line
        else:
            return Sample(known[1], known[2], read) if math.isfinite(read) else None
    line = raw.strip()
    name = metric_name(line)
    if not name or not wanted(name):
        return None
    head, rest = _split(line)
    parsed = cache.head(head) if len(line) <= MAX_LINE_CHARS and 1 <= len(rest) <= 2 else None
    if parsed is None:
        raise ValueError(head)
    value = float(_number(rest[0]))
    if len(rest) == 2:
        _number(rest[1])  # a timestamp: checked, not used
    elif line == raw and raw == f"{head} {rest[0]}" and len(cache.lines) < MAX_CACHED:
        cache.lines[head] = (name, parsed[0], parsed[1])
    return Sample(parsed[0], parsed[1], value) if math.isfinite(value) else None
