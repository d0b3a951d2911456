"""What a run card shows, read from a run folder: the curves, the best result and when, the recipe, the GPU.

The strings here come from the folder (run names, metric names, GPU names, logged parameters) and are kept as
read: the drawing (``card_svg``) makes each one plain, bounded and XML-escaped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from rocmtui.base.errors import UsageError
from rocmtui.base.series import Series
from rocmtui.base.units import fmt_acc, fmt_bytes, fmt_span, fmt_temp
from rocmtui.codec import CodecError
from rocmtui.events import RunFailed, RunFinished, TrainEvent
from rocmtui.gpu.sample_codec import loads
from rocmtui.run.fold import RunFold
from rocmtui.run.listing import run_info
from rocmtui.run.metric_ends import lower_is_better
from rocmtui.run.milestones import accuracy_times, first_reached, time_to_accuracy
from rocmtui.run.samples import SampleTail
from rocmtui.run.series_csv import rows
from rocmtui.run.shareable import shareable_line
from rocmtui.run.stream import read_events

TRAIN_CHARTS = (("loss", ("loss", "test_loss")), ("accuracy", ("test_acc", "train_acc")))
"""A ``train`` run's charts: (title, series names), each drawn when the run has its first series."""
SPLIT_WORDS = frozenset({"train", "training", "val", "valid", "validation", "test", "eval", "epoch"})
"""Words of a series' name that say which split it was measured on, not what it measures."""
T = TypeVar("T", int, float)
MAX_GPU_LINES = 1_000_000
"""Sample lines read at most (two rotated files of 8 MiB hold far fewer)."""


@dataclass
class Best:
    """The lowest (a loss) or highest value of a series, and where it was first reached."""

    name: str
    lowest: bool
    value: float = math.nan
    step: int = 0
    time_s: float = 0.0

    def offer(self, step: int, time_s: float, value: float) -> None:
        if not math.isfinite(value):
            return
        if math.isnan(self.value) or (value < self.value if self.lowest else value > self.value):
            self.value, self.step, self.time_s = value, step, time_s


@dataclass(frozen=True)
class Chart:
    title: str
    curves: tuple[tuple[str, Series], ...]
    """(series name, its points by step), the first drawn strongest."""
    percent: bool = False
    """Values in 0..1 shown as percents."""
    x_name: str = "step"
    """What x counts: ``epoch`` (a ``train`` run's, steps over steps per epoch) or ``step`` (a tracked script's)."""


@dataclass(frozen=True)
class GpuPeak:
    """One GPU's highest memory use and temperature over the run's samples."""

    name: str
    memory_bytes: int | None
    memory_total_bytes: int | None
    temp_c: float | None


@dataclass(frozen=True)
class Body:
    """What the run's kind (a ``train`` run, a tracked script) decides."""

    recipe: str
    charts: tuple[Chart, ...]
    best: str
    milestones: str = ""
    bench: str | None = None
    """The run's line as ``rocmtui bench`` prints its runs' (a finished ``train`` run)."""


@dataclass(frozen=True)
class Card:
    title: str
    state: str
    started_at: float | None
    folder: str
    gpu: tuple[str, ...]
    body: Body
    notes: tuple[str, ...] = field(default_factory=tuple)


def series_of(
    events: Iterable[TrainEvent], names: Sequence[str] | None = None, steps_per_epoch: int = 1
) -> dict[str, Series]:
    """Each series of the run (``names``: only those), in the order first seen, by step or, given the steps per
    epoch, by epoch (an epoch's values at its end: epoch 1 at 1.0)."""
    found: dict[str, Series] = {}
    per = max(1, steps_per_epoch)
    for step, _, name, value in rows(events):
        if names is not None and name not in names:
            continue
        series = found.get(name)
        if series is None:
            series = found[name] = Series()
        series.add(step / per, value)
    return found


def best_of(events: Iterable[TrainEvent], name: str) -> Best:
    """The best value of ``name``: the lowest for a loss or an error, else the highest."""
    best = Best(name, lowest=lower_is_better(name))
    for step, time_s, row_name, value in rows(events):
        if row_name == name:
            best.offer(step, time_s, value)
    return best


def gpu_peak(run_dir: Path, device_name: str = "") -> GpuPeak | None:
    """The run's GPU at its peaks: the one named ``device_name``, else the one that used the most memory."""
    peaks: dict[str, GpuPeak] = {}
    try:
        tail = SampleTail(run_dir)
    except (OSError, UsageError):  # a gpu.1.jsonl that is a link or a FIFO: the card goes without samples
        return None
    try:
        read = 0
        while read < MAX_GPU_LINES and (lines := tail.poll()):
            read += len(lines)
            for line in lines:
                _offer_samples(peaks, line)
    except (OSError, UsageError):  # a gpu.jsonl that is a link or a FIFO
        pass
    finally:
        tail.close()
    if device_name in peaks:
        return peaks[device_name]
    return max(peaks.values(), key=lambda peak: peak.memory_bytes or 0, default=None)


def _offer_samples(peaks: dict[str, GpuPeak], line: bytes) -> None:
    try:
        sample_set = loads(line)
    except CodecError:
        return
    for gpu in sample_set.gpus:
        old = peaks.get(gpu.name) or GpuPeak(gpu.name, None, None, None)
        temps = [value for _, value in gpu.temperatures_c if math.isfinite(value)]
        peaks[gpu.name] = GpuPeak(
            gpu.name,
            _highest(old.memory_bytes, gpu.memory_used_bytes),
            gpu.memory_total_bytes or old.memory_total_bytes,
            _highest(old.temp_c, max(temps, default=None)),
        )


def _highest(old: T | None, new: T | None) -> T | None:
    if new is None:
        return old
    return new if old is None or new > old else old


def gpu_lines(device: str, peak: GpuPeak | None, torch_peak_bytes: int | None) -> tuple[str, ...]:
    """The GPU's lines. The samples' memory is the whole device's (every process, the allocator's cache, the
    context), told apart from the peak PyTorch itself allocated (the bench line's ``peak VRAM``) where known."""
    if peak is None:
        lines = [f"{device + ': ' if device else ''}no GPU samples in the run folder"]
    else:
        total = f" of {fmt_bytes(peak.memory_total_bytes)}" if peak.memory_total_bytes else ""
        lines = [
            f"{peak.name}: GPU memory in use at peak {fmt_bytes(peak.memory_bytes)}{total} (all processes), "
            f"peak temperature {fmt_temp(peak.temp_c)}"
        ]
    if torch_peak_bytes is not None:
        lines.append(f"peak VRAM (PyTorch): {fmt_bytes(torch_peak_bytes)}, the most its tensors held at once")
    return tuple(lines)


def read_card(run_dir: Path) -> Card:
    """The card of the run in ``run_dir`` (a train run or a tracked script)."""
    events = read_events(run_dir)
    fold = RunFold()
    for event in events:
        fold.apply(event)
    info = run_info(run_dir)
    device = fold.started.device_name if fold.started is not None else info.device_name
    peak = gpu_peak(run_dir, device)
    gpu = gpu_lines(device, peak, fold.finished.peak_memory_bytes if fold.finished is not None else None)
    body = _tracked_body(events, fold) if fold.started is None else _train_body(events, fold, peak)
    title = fold.name or info.name or run_dir.name
    state = "failed" if fold.failed is not None else info.state  # the stream's end over a status left behind
    return Card(title, state, info.started_at, run_dir.name, gpu, body, _ending(fold))


def _train_body(events: list[TrainEvent], fold: RunFold, peak: GpuPeak | None) -> Body:
    started = fold.started
    assert started is not None
    config = started.config
    recipe = (
        f"{config.model} on {started.dataset} | {config.epochs} epochs | batch {config.batch_size} | "
        f"{config.optimizer} lr {config.lr:g} {config.schedule} | {started.device_name} | torch {started.torch_version}"
    )
    found = series_of(events, [name for _, names in TRAIN_CHARTS for name in names], started.steps_per_epoch)
    charts = tuple(
        Chart(title, tuple((name, found[name]) for name in names if name in found), title == "accuracy", "epoch")
        for title, names in TRAIN_CHARTS
        if names[0] in found
    )
    best_epoch = fold.best_epoch
    if best_epoch is not None:
        best = (
            f"best test accuracy {fmt_acc(best_epoch.test_acc)} at epoch {best_epoch.epoch + 1} of "
            f"{fold.total_epochs}, {fmt_span(first_reached(accuracy_times(fold.epochs), best_epoch.test_acc))} "
            "into training"
        )
    else:
        best = _best_line(best_of(events, "loss")) if "loss" in found else "no result yet"
    return Body(recipe, charts, best, _milestones(fold), _bench(fold, peak))


def _tracked_body(events: list[TrainEvent], fold: RunFold) -> Body:
    found = series_of(events)
    charts = tracked_charts(found, fold.headline[0] if fold.headline is not None else None)
    params = fold.tracked.params if fold.tracked is not None else {}
    recipe = " | ".join(f"{key} {value}" for key, value in list(params.items())[:8]) or "a tracked script"
    best = _best_line(best_of(events, charts[0].curves[0][0])) if charts else "no values logged"
    return Body(recipe, charts, best)


def metric_stem(name: str) -> str:
    """A series' name without the split it was measured on: ``val_loss``, ``train/loss`` and ``loss`` give
    ``loss``."""
    words = [word for word in re.split(r"[\s/_.-]+", name.lower()) if word]
    return "_".join([word for word in words if word not in SPLIT_WORDS] or words)


def tracked_charts(found: dict[str, Series], headline: str | None) -> tuple[Chart, ...]:
    """A tracked script's two panels: its headline series (else its first), then the first other one that
    changes (a constant learning rate says little), each with up to two series of the same stem beside it
    (``val_loss`` with ``loss``)."""
    others = [name for name in found if name != headline]
    firsts = ([headline] if headline in found else []) + sorted(others, key=lambda name: not _varies(found[name]))
    charts: list[Chart] = []
    taken: set[str] = set()
    for name in firsts:
        if len(charts) == 2:
            break
        if name in taken:
            continue
        taken.add(name)
        stem = metric_stem(name)
        group = [name, *[other for other in others if other not in taken and metric_stem(other) == stem][:2]]
        taken.update(group)
        charts.append(Chart(stem if len(group) > 1 else name, tuple((each, found[each]) for each in group)))
    return tuple(charts)


def _varies(series: Series) -> bool:
    view = series.view(limit=1)
    return bool(view.x) and view.low[0] != view.high[0]


def _best_line(best: Best) -> str:
    if math.isnan(best.value):
        return f"{best.name}: no finite value"
    which = "lowest" if best.lowest else "highest"
    return f"{which} {best.name} {best.value:.4g} at step {best.step:,}, {fmt_span(best.time_s)} into the run"


def _milestones(fold: RunFold) -> str:
    if not fold.epochs:
        return ""
    return "time to accuracy: " + time_to_accuracy(fold.epochs, fold.finished)


def _ending(fold: RunFold) -> tuple[str, ...]:
    if isinstance(fold.failed, RunFailed):
        return (f"failed ({fold.failed.kind}): {fold.failed.message}",)
    if isinstance(fold.finished, RunFinished):
        return (f"{fold.finished.reason} after {fmt_span(fold.finished.total_s)} of training",)
    if fold.started is not None:
        return (f"no end recorded yet: {fold.epochs_done} of {fold.total_epochs} epochs done",)
    step = fold.step
    return (f"no end recorded yet: step {step:,}",) if step is not None else ("no end recorded yet",)


def _bench(fold: RunFold, peak: GpuPeak | None) -> str | None:
    """The run's line in ``rocmtui bench``'s form, once it has finished with a test accuracy."""
    started, finished = fold.started, fold.finished
    if started is None or finished is None:
        return None
    acc = finished.tta_test_acc if finished.tta_test_acc is not None else finished.final_test_acc
    if acc is None:
        return None
    return shareable_line(
        run="rocmtui", model=started.config.model, dataset=started.dataset, gpu=started.device_name,
        torch=f"{started.torch_version} ({started.backend})", epochs=finished.epochs_completed,
        seconds=finished.total_s, images_per_s=finished.images_per_s, peak_vram_bytes=finished.peak_memory_bytes,
        peak_temp_c=peak.temp_c if peak is not None else None, test_acc=acc, tta=finished.tta_test_acc is not None,
    )  # fmt: skip
