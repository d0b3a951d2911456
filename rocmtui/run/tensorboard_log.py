"""TensorBoard's logs as runs: ``rocmtui watch LOGDIR``, ``runs LOGDIR`` and ``runs RUN --csv`` read the scalars of
``events.out.tfevents.*`` files (each value with its step and wall time) through TensorBoard's own reader.

A TensorBoard run is a folder holding event files, as TensorBoard itself counts them: the log folder, and each
folder under it (a few levels down) that holds some. Its scalars become a tracked script's events (a
``TrackStarted`` named by the folder, then ``MetricsLogged`` windows with every value at its own step), so every
viewer draws them as it draws a script's run. A log still being written is followed: TensorBoard's loader reads
each file from where it stopped, and ignores a record until it is whole.

TensorBoard is an optional extra (``pip install 'rocmtui[tensorboard]'``), imported only here and only when a log is
read; without it, one line says so.
"""

from __future__ import annotations

import math
import os
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from rocmtui.base.errors import UsageError
from rocmtui.base.text import one_line
from rocmtui.events import Emit, MetricsLogged, RunControl, TrackStarted
from rocmtui.run.listing import RunListing

EVENT_FILE = "events.out.tfevents."
"""How TensorBoard names its event files."""
MAX_DEPTH = 4
"""Folders under a log folder looked into for runs."""
MAX_RUNS = 10_000
POLL_S = 1.0
"""How often a followed log is read again for new records."""
NEEDS = "reading TensorBoard logs needs the tensorboard package: pip install 'rocmtui[tensorboard]'"


def has_event_files(path: Path) -> bool:
    """Whether ``path`` is a folder holding TensorBoard event files (links are not followed)."""
    try:
        return path.is_dir() and not path.is_symlink() and any(_event_files(path))
    except OSError:
        return False


def is_tensorboard_log(path: Path) -> bool:
    """Whether ``path`` holds TensorBoard runs (event files in it or in its folders) and is not a rocmtui run."""
    return bool(tensorboard_runs(path, limit=1))


def tensorboard_runs(logdir: Path, *, limit: int = MAX_RUNS) -> list[Path]:
    """The TensorBoard runs of ``logdir``: itself when it holds event files, and its folders that do, to
    ``MAX_DEPTH`` levels, in name order (links are not followed)."""
    found: list[Path] = []

    def visit(folder: Path, depth: int) -> None:
        if len(found) >= limit:
            return
        if has_event_files(folder):
            found.append(folder)
        if depth >= MAX_DEPTH:
            return
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            return
        for child in children:
            visit(child, depth + 1)

    if logdir.is_dir() and not logdir.is_symlink():
        visit(logdir, 0)
    return found


def _event_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(EVENT_FILE) and p.is_file() and not p.is_symlink())


def _tensorboard() -> tuple[ModuleType, ModuleType]:
    """TensorBoard's event file loader and tensor helpers; UsageError (one line) when it is not installed."""
    try:
        from tensorboard.backend.event_processing import event_file_loader
        from tensorboard.util import tensor_util
    except ImportError:
        raise UsageError(NEEDS) from None
    return event_file_loader, tensor_util


@dataclass(frozen=True)
class Scalar:
    tag: str
    step: int
    wall: float
    value: float


@dataclass
class RecordFrames:
    """How far an event file's records are whole: TensorBoard's loader stops quietly at a record whose checksum
    fails, as at one still being written, so a damaged file would read as a short one. Its records' frames (a
    length and the length's checksum) are walked here, their data skipped: a frame whose checksum fails, or fewer
    records loaded than were whole before the load, is damage."""

    offset: int = 0
    whole: int = 0
    loaded: int = 0

    def walk(self, path: Path) -> None:
        """Count the records whole in ``path`` from where the last walk stopped; UsageError at a bad frame."""
        from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(self.offset)
            while True:
                frame = f.read(12)
                if len(frame) < 12:
                    return  # the end, or a record still being written
                length, checksum = struct.unpack("<QI", frame)
                if masked_crc32c(frame[:8]) != checksum:
                    raise UsageError(f"{path}: not a readable TensorBoard event file (a record at byte "
                                     f"{self.offset:,} is damaged)")  # fmt: skip
                if self.offset + 12 + length + 4 > size:
                    return
                self.offset += 12 + length + 4
                self.whole += 1
                f.seek(self.offset)

    def check(self, path: Path) -> None:
        if self.loaded < self.whole:
            raise UsageError(
                f"{path}: not a readable TensorBoard event file (record {self.loaded + 1:,} of {self.whole:,} "
                "fails its checksum)"
            )


@dataclass
class LogReader:
    """The scalars of one TensorBoard run, read incrementally: each ``poll`` returns those written since the last
    (every event file of the folder, new files included, each read from where it stopped)."""

    run_dir: Path
    loaders: dict[Path, Any] = field(default_factory=dict)
    frames: dict[Path, RecordFrames] = field(default_factory=dict)
    first_wall: float | None = None

    def poll(self) -> list[Scalar]:
        event_file_loader, tensor_util = _tensorboard()
        scalars: list[Scalar] = []
        try:
            files = _event_files(self.run_dir)
        except OSError:
            return scalars
        for path in files:
            loader = self.loaders.get(path)
            if loader is None:
                loader = self.loaders[path] = event_file_loader.LegacyEventFileLoader(str(path))
            frames = self.frames.setdefault(path, RecordFrames())
            try:
                frames.walk(path)  # before the load: what a writer appends since is only ever more
                for event in loader.Load():
                    frames.loaded += 1
                    scalars += _scalars(event, tensor_util)
            except UsageError:
                raise
            except Exception as err:  # a damaged file: TensorBoard's reader raises its own kinds; the rest reads
                raise UsageError(f"{path}: not a readable TensorBoard event file ({type(err).__name__})") from None
            frames.check(path)
        if scalars and self.first_wall is None:
            self.first_wall = min(scalar.wall for scalar in scalars)
        return scalars


def _scalars(event: Any, tensor_util: ModuleType) -> list[Scalar]:
    """The scalar values of one event record: ``simple_value`` (``SummaryWriter.add_scalar``), or a scalar tensor
    of TensorBoard's scalars plugin (``tf.summary.scalar``)."""
    if not event.HasField("summary"):
        return []
    out = []
    for value in event.summary.value:
        if value.HasField("simple_value"):
            number = float(value.simple_value)
        elif value.HasField("tensor") and value.metadata.plugin_data.plugin_name == "scalars":
            array = tensor_util.make_ndarray(value.tensor)
            if array.size != 1:
                continue
            number = float(array.reshape(()))
        else:
            continue
        out.append(Scalar(one_line(value.tag, limit=200), int(event.step), float(event.wall_time), number))
    return out


def read_scalars(run_dir: Path) -> list[Scalar]:
    """Every scalar of a TensorBoard run, in the order written."""
    return LogReader(run_dir).poll()


def csv_rows(run_dir: Path) -> Iterator[tuple[int, float, str, float]]:
    """``rocmtui runs RUN --csv`` rows of a TensorBoard run: step, seconds since its first record, tag, value."""
    scalars = read_scalars(run_dir)
    first = min((scalar.wall for scalar in scalars), default=0.0)
    for scalar in scalars:
        yield scalar.step, scalar.wall - first, scalar.tag, scalar.value


def run_name(run_dir: Path, logdir: Path) -> str:
    """A run's name: its folder under the log folder (the log folder's own name for itself)."""
    try:
        relative = run_dir.relative_to(logdir)
    except ValueError:
        relative = Path(run_dir.name)
    return str(relative) if str(relative) != "." else run_dir.name


def listing(run_dir: Path, logdir: Path) -> RunListing:
    """A TensorBoard run as ``rocmtui runs`` lists it: its steps, its first loss (else first tag) and times."""
    scalars = read_scalars(run_dir)
    first = min((s.wall for s in scalars), default=None)
    last_wall = max((s.wall for s in scalars), default=0.0)
    tags = list(dict.fromkeys(s.tag for s in scalars))
    headline = next((tag for tag in tags if "loss" in tag.lower()), tags[0] if tags else "")
    values = [s.value for s in scalars if s.tag == headline and math.isfinite(s.value)]
    return RunListing(
        str(run_dir), "log", run_name(run_dir, logdir), 0, 0, None, last_wall - first if first else 0.0,
        "", first, None, "", max((s.step for s in scalars), default=0), headline,
        values[-1] if values else None, "tensorboard",
    )  # fmt: skip


def window(scalars: list[Scalar], first_wall: float) -> MetricsLogged:
    """One ``MetricsLogged`` of ``scalars``: every value at its own step (``logged_at``), in order of step."""
    ordered = sorted(scalars, key=lambda s: (s.step, s.wall))
    tags: dict[str, tuple[list[int], list[float]]] = {}
    for scalar in ordered:
        steps, values = tags.setdefault(scalar.tag, ([], []))
        steps.append(scalar.step)
        values.append(scalar.value)
    last_wall = max(s.wall for s in scalars)
    return MetricsLogged(
        step=ordered[-1].step,
        values={tag: values[-1] for tag, (_, values) in tags.items()},
        elapsed_s=max(0.0, last_wall - first_wall),
        count=len(ordered),
        steps=tuple(sorted({s.step for s in ordered})),
        logged={tag: tuple(values) for tag, (_, values) in tags.items()},
        logged_at={tag: tuple(steps) for tag, (steps, _) in tags.items()},
        wall=last_wall,
    )


def follow_log(
    run_dir: Path, emit: Emit, control: RunControl, *, name: str | None = None, poll_s: float = POLL_S
) -> None:
    """``rocmtui watch`` of a TensorBoard run: its scalars so far, then each new record as it is written, until
    the viewer leaves (a TensorBoard log never says that its training ended)."""
    reader = LogReader(run_dir)
    scalars = reader.poll()
    started_at = reader.first_wall or time.time()
    emit(TrackStarted(name or run_dir.name, str(run_dir), started_at=started_at))
    while True:
        if scalars:
            emit(window(scalars, started_at))
        if control.leave.wait(poll_s) or control.stop.is_set():
            return
        scalars = reader.poll()
