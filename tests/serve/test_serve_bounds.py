"""``serve`` bounded for strangers: a request must arrive whole in time, before any token is looked at; a tab's
input is bounded; a tab's process ends with its session, whatever it does."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from browser import free_port, start_serve
from quiet_service import quiet_service
from waiting import wait_for

from rocmtui.serve import guarded_server as web_server
from rocmtui.serve.guarded_server import (
    INPUT_BURST_BYTES,
    INPUT_BYTES_PER_S,
    GuardedServer,
    InputBudget,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_input_budget_lets_a_burst_through_then_its_rate() -> None:
    clock = Clock()
    budget = InputBudget(clock=clock)
    assert budget.take(INPUT_BURST_BYTES) and not budget.take(1)
    clock.now += 1.0
    assert budget.take(INPUT_BYTES_PER_S) and not budget.take(1)
    clock.now += 1000.0  # a long quiet spell refills the burst, never more
    assert budget.take(INPUT_BURST_BYTES) and not budget.take(1)
    assert budget.dropped == 3


class Message:
    def __init__(self, data: str) -> None:
        from aiohttp import WSMsgType

        self.type, self.data = WSMsgType.TEXT, data


class FloodingTab:
    """What a browser tab's WebSocket delivers: ``count`` stdin messages of ``size`` bytes each, at once."""

    def __init__(self, count: int, size: int) -> None:
        self._messages = [Message(json.dumps(["stdin", "k" * size])) for _ in range(count)]

    def __aiter__(self) -> FloodingTab:
        return self

    async def __anext__(self) -> Message:
        if not self._messages:
            raise StopAsyncIteration
        return self._messages.pop()


class RecordingApp:
    """The app side of a session, counting the input bytes that reach it (the app process is not the point)."""

    def __init__(self) -> None:
        self.received = 0

    async def send_bytes(self, data: bytes) -> bool:
        self.received += len(data)
        return True


async def test_a_tab_s_input_flood_reaches_its_app_bounded() -> None:
    server = GuardedServer(f"{sys.executable} -c pass", host="127.0.0.1", port=8000, title="t", public_url=None,
                           max_sessions=1, token="t")  # fmt: skip
    app = RecordingApp()
    await server._messages(FloodingTab(1000, 60_000), app)  # type: ignore[arg-type]  # 60 MB in a moment
    assert 0 < app.received <= INPUT_BURST_BYTES + INPUT_BYTES_PER_S  # the burst, and at most a second's more


@pytest.mark.slow
@pytest.mark.parametrize(
    ("program", "ended_by"),
    [
        ("import time; time.sleep(600)", -signal.SIGTERM),
        ("import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.pause()", -signal.SIGKILL),
    ],
    ids=["deaf to quit", "deaf to quit and SIGTERM"],
)
async def test_a_tab_s_process_ends_with_its_session(
    program: str, ended_by: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_server, "QUIT_GRACE_S", 0.5)
    service = quiet_service(f"{sys.executable} -c '{program}'")
    await service.start(80, 24)
    process = service._process
    assert process is not None
    await asyncio.wait_for(service.stop(), 30)
    assert process.returncode in (-signal.SIGTERM, ended_by)  # the shell, or the app when the shell exec'd it
    wait_for(lambda: not _group_alive(process.pid), what="the session's process group gone")  # its last reaped


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_a_connection_that_sends_no_whole_request_is_closed_before_any_token_check(tmp_path: Path) -> None:
    process, url = start_serve(["demo", "--speed", "50"], free_port(), tmp_path)
    port = int(url.split(":")[2].split("/")[0])
    try:
        silent = socket.create_connection(("127.0.0.1", port))
        partial = socket.create_connection(("127.0.0.1", port))
        partial.sendall(b"GET /?token=")  # a header never finished
        for sock in (silent, partial):
            sock.settimeout(web_server.REQUEST_TIMEOUT_S * 3)
            assert sock.recv(100) == b""  # closed by the server, well before the old 75 s
            sock.close()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def test_serve_closes_a_silent_connection_and_prints_only_its_url(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``serve`` as ``rocmtui serve`` runs it, on a thread of this process with a short request timeout; it
    ends as Ctrl-C ends it (``request_exit`` on its loop)."""
    monkeypatch.setattr(web_server, "REQUEST_TIMEOUT_S", 0.5)
    port = free_port()
    server = GuardedServer(f"{sys.executable} -c pass", host="127.0.0.1", port=port, title="t", public_url=None,
                           max_sessions=1, token="t")  # fmt: skip
    loop = asyncio.new_event_loop()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        server.serve()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        wait_for(lambda: _answers(port), what="the server listening")
        with socket.create_connection(("127.0.0.1", port)) as silent:
            silent.settimeout(10)
            started = time.monotonic()
            assert silent.recv(100) == b""
            assert time.monotonic() - started < 5  # by the request timeout, well before the 10 s above
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token=t", timeout=10) as page:
            assert page.status == 200
    finally:
        loop.call_soon_threadsafe(server.request_exit)
        thread.join(timeout=10)
    assert not thread.is_alive()
    out, err = capsys.readouterr()
    assert out == "" and err == f"rocmtui serve: http://127.0.0.1:{port}/?token=t (Ctrl-C stops)\n"


class _NotHandled(Exception):
    """SIGTERM reached the test's own handler: serve did not set its own."""


def _not_handled(signum: int, frame: object) -> None:
    raise _NotHandled(signum)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_in_the_main_thread_listens_on_loopback_only_and_a_signal_ends_it(
    signum: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """``serve`` as the CLI runs it, in the main thread: its socket on 127.0.0.1 alone, and SIGTERM or Ctrl-C's
    SIGINT to the process ends it through its own handler (the test's handler, underneath, raises if it is
    reached; a signal the server swallows is found by the server still running 10 s later)."""
    assert threading.current_thread() is threading.main_thread()
    port = free_port()
    server = GuardedServer(f"{sys.executable} -c pass", host="127.0.0.1", port=port, title="t", public_url=None,
                           max_sessions=1, token="t")  # fmt: skip
    loop = asyncio.new_event_loop()
    listening: list[set[str]] = []
    ended, swallowed = threading.Event(), threading.Event()

    def signal_once_listening() -> None:
        wait_for(lambda: _answers(port), what="the server listening")
        mine = psutil.Process()
        connections = getattr(mine, "net_connections", mine.connections)("tcp")
        listening.append({c.laddr.ip for c in connections if c.status == psutil.CONN_LISTEN and c.laddr.port == port})
        os.kill(os.getpid(), signum)
        if not ended.wait(10):
            swallowed.set()
            loop.call_soon_threadsafe(server.request_exit)

    previous = signal.signal(signum, _not_handled)
    asyncio.set_event_loop(loop)
    helper = threading.Thread(target=signal_once_listening, daemon=True)
    helper.start()
    try:
        server.serve()
    finally:
        ended.set()
        signal.signal(signum, previous)
        asyncio.set_event_loop(None)
    helper.join(timeout=10)
    assert not swallowed.is_set(), "the signal did not end the server"
    assert listening == [{"127.0.0.1"}]
    assert capsys.readouterr().err == f"rocmtui serve: http://127.0.0.1:{port}/?token=t (Ctrl-C stops)\n"


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
