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
