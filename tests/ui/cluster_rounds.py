"""SYNTHETIC TEST INPUTS for the cluster screen: rounds over 8 hosts of 8 GPUs, numbers made up by formula
(the screen's layout is what is tested; the mapping of real exporter pages is tested in tests/gpu)."""

from __future__ import annotations

import threading

from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.sample import GpuSample

GIB = 1 << 30


def synthetic_round(step: int, hosts: int = 8, gpus: int = 8) -> ClusterRound:
    readings = []
    for h in range(hosts):
        target = f"10.0.0.{h + 1}:9400"
        if h == 5:
            readings.append(HostReading(target, up=False, timestamp=1000.0 + step,
                                        error="connection refused (retrying in 4 s)"))  # fmt: skip
            continue
        cards = []
        for g in range(gpus):
            util = float(1 + (step * 7 + h * 13 + g * 29) % 100) if (h, g) != (2, 3) else 0.0
            used = (h * 8 + g + 1) * GIB if (h, g) != (2, 3) else 61 * GIB
            cards.append(GpuSample(index=g, name="NVIDIA H100 80GB HBM3", timestamp=1000.0 + step,
                                   utilization_pct=util, memory_used_bytes=used, memory_total_bytes=80 * GIB,
                                   temperatures_c=(("gpu", 40.0 + (h + g) % 30),), power_w=100.0 + util * 5,
                                   uuid=f"GPU-{h}-{g}"))  # fmt: skip
        readings.append(HostReading(target, up=True, timestamp=1000.0 + step, gpus=tuple(cards),
                                    hostname=f"node{h + 1:02d}", exporter="dcgm-exporter"))  # fmt: skip
    return ClusterRound(1000.0 + step, "scrape", tuple(readings))


class ListedRounds:
    """A RoundReader that gives the rounds of a list in turn (the last one again once they run out)."""

    def __init__(self, rounds: list[ClusterRound]) -> None:
        self.rounds = rounds
        self.calls = 0
        self._lock = threading.Lock()

    def round(self) -> ClusterRound:
        with self._lock:
            cluster = self.rounds[min(self.calls, len(self.rounds) - 1)]
            self.calls += 1
            return cluster

    def close(self) -> None:
        pass
