"""What one round over the cluster read: each host's GPUs, or why the host is down; and its JSON line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocmtui.codec import encode_json, to_builtins
from rocmtui.gpu.sample import GpuSample, HostSample, SampleSet

SCHEMA = 1


@dataclass(frozen=True)
class HostReading:
    """One host (an exporter's address, or a Prometheus ``instance``) at one round.

    Every text here but ``target`` and ``error`` came from the exporter: untrusted, cleaned before drawing.
    """

    target: str
    """HOST:PORT as given (or the ``instance`` label Prometheus scrapes it as)."""
    up: bool
    timestamp: float
    gpus: tuple[GpuSample, ...] = ()
    host: HostSample | None = None
    hostname: str | None = None
    """The host's name as its exporter labels it."""
    exporter: str | None = None
    """Which exporter answered: dcgm-exporter, amd-device-metrics-exporter, rocmtui-export; None if none known."""
    error: str | None = None
    """Why the host is down (with when it is tried again), or a note when up (lines that could not be read)."""
    malformed: int = 0
    """Lines of its page that could not be parsed, this round."""
    latency_s: float | None = None
    """Seconds its answer took, to within ``fetch.GATHER_S`` (answers are read in batches)."""

    @property
    def label(self) -> str:
        """What to call the host: its own name where it says one, else the address."""
        return self.hostname or self.target

    def sample_set(self) -> SampleSet:
        """The host as the monitor's GPU panel draws one machine."""
        return SampleSet(
            timestamp=self.timestamp,
            backend=self.exporter or "prometheus",
            gpus=self.gpus,
            host=self.host or HostSample(timestamp=self.timestamp),
        )


@dataclass(frozen=True)
class ClusterRound:
    """Every host once: what a round of scrapes (or one Prometheus query) gave."""

    timestamp: float
    source: str
    """``scrape`` (each host's /metrics) or ``prometheus`` (a server's HTTP API)."""
    hosts: tuple[HostReading, ...]

    @property
    def gpus(self) -> int:
        return sum(len(h.gpus) for h in self.hosts)


def round_to_dict(cluster: ClusterRound) -> dict[str, Any]:
    """A JSON-ready dict of one round, ``schema`` first; each GPU as ``monitor --json`` writes one."""
    data: dict[str, Any] = to_builtins(cluster)
    return {"schema": SCHEMA, **data}


def dumps(cluster: ClusterRound) -> str:
    """One compact JSON line for the round."""
    return encode_json(round_to_dict(cluster)).decode()
