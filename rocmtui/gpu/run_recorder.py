"""Samples the GPUs into a run folder while a run trains, so that a viewer attaching later sees the history.

Telemetry never stops a training: a backend that cannot open, or a disk that fills, only ends the recording.
Where the lines go is the caller's (``rocmtui.run.samples.SampleLog``): this layer knows no run folder.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from rocmtui.config import MonitorConfig
from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.sample_codec import dumps
from rocmtui.gpu.source import TelemetrySource


class LineLog(Protocol):
    """Where sample lines go: appended whole, closed at the end."""

    def append(self, line: str) -> None: ...

    def close(self) -> None: ...


class GpuRecorder:
    """Samples the GPUs on a thread of its own and appends each SampleSet to the folder's ``gpu.jsonl`` (bounded).

    With ``fast_start_s`` set, it samples every ``FAST_INTERVAL_S`` for that long, then at ``interval_s``: a GPU
    utilisation sampled once a second misses most of a run whose epochs take a second.
    """

    def __init__(self, open_log: Callable[[], LineLog], config: MonitorConfig | None = None) -> None:
        self._log: LineLog | None = None
        self._source: TelemetrySource | None = None
        settings = config or MonitorConfig()
        self._interval_s = settings.interval_s
        fast = settings.fast_start_s > 0 and settings.interval_s > MonitorConfig.FAST_INTERVAL_S
        self._fast_until = time.monotonic() + settings.fast_start_s if fast else None
        try:
            from rocmtui.gpu.detect import DetectingSampler

            self._log = open_log()
            start_interval = MonitorConfig.FAST_INTERVAL_S if fast else settings.interval_s
            # the backend is detected on the sampler's thread (NVML's init, a ROCm import), beside the run's
            # start-up rather than before it; the folder keeps the history
            self._source = DetectingSampler(replace(settings, interval_s=start_interval, history_len=2))
            self._source.subscribe(self._record)
            self._source.start()
        except Exception:  # telemetry is optional for a run: no backend, no library, no permission, no space
            self.close()

    @property
    def interval_s(self) -> float | None:
        """Seconds between the samples being taken now; None once recording has ended."""
        return None if self._source is None else self._source.interval_s

    def _record(self, sample_set: SampleSet) -> None:
        if self._fast_until is not None and time.monotonic() >= self._fast_until and self._source is not None:
            self._fast_until = None
            self._source.interval_s = self._interval_s
        if self._log is None:
            return
        try:
            self._log.append(dumps(sample_set))
        except OSError:  # a full disk: keep training, stop recording
            self._log = None

    def close(self) -> None:
        if self._source is not None:
            with contextlib.suppress(Exception):
                self._source.stop()
            self._source = None
        if self._log is not None:
            self._log.close()
            self._log = None
