"""Exporter pages served over real HTTP on 127.0.0.1 by a thread of the test's process, for the cluster view."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

EXPORTERS = Path(__file__).resolve().parent / "data" / "exporters"
"""Real exporter output (see the README there)."""


class Page:
    """What a test server answers, and what it was asked."""

    def __init__(self, body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.body = body
        self.status = status
        self.headers = headers or {}
        self.requests: list[dict[str, str]] = []
        self.connections = 0
        """Connections the server accepted (with ``keep_alive``, one serves many requests)."""
        self.closed = 0


@contextmanager
def serving(
    page: Page,
    port: int = 0,
    tls: ssl.SSLContext | None = None,
    *,
    keep_alive: bool = False,
    idle_s: float | None = None,
) -> Iterator[str]:
    """``keep_alive``: HTTP/1.1, a connection kept for more requests (closed by the server after ``idle_s``)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
        timeout = idle_s

        def setup(self) -> None:
            page.connections += 1
            super().setup()

        def finish(self) -> None:
            super().finish()
            page.closed += 1

        def do_GET(self) -> None:
            page.requests.append(dict(self.headers))
            self.send_response(page.status)
            for key, value in page.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(page.body)))
            self.end_headers()
            self.wfile.write(page.body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"  # nothing listens once closed


def free_port() -> int:
    """A port nothing listens on now (bound, then let go: the process started next takes it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_file_forever(path: Path, port: int) -> None:
    """``python tests/exporter_pages.py FILE PORT``: serve FILE at /metrics as an exporter does, until killed."""
    page = Page(path.read_bytes(), headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})
    with serving(page, port=port):
        threading.Event().wait()


if __name__ == "__main__":
    import sys

    serve_file_forever(Path(sys.argv[1]), int(sys.argv[2]))
