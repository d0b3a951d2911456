"""The exporter's HTTP endpoint: one registry with the sample and run collectors, served on a daemon thread."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from rocmtui import __version__
from rocmtui.export.run_metrics import RunCollector
from rocmtui.export.sample_collector import SampleCollector
from rocmtui.gpu.sample import SampleSet


class InfoCollector(Collector):
    """``rocmtui_exporter_info``: the version, the backend and the host."""

    def __init__(self, latest: Callable[[], SampleSet | None], hostname: str) -> None:
        self._latest = latest
        self._hostname = hostname

    def collect(self) -> list[Metric]:
        sample = self._latest()
        info = InfoMetricFamily("rocmtui_exporter", "The exporter's version and telemetry backend")
        backend = sample.backend if sample is not None else "none"
        info.add_metric([], {"version": __version__, "backend": backend, "hostname": self._hostname})
        return [info]


def build_registry(latest: Callable[[], SampleSet | None], runs_dir: Path | None, hostname: str) -> CollectorRegistry:
    """The exporter's metrics, without prometheus_client's process and platform collectors."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(InfoCollector(latest, hostname))
    registry.register(SampleCollector(latest, hostname))
    if runs_dir is not None:
        registry.register(RunCollector(runs_dir))
    return registry


@dataclass
class Endpoint:
    """A listening exporter; ``port`` is the real one (a port 0 asked for gets a free port)."""

    server: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def serve(
    latest: Callable[[], SampleSet | None], *, host: str, port: int, runs_dir: Path | None, hostname: str = ""
) -> Endpoint:
    """Listen on ``host:port``; OSError when the address cannot be bound."""
    registry = build_registry(latest, runs_dir, hostname or socket.gethostname())
    server, thread = start_http_server(port, addr=host, registry=registry)
    return Endpoint(server, thread)
