"""The exporter lets go of a silent client after its read timeout, serves a bounded number at once, and holds
no descriptor per run between scrapes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from export_runs import copy_run

from rocmtui.export import metrics_server as export_server
from rocmtui.export.metrics_server import MAX_CONNECTIONS, QuietHandler, serve
from rocmtui.export.run_metrics import RunCollector


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


def test_idle_connections_make_room_for_a_scrape_however_many_there_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QuietHandler, "timeout", 60.0)  # far beyond the test: only making room lets it in
    endpoint = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="box")
    held = [socket.create_connection(("127.0.0.1", endpoint.port)) for _ in range(2 * MAX_CONNECTIONS)]
    try:
        for _ in range(3):
            assert b"rocmtui_exporter_info" in _scrape(endpoint.port)
        for sock in held[: MAX_CONNECTIONS + 1]:  # the oldest idle ones were closed for the newer ones and the scrape
            sock.settimeout(10)
            assert sock.recv(100) == b""
    finally:
        for sock in held:
            sock.close()
        endpoint.close()


def test_requests_being_served_are_never_pushed_out_and_one_beyond_them_is_closed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    release, entered = threading.Event(), threading.Semaphore(0)

    def slow_latest() -> None:
        entered.release()
        release.wait(30)

    endpoint = serve(slow_latest, host="127.0.0.1", port=0, runs_dir=None, hostname="box")
    scrapes = [socket.create_connection(("127.0.0.1", endpoint.port)) for _ in range(MAX_CONNECTIONS)]
    try:
        for sock in scrapes:
            sock.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        for _ in range(MAX_CONNECTIONS):
            assert entered.acquire(timeout=30)  # every one of them is being served
        with socket.create_connection(("127.0.0.1", endpoint.port)) as extra:
            extra.settimeout(10)
            extra.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            assert extra.recv(100) == b""  # closed: no idle connection to make room
        release.set()
        for sock in scrapes:
            sock.settimeout(10)
            assert sock.makefile("rb").readline().startswith(b"HTTP/1.0 200")
    finally:
        release.set()
        for sock in scrapes:
            sock.close()
        endpoint.close()
    assert capsys.readouterr().err == ""  # the one closed at once is no error of the exporter's


def test_each_endpoint_counts_its_own_connections() -> None:
    first = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="a")
    second = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="b")
    try:
        assert type(first.server).slots is not type(second.server).slots  # type: ignore[attr-defined]
        assert export_server.BoundedServer.daemon_threads
    finally:
        first.close()
        second.close()


def _lost_runs(runs: Path, count: int) -> None:
    for i in range(count):
        copy_run(runs, f"20261130-0900{i:04d}-cifar10-fastnet", lines=12, state="running")  # nobody holds it


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_descriptors_do_not_grow_with_lost_runs(tmp_path: Path) -> None:
    _lost_runs(tmp_path / "runs", 60)
    collector = RunCollector(tmp_path / "runs")
    before = _open_descriptors()
    for _ in range(3):
        families = {family.name: family for family in collector.collect()}
    assert _open_descriptors() == before
    lost = [s for s in families["rocmtui_run_state"].samples if s.labels["state"] == "lost" and s.value == 1.0]
    assert len(lost) == 60
    steps = [s.value for s in families["rocmtui_run_step"].samples]
    assert steps == [245.0] * 60  # each stream was read once, and its place kept


@pytest.mark.slow
def test_a_thousand_lost_runs_under_a_low_descriptor_limit_leave_every_scrape_whole(tmp_path: Path) -> None:
    _lost_runs(tmp_path / "runs", 1000)
    script = f"""
import resource, sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent)!r})
from export_runs import scrape
from rocmtui.export.metrics_server import serve
resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
endpoint = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=Path({str(tmp_path / "runs")!r}), hostname="box")
for _ in range(3):
    families = scrape(endpoint.port)
    lost = [s for s in families["rocmtui_run_state"] if s.labels["state"] == "lost" and s.value == 1.0]
    print(len(lost), len(families["rocmtui_run_step"]))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split("\n")[:3] == ["1000 1000"] * 3
