"""Bounded HTTP(S) GETs: a timeout for the whole answer, a cap on its size, a bearer token, no redirect.

``Connection`` and ``Fetcher`` ask many hosts at once from one thread (the exporters' pages, or one Prometheus
server's answer), each on a connection kept from one round to the next: non-blocking sockets under one selector, an
HTTP/1.1 answer read by its Content-Length, its chunks or its connection's end. In the cluster viewer, beside
Textual's threads, a pool of 64 threads each fetching with http.client cost 3 to 4% of a core more at 256 hosts
every 2 s (the same fetches alone in a process cost about the same either way: it is the threads' waking and taking
turns at the GIL beside the UI's that costs; docs/benchmarks/monitor.md).

A redirect is refused rather than followed, so a token sent to one address never travels on to another;
proxies from the environment are not used (the exporters sit on the cluster's own network). HTTPS
certificates are checked against the system's authorities (Python's default context). An answer that is not
HTTP, or not a well-formed one, is a FetchError of one line, never another exception.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import ipaddress
import os
import re
import selectors
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

from rocmtui.base.errors import UsageError
from rocmtui.base.files import read_small

MAX_TOKEN_BYTES = 16 * 1024


class FetchError(Exception):
    """Why an address did not give a page: one line."""


@dataclass(frozen=True)
class Answer:
    body: bytes
    seconds: float


REDIRECTS = {301, 302, 303, 307, 308}
MAX_HEAD_BYTES = 64 * 1024
"""An answer's status line and headers (or a chunk's trailer), at most."""
FIRST_BUFFER = 64 * 1024
"""A new reading buffer's size; it doubles as a larger answer needs, up to the cap."""
RESOLVE_POLL_S = 0.02
"""How often the loop looks at host names being resolved (on threads: ``getaddrinfo`` blocks)."""
GATHER_S = 0.01
"""A wake that finds some connections ready and others still waiting sleeps this long, then reads all those ready
by then: a wake of the fetching thread costs more than a read. On the 2-core CPU box, a round of 256 hosts whose
answers came about 1 ms apart polled about 250 times, once an answer, for 22 to 24 ms of the thread's CPU; gathered
so, about 19 polls and 12 to 14 ms (20 ms gathered: no better). An answer may be read up to this much after it
came, so a host's ``latency_s`` is known to within it."""
_WOULD_BLOCK = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)
_CONNECTING = (errno.EINPROGRESS, errno.EAGAIN, errno.EWOULDBLOCK)
_CLOSED_SINCE = (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError)
"""What a request on a kept connection meets when the server closed it while idle."""


class _ClosedSince(Exception):
    """The kept connection was closed by the server while idle: ask again once, on a new one."""


@functools.cache
def _resolver() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="rocmtui-resolve")


@dataclass(frozen=True)
class Reply:
    """An answer's body as it arrived: ``raw`` is valid only inside ``Fetcher.run``'s callback (its buffer is used
    again); ``spans`` are the chunks' data in it for a chunked answer (None: ``raw`` is the body)."""

    raw: memoryview
    spans: tuple[tuple[int, int], ...] | None
    seconds: float

    def body(self) -> bytes:
        raw = self.raw
        return bytes(raw) if self.spans is None else b"".join(raw[a:b] for a, b in self.spans)


class Connection:
    """One address's HTTP(S) connection, kept open from one request to the next (HTTP/1.1 keep-alive, as the
    exporters' Go servers and Prometheus's own scrapes do), driven without blocking by a ``Fetcher``, which asks
    every host of a round from one thread. ``get`` asks on its own and answers as the module's ``get`` does (the
    same errors, no redirect, no proxy, the cap and the timeout). A kept connection the server has closed since
    is replaced once, at once. One exchange at a time."""

    def __init__(self, url: str, *, token: str | None = None, accept: str = "*/*") -> None:
        parts = urllib.parse.urlsplit(url)
        self.url = url
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"GET {path} HTTP/1.1", f"Host: {parts.netloc.rpartition('@')[2]}", f"Accept: {accept}",
                 "Accept-Encoding: identity", "User-Agent: rocmtui-cluster"]  # fmt: skip
        if token:
            lines.append(f"Authorization: Bearer {token}")
        self._refused = None if all(line.isascii() and line.isprintable() for line in lines) else (
            "the address or the token holds characters a request cannot carry")  # fmt: skip
        self._request = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii", errors="replace")
        self._sock: socket.socket | None = None
        """The connection, open between two exchanges while the server keeps it."""
        self._fd = -1
        """The descriptor ``_watcher`` watches for this connection; -1: none."""
        self._watcher: selectors.BaseSelector | None = None
        """The selector of the Fetcher that drives it, while it has its socket registered."""
        self._tls: ssl.SSLContext | None = None
        self._started = self._deadline = 0.0
        self._max_bytes = 0
        self._clear()

    def get(self, *, timeout_s: float, max_bytes: int) -> Answer:
        """The body; FetchError (one line) as ``get``."""
        got: list[Answer | FetchError] = []

        def keep(_: int, result: Reply | FetchError) -> None:
            got.append(result if isinstance(result, FetchError) else Answer(result.body(), result.seconds))

        with Fetcher(timeout_s=timeout_s, max_bytes=max_bytes) as fetcher:
            fetcher.run([(0, self)], keep)
        if isinstance(got[0], FetchError):
            raise got[0]
        return got[0]

    def close(self) -> None:
        self._forget()  # before the socket closes: a new socket may take its number
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _forget(self) -> None:
        """No selector watches this connection any more."""
        if self._fd >= 0 and self._watcher is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):  # its Fetcher was closed since
                self._watcher.unregister(self._fd)
        self._fd, self._watcher = -1, None

    # One exchange, a step at a time, driven by a Fetcher.

    def _clear(self) -> None:
        self._phase = ""
        self._kept = False
        self._want_write = False
        self._resolving: Future[list[Any]] | None = None
        self._addresses: list[Any] = []
        self._out = memoryview(b"")
        self._buf = bytearray()
        self._filled = 0
        self._body_at = -1
        """Where the body starts in the buffer, once the head is read."""
        self._length: int | None = None
        self._chunks: list[tuple[int, int]] | None = None
        self._chunk_at = 0
        self._chunked_bytes = 0
        self._close_after = False

    def _begin(self, timeout_s: float, max_bytes: int, buffer: bytearray) -> None:
        self._clear()
        self._started = time.monotonic()
        self._deadline, self._max_bytes, self._buf = self._started + timeout_s, max_bytes, buffer
        if self._refused:
            raise FetchError(self._refused)
        if self._sock is not None:
            self._kept = True
            self._phase, self._out = "send", memoryview(self._request)
        else:
            self._resolve()

    def _reopen(self) -> None:
        """After ``_ClosedSince``: the same exchange (its deadline kept) on a new connection."""
        self.close()
        buffer = self._buf
        self._clear()
        self._buf = buffer
        self._resolve()

    def _resolve(self) -> None:
        self._phase = "resolve"
        try:
            ipaddress.ip_address(self._host)
        except ValueError:
            self._resolving = _resolver().submit(socket.getaddrinfo, self._host, self._port, type=socket.SOCK_STREAM)
            return
        self._addresses = socket.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM,
                                             flags=socket.AI_NUMERICHOST)  # fmt: skip
        self._connect_next()

    def _connect_next(self) -> None:
        family, kind, proto, _, address = self._addresses.pop(0)
        self._sock = sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        code = sock.connect_ex(address)
        if code and code not in _CONNECTING:
            self._connect_failed(code)
            return
        self._phase = "connect"

    def _connect_failed(self, code: int) -> None:
        self.close()
        if not self._addresses:
            raise OSError(code, os.strerror(code))
        self._connect_next()

    def _step(self) -> bool:
        """Go as far as the socket allows now; True once the answer is whole. FetchError, OSError, _ClosedSince."""
        while True:
            phase, sock = self._phase, self._sock
            if phase == "resolve":
                if self._resolving is None or not self._resolving.done():
                    return False
                self._addresses, self._resolving = list(self._resolving.result()), None  # gaierror: raised here
                self._connect_next()
            elif phase == "connect":
                assert sock is not None
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    self._connect_failed(code)
                    continue
                try:
                    sock.getpeername()
                except OSError:
                    return False  # still connecting
                self._connected(sock)
            elif phase == "handshake":
                try:
                    cast(ssl.SSLSocket, sock).do_handshake()
                except ssl.SSLWantReadError:
                    self._want_write = False
                    return False
                except ssl.SSLWantWriteError:
                    self._want_write = True
                    return False
                self._phase, self._out = "send", memoryview(self._request)
            elif phase == "send":
                assert sock is not None
                if self._send(sock):
                    self._phase = "read"  # nothing to read yet: the selector says when (no recv to learn it is empty)
                return False
            else:
                assert sock is not None
                return self._read(sock)

    def _connected(self, sock: socket.socket) -> None:
        if not self._https:
            self._phase, self._out = "send", memoryview(self._request)
            return
        if self._tls is None:
            self._tls = ssl.create_default_context()  # the system's authorities, the host name checked
        self._sock = self._tls.wrap_socket(sock, server_hostname=self._host, do_handshake_on_connect=False)
        self._phase = "handshake"

    def _send(self, sock: socket.socket) -> bool:
        try:
            while self._out:
                self._out = self._out[sock.send(self._out) :]
        except _WOULD_BLOCK:
            return False
        except _CLOSED_SINCE:
            if self._kept:
                raise _ClosedSince from None
            raise
        return True

    def _read(self, sock: socket.socket) -> bool:
        while True:
            if self._filled == len(self._buf):
                self._grow()
            try:
                got = sock.recv_into(memoryview(self._buf)[self._filled :])
            except _WOULD_BLOCK:
                return self._whole(ended=False)
            except ssl.SSLZeroReturnError:
                got = 0
            except _CLOSED_SINCE:
                if self._kept and self._filled == 0:
                    raise _ClosedSince from None
                raise
            if not got:
                if self._kept and self._filled == 0:
                    raise _ClosedSince
                return self._whole(ended=True)
            self._filled += got
            if self._filled < len(self._buf) and self._whole(ended=False):
                return True  # a short read that ended the answer: no further recv to learn the socket is empty

    def _grow(self) -> None:
        limit = self._max_bytes + 2 * MAX_HEAD_BYTES
        if len(self._buf) >= limit:
            raise FetchError(f"answer larger than {self._max_bytes:,} bytes: not read")
        self._buf.extend(bytes(min(limit, max(FIRST_BUFFER, 2 * len(self._buf))) - len(self._buf)))

    def _whole(self, *, ended: bool) -> bool:
        """True when the buffer holds the whole answer; FetchError for a bad or refused one."""
        if self._body_at < 0 and not self._head(ended):
            return False
        body = self._filled - self._body_at
        if self._chunks is not None:
            if self._dechunk():
                return True
        elif self._length is not None:
            if body >= self._length:
                self._close_after |= body > self._length  # more than the answer: the connection is not used again
                return True
        elif ended:
            return True
        if body > self._max_bytes + (MAX_HEAD_BYTES if self._chunks is not None else 0):  # chunks: their framing
            raise FetchError(f"answer larger than {self._max_bytes:,} bytes: not read")
        if ended:
            raise FetchError("answer cut short: the connection closed")
        return False

    def _head(self, ended: bool) -> bool:
        """Read the status line and headers once they are all in; False until then."""
        end = self._buf.find(b"\r\n\r\n", 0, self._filled)
        if end == -1:
            if self._filled > MAX_HEAD_BYTES:
                raise FetchError("answer headers larger than 64 KiB")
            if ended:
                raise FetchError("Remote end closed connection without response")
            return False
        version, code, reason, headers = _parse_head(self._buf[:end].decode("latin-1"))
        if 100 <= code < 200:  # an interim answer: the real one follows
            del self._buf[: end + 4]
            self._buf.extend(bytes(end + 4))
            self._filled -= end + 4
            return self._head(ended)
        self._body_at = end + 4
        if code in REDIRECTS:
            where = urllib.parse.urljoin(self.url, headers.get("location", ""))
            raise FetchError(f"HTTP {code}: redirected to {where} (not followed)")
        if not 200 <= code < 300:
            raise FetchError(f"HTTP {code} {reason}")
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        self._close_after = "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)
        coding = headers.get("transfer-encoding", "").lower().replace(" ", "")
        if coding:
            if coding != "chunked":
                raise FetchError("transfer encoding not supported (only chunked)")
            self._chunks, self._chunk_at = [], self._body_at
        elif "content-length" in headers:
            self._length = _length(headers["content-length"])
            if self._length > self._max_bytes:
                raise FetchError(f"answer larger than {self._max_bytes:,} bytes: not read")
        elif code in (204, 205):
            self._length = 0
        else:
            self._close_after = True  # the body ends where the connection does
        return True

    def _dechunk(self) -> bool:
        """Note the chunks now whole; True after the last one and its trailer."""
        assert self._chunks is not None
        buf, at = self._buf, self._chunk_at
        while True:
            eol = buf.find(b"\r\n", at, min(self._filled, at + 1024))
            if eol == -1:
                if self._filled - at >= 1024:
                    raise FetchError("malformed chunk")
                return False
            size_text = bytes(buf[at:eol]).partition(b";")[0].strip()
            if not size_text or len(size_text) > 15 or size_text.strip(b"0123456789abcdefABCDEF"):
                raise FetchError("malformed chunk")
            size = int(size_text, 16)
            if size == 0:
                return self._trailer(eol + 2)
            start, stop = eol + 2, eol + 2 + size
            if stop + 2 > self._filled:
                return False
            if buf[stop : stop + 2] != b"\r\n":
                raise FetchError("malformed chunk")
            self._chunks.append((start - self._body_at, stop - self._body_at))
            self._chunked_bytes += size
            if self._chunked_bytes > self._max_bytes:
                raise FetchError(f"answer larger than {self._max_bytes:,} bytes: not read")
            at = self._chunk_at = stop + 2

    def _trailer(self, at: int) -> bool:
        while True:
            eol = self._buf.find(b"\r\n", at, self._filled)
            if eol == -1:
                if self._filled - at > MAX_HEAD_BYTES:
                    raise FetchError("malformed chunk")
                return False
            if eol == at:
                self._close_after |= eol + 2 < self._filled
                self._filled = eol + 2
                return True
            at = eol + 2

    def _reply(self) -> Reply:
        end = self._filled if self._length is None else self._body_at + self._length
        spans = None if self._chunks is None else tuple(self._chunks)
        return Reply(memoryview(self._buf)[self._body_at : end], spans, time.monotonic() - self._started)

    def _events(self) -> int:
        """What the socket is waited on for now; 0 while the name is being resolved."""
        if self._phase == "resolve" or self._sock is None:
            return 0
        if self._phase in ("connect", "send") or (self._phase == "handshake" and self._want_write):
            return selectors.EVENT_WRITE
        return selectors.EVENT_READ


_HEADER = re.compile(
    r"^(content-length|transfer-encoding|connection|location)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.I | re.M
)
"""The headers an answer is read by (the others are not looked at)."""


def _parse_head(text: str) -> tuple[str, int, str, dict[str, str]]:
    """(version, status, reason, the headers of ``_HEADER`` by lowercase name, repeats joined by ", ");
    FetchError for a status line that is not HTTP/1.x's."""
    status, _, fields = text.partition("\r\n")
    version, _, rest = status.partition(" ")
    code_text, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or len(code_text) != 3 or not code_text.isdigit():
        raise FetchError("not an HTTP answer")
    headers: dict[str, str] = {}
    for name, value in _HEADER.findall(fields):
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return version, int(code_text), reason, headers


def _length(text: str) -> int:
    if not text.isdigit() or len(text) > 18:
        raise FetchError("malformed Content-Length")
    return int(text)


Answered = Callable[[int, "Reply | FetchError"], object]


class Fetcher:
    """Many connections' GETs on the calling thread: one selector, at most ``max_parallel`` in flight, each with
    its timeout for the whole answer and the cap on its body (no thread per fetch: see the module's note). Reading
    buffers are kept from one call to the next: a page read into memory already touched costs no page faults. So
    are the selector and, in it, each kept connection's socket, waited on for reading between two calls: asking a
    host again registers nothing (two ``epoll_ctl`` a request fewer), and a server that closes a kept connection
    while it is idle is seen as it does so (the connection is closed then, and opened anew when next asked).
    ``close()`` lets the selector go."""

    def __init__(self, *, timeout_s: float, max_bytes: int, max_parallel: int = 64, gather_s: float = GATHER_S) -> None:
        self.timeout_s = timeout_s
        self.gather_s = gather_s
        self.max_bytes = max_bytes
        self.max_parallel = max(1, max_parallel)
        self._buffers: list[bytearray] = []
        self._naming: set[int] = set()
        """Connections in flight whose host name is being resolved (looked at every ``RESOLVE_POLL_S``)."""
        self._selector: selectors.BaseSelector | None = None
        """Each registered socket's data is its Connection: one not in flight is a kept one, idle."""

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Let the selector go (the connections stay open, for another Fetcher to drive)."""
        if self._selector is not None:
            for key in list(self._selector.get_map().values()):
                key.data._forget()
            self._selector.close()
            self._selector = None

    def run(
        self, jobs: Sequence[tuple[int, Connection]], answered: Answered, stop: threading.Event | None = None
    ) -> list[int]:
        """Ask each job's connection once; ``answered(key, reply or error)`` as each ends (on this thread). Once
        ``stop`` is set no more are started: the keys of those not started are returned."""
        waiting = list(reversed(jobs))
        flying: dict[int, tuple[int, Connection]] = {}
        """id of the connection -> its job."""
        if self._selector is None:
            self._selector = selectors.DefaultSelector()
        selector = self._selector
        while True:
            while waiting and len(flying) < self.max_parallel and not (stop is not None and stop.is_set()):
                self._start(selector, flying, *waiting.pop(), answered)
            if not flying:
                break
            # Each started after the one before with the same timeout: the first in flight ends first.
            wait = max(0.0, next(iter(flying.values()))[1]._deadline - time.monotonic())
            resolving = [tag for tag in self._naming if tag in flying]
            ready = selector.select(min(wait, RESOLVE_POLL_S) if resolving else wait)
            if ready and len(ready) < len(flying) and self.gather_s > 0:
                time.sleep(self.gather_s)
                ready = selector.select(0)
            self._ready(selector, flying, ready, answered)
            for tag in resolving:
                if tag in flying:
                    self._advance(selector, flying, tag, answered)
            now = time.monotonic()
            late = []
            for tag, (_, connection) in flying.items():
                if now <= connection._deadline:
                    break
                late.append(tag)
            for tag in late:
                what = "no answer" if flying[tag][1]._filled == 0 else "no whole answer"
                self._end(selector, flying, tag, answered, FetchError(f"{what} within {self.timeout_s:g} s"))
        return [key for key, _ in reversed(waiting)]

    def _ready(
        self, selector: selectors.BaseSelector, flying: dict[int, tuple[int, Connection]],
        ready: list[tuple[selectors.SelectorKey, int]], answered: Answered,
    ) -> None:  # fmt: skip
        for event, _ in ready:
            connection: Connection = event.data
            tag = id(connection)
            if tag in flying:
                self._advance(selector, flying, tag, answered)
            else:  # a kept connection not asked now: its server closed it (or spoke unasked)
                connection.close()

    def _start(
        self, selector: selectors.BaseSelector, flying: dict[int, tuple[int, Connection]], key: int,
        connection: Connection, answered: Answered,
    ) -> None:  # fmt: skip
        tag = id(connection)
        flying[tag] = (key, connection)
        buffer = self._buffers.pop() if self._buffers else bytearray(FIRST_BUFFER)
        try:
            connection._begin(self.timeout_s, self.max_bytes, buffer)
        except Exception as err:  # an address's failure, never the round's
            self._end(selector, flying, tag, answered, err)
            return
        self._advance(selector, flying, tag, answered)

    def _advance(
        self, selector: selectors.BaseSelector, flying: dict[int, tuple[int, Connection]], tag: int,
        answered: Answered,
    ) -> None:  # fmt: skip
        connection = flying[tag][1]
        try:
            try:
                whole = connection._step()
            except _ClosedSince:
                connection._reopen()
                whole = connection._step()
        except _ClosedSince:
            self._end(selector, flying, tag, answered, FetchError("Remote end closed connection without response"))
            return
        except Exception as err:  # an address's failure, never the round's
            self._end(selector, flying, tag, answered, err)
            return
        if whole:
            self._end(selector, flying, tag, answered, None)
        else:
            self._watch(selector, connection)
            if connection._phase == "resolve":
                self._naming.add(tag)
            else:
                self._naming.discard(tag)

    @staticmethod
    def _watch(selector: selectors.BaseSelector, connection: Connection) -> None:
        """Have the selector wait on what the connection's phase waits on."""
        events = connection._events()
        fd = connection._sock.fileno() if events and connection._sock is not None else -1
        if connection._fd != fd or connection._watcher is not selector:
            connection._forget()
            if fd >= 0:
                selector.register(fd, events, connection)
                connection._fd, connection._watcher = fd, selector
        elif fd >= 0 and selector.get_key(fd).events != events:
            selector.modify(fd, events, connection)

    def _end(
        self, selector: selectors.BaseSelector, flying: dict[int, tuple[int, Connection]], tag: int,
        answered: Answered, failure: BaseException | None,
    ) -> None:  # fmt: skip
        key, connection = flying.pop(tag)
        self._naming.discard(tag)
        buffer = connection._buf
        try:
            if failure is None:
                if connection._close_after:
                    connection.close()
                elif connection._fd >= 0 and selector.get_key(connection._fd).events != selectors.EVENT_READ:
                    selector.modify(connection._fd, selectors.EVENT_READ, connection)  # kept: read until asked again
                answered(key, connection._reply())
            else:
                connection.close()
                error = failure if isinstance(failure, FetchError) else FetchError(_reason(failure, self.timeout_s))
                answered(key, error)
        finally:
            connection._clear()
            if len(self._buffers) < self.max_parallel:
                self._buffers.append(buffer)


def _reason(err: object, timeout_s: float) -> str:
    if isinstance(err, socket.timeout | TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    if isinstance(err, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted: {err.verify_message}"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return " ".join(str(err).split()) or type(err).__name__


def read_token(path: str) -> str:
    """A bearer token from a file the user named: one line of printable ASCII (UsageError otherwise)."""
    from pathlib import Path

    try:
        data = read_small(Path(path), MAX_TOKEN_BYTES, follow_links=True)
    except FileNotFoundError:
        raise UsageError(f"--token-file {path}: no such file") from None
    except OSError as err:
        raise UsageError(f"--token-file {path}: {err.strerror or err}") from None
    except UsageError as err:  # a FIFO, a device, a folder, too large: the line names the option too
        raise UsageError(f"--token-file {err}") from None
    token = data.strip()
    if not token or b"\n" in token or not all(0x21 <= byte <= 0x7E for byte in token):
        raise UsageError(f"--token-file {path}: not one line of printable ASCII (a bearer token)")
    return token.decode()
