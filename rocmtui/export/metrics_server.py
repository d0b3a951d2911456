"""The exporter's HTTP endpoint: one registry with the sample and run collectors, served on a daemon thread.

prometheus_client's own server waits for a slow client forever, one thread each: here a request must arrive
within ``READ_TIMEOUT_S``, at most ``MAX_CONNECTIONS`` are served at once, and when all are taken the oldest
that has not sent its request makes room for the new one (idle connections cannot keep a scraper out).
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any, ClassVar
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
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
        registry.register(RunCollector(runs_dir, latest, hostname))
    return registry


READ_TIMEOUT_S = 10.0
"""How long a client may take to send its request (and to read the answer), in seconds."""
MAX_CONNECTIONS = 16
"""Connections served at once; a scraper needs one."""


EVICT_WAIT_S = 2.0
"""How long a new connection waits for the slot of an idle one it pushed out."""


class QuietHandler(WSGIRequestHandler):
    """No log line per request; a socket timeout, so that a silent client lets go of its thread."""

    timeout = READ_TIMEOUT_S
    server: BoundedServer

    def log_message(self, format: str, *args: Any) -> None:
        """Nothing: a scrape every few seconds would fill the terminal."""

    def parse_request(self) -> bool:
        """The request is in: from here on this connection is served, never pushed out for a newer one."""
        self.server.served(self.connection)
        return bool(super().parse_request())


class BoundedServer(ThreadingMixIn, WSGIServer):
    """A thread per connection, at most ``MAX_CONNECTIONS`` of them. When all are taken, the connection that
    has waited longest without sending its request is closed for the new one: idle connections, however many
    and however often reopened, cannot keep a scraper (which sends its request at once) out."""

    daemon_threads = True
    request_queue_size = 2 * MAX_CONNECTIONS  # accepted in the order they came
    slots: threading.BoundedSemaphore
    idle: ClassVar[dict[socket.socket, None]]
    """Connections whose request has not arrived, oldest first."""
    idle_lock: threading.Lock

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out or hung up is no error of the exporter's: no traceback on its terminal."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False) and not (
            self._push_out_idle() and self.slots.acquire(timeout=EVICT_WAIT_S)
        ):
            self.shutdown_request(request)  # full of requests being served: closed at once, the scraper retries
            return
        with self.idle_lock:
            self.idle[request] = None
        super().process_request(request, client_address)

    def served(self, request: socket.socket) -> None:
        with self.idle_lock:
            self.idle.pop(request, None)

    def _push_out_idle(self) -> bool:
        """Close the oldest connection still waiting for its request; False when none is."""
        with self.idle_lock:
            oldest = next(iter(self.idle), None)
            if oldest is None:
                return False
            del self.idle[oldest]
        with contextlib.suppress(OSError):
            oldest.shutdown(socket.SHUT_RDWR)  # its thread reads the end, lets go and frees its slot
        return True

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.served(request)
            self.slots.release()


def _listen(host: str, port: int, registry: CollectorRegistry) -> tuple[WSGIServer, threading.Thread]:
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]

    class Server(BoundedServer):
        address_family = family
        slots = threading.BoundedSemaphore(MAX_CONNECTIONS)  # one count per server
        idle: ClassVar[dict[socket.socket, None]] = {}  # one per server: this class is made per server
        idle_lock = threading.Lock()

    server = make_server(str(address[0]), port, make_wsgi_app(registry), Server, handler_class=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="rocmtui-export", daemon=True)
    thread.start()
    return server, thread


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
    server, thread = _listen(host, port, registry)
    return Endpoint(server, thread)
