"""The live runs under a runs folder, as Prometheus metrics: state, progress, loss, speed, accuracy.

At each scrape: the folder listing, each run's ``status.json`` (read again only when it changed), and for
a live run the new lines of its event stream (a ``stat`` when nothing was appended; the file is opened for
the read only, so descriptors do not grow with the runs). Runs that ended are
left out; a run whose writer is gone without a word is exported once more as ``lost``, until resumed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from rocmtui.base.errors import UsageError
from rocmtui.run.fold import RunFold
from rocmtui.run.format import STATUS
from rocmtui.run.layout import run_dirs
from rocmtui.run.status import LIVE_STATES, RunStatus, effective, read_status
from rocmtui.run.stream import EventTail

STATES = (*LIVE_STATES, "lost")


class RunReader:
    """One live run: its status (cached by mtime and size) and its stream's newest values."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._tail = EventTail(run_dir)
        self._stamp: tuple[int, int] | None = None
        self._status: RunStatus | None = None
        self.progress = RunFold()

    def status(self) -> RunStatus | None:
        try:
            info = os.stat(self.run_dir / STATUS)
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp != self._stamp:
            self._stamp, self._status = stamp, read_status(self.run_dir)
        return self._status

    def poll(self) -> RunFold:
        """The events appended since the last poll folded in; no descriptor is held after it, so a thousand
        lost or foreign-host runs under the folder cost none between scrapes."""
        try:
            for _, event in self._tail.poll_all():
                self.progress.apply(event)
        finally:
            self._tail.release()
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
            live = [(status, reader.run_dir, _progress(reader)) for status, reader in self._live()]
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
                "rocmtui_run_epochs": status.epochs or progress.total_epochs or None,
                "rocmtui_run_step": progress.step,
                "rocmtui_run_loss": progress.last_loss,
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


def _progress(reader: RunReader) -> RunFold:
    """The run's progress; what was read before when its stream cannot be read now (a FIFO, a link, a newer
    format): one bad run never fails a scrape."""
    try:
        return reader.poll()
    except (OSError, UsageError):
        return reader.progress
