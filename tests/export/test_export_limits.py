"""The exporter lets go of a silent client after its read timeout and serves a bounded number at once."""

from __future__ import annotations

import socket
import time
import urllib.request

import pytest

from rocmtui.export import metrics_server as export_server
from rocmtui.export.metrics_server import MAX_CONNECTIONS, QuietHandler, serve


def _scrape(port: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return bytes(response.read())


def test_a_silent_client_is_closed_after_the_read_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QuietHandler, "timeout", 0.3)
    endpoint = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="box")
    try:
        with socket.create_connection(("127.0.0.1", endpoint.port)) as silent:
            silent.settimeout(10)
            started = time.monotonic()
            assert silent.recv(100) == b""  # the server hung up on it
            assert time.monotonic() - started < 5
    finally:
        endpoint.close()


def test_connections_beyond_the_cap_are_closed_and_the_cap_frees_as_they_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QuietHandler, "timeout", 1.0)
    endpoint = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="box")
    try:
        held = [socket.create_connection(("127.0.0.1", endpoint.port)) for _ in range(MAX_CONNECTIONS)]
        with socket.create_connection(("127.0.0.1", endpoint.port)) as extra:
            extra.settimeout(10)
            extra.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            assert extra.recv(100) == b""  # refused at once, not queued behind the silent ones
        deadline = time.monotonic() + 10
        while True:  # the silent ones time out, and a scrape gets through again
            try:
                assert b"rocmtui_exporter_info" in _scrape(endpoint.port)
                break
            except (OSError, AssertionError):
                if time.monotonic() > deadline:
                    raise
        for sock in held:
            sock.close()
    finally:
        endpoint.close()


def test_each_endpoint_counts_its_own_connections() -> None:
    first = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="a")
    second = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="b")
    try:
        assert type(first.server).slots is not type(second.server).slots  # type: ignore[attr-defined]
        assert export_server.BoundedServer.daemon_threads
    finally:
        first.close()
        second.close()
