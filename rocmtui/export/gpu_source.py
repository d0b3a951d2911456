"""Where the exporter's GPU samples come from: a live run's recorded samples, else a sampler of its own.

A trainer already polls the GPU and records each sample in its run folder's ``gpu.jsonl``; a second
poller beside it slowed a launch-bound run (BENCHMARKS.md). So while a run on this host is live under
``--runs-dir`` (its lock held) and records samples, the exporter serves the newest such run's samples,
read from the folder at scrape time (a ``stat`` when nothing was appended); only when there is none does
it open its own sampler. The choice is checked again every ``CHECK_S`` seconds on a daemon thread; a
switch makes the new source ready (the run's history read, or the sampler started) before the old one is
stopped, so a scrape always finds one of them.
"""

from __future__ import annotations

import logging
import os
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.source import TelemetrySource
from rocmtui.gpu.tail_source import TailSource
from rocmtui.run.format import GPU
from rocmtui.run.listing import my_runs
from rocmtui.run.samples import SampleTail
from rocmtui.run.status import read_status

log = logging.getLogger(__name__)

CHECK_S = 5.0
"""Seconds between two looks for a live run (a folder listing and a few small files)."""


class _Sampled(TelemetrySource, Protocol):
    """What a source must also have for the exporter: its newest sample."""

    @property
    def latest(self) -> SampleSet | None: ...


def recording_run(runs_dir: Path, hostname: str) -> Path | None:
    """The newest run of this user under ``runs_dir`` that is live on this host (its lock held) and records GPU
    samples in a file of this user's (another user's folder, or a file planted in ours, is never served as
    this machine's GPU readings)."""
    for info in my_runs(runs_dir):  # newest first
        run_dir = Path(info.folder)
        if not info.live or not _own_file(run_dir / GPU):
            continue
        status = read_status(run_dir)
        if status is not None and status.host == hostname:
            return run_dir
    return None


def _own_file(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()


class ExportSamples:
    """``latest()``: the newest sample of the current source, a live run's recording or the exporter's sampler."""

    def __init__(
        self,
        runs_dir: Path | None,
        open_sampler: Callable[[], _Sampled],
        *,
        hostname: str = "",
        check_s: float = CHECK_S,
    ) -> None:
        self.runs_dir = runs_dir
        self.check_s = check_s
        self._open_sampler = open_sampler
        self._hostname = hostname or socket.gethostname()
        self._lock = threading.Lock()
        """Held to switch, and to read new recorded lines (scrapes may overlap)."""
        self._sampler: _Sampled | None = None
        self._run_dir: Path | None = None
        self._tail: SampleTail | None = None
        self._recorded: TailSource | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def run_dir(self) -> Path | None:
        """The live run whose recorded samples are served; None while the exporter's own sampler is."""
        return self._run_dir

    @property
    def sampling(self) -> bool:
        """True while the exporter's own sampler polls the GPU."""
        return self._sampler is not None

    def latest(self) -> SampleSet | None:
        """The newest sample; for a run, its lines appended since the last call are read first."""
        with self._lock:
            if self._recorded is not None:
                self._recorded.catch_up()
                return self._recorded.latest
            return self._sampler.latest if self._sampler is not None else None

    def check(self) -> None:
        """Look for a live run now and switch source when the choice changed."""
        try:
            run_dir = recording_run(self.runs_dir, self._hostname) if self.runs_dir is not None else None
        except OSError as err:  # an unreadable runs folder: keep serving what is served
            log.warning("cannot list runs under %s: %s", self.runs_dir, err)
            return
        if run_dir is None:
            if self._sampler is None:
                self._use_sampler()
        elif run_dir != self._run_dir:
            self._use_run(run_dir)

    def _use_run(self, run_dir: Path) -> None:
        tail = SampleTail(run_dir)
        recorded = TailSource(tail.poll)
        recorded.catch_up()  # the run's history, read before the switch (off the scrape path)
        with self._lock:
            old_tail, old_sampler = self._tail, self._sampler
            self._tail, self._recorded, self._run_dir, self._sampler = tail, recorded, run_dir, None
        if old_tail is not None:
            old_tail.close()
        if old_sampler is not None:
            old_sampler.stop()
        log.info("exporting the GPU samples that run %s records", run_dir.name)

    def _use_sampler(self) -> None:
        sampler = self._open_sampler()
        sampler.start()
        with self._lock:
            old_tail = self._tail
            self._tail, self._recorded, self._run_dir, self._sampler = None, None, None, sampler
        if old_tail is not None:
            old_tail.close()
        log.info("no live run records GPU samples here: sampling the GPUs")

    def start(self) -> None:
        """Choose a source now, then look again every ``check_s`` seconds on a daemon thread."""
        self.check()
        self._thread = threading.Thread(target=self._run, name="rocmtui-export-source", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.check_s):
            try:
                self.check()
            except Exception:  # a sampler that failed to open, say: try again at the next check
                log.exception("choosing the exporter's GPU source failed")

    def stop(self) -> None:
        """Stop looking, stop the sampler, close the run's files."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            tail, sampler = self._tail, self._sampler
            self._tail, self._recorded, self._run_dir, self._sampler = None, None, None, None
        if tail is not None:
            tail.close()
        if sampler is not None:
            sampler.stop()
