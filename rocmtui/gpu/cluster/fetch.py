"""One bounded HTTP(S) GET: a timeout for the whole answer, a cap on its size, a bearer token, no redirect.

A redirect is refused rather than followed, so a token sent to one address never travels on to another;
proxies from the environment are not used (the exporters sit on the cluster's own network). HTTPS
certificates are checked against the system's authorities (Python's default context).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from rocmtui.base.errors import UsageError
from rocmtui.base.files import read_small

CHUNK = 64 * 1024
MAX_TOKEN_BYTES = 16 * 1024


class FetchError(Exception):
    """Why an address did not give a page: one line."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        code, newurl = args[2], args[5]  # (req, fp, code, msg, headers, newurl)
        raise FetchError(f"HTTP {code}: redirected to {newurl} (not followed)")


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


@dataclass(frozen=True)
class Answer:
    body: bytes
    seconds: float


def get(url: str, *, timeout_s: float, max_bytes: int, token: str | None = None, accept: str = "*/*") -> Answer:
    """The body at ``url``; FetchError (one line) for no answer, an HTTP error, a body over ``max_bytes`` or
    an answer slower than ``timeout_s`` in all."""
    started = time.monotonic()
    deadline = started + timeout_s
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "rocmtui-cluster"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with _OPENER.open(request, timeout=timeout_s) as response:
            body = _read_capped(response, max_bytes, deadline, timeout_s)
    except FetchError:
        raise
    except urllib.error.HTTPError as err:
        raise FetchError(f"HTTP {err.code} {err.reason}") from None
    except urllib.error.URLError as err:
        raise FetchError(_reason(err.reason, timeout_s)) from None
    except (OSError, http.client.HTTPException, ValueError) as err:
        raise FetchError(_reason(err, timeout_s)) from None
    return Answer(body, time.monotonic() - started)


REDIRECTS = {301, 302, 303, 307, 308}
_CLOSED_SINCE = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected, http.client.BadStatusLine)
"""What a request on a kept connection meets when the server closed it while idle."""


class Connection:
    """One address's HTTP(S) connection, kept open from one request to the next (HTTP/1.1 keep-alive, as the
    exporters' Go servers and Prometheus's own scrapes do): a scrape of 256 hosts every 2 s no longer opens and
    closes 256 TCP connections a round. ``get`` answers as the module's ``get`` does (the same errors, no
    redirect, no proxy, the cap and the timeout); one caller at a time."""

    def __init__(self, url: str, *, token: str | None = None, accept: str = "*/*") -> None:
        parts = urllib.parse.urlsplit(url)
        self.url = url
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname or "", parts.port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._headers = {"Accept": accept, "User-Agent": "rocmtui-cluster"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._open: http.client.HTTPConnection | None = None
        self._tls: ssl.SSLContext | None = None

    def get(self, *, timeout_s: float, max_bytes: int) -> Answer:
        """The body; FetchError (one line) as ``get``. A kept connection the server has closed since is
        replaced once, at once."""
        started = time.monotonic()
        kept = self._open is not None
        for attempt in (1, 2):
            try:
                return self._get(started, timeout_s, max_bytes)
            except FetchError:
                raise
            except _CLOSED_SINCE as err:
                if not kept or attempt == 2:
                    raise FetchError(_reason(err, timeout_s)) from None
            except (OSError, http.client.HTTPException, ValueError) as err:
                raise FetchError(_reason(err, timeout_s)) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._open is not None:
            self._open.close()
            self._open = None

    def _get(self, started: float, timeout_s: float, max_bytes: int) -> Answer:
        connection, self._open = self._open or self._connect(timeout_s), None  # kept again only after a whole answer
        try:
            connection.timeout = timeout_s
            if connection.sock is not None:
                connection.sock.settimeout(timeout_s)
            connection.request("GET", self._path, headers=self._headers)
            response = connection.getresponse()
            if response.status in REDIRECTS:
                where = urllib.parse.urljoin(self.url, response.getheader("Location") or "")
                raise FetchError(f"HTTP {response.status}: redirected to {where} (not followed)")
            if not 200 <= response.status < 300:
                raise FetchError(f"HTTP {response.status} {response.reason}")
            body = _read_capped(response, max_bytes, started + timeout_s, timeout_s)
        except BaseException:
            connection.close()
            raise
        if response.will_close:
            connection.close()
        else:
            self._open = connection
        return Answer(body, time.monotonic() - started)

    def _connect(self, timeout_s: float) -> http.client.HTTPConnection:
        if not self._https:
            return http.client.HTTPConnection(self._host, self._port, timeout=timeout_s)
        if self._tls is None:
            self._tls = ssl.create_default_context()  # the system's authorities, the host name checked
        return http.client.HTTPSConnection(self._host, self._port, timeout=timeout_s, context=self._tls)


def _read_capped(response: Any, max_bytes: int, deadline: float, timeout_s: float) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise FetchError(f"no whole answer within {timeout_s:g} s")
        chunk = response.read(CHUNK)
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(f"answer larger than {max_bytes:,} bytes: not read")
        parts.append(chunk)


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
