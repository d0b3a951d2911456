"""Peak VRAM and temperature seen by the sampler during a run (for the finished summary)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rocmtui.gpu.sample import SampleSet


@dataclass
class Peaks:
    """Running maxima over every SampleSet seen; None until a GPU reports the value."""

    vram_bytes: int | None = None
    temperature_c: float | None = None
    host_ram_bytes: int | None = None

    def update(self, sample_set: SampleSet) -> None:
        for gpu in sample_set.gpus:
            if gpu.memory_used_bytes is not None:
                self.vram_bytes = max(self.vram_bytes or 0, gpu.memory_used_bytes)
            temp = gpu.temperature_c
            if temp is not None:
                self.temperature_c = temp if self.temperature_c is None else max(self.temperature_c, temp)
        ram = sample_set.host.ram_used_bytes
        if ram is not None:
            self.host_ram_bytes = max(self.host_ram_bytes or 0, ram)

    def update_all(self, history: Iterable[SampleSet]) -> None:
        """Fold in samples whose messages were coalesced away."""
        for sample_set in history:
            self.update(sample_set)
