"""The event stream of a run folder: a header line, then one event a line, each with a sequence number.

Writers append through ``EventWriter`` (whole lines only). Readers go through ``EventTail``: it skips
what it has seen (by ``seq``), the header, and lines it cannot read (counted in ``skipped``, never
fatal, and never allowed to hide what follows). Lines are encoded and decoded by ``rocmtui.run.format``.
"""

from __future__ import annotations

import time
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.base.files import open_regular
from rocmtui.codec import CodecError
from rocmtui.events import RunStarted, TrackStarted, TrainEvent
from rocmtui.run.format import (
    EVENTS,
    TORN,
    check_header,
    decode_event_line,
    encode_event_line,
    encode_header,
)
from rocmtui.run.lines import LineTailer, LineWriter, last_line


class EventWriter:
    """Appends events to ``metrics.jsonl``; continues the numbering of an existing stream."""

    def __init__(self, run_dir: Path) -> None:
        path = run_dir / EVENTS
        self._lines = LineWriter(path, run_dir / TORN)
        self.set_aside = self._lines.set_aside
        self.seq = last_seq(run_dir)
        if self.seq == 0 and path.stat().st_size == 0:
            self._lines.append(encode_header())

    def write(self, event: TrainEvent) -> int:
        """Append one event; returns its sequence number. OSError (a full disk) leaves the file whole."""
        seq = self.seq + 1
        self._lines.append(encode_event_line(seq, time.time(), event))
        self.seq = seq
        return seq

    def sync(self) -> None:
        self._lines.sync()

    def close(self) -> None:
        self._lines.close()


def last_seq(run_dir: Path) -> int:
    """The sequence number of the stream's last line (a version 1 stream counts its lines); 0 for none."""
    path = run_dir / EVENTS
    line = last_line(path)
    if line is None:
        return 0
    try:
        seq = decode_event_line(line).seq
    except CodecError:
        seq = None
    if seq is not None:
        return seq
    with open(open_regular(path), "rb") as f:
        return sum(1 for raw in f if raw.strip())


class EventTail:
    """New events of a run folder's stream at each ``poll()``, in order, each once.

    A line whose sequence number jumps further ahead than the unreadable lines before it explain is
    itself counted unreadable: one bad ``seq`` never hides the events after it. A header of a newer
    version than this one reads raises FormatError (one line)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / EVENTS
        self._lines = LineTailer(self.path)
        self.last_seq = 0
        self.skipped = 0
        """Lines that were not events this version can read."""
        self._unnumbered = 0
        self._bad_run = 0
        """Unreadable lines since the last good one: how far the next ``seq`` may jump."""

    def poll(self) -> list[tuple[int, TrainEvent]]:
        out: list[tuple[int, TrainEvent]] = []
        restarts = self._lines.restarts
        lines = self._lines.read_lines()
        if self._lines.restarts != restarts:
            self._unnumbered = 0
        for raw in lines:
            try:
                line = decode_event_line(raw)
            except CodecError:
                self._skip()
                continue
            seq = line.seq
            if seq is None:  # version 1: number the lines as they come
                self._unnumbered += 1
                seq = self._unnumbered
            if seq <= self.last_seq and not (seq == 0 and self.last_seq == 0):
                continue  # seen before (the file was replaced and is read again)
            if seq > self.last_seq + 1 + self._bad_run:
                self._skip()
                continue
            self.last_seq, self._bad_run = seq, 0
            if line.header is not None:
                check_header(line.header, str(self.path))
            elif line.event is not None:
                out.append((seq, line.event))
        dropped = self._lines.take_dropped()  # an over-long line at the end of this read
        self.skipped += dropped
        self._bad_run += dropped
        return out

    @property
    def behind(self) -> bool:
        """More was appended than the last poll read: poll again for it."""
        return self._lines.behind

    def poll_all(self) -> list[tuple[int, TrainEvent]]:
        """Everything appended so far, however large (``poll`` reads at most READ_MAX at a time)."""
        out = self.poll()
        while self.behind:
            out += self.poll()
        return out

    def _skip(self) -> None:
        self.skipped += 1
        self._bad_run += 1

    def release(self) -> None:
        """Hold no descriptor until the next ``poll`` (``LineTailer.release``)."""
        self._lines.release()

    def close(self) -> None:
        self._lines.close()


OPENING_BYTES = 64 * 1024
"""Bytes of a stream's start read for its opening event: writers put it within the first few lines."""


def opening_start(run_dir: Path) -> RunStarted | TrackStarted | None:
    """The stream's first ``RunStarted`` or ``TrackStarted`` within its first ``OPENING_BYTES`` (whole lines only),
    without reading the rest: what a listing of thousands of runs can afford. None when there is none there or the
    stream cannot be read (a link, a FIFO: refused by the safe opening)."""
    try:
        fd = open_regular(run_dir / EVENTS)
    except (OSError, UsageError):
        return None
    with open(fd, "rb") as f:
        head = f.read(OPENING_BYTES)
    for raw in head.split(b"\n")[:-1]:
        try:
            event = decode_event_line(raw).event
        except CodecError:
            continue
        if isinstance(event, RunStarted | TrackStarted):
            return event
    return None


def read_events(run_dir: Path) -> list[TrainEvent]:
    """Every readable event of a run folder, in order."""
    tail = EventTail(run_dir)
    try:
        return [event for _, event in tail.poll_all()]
    finally:
        tail.close()
