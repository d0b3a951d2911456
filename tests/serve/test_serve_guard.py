"""``serve`` safe by default: the token, the Origin check, the caps on sessions and terminal size.

The refusals are checked in-process against the server's own routes (no app process starts); a real
``rocmtui serve demo`` is checked with a real WebSocket client in the slow tier.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import aiohttp
import psutil
import pytest
from aiohttp.test_utils import TestClient, TestServer
from browser import free_port, start_serve

import rocmtui
from rocmtui.cli.parser import build_parser
from rocmtui.serve.guarded_server import MAX_HEIGHT, MAX_WIDTH, GuardedServer, clamp_size, origin_allowed

TOKEN = "t0ken-for-tests"


def _server(**kw: object) -> GuardedServer:
    options: dict = {"host": "127.0.0.1", "port": 8000, "title": "t", "public_url": None, "max_sessions": 2}
    options.update(kw)
    return GuardedServer(f"{sys.executable} -c pass", token=TOKEN, **options)


async def _client(server: GuardedServer) -> TestClient:
    client = TestClient(TestServer(await server._make_app()))
    await client.start_server()
    return client


async def test_the_page_needs_the_token_and_asks_no_other_host() -> None:
    client = await _client(_server())
    try:
        assert (await client.get("/")).status == 403
        assert (await client.get("/?token=wrong")).status == 403
        for part in ("", TOKEN[:1], TOKEN[:-1], TOKEN + "x", " " + TOKEN):  # empty, a prefix, more
            assert (await client.get(f"/?token={part}")).status == 403, part
            assert (await client.get(f"/ws/{part}")).status in (403, 404), part
        page = await client.get(f"/?token={TOKEN}")
        body = await page.text()
        assert page.status == 200 and f"/ws/{TOKEN}" in body
        assert "googleapis" not in body and "https://" not in body
        assert "fonts/RobotoMono-VariableFont_wght.ttf" in body
        assert (await client.get("/static/fonts/RobotoMono-VariableFont_wght.ttf")).status == 200
    finally:
        await client.close()


async def test_a_session_without_the_token_or_from_another_origin_is_refused() -> None:
    client = await _client(_server())
    try:
        assert (await client.get("/ws")).status == 404  # the library's own, tokenless route is gone
        assert (await client.get("/ws/wrong")).status == 403
        foreign = await client.get(f"/ws/{TOKEN}", headers={"Origin": "https://evil.example"})
        assert foreign.status == 403 and "cross-origin" in await foreign.text()
        null = await client.get(f"/ws/{TOKEN}", headers={"Origin": "null"})
        assert null.status == 403
    finally:
        await client.close()


def test_origins_same_as_the_page_or_allowed() -> None:
    allowed = frozenset({"https://proxy.example"})
    assert origin_allowed("http://127.0.0.1:8000", "127.0.0.1:8000", frozenset())
    assert origin_allowed("https://box.example", "box.example", frozenset())  # the page served through TLS
    assert origin_allowed("https://proxy.example/", "127.0.0.1:8000", allowed)
    assert not origin_allowed("http://127.0.0.1:8001", "127.0.0.1:8000", allowed)
    assert not origin_allowed("file://", "127.0.0.1:8000", allowed)
    assert origin_allowed(None, "127.0.0.1:8000", frozenset())  # no browser: the token alone decides


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (("5000", "5000"), (MAX_WIDTH, MAX_HEIGHT)),
        (("0", "-3"), (1, 1)),
        (("x", None), (80, 24)),
        ((120, 40), (120, 40)),
    ],
)
def test_terminal_size_is_bounded(given: tuple[object, object], expected: tuple[int, int]) -> None:
    assert clamp_size(*given) == expected


def test_serve_options_go_before_or_after_the_apps_name() -> None:
    after = build_parser().parse_args(["serve", "monitor", "--port", "8080", "--max-sessions", "2"])
    before = build_parser().parse_args(["serve", "--port", "8080", "--max-sessions", "2", "monitor"])
    for args in (after, before):
        assert (args.port, args.max_sessions, args.host, args.app) == (8080, 2, "127.0.0.1", "monitor")
    plain = build_parser().parse_args(["serve", "demo"])
    assert (plain.port, plain.max_sessions, plain.allow_origin) == (8000, 4, None)
    origins = build_parser().parse_args(
        ["serve", "--allow-origin", "https://a", "watch", "--allow-origin", "https://b"]
    )
    assert origins.allow_origin == ["https://b"]  # given after the app's name, it wins


def test_a_real_serve_listens_on_loopback_only_and_ends_at_once_on_sigterm() -> None:
    """The command as a user runs it, in a main thread: its signal handlers set, its socket on 127.0.0.1 alone.
    Started in the checkout (no tab opens, so nothing is saved there), where a mutation run's settings are found."""
    process, _url = start_serve(["demo"], free_port(), Path(rocmtui.__file__).resolve().parents[1])
    try:
        serving = psutil.Process(process.pid)
        connections = getattr(serving, "net_connections", serving.connections)("tcp")
        assert [c.laddr.ip for c in connections if c.status == psutil.CONN_LISTEN] == ["127.0.0.1"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0  # its own exit, not SIGTERM's default death (-15)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def served(tmp_path: Path):
    process, url = start_serve(["demo", "--speed", "50", "--max-sessions", "1"], free_port(), tmp_path)
    yield url
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


async def _first_bytes(ws: aiohttp.ClientWebSocketResponse[bool]) -> bytes:
    async for message in ws:
        if message.type == aiohttp.WSMsgType.BINARY:
            return bytes(message.data)
    return b""


async def _pong(ws: aiohttp.ClientWebSocketResponse[bool]) -> object:
    async for message in ws:
        if message.type == aiohttp.WSMsgType.TEXT and message.data.startswith('["pong"'):
            return json.loads(message.data)
    return None


@pytest.mark.slow
async def test_a_real_serve_refuses_foreign_origins_and_tokenless_sessions_and_caps_sessions(served: str) -> None:
    base = served.split("/?", maxsplit=1)[0]
    token = served.split("token=")[1]
    ws_url = base.replace("http:", "ws:") + f"/ws/{token}?width=5000&height=5000"
    async with aiohttp.ClientSession() as http:
        for url, headers in (
            (ws_url, {"Origin": "https://evil.example"}),
            (base.replace("http:", "ws:") + "/ws/guess", {"Origin": base}),
            (base.replace("http:", "ws:") + "/ws", {"Origin": base}),
        ):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(url, headers=headers)
            assert refused.value.status in (403, 404)
        async with http.ws_connect(ws_url, headers={"Origin": base}) as ws:
            assert await asyncio.wait_for(_first_bytes(ws), 30)  # the app draws
            for junk in ("not json", "[]", '{"a": 1}', '["resize", {"width": "x"}]', '["stdin", 5]', '["focus"]'):
                await ws.send_str(junk)  # ignored, the session lives on
            await ws.send_str('["ping", "still there"]')
            assert await asyncio.wait_for(_pong(ws), 30) == ["pong", "still there"]
            with pytest.raises(aiohttp.WSServerHandshakeError) as full:
                await http.ws_connect(ws_url, headers={"Origin": base})
            assert full.value.status == 503
