"""Per-rank streams of a run trained by several processes: ``ranks/rank-N.jsonl``, one writer each.

Rank 0 writes the run's event stream as a single-process run does; every rank (rank 0 included) also
appends its own progress here, so that a viewer can show each rank's step and speed and spot a straggler.
The lines are whole (``LineWriter``) and typed (msgspec Structs through the codec); a line this version
cannot read is skipped. Torch-free, like the rest of ``rocmtui.run``.
"""

from __future__ import annotations

import re
import statistics
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.codec import CodecError, decode_json
from rocmtui.run.format import RANKS, RankEvent, RankFailed, RankProgress, RankStarted, encode_line
from rocmtui.run.lines import LineTailer, LineWriter

__all__ = ["RankEvent", "RankFailed", "RankProgress", "RankStarted", "RankTail", "RankWriter", "rank_path"]
_NAME = re.compile(r"rank-(\d+)\.jsonl")

STRAGGLER_RATIO = 0.9
"""A rank slower than this fraction of the ranks' median speed is flagged as a straggler."""
SPEED_REPORTS = 8
"""Reports a rank's speed is averaged over: one report is a fraction of a second, and noisy."""


def rank_path(run_dir: Path, rank: int) -> Path:
    return run_dir / RANKS / f"rank-{rank}.jsonl"


class RankWriter:
    """Appends one rank's events to its own file (made on first use)."""

    def __init__(self, run_dir: Path, rank: int) -> None:
        path = rank_path(run_dir, rank)
        path.parent.mkdir(mode=0o755, exist_ok=True)  # never writable by the group, whatever the umask
        self._lines = LineWriter(path)

    def write(self, event: RankEvent) -> None:
        self._lines.append(encode_line(event))

    def close(self) -> None:
        self._lines.close()


@dataclass
class RankView:
    """What a viewer knows of one rank: its start and its latest progress."""

    rank: int
    started: RankStarted | None = None
    progress: RankProgress | None = None
    failed: RankFailed | None = None
    speeds: deque[float] = field(default_factory=lambda: deque(maxlen=SPEED_REPORTS))
    """The speed of the latest reports (images/s, else steps/s)."""

    @property
    def mean_speed(self) -> float | None:
        return sum(self.speeds) / len(self.speeds) if self.speeds else None


class RankTail:
    """The latest state of every rank of a run folder, updated by ``poll()`` (new files are picked up)."""

    def __init__(self, run_dir: Path) -> None:
        self.folder = run_dir / RANKS
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
                view = self.views.setdefault(rank, RankView(rank))
                if isinstance(event, RankStarted):
                    view.started = event
                elif isinstance(event, RankFailed):
                    view.failed = event
                else:
                    view.progress = event
                    view.speeds.append(event.speed)
                changed = True
        return changed

    def _discover(self) -> bool:
        try:
            names = [entry.name for entry in self.folder.iterdir()]
        except (FileNotFoundError, NotADirectoryError):
            return False
        found = False
        for name in names:
            match = _NAME.fullmatch(name)
            if match and int(match[1]) not in self._tails:
                self._tails[int(match[1])] = LineTailer(self.folder / name)
                found = True
        return found

    def close(self) -> None:
        for tail in self._tails.values():
            tail.close()


def stragglers(views: list[RankView]) -> set[int]:
    """Ranks whose mean speed over their latest reports is below ``STRAGGLER_RATIO`` of the ranks' median.

    Not by step: ranks step together (each step all-reduces), and a rank's line may land a moment after
    another's. With fewer than two reporting ranks there is nothing to compare.
    """
    speeds = {v.rank: v.mean_speed for v in views if v.mean_speed is not None}
    if len(speeds) < 2:
        return set()
    median = statistics.median(speeds.values())
    return {rank for rank, speed in speeds.items() if speed < STRAGGLER_RATIO * median}
