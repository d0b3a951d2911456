"""The event stream of a run folder: a header line, then one event a line, each with a sequence number.

Writers append through ``LineWriter`` (whole lines only). Readers go through ``EventTail``: it skips
what it has seen (by ``seq``), lines it cannot read (counted in ``skipped``), and the header.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rocmtui.events import TrainEvent, event_from_dict, event_to_dict
from rocmtui.run.layout import EVENTS, TORN
from rocmtui.run.lines import LineTailer, LineWriter, last_line

FORMAT = "rocmtui-events"
VERSION = 2
"""Version 1 lines had no ``seq``/``t``; they still load."""


def _encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":"), allow_nan=True).encode() + b"\n"


class EventWriter:
    """Appends events to ``metrics.jsonl``; continues the numbering of an existing stream."""

    def __init__(self, run_dir: Path) -> None:
        path = run_dir / EVENTS
        self._lines = LineWriter(path, run_dir / TORN)
        self.set_aside = self._lines.set_aside
        self.seq = last_seq(run_dir)
        if self.seq == 0 and path.stat().st_size == 0:
            self._lines.append(_encode({"seq": 0, "format": FORMAT, "version": VERSION}))

    def write(self, event: TrainEvent) -> int:
        """Append one event; returns its sequence number. OSError (a full disk) leaves the file whole."""
        seq = self.seq + 1
        self._lines.append(_encode({"seq": seq, "t": round(time.time(), 3), **event_to_dict(event)}))
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
        seq = json.loads(line).get("seq")
    except (ValueError, AttributeError):
        seq = None
    if isinstance(seq, int):
        return seq
    with path.open("rb") as f:
        return sum(1 for raw in f if raw.strip())


class EventTail:
    """New events of a run folder's stream at each ``poll()``, in order, each once."""

    def __init__(self, run_dir: Path) -> None:
        self._lines = LineTailer(run_dir / EVENTS)
        self.last_seq = 0
        self.skipped = 0
        """Lines that were not events this version can read."""
        self._unnumbered = 0

    def poll(self) -> list[tuple[int, TrainEvent]]:
        out: list[tuple[int, TrainEvent]] = []
        restarts = self._lines.restarts
        lines = self._lines.read_lines()
        if self._lines.restarts != restarts:
            self._unnumbered = 0
        for raw in lines:
            try:
                data = json.loads(raw)
                seq = data.pop("seq", None)
                data.pop("t", None)
            except (ValueError, AttributeError):
                self.skipped += 1
                continue
            if seq is None:  # version 1: number the lines as they come
                self._unnumbered += 1
                seq = self._unnumbered
            if not isinstance(seq, int) or seq <= self.last_seq:
                continue
            self.last_seq = seq
            if "format" in data:
                continue
            try:
                out.append((seq, event_from_dict(data)))
            except (ValueError, TypeError, KeyError):
                self.skipped += 1
        return out

    def close(self) -> None:
        self._lines.close()


def read_events(run_dir: Path) -> list[TrainEvent]:
    """Every readable event of a run folder, in order."""
    tail = EventTail(run_dir)
    try:
        return [event for _, event in tail.poll()]
    finally:
        tail.close()
