"""Samples the GPUs into the run folder while training, so that a viewer attaching later sees the history.

Telemetry never stops a training: a backend that cannot open, or a disk that fills, only ends the recording.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

from rocmtui.config import MonitorConfig
from rocmtui.gpu.codec import dumps
from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.source import TelemetrySource
from rocmtui.run.samples import SampleLog


class GpuRecorder:
    """Opens a sampler and appends each SampleSet to the folder's ``gpu.jsonl`` (bounded)."""

    def __init__(self, run_dir: Path, config: MonitorConfig | None = None) -> None:
        self._log: SampleLog | None = None
        self._source: TelemetrySource | None = None
        try:
            from rocmtui.gpu.detect import open_sampler

            self._log = SampleLog(run_dir)
            self._source = open_sampler(
                replace(config or MonitorConfig(), history_len=2)
            )  # the folder keeps the history
            self._source.subscribe(self._record)
            self._source.start()
        except Exception:  # telemetry is optional for a run: no backend, no library, no permission, no space
            self.close()

    def _record(self, sample_set: SampleSet) -> None:
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
