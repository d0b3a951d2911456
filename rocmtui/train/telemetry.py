"""Peak GPU temperature during a bench run, read from the telemetry layer; None ("N/A") if it cannot say."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from rocmtui.config import MonitorConfig

if TYPE_CHECKING:
    from rocmtui.gpu.source import TelemetrySource


class TemperatureWatch:
    """Samples the GPUs in the background through ``rocmtui.gpu``; every failure there just means N/A."""

    def __init__(self) -> None:
        self._source: TelemetrySource | None = None

    def start(self) -> None:
        try:
            from rocmtui.gpu.detect import open_sampler

            self._source = open_sampler(MonitorConfig(interval_s=0.5, history_len=100_000))
            self._source.start()
        except Exception:  # telemetry is optional for a benchmark: no backend, no library, no permission
            self._source = None

    def peak(self, since: float, until: float) -> float | None:
        """Highest headline temperature of any GPU sampled between two time.time() stamps."""
        if self._source is None:
            return None
        try:
            history = self._source.history()
        except Exception:  # a sampler that broke mid-run: report N/A rather than fail the bench
            return None
        temps = [
            gpu.temperature_c
            for sample_set in history
            if since <= sample_set.timestamp <= until
            for gpu in sample_set.gpus
            if gpu.temperature_c is not None
        ]
        return max(temps) if temps else None

    def stop(self) -> None:
        if self._source is not None:
            with contextlib.suppress(Exception):  # stopping must never mask the bench's own result
                self._source.stop()
            self._source = None
