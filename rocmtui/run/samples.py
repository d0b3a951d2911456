"""GPU samples taken during a run, kept in the folder with a bound: ``gpu.jsonl`` and one previous file.

The lines are ``rocmtui monitor --json`` lines (``rocmtui.gpu.sample_codec``); this module only stores them.
When the current file passes ``MAX_BYTES`` it becomes ``gpu.1.jsonl`` (replacing the older one), so a
run of any length keeps between one and two files' worth: at one sample a second on one GPU, about
the last 4 to 8 hours.
"""

from __future__ import annotations

import os
from pathlib import Path

from rocmtui.base.files import read_small
from rocmtui.run.format import GPU, GPU_PREVIOUS
from rocmtui.run.lines import LineTailer, LineWriter

MAX_BYTES = 8 << 20


class SampleLog:
    """Appends sample lines for one writer; rotates at ``max_bytes``."""

    def __init__(self, run_dir: Path, max_bytes: int = MAX_BYTES) -> None:
        self.run_dir = run_dir
        self.max_bytes = max_bytes
        self._writer = LineWriter(run_dir / GPU)
        self._size = (run_dir / GPU).stat().st_size

    def append(self, line: str) -> None:
        data = line.encode() + b"\n"
        if self._size + len(data) > self.max_bytes and self._size > 0:
            self._writer.close()
            os.replace(self.run_dir / GPU, self.run_dir / GPU_PREVIOUS)
            self._writer = LineWriter(self.run_dir / GPU)
            self._size = 0
        self._writer.append(data)
        self._size += len(data)

    def close(self) -> None:
        self._writer.close()


def read_previous(run_dir: Path) -> list[bytes]:
    """The rotated-out lines, oldest first ([] when the run never rotated)."""
    try:
        return [line for line in read_small(run_dir / GPU_PREVIOUS, 2 * MAX_BYTES).split(b"\n") if line.strip()]
    except FileNotFoundError:
        return []


class SampleTail:
    """Every stored sample line once: the previous file, then the current one as it grows."""

    def __init__(self, run_dir: Path) -> None:
        self._pending = read_previous(run_dir)
        self._lines = LineTailer(run_dir / GPU)

    def poll(self) -> list[bytes]:
        """New lines since the last call. A rotation mid-watch restarts the current file: lines seen twice
        are dropped by the caller's timestamp check."""
        pending, self._pending = self._pending, []
        return pending + self._lines.read_lines()

    def close(self) -> None:
        self._lines.close()


class LateSampleTail:
    """A SampleTail whose run folder is known only later (once a launched trainer holds it)."""

    def __init__(self) -> None:
        self._tail: SampleTail | None = None

    def attach(self, run_dir: Path) -> None:
        self._tail = SampleTail(run_dir)

    def poll(self) -> list[bytes]:
        return self._tail.poll() if self._tail is not None else []
