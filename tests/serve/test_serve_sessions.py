"""``serve``'s page and sessions in-process, through aiohttp's test client against ``GuardedServer``'s own app.

Each refusal is checked for what it says (the one line a curl user or a browser's console shows) and each
admission for what reaches the tab's app: the app side is a recording stand-in for ``BoundedService``, so no
process starts (the tab process itself is checked below with a shell command, and whole in the slow tier).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from quiet_service import quiet_service
from textual_serve.app_service import AppService
from waiting import wait_for

from rocmtui.serve import guarded_server
from rocmtui.serve.guarded_server import MAX_HEIGHT, MAX_WIDTH, GuardedServer

TOKEN = "t0ken-for-tests"
COMMAND = f"{sys.executable} -m rocmtui.serve.tab_process demo"


class RecordingApp:
    """What ``_session`` opens for a tab, recording what reaches it; it draws one frame when it starts."""

    made: list[RecordingApp]
    FRAME = b"\x1b[Hfirst frame"

    def __init__(self, command: str, *, write_bytes: Callable[[bytes], Awaitable[Any]], **_kw: object) -> None:
        self.command, self._write = command, write_bytes
        self.calls: list[tuple[Any, ...]] = []
        self.stopped = asyncio.Event()
        self.made.append(self)

    async def start(self, width: int, height: int) -> None:
        self.calls.append(("start", width, height))
        await self._write(self.FRAME)

    async def send_bytes(self, data: bytes) -> bool:
        self.calls.append(("stdin", data))
        return True

    async def set_terminal_size(self, width: object, height: object) -> None:
        self.calls.append(("resize", width, height))

    async def blur(self) -> None:
        self.calls.append(("blur",))

    async def focus(self) -> None:
        self.calls.append(("focus",))

    async def stop(self) -> None:
        self.calls.append(("stop",))
        self.stopped.set()


@pytest.fixture
def apps(monkeypatch: pytest.MonkeyPatch) -> list[RecordingApp]:
    made: list[RecordingApp] = []
    monkeypatch.setattr(RecordingApp, "made", made, raising=False)
    monkeypatch.setattr(guarded_server, "BoundedService", RecordingApp)
    return made


def _server(**kw: Any) -> GuardedServer:
    options: dict[str, Any] = {"host": "127.0.0.1", "port": 8000, "title": "t", "public_url": None, "max_sessions": 2}
    options.update(kw)
    return GuardedServer(COMMAND, token=TOKEN, **options)


@pytest.fixture
async def client() -> AsyncIterator[Callable[..., Awaitable[TestClient]]]:
    opened: list[TestClient] = []

    async def open_client(**kw: Any) -> TestClient:
        server = _server(**kw)
        client = TestClient(TestServer(await server._make_app()))
        await client.start_server()
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        await client.close()


def _origin(client: TestClient) -> str:
    return str(client.make_url("")).rstrip("/")


async def _refused(client: TestClient, path: str, **headers: str) -> tuple[int, str]:
    response = await client.get(path, headers=headers)
    return response.status, await response.text()


async def _frame(ws: aiohttp.ClientWebSocketResponse[bool]) -> bytes:
    message = await asyncio.wait_for(ws.receive(), 10)
    assert message.type == aiohttp.WSMsgType.BINARY, message
    return bytes(message.data)


async def _pong(ws: aiohttp.ClientWebSocketResponse[bool], data: object) -> object:
    await ws.send_str(json.dumps(["ping", data]))
    message = await asyncio.wait_for(ws.receive(), 10)
    assert message.type == aiohttp.WSMsgType.TEXT, message
    return json.loads(message.data)


async def test_refusals_say_why_in_one_line(client, apps: list[RecordingApp]) -> None:
    c = await client(max_sessions=1)
    assert await _refused(c, "/") == (403, "rocmtui serve: open the URL with the token printed at start\n")
    assert await _refused(c, "/?token=wrong") == (403, "rocmtui serve: open the URL with the token printed at start\n")
    assert await _refused(c, "/ws/wrong") == (403, "rocmtui serve: wrong token\n")
    assert await _refused(c, f"/ws/{TOKEN}", Origin="https://evil.example") == (
        403,
        "rocmtui serve: cross-origin session refused (see --allow-origin)\n",
    )
    async with c.ws_connect(f"/ws/{TOKEN}"):
        assert await _refused(c, f"/ws/{TOKEN}") == (503, "rocmtui serve: 1 sessions already open\n")
    assert not [call for app in apps for call in app.calls if call[0] == "start"][1:]  # none but the first began


async def test_the_page_points_at_its_own_session_and_escapes_the_title(client) -> None:
    c = await client(title="<script>alert(1)</script>", public_url="https://proxy.example:8443/tui")
    page = await c.get(f"/?token={TOKEN}&fontsize=20")
    body = await page.text()
    assert page.status == 200
    assert f'data-session-websocket-url="wss://proxy.example:8443/tui/ws/{TOKEN}"' in body
    assert "https://proxy.example:8443/tui/static/" in body
    assert 'data-font-size="20"' in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script>alert(1)" not in body
    plain = await (await (await client(public_url="http://box:9000")).get(f"/?token={TOKEN}")).text()
    assert f'data-session-websocket-url="ws://box:9000/ws/{TOKEN}"' in plain and 'data-font-size="16"' in plain


async def test_the_url_printed_at_start_opens_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    server = _server(port=8123)
    client = TestClient(TestServer(await server._make_app()))
    await client.start_server()  # runs the app's startup, which prints the URL
    try:
        err = capsys.readouterr().err
        assert err == f"rocmtui serve: http://127.0.0.1:8123/?token={TOKEN} (Ctrl-C stops)\n"
        assert (await client.get(f"/?token={err.split('token=')[1].split()[0]}")).status == 200
    finally:
        await client.close()


def test_a_server_without_a_token_draws_a_long_random_one() -> None:
    kw: dict[str, Any] = {"host": "127.0.0.1", "port": 8000, "title": "t", "public_url": None, "max_sessions": 1}
    first, second = GuardedServer("x", **kw), GuardedServer("x", **kw)
    assert first.token != second.token and len(first.token) == 32  # 24 random bytes (192 bits), URL-safe
    assert first.page_url == f"http://127.0.0.1:8000/?token={first.token}"


async def test_a_session_runs_the_tab_command_at_a_bounded_size_and_draws(client, apps: list[RecordingApp]) -> None:
    c = await client()
    async with c.ws_connect(f"/ws/{TOKEN}?width=5000&height=0", headers={"Origin": _origin(c)}) as ws:
        assert await _frame(ws) == RecordingApp.FRAME
    (app,) = apps
    assert app.command == COMMAND
    assert app.calls[0] == ("start", MAX_WIDTH, 1)
    await asyncio.wait_for(app.stopped.wait(), 10)  # the tab's app ends with its session
    async with c.ws_connect(f"/ws/{TOKEN}") as ws:  # no size given: a terminal's usual
        await _frame(ws)
    assert apps[1].calls[0] == ("start", 80, 24)


async def test_an_allowed_origin_is_matched_without_its_trailing_slash(client, apps: list[RecordingApp]) -> None:
    c = await client(allow_origins=("https://proxy.example/",))
    for origin in ("https://proxy.example", "https://proxy.example/", _origin(c)):
        async with c.ws_connect(f"/ws/{TOKEN}", headers={"Origin": origin}) as ws:
            assert await _frame(ws) == RecordingApp.FRAME, origin
    assert (await _refused(c, f"/ws/{TOKEN}", Origin="https://proxy.example.evil"))[0] == 403


async def test_a_closed_session_frees_its_place(client, apps: list[RecordingApp]) -> None:
    c = await client(max_sessions=2)
    for _ in range(3):  # more sessions one after another than the cap: each closed one made room
        first = await c.ws_connect(f"/ws/{TOKEN}")
        second = await c.ws_connect(f"/ws/{TOKEN}")
        await _frame(first), await _frame(second)
        assert (await _refused(c, f"/ws/{TOKEN}"))[0] == 503
        await first.close()
        await second.close()
        await asyncio.wait_for(asyncio.gather(*(app.stopped.wait() for app in apps)), 10)
    assert len(apps) == 6


async def test_a_closed_session_leaves_no_socket_for_the_shutdown_to_close(apps: list[RecordingApp]) -> None:
    server = _server()
    c = TestClient(TestServer(await server._make_app()))
    await c.start_server()
    try:
        ws = await c.ws_connect(f"/ws/{TOKEN}")
        await _frame(ws)
        assert len(server._sockets) == 1
        await ws.close()
        await asyncio.wait_for(apps[0].stopped.wait(), 10)  # the session's end: its socket let go before this
        assert server._sockets == set()
    finally:
        await c.close()


class _ClosingSocket:
    """A session's websocket at shutdown: its close recorded, or failing as one whose peer is gone."""

    def __init__(self, closed: list[tuple[int, bytes]], fails: bool) -> None:
        self.closed, self.fails = closed, fails

    async def close(self, *, code: int, message: bytes) -> None:
        if self.fails:
            raise ConnectionResetError("the peer is gone")
        self.closed.append((code, message))


async def test_the_shutdown_closes_every_session_though_one_close_fails() -> None:
    server = _server()
    closed: list[tuple[int, bytes]] = []
    server._sockets.update({_ClosingSocket(closed, fails=True), _ClosingSocket(closed, fails=False)})  # type: ignore[arg-type]
    await server.on_shutdown(web.Application())  # no exception: the server goes on stopping
    assert closed == [(aiohttp.WSCloseCode.GOING_AWAY, b"server stopping")]


def test_asking_whether_a_group_lives_sends_it_no_signal() -> None:
    """``_group_alive`` asks with signal 0: a group it asks about is left running, and one that is gone is not
    alive."""
    program = "import signal, time; signal.signal(signal.SIGHUP, signal.SIG_DFL); print(flush=True); time.sleep(30)"
    # SIGHUP at its default even under nohup, which would leave it ignored in every child
    sleeper = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, start_new_session=True)
    assert sleeper.stdout is not None
    try:
        sleeper.stdout.readline()  # its handlers set
        assert guarded_server._group_alive(sleeper.pid)
        sleeper.terminate()
        assert sleeper.wait(timeout=10) == -signal.SIGTERM  # ours, the first signal it had
        assert not guarded_server._group_alive(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
        sleeper.stdout.close()


async def test_the_pages_messages_reach_the_app_and_anything_else_is_ignored(client, apps: list[RecordingApp]) -> None:
    c = await client()
    async with c.ws_connect(f"/ws/{TOKEN}") as ws:
        await _frame(ws)
        junk = ("not json", "[]", '{"a": 1}', '["stdin", 5]', '["resize", [1, 2]]', '["nothing"]')
        for message in (*junk, '["stdin", "\\ud800"]'):  # the last: a lone surrogate, which the decoder refuses
            await ws.send_str(message)
        await ws.send_bytes(b'["stdin", "binary"]')
        await ws.send_str(json.dumps(["stdin", "h\u00e9"]))
        await ws.send_str(json.dumps(["resize", {"width": 132, "height": 43}]))
        await ws.send_str(json.dumps(["resize", {}]))
        await ws.send_str('["blur"]')
        await ws.send_str('["focus"]')
        assert await _pong(ws, "still there") == ["pong", "still there"]
        assert await _pong(ws, None) == ["pong", None]
    (app,) = apps
    await asyncio.wait_for(app.stopped.wait(), 10)
    assert app.calls[1:] == [
        ("stdin", "hé".encode()),
        ("resize", 132, 43),
        ("resize", 80, 24),
        ("blur",),
        ("focus",),
        ("stop",),
    ]


async def test_a_session_open_when_the_server_stops_is_closed_as_going_away(client, apps: list[RecordingApp]) -> None:
    c = await client()
    ws = await c.ws_connect(f"/ws/{TOKEN}")
    await _frame(ws)
    await c.server.app.shutdown()  # what Ctrl-C or SIGTERM runs
    closing = await asyncio.wait_for(ws.receive(), 10)
    assert (closing.type, closing.data, closing.extra) == (
        aiohttp.WSMsgType.CLOSE,
        aiohttp.WSCloseCode.GOING_AWAY,
        "server stopping",
    )
    await ws.close()
    (app,) = apps
    await asyncio.wait_for(app.stopped.wait(), 10)


async def test_a_message_beyond_the_size_limit_ends_the_session(client, apps: list[RecordingApp]) -> None:
    c = await client()
    async with c.ws_connect(f"/ws/{TOKEN}") as ws:
        await _frame(ws)
        await ws.send_str(json.dumps(["stdin", "k" * 60_000]))  # a large paste: within the limit
        assert await _pong(ws, 1) == ["pong", 1]
        await ws.send_str(json.dumps(["stdin", "k" * 100_000]))
        closing = await asyncio.wait_for(ws.receive(), 10)
        assert closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING)
        assert ws.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
    (app,) = apps
    await asyncio.wait_for(app.stopped.wait(), 10)
    assert [len(call[1]) for call in app.calls if call[0] == "stdin"] == [60_000]


async def _written(path: Path) -> str:
    for _ in range(200):
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never written")


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize(
    ("program", "ended_by"),
    [("exec sleep 30", -signal.SIGTERM), ("trap '' TERM; sleep 30; sleep 30", -signal.SIGKILL)],
    ids=["deaf to quit", "deaf to quit and SIGTERM"],
)
async def test_a_tab_process_starts_at_a_bounded_size_in_its_own_group_and_ends_with_its_session(
    program: str, ended_by: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shell command stands in for the tab's app (no Python start): it writes the size it was given, then
    ignores the quit message (and SIGTERM); the whole group is gone after stop, within the grace times."""
    monkeypatch.setattr(guarded_server, "QUIT_GRACE_S", 0.3)
    size = tmp_path / "size"
    service = quiet_service(f'echo "$COLUMNS $ROWS" > {size}; {program}')
    await service.start(5000, -4)
    process = service._process
    assert process is not None
    assert await _written(size) == f"{MAX_WIDTH} 1\n"
    assert os.getpgid(process.pid) == process.pid  # a group of its own: the browser's tab ends all of it
    await asyncio.wait_for(service.stop(), 10)
    assert process.returncode == ended_by
    wait_for(lambda: not _group_alive(process.pid), what="the session's process group gone")  # its last reaped
    await service.stop()  # stopped already: nothing to do


async def test_a_resize_asks_the_app_for_a_bounded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    service = quiet_service("true")
    sent: list[dict[str, Any]] = []

    async def send_meta(data: dict[str, Any]) -> bool:
        sent.append(data)
        return True

    monkeypatch.setattr(service, "send_meta", send_meta)
    for width, height in ((5000, 5000), (0, -1), (120, 40)):
        await service.set_terminal_size(width, height)
    assert sent == [
        {"type": "resize", "width": MAX_WIDTH, "height": MAX_HEIGHT},
        {"type": "resize", "width": 1, "height": 1},
        {"type": "resize", "width": 120, "height": 40},
    ]


async def _gone(group: int) -> None:
    for _ in range(500):
        if not _group_alive(group):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"process group {group} still there")


def _printf(data: bytes) -> str:
    """A ``printf`` of ``data`` byte for byte (octal escapes: any shell's printf)."""
    return "printf '" + "".join(f"\\{byte:03o}" for byte in data) + "'"


def _packet(kind: bytes, payload: bytes) -> bytes:
    """One packet of textual-serve's app protocol: its kind, its size (4 bytes, big-endian), its payload."""
    return kind + len(payload).to_bytes(4, "big") + payload


def _speaking(*then: str, packets: bytes = b"") -> str:
    """A shell app that announces itself as a Textual app, sends ``packets``, then runs ``then``."""
    return "; ".join([_printf(b"__GANGLION__\n" + packets), *then])


@pytest.fixture
async def serving(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Callable[[str], Awaitable[str]]]:
    """The session URL of a server whose tabs run ``command`` for real (a shell, no Python start), served as
    ``web.run_app`` serves it: aiohttp's TestServer cancels a handler whose client hung up, ``rocmtui serve``
    lets the session end its app."""
    monkeypatch.setattr(guarded_server, "QUIT_GRACE_S", 0.3)
    runners: list[web.AppRunner] = []

    async def open_server(command: str) -> str:
        server = GuardedServer(command, host="127.0.0.1", port=8000, title="t", public_url=None, max_sessions=1,
                               token=TOKEN)  # fmt: skip
        runner = web.AppRunner(await server._make_app(), handler_cancellation=False)
        runners.append(runner)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return f"ws://127.0.0.1:{runner.addresses[0][1]}/ws/{TOKEN}"

    yield open_server
    for runner in runners:
        await runner.cleanup()
    gc.collect()  # the ended sessions' process transports closed while the loop still runs


async def test_a_tabs_app_reaches_the_browser_and_its_exit_ends_the_session(serving, tmp_path: Path) -> None:
    env = tmp_path / "env"
    open_url = json.dumps({"type": "open_url", "url": "https://example.org/", "new_tab": True}).encode()
    packets = _packet(b"D", b"drawn") + _packet(b"M", open_url) + _packet(b"M", b'{"type": "exit"}')
    url = await serving(_speaking(f'echo "[${{TEXTUAL-}}]" > {env}', "sleep 0.2", packets=packets))
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        received = [await asyncio.wait_for(ws.receive(), 10) for _ in range(3)]
    assert [(m.type, m.data) for m in received[:2]] == [
        (aiohttp.WSMsgType.BINARY, b"drawn"),
        (aiohttp.WSMsgType.TEXT, json.dumps(["open_url", {"url": "https://example.org/", "new_tab": True}])),
    ]
    assert received[2].type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)  # the app said it exited
    assert await _written(env) == "[]\n"  # not in Textual's debug mode: no devtools, no textual.log written


async def test_closing_the_tab_ends_an_app_deaf_to_quit_and_a_child_it_left(serving, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    child = "{ sleep 30 < /dev/null > /dev/null 2>&1 & }"
    url = await serving(_speaking(child, f'echo "$$ $!" > {pids}', "exec sleep 30", packets=_packet(b"D", b"up")))
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        assert await _frame(ws) == b"up"
        group, lingering = map(int, (await _written(pids)).split())
    await _gone(group)  # the server runs on this loop: waited for without blocking it
    with pytest.raises(ProcessLookupError):
        os.kill(lingering, 0)


async def test_closing_the_tab_asks_its_app_to_quit_first(serving, tmp_path: Path) -> None:
    asked = tmp_path / "asked"
    url = await serving(_speaking("head -c 1 > /dev/null", f"echo quit > {asked}", packets=_packet(b"D", b"up")))
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        assert await _frame(ws) == b"up"
    assert await _written(asked) == "quit\n"  # its stdin had the quit message before any signal


async def test_a_tab_whose_app_left_a_child_behind_ends_the_child(tmp_path: Path, monkeypatch) -> None:
    """The app ended on its own, its child still runs (holding no pipe of the session's): stop ends it."""
    monkeypatch.setattr(guarded_server, "QUIT_GRACE_S", 0.3)
    pid = tmp_path / "pid"
    service = quiet_service(f"sleep 30 < /dev/null > /dev/null 2>&1 & echo $! > {pid}")
    await service.start(80, 24)
    lingering = int(await _written(pid))
    process = service._process
    assert process is not None
    await asyncio.wait_for(process.wait(), 10)
    assert _group_alive(process.pid)
    await asyncio.wait_for(service.stop(), 10)
    wait_for(lambda: not _group_alive(process.pid), what="the child left behind gone")
    with pytest.raises(ProcessLookupError):
        os.kill(lingering, 0)


async def test_a_tab_process_is_ended_even_when_the_librarys_quit_ends_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """textual-serve's stop awaits its reader task, which ends cancelled when the app exited before the task
    first ran (its stderr reader is cancelled before it started): the group is still signalled, and the
    session's end goes on (no CancelledError out of stop)."""
    monkeypatch.setattr(guarded_server, "QUIT_GRACE_S", 0.3)

    async def quit_ending_cancelled(self: AppService) -> None:
        raise asyncio.CancelledError

    monkeypatch.setattr(AppService, "stop", quit_ending_cancelled)
    service = quiet_service("exec sleep 30")
    await service.start(80, 24)
    process = service._process
    assert process is not None
    await asyncio.wait_for(service.stop(), 10)
    assert process.returncode == -signal.SIGTERM


async def test_an_app_that_quits_when_asked_ends_its_session_without_waiting_out_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(guarded_server, "QUIT_GRACE_S", 5.0)
    service = quiet_service("head -c 1 > /dev/null")  # ends at the first byte of the quit message
    await service.start(80, 24)
    process = service._process
    assert process is not None
    started = time.monotonic()
    await asyncio.wait_for(service.stop(), 30)
    assert time.monotonic() - started < guarded_server.QUIT_GRACE_S
    assert process.returncode == 0  # it quit: no signal was needed
