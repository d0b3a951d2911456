"""Per-rank streams of a run trained by several processes: ``ranks/rank-N.jsonl``, one writer each.

Rank 0 writes the run's event stream as a single-process run does; every rank (rank 0 included) also
appends its own progress here, so that a viewer can show each rank's step and speed and spot a straggler.
The lines are whole (``LineWriter``) and typed (msgspec Structs through the codec); a line this version
cannot read is skipped. Torch-free, like the rest of ``rocmtui.run``.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.codec import CodecError, decode_json
from rocmtui.run.format import (
    RANKS,
    RankBeat,
    RankEnded,
    RankEvent,
    RankFailed,
    RankProgress,
    RankStarted,
    encode_line,
)
from rocmtui.run.lines import LineTailer, LineWriter

__all__ = [
    "RankBeat",
    "RankEnded",
    "RankEvent",
    "RankFailed",
    "RankProgress",
    "RankStarted",
    "RankTail",
    "RankView",
    "RankWriter",
    "rank_path",
]
_NAME = re.compile(r"rank-([0-9]{1,7})\.jsonl")

BEAT_S = 2.0
"""A rank that has written nothing for this long writes a RankBeat: its lines never stop while it lives."""
KEPT_REPORTS = 64
"""The latest reports of a rank a viewer keeps (step times for the strip, the straggler's window)."""
MAX_RANKS = 4096
"""Rank files past this many are not read: a folder cannot make a viewer open files without end."""


def rank_path(run_dir: Path, rank: int) -> Path:
    return run_dir / RANKS / f"rank-{rank}.jsonl"


class RankWriter:
    """Appends one rank's events to its own file (made on first use); with ``beat_s``, a thread writes a RankBeat
    whenever the rank has written nothing for that long (the rank waits in a collective, tests, saves)."""

    def __init__(self, run_dir: Path, rank: int, *, beat_s: float | None = None) -> None:
        path = rank_path(run_dir, rank)
        path.parent.mkdir(mode=0o755, exist_ok=True)  # never writable by the group, whatever the umask
        self.rank = rank
        self._lines = LineWriter(path)
        self._lock = threading.Lock()
        self._written = time.monotonic()
        self._step = 0
        self._closed = threading.Event()
        self._beats: threading.Thread | None = None
        if beat_s is not None:
            self._beats = threading.Thread(target=self._beat, args=(beat_s,), name="rocmtui-beat", daemon=True)
            self._beats.start()

    def write(self, event: RankEvent) -> None:
        line = encode_line(event)
        with self._lock:
            if self._closed.is_set():
                return
            self._lines.append(line)
            self._written = time.monotonic()
            if isinstance(event, RankProgress | RankBeat):
                self._step = event.step

    def _beat(self, every_s: float) -> None:
        while not self._closed.wait(every_s / 4):
            if time.monotonic() - self._written >= every_s:
                with contextlib.suppress(OSError):  # a full disk: the next beat tries again
                    self.write(RankBeat(self.rank, self._step, time.time()))

    def close(self) -> None:
        with self._lock:
            self._closed.set()
            self._lines.close()
        if self._beats is not None and self._beats is not threading.current_thread():
            self._beats.join()


@dataclass
class RankView:
    """What a viewer knows of one rank: its start, its latest progress, its recent step times, its last line."""

    rank: int
    started: RankStarted | None = None
    progress: RankProgress | None = None
    failed: RankFailed | None = None
    ended: RankEnded | None = None
    speeds: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_REPORTS))
    """The speed of the latest reports (images/s, else steps/s)."""
    step_times: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_REPORTS))
    """Seconds a step of the latest reports that said (``RankProgress.step_s``)."""
    busy_times: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_REPORTS))
    """Of those, the seconds the rank was busy with its own work (``RankProgress.busy_s``), where measured."""
    step: int = 0
    """The last step it reported (progress or beat)."""
    last_wall: float = 0.0
    """time.time() (the rank's host) of its newest line: how old its heartbeat is."""

    @property
    def mean_speed(self) -> float | None:
        return sum(self.speeds) / len(self.speeds) if self.speeds else None

    def take(self, event: RankEvent) -> None:
        if isinstance(event, RankStarted):
            self.started = event
        elif isinstance(event, RankFailed):
            self.failed = event
        elif isinstance(event, RankEnded):
            self.ended = event
        elif isinstance(event, RankBeat):
            self.step = max(self.step, event.step)
        else:
            self.progress = event
            self.step = max(self.step, event.step)
            self.speeds.append(event.speed)
            if event.step_s > 0:
                self.step_times.append(event.step_s)
            if event.busy_s > 0:
                self.busy_times.append(event.busy_s)
        self.last_wall = max(self.last_wall, event.wall)


class RankTail:
    """The latest state of every rank of a run, updated by ``poll()`` (new files are picked up). Several folders:
    the ranks of one job whose nodes could not share a folder, each node's in its own (a rank found in two
    folders is taken from the first)."""

    def __init__(self, run_dir: Path, *more: Path) -> None:
        self.folders = [folder / RANKS for folder in (run_dir, *more)]
        self._tails: dict[int, LineTailer] = {}
        self.views: dict[int, RankView] = {}

    def poll(self) -> bool:
        """Read what was appended since the last poll; True when anything changed."""
        changed = self._discover()
        for rank, tail in self._tails.items():
            try:
                lines = tail.read_lines()
            except (OSError, UsageError):  # a rank file that is a link or a FIFO: that rank is not shown
                continue
            for line in lines:
                try:
                    event = decode_json(line, RankEvent)
                except CodecError:
                    continue
                if event.rank != rank:  # a line that names another rank than its file: not this rank's
                    continue
                self.views.setdefault(rank, RankView(rank)).take(event)
                changed = True
        return changed

    def _discover(self) -> bool:
        found = False
        for folder in self.folders:
            try:
                names = [entry.name for entry in folder.iterdir()]
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            for name in names:
                match = _NAME.fullmatch(name)
                if match and int(match[1]) not in self._tails and len(self._tails) < MAX_RANKS:
                    self._tails[int(match[1])] = LineTailer(folder / name)
                    found = True
        return found

    def release(self) -> None:
        """Let go of the files until the next poll (where they are read again from where it stopped): a reader
        of many runs holds no descriptor between reads."""
        for tail in self._tails.values():
            tail.release()

    def close(self) -> None:
        for tail in self._tails.values():
            tail.close()


def read_ranks(run_dir: Path, *more: Path) -> dict[int, RankView]:
    """Every rank of the folders as they are now, read once (the files closed after)."""
    tail = RankTail(run_dir, *more)
    try:
        tail.poll()
    finally:
        tail.close()
    return tail.views


def job_of(folder: Path) -> str | None:
    """The job id (``RankStarted.job_id``) the ranks of ``folder`` wrote; None when none of them did."""
    views = read_ranks(folder).values()
    return next((v.started.job_id for v in views if v.started is not None and v.started.job_id), None)


def is_rank_folder(path: Path) -> bool:
    """A folder with ranks in it (``ranks/``): a run's, or one node's of a job whose nodes keep their own."""
    return path.is_dir() and (path / RANKS).is_dir()
