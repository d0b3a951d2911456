"""textual-serve's server made safe by default, after Jupyter's conventions.

- a random token, printed at start in the page's URL, is required for the page (``/?token=T``) and the
  WebSocket (``/ws/T``): a page on another site cannot guess it;
- an Origin check on the WebSocket: the page's own origin, or one given with ``--allow-origin``;
- a cap on concurrent sessions (each is a process of its own) and on the terminal's size (a 5000x5000 terminal
  grew one app past 589 MB);
- a request must arrive whole within ``REQUEST_TIMEOUT_S`` of its connection, before any token is looked at (a
  client that sends nothing, or a header a byte at a time, is closed);
- each tab's input is bounded (``InputBudget``: a flood of keys grew one app to a gigabyte), and the tab's process
  ends with its session: asked to quit, then SIGTERM, then SIGKILL (``BoundedService.stop``);
- its page asks no third-party host (fonts served locally) and focuses the terminal, so keys work without a click.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import secrets
import signal
import sys
import time
from asyncio.subprocess import Process
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from rocmtui.codec import CodecError, decode_json, encode_json

TEMPLATES = Path(__file__).resolve().parent / "web"
MAX_WIDTH = 500
MAX_HEIGHT = 200
"""The largest terminal a browser may ask for, in cells (a 4K screen at a small font is about 400x120)."""


def clamp_size(width: object, height: object) -> tuple[int, int]:
    """A terminal size from a client: whole numbers within 1..MAX, 80x24 for anything unreadable."""

    def one(value: object, default: int, most: int) -> int:
        try:
            number = int(str(value))
        except ValueError:
            return default
        return min(max(number, 1), most)

    return one(width, 80, MAX_WIDTH), one(height, 24, MAX_HEIGHT)


def origin_allowed(origin: str | None, host: str, allowed: frozenset[str]) -> bool:
    """Same origin as the page (the request's Host), or one of ``allowed``; no Origin: not a browser."""
    if origin is None:
        return True  # curl, scripts: they hold the token or are refused for want of it
    if origin.rstrip("/") in allowed:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc == host


REQUEST_TIMEOUT_S = 10.0
"""How long a connection has to send a whole request (and an idle keep-alive connection lasts)."""
QUIT_GRACE_S = 5.0
"""How long a tab's app has to quit when its session ends, before SIGTERM (and as long again before SIGKILL)."""
INPUT_BURST_BYTES = 64 << 10
INPUT_BYTES_PER_S = 16 << 10
"""A tab's keyboard and paste input: a burst of 64 KiB, then 16 KiB a second (far beyond typing); beyond, dropped."""


class InputBudget:
    """A token bucket of input bytes: ``take`` says whether ``n`` more may reach the app now."""

    def __init__(
        self, burst: int = INPUT_BURST_BYTES, per_s: float = INPUT_BYTES_PER_S, clock: Any = time.monotonic
    ) -> None:
        self.burst, self.per_s, self._clock = burst, per_s, clock
        self._left, self._at = float(burst), clock()
        self.dropped = 0
        """Bytes refused so far."""

    def take(self, n: int) -> bool:
        now = self._clock()
        self._left = min(self.burst, self._left + (now - self._at) * self.per_s)
        self._at = now
        if n > self._left:
            self.dropped += n
            return False
        self._left -= n
        return True


class BoundedService(AppService):
    """An app process whose terminal never grows past ``MAX_WIDTH`` x ``MAX_HEIGHT``, and that never outlives its
    session."""

    async def start(self, width: int, height: int) -> None:
        await super().start(*clamp_size(width, height))

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(*clamp_size(width, height))

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        """As the library opens it (a shell runs the command), in a process group of its own: the app is the
        shell's child, and ``stop`` signals the whole group."""
        self._process = process = await asyncio.create_subprocess_shell(
            self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def stop(self) -> None:
        """Ask the app to quit; SIGTERM after ``QUIT_GRACE_S``, SIGKILL as long after, to its whole process group:
        nothing it started outlives the session."""
        task, process = self._task, self._process
        if task is None or process is None:
            return
        # Its outcome is not ours to raise: the library's stop awaits its reader task, which ends cancelled when
        # the app exited before that task first ran (its stderr reader is cancelled unstarted); the signals below
        # must go out whatever it ended in, and a timeout leaves it running.
        asked = asyncio.ensure_future(super().stop())
        await asyncio.wait({asked}, timeout=QUIT_GRACE_S)
        if asked.done() and not asked.cancelled():
            asked.exception()  # marked retrieved (no "never retrieved" log): what it was changes nothing below
        for signum in (signal.SIGTERM, signal.SIGKILL):
            if process.returncode is not None and not _group_alive(process.pid):
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signum)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(_group_gone(process), QUIT_GRACE_S)
        task.cancel()  # its reader ends with the process; a cancel is for one left waiting on a pipe
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        self._task = None


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _group_gone(process: Process) -> None:
    """Until the shell has ended and no process of its group is left."""
    await process.wait()
    while _group_alive(process.pid):
        await asyncio.sleep(0.05)


class GuardedServer(Server):
    """``Server`` with a token, an Origin check and caps (see the module's docstring)."""

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        title: str,
        public_url: str | None,
        max_sessions: int,
        allow_origins: tuple[str, ...] = (),
        token: str | None = None,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title, public_url=public_url, templates_path=TEMPLATES)
        self.token = token or secrets.token_urlsafe(24)
        self.max_sessions = max_sessions
        self.allow_origins = frozenset(o.rstrip("/") for o in allow_origins)
        self.sessions = 0
        self._sockets: set[web.WebSocketResponse] = set()
        """The open sessions' websockets: closed when the server stops, so that their apps quit at once."""

    @property
    def page_url(self) -> str:
        return f"{self.public_url}/?token={self.token}"

    def serve(self, debug: bool = False) -> None:
        """As textual-serve serves, with a request timeout before anything else (``REQUEST_TIMEOUT_S``). ``debug``
        is the library's signature: its one reader, ``initialize_logging``, is ours and quiet."""
        self.initialize_logging()
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            loop = asyncio.new_event_loop()
        # no signals: RuntimeError off the main thread (asyncio's for set_wakeup_fd's ValueError), NotImplementedError
        # in a loop without them
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self.request_exit)
            loop.add_signal_handler(signal.SIGTERM, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            print=lambda *args: None,
            keepalive_timeout=REQUEST_TIMEOUT_S,  # aiohttp closes a connection with no whole request by then
        )

    def initialize_logging(self) -> None:
        """textual-serve's logger prints a request's traceback on the console: keep it to warnings."""

    def _token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    async def _make_app(self) -> web.Application:
        """The library's routes less its ``/ws`` (no token) and its downloads: the page, the session, the files."""
        app = web.Application()
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path), autoescape=True)
        app.add_routes(  # unnamed: the page's URLs are built from public_url (_page), never looked up
            [
                web.get("/", self.handle_index),
                web.get("/ws/{token}", self.handle_session),
                web.static("/static", self.statics_path),
            ]
        )
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def on_startup(self, app: web.Application) -> None:
        print(f"rocmtui serve: {self.page_url} (Ctrl-C stops)", file=sys.stderr, flush=True)

    async def handle_index(self, request: web.Request) -> Any:
        if not self._token_ok(request.query.get("token")):
            return web.Response(status=403, text="rocmtui serve: open the URL with the token printed at start\n")
        return await self._page(request)

    @aiohttp_jinja2.template("app_index.html")
    async def _page(self, request: web.Request) -> dict[str, Any]:
        static = f"{self.public_url}/static/"
        ws_base = ("wss:" if self.public_url.startswith("https") else "ws:") + self.public_url.split(":", 1)[1]
        return {
            "font_size": clamp_size(request.query.get("fontsize", "16"), 16)[0],
            "app_websocket_url": f"{ws_base}/ws/{self.token}",
            "config": {"static": {"url": static}},
            "application": {"name": self.title},
        }

    async def handle_session(self, request: web.Request) -> web.StreamResponse:
        if not self._token_ok(request.match_info.get("token")):
            return web.Response(status=403, text="rocmtui serve: wrong token\n")
        if not origin_allowed(request.headers.get("Origin"), request.host, self.allow_origins):
            return web.Response(status=403, text="rocmtui serve: cross-origin session refused (see --allow-origin)\n")
        if self.sessions >= self.max_sessions:
            return web.Response(status=503, text=f"rocmtui serve: {self.max_sessions} sessions already open\n")
        self.sessions += 1
        try:
            return await self._session(request)
        finally:
            self.sessions -= 1

    async def _session(self, request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 16)
        await websocket.prepare(request)
        self._sockets.add(websocket)
        service = BoundedService(
            self.command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,  # type: ignore[arg-type]  # as the library's own handler passes it
            download_manager=self.download_manager,
            debug=False,
        )
        await service.start(*clamp_size(request.query.get("width", "80"), request.query.get("height", "24")))
        try:
            await self._messages(websocket, service)
        finally:
            self._sockets.discard(websocket)
            await service.stop()
            await websocket.close()
        return websocket

    async def on_shutdown(self, app: web.Application) -> None:
        """Ctrl-C or SIGTERM: every session's websocket closed, so that each tab's app is asked to quit now (its
        handler would otherwise wait for the browser's next message until aiohttp gives up on it)."""
        await asyncio.gather(
            *(socket.close(code=WSCloseCode.GOING_AWAY, message=b"server stopping") for socket in list(self._sockets)),
            return_exceptions=True,
        )

    async def _messages(self, websocket: web.WebSocketResponse, service: AppService) -> None:
        """The browser's messages; one that is not what the page sends is ignored, input beyond the tab's
        ``InputBudget`` dropped."""
        budget = InputBudget()
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = decode_json(message.data, Any)
            except CodecError:
                continue
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None  # ["focus"] has no data
            if kind == "stdin" and isinstance(data, str):
                raw = data.encode("utf-8", errors="replace")
                if budget.take(len(raw)):
                    await service.send_bytes(raw)
            elif kind == "resize" and isinstance(data, dict):
                await service.set_terminal_size(data.get("width", 80), data.get("height", 24))
            elif kind == "ping":
                await websocket.send_str(encode_json(["pong", data]).decode())
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()
