"""The live runs under a runs folder, as Prometheus metrics: state, progress, loss, speed, accuracy.

At each scrape: the folder listing, each run's ``status.json`` (read again only when it changed), and for
a live run the new lines of its event stream (a ``stat`` when nothing was appended; the file is opened for
the read only, so descriptors do not grow with the runs). Runs that ended are
left out; a run whose writer is gone without a word is exported once more as ``lost``, until resumed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from rocmtui.base.errors import UsageError
from rocmtui.base.text import plain
from rocmtui.export.gpu_runs import gpu_run_family, run_processes, this_host
from rocmtui.gpu.sample import SampleSet
from rocmtui.run.fold import RunFold
from rocmtui.run.format import STATUS
from rocmtui.run.layout import run_dirs
from rocmtui.run.rank_health import HealthRules, RankRow, rank_rows
from rocmtui.run.rank_streams import RankTail
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
        self.ranks = RankTail(run_dir)
        """The run's ranks (a run of several ranks or nodes); none for a run of one process."""

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
        try:
            self.ranks.poll()
        finally:
            self.ranks.release()
        return self.progress

    def close(self) -> None:
        self._tail.close()
        self.ranks.close()


RUN_LABELS = ["run", "name", "hostname"]


class RunCollector(Collector):
    """The live (and lost) runs under ``runs_dir``; thread-safe (scrapes may overlap)."""

    def __init__(
        self, runs_dir: Path, latest: Callable[[], SampleSet | None] | None = None, hostname: str = ""
    ) -> None:
        """``latest``: the GPU samples, to say which run uses which GPU (``rocmtui_gpu_run_info``)."""
        self.runs_dir = runs_dir
        self._latest = latest
        self._hostname = hostname
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
            live = [
                (status, reader.run_dir, _progress(reader), list(reader.ranks.views.values()))
                for status, reader in self._live()
            ]
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
        ranks = RankFamilies()
        for status, run_dir, progress, views in live:
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
            if views:
                ranks.add(labels, rank_rows(views, time.time(), HealthRules(), live=True))
        yield state
        yield from families.values()
        yield from ranks.families()
        sample = self._latest() if self._latest is not None else None
        if sample is not None:
            users = run_processes(((d.name, status, views) for status, d, _, views in live), this_host())
            yield gpu_run_family(sample, self._hostname, users)


RANK_LABELS = [*RUN_LABELS, "node", "rank", "rank_host"]
"""A rank's series: its run's labels, and its node, global rank and host (``rank_host``: the run's ``hostname``
is the host of rank 0's writer); a Prometheus scraping every node sums or compares them."""
RANK_STATES = ("starting", "running", "straggler", "stalled", "failed")


class RankFamilies:
    """The per-rank gauges of one scrape."""

    def __init__(self) -> None:
        self.step = GaugeMetricFamily("rocmtui_rank_step", "The rank's newest step", labels=RANK_LABELS)
        self.step_seconds = GaugeMetricFamily(
            "rocmtui_rank_step_seconds",
            "Seconds a step of the rank, the median of its latest reports",
            labels=RANK_LABELS,
        )
        self.busy_seconds = GaugeMetricFamily(
            "rocmtui_rank_busy_seconds",
            "Of a step, the seconds the rank spent on its own work, not waiting for the others",
            labels=RANK_LABELS,
        )
        self.heartbeat = GaugeMetricFamily(
            "rocmtui_rank_heartbeat_age_seconds", "Seconds since the rank's newest line", labels=RANK_LABELS
        )
        self.state = GaugeMetricFamily("rocmtui_rank_state", "1 for the rank's state", labels=[*RANK_LABELS, "state"])

    def add(self, run_labels: list[str], rows: list[RankRow]) -> None:
        for row in rows:
            labels = [*run_labels, str(row.node), str(row.rank), plain(row.host, limit=64)]
            self.step.add_metric(labels, float(row.step))
            for family, value in (
                (self.step_seconds, row.step_s_median),
                (self.busy_seconds, row.busy_s_median),
                (self.heartbeat, row.heartbeat_age_s),
            ):
                if value is not None:
                    family.add_metric(labels, value)
            for name in RANK_STATES:
                self.state.add_metric([*labels, name], 1.0 if row.state == name else 0.0)

    def families(self) -> Iterator[Metric]:
        yield from (self.step, self.step_seconds, self.busy_seconds, self.heartbeat, self.state)


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
