"""The live runs under a runs folder, as Prometheus metrics: state, progress, loss, speed, accuracy.

At each scrape: the folder listing, each run's ``status.json`` (read again only when it changed), and for
a live run the new lines of its event stream (a ``stat`` when nothing was appended). Runs that ended are
left out; a run whose writer is gone without a word is exported once more as ``lost``, until resumed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from rocmtui.events import EpochCompleted, RunStarted, StepsCompleted
from rocmtui.run.layout import STATUS, run_dirs
from rocmtui.run.status import LIVE_STATES, RunStatus, effective, read_status
from rocmtui.run.stream import EventTail

STATES = (*LIVE_STATES, "lost")


@dataclass
class Progress:
    """What the stream said last."""

    step: int | None = None
    loss: float | None = None
    images_per_s: float | None = None
    test_acc: float | None = None
    epochs: int | None = None


class RunReader:
    """One live run: its status (cached by mtime and size) and its stream's newest values."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._tail = EventTail(run_dir)
        self._stamp: tuple[int, int] | None = None
        self._status: RunStatus | None = None
        self.progress = Progress()

    def status(self) -> RunStatus | None:
        try:
            info = os.stat(self.run_dir / STATUS)
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp != self._stamp:
            self._stamp, self._status = stamp, read_status(self.run_dir)
        return self._status

    def poll(self) -> Progress:
        for _, event in self._tail.poll():
            if isinstance(event, StepsCompleted):
                self.progress.step = event.step
                self.progress.images_per_s = event.images_per_s
                if event.losses:
                    self.progress.loss = event.losses[-1]
            elif isinstance(event, EpochCompleted):
                self.progress.test_acc = event.test_acc
            elif isinstance(event, RunStarted):
                self.progress.epochs = event.config.epochs
        return self.progress

    def close(self) -> None:
        self._tail.close()


RUN_LABELS = ["run", "name", "hostname"]


class RunCollector(Collector):
    """The live (and lost) runs under ``runs_dir``; thread-safe (scrapes may overlap)."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir
        self._readers: dict[Path, RunReader] = {}
        self._ended: dict[Path, tuple[int, int]] = {}
        """Runs seen ended, by their status file's stamp: not read again until it changes."""
        self._lock = threading.Lock()

    def _live(self) -> list[tuple[RunStatus, RunReader]]:
        out: list[tuple[RunStatus, RunReader]] = []
        seen: set[Path] = set()
        for run_dir in run_dirs(self.runs_dir):
            seen.add(run_dir)
            if run_dir in self._ended and self._ended[run_dir] == _stamp(run_dir):
                continue
            reader = self._readers.get(run_dir) or RunReader(run_dir)
            status = reader.status()
            if status is None or not status.live:
                reader.close()
                self._readers.pop(run_dir, None)
                self._ended[run_dir] = _stamp(run_dir)
                continue
            self._readers[run_dir] = reader
            out.append((effective(run_dir, status), reader))
        for gone in set(self._readers) - seen:
            self._readers.pop(gone).close()
        return out

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            live = [(status, reader.run_dir, reader.poll()) for status, reader in self._live()]
        families = {
            name: GaugeMetricFamily(name, help_text, labels=RUN_LABELS)
            for name, help_text in (
                ("rocmtui_run_epochs_completed", "Epochs the run has completed"),
                ("rocmtui_run_epochs", "Epochs the run was started for"),
                ("rocmtui_run_step", "Optimizer steps taken"),
                ("rocmtui_run_loss", "Training loss at the newest step"),
                ("rocmtui_run_images_per_second", "Training throughput at the newest report"),
                ("rocmtui_run_test_accuracy_ratio", "Test accuracy at the newest epoch, 0 to 1"),
                ("rocmtui_run_best_accuracy_ratio", "Best test accuracy so far, 0 to 1"),
                ("rocmtui_run_elapsed_seconds", "Training time so far"),
                ("rocmtui_run_heartbeat_timestamp_seconds", "The writer's newest heartbeat (Unix time)"),
            )
        }
        state = GaugeMetricFamily("rocmtui_run_state", "1 for the run's state", labels=[*RUN_LABELS, "state"])
        for status, run_dir, progress in live:
            labels = [run_dir.name, status.name, status.host]
            values = {
                "rocmtui_run_epochs_completed": status.epoch,
                "rocmtui_run_epochs": status.epochs or progress.epochs,
                "rocmtui_run_step": progress.step,
                "rocmtui_run_loss": progress.loss,
                "rocmtui_run_images_per_second": progress.images_per_s,
                "rocmtui_run_test_accuracy_ratio": progress.test_acc,
                "rocmtui_run_best_accuracy_ratio": status.best_acc,
                "rocmtui_run_elapsed_seconds": status.elapsed_s,
                "rocmtui_run_heartbeat_timestamp_seconds": status.heartbeat,
            }
            for name, value in values.items():
                if value is not None:
                    families[name].add_metric(labels, float(value))
            for name in STATES:
                state.add_metric([*labels, name], 1.0 if status.state == name else 0.0)
        yield state
        yield from families.values()


def _stamp(run_dir: Path) -> tuple[int, int]:
    try:
        info = os.stat(run_dir / STATUS)
    except OSError:
        return (0, 0)
    return (info.st_mtime_ns, info.st_size)
