"""The addresses to scrape: ``HOST:PORT`` (``[v6]:PORT``), or a whole ``http(s)://HOST:PORT/path`` URL."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable
from pathlib import Path

from rocmtui.base.files import read_small
from rocmtui.base.text import plain
from rocmtui.gpu.cluster.scrape import Target

MAX_TARGETS = 4096
MAX_HOSTFILE_BYTES = 1 << 20
_HOST = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
_V6 = re.compile(r"^[0-9A-Fa-f:.]+$")


class TargetError(ValueError):
    """An address that is not HOST:PORT: one line naming it."""


def parse_target(text: str) -> Target:
    """``text`` as a Target; TargetError when it is not ``HOST:PORT`` or an http(s) URL with a host."""
    given = text.strip()
    url = given if "://" in given else f"http://{given}"
    try:
        parts = urllib.parse.urlsplit(url)
        problem = _problem(parts, given)
    except ValueError:  # an unclosed "[", or brackets around what is not an IPv6 address
        problem = "not a host name or address"
    if problem:
        raise TargetError(f"{plain(given, limit=200)!r}: {problem}")
    path = parts.path or "/metrics"
    address = f"{parts.scheme}://{parts.netloc}{parts.path}" if "://" in given else parts.netloc
    return Target(address, urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")))


def _problem(parts: urllib.parse.SplitResult, given: str) -> str | None:
    if parts.scheme not in {"http", "https"}:
        return "not HOST:PORT (or an http:// or https:// URL)"
    port_problem = _port_problem(parts, given)
    if port_problem:
        return port_problem
    host = parts.hostname or ""
    if parts.username or parts.password or parts.fragment:
        return "not HOST:PORT (no user, password or #fragment)"
    bracketed = parts.netloc.startswith("[")
    if not host or not (_V6.match(host) if bracketed else _HOST.match(host)):
        return "not a host name or address"
    return None


def _port_problem(parts: urllib.parse.SplitResult, given: str) -> str | None:
    try:
        port = parts.port  # ValueError past 65535 or not a number
    except ValueError:
        port = -1
    if port is None:
        return None if "://" in given else "not HOST:PORT: the port is missing"
    return None if 1 <= port <= 65535 else "the port is not a number from 1 to 65535"


def parse_targets(texts: Iterable[str]) -> list[Target]:
    """Each address once, in the order given; TargetError for a bad one or more than ``MAX_TARGETS``."""
    seen: dict[str, Target] = {}
    for text in texts:
        if not text.strip():
            continue
        target = parse_target(text)
        seen.setdefault(target.url, target)
        if len(seen) > MAX_TARGETS:
            raise TargetError(f"more than {MAX_TARGETS} hosts")
    return list(seen.values())


def hostfile_lines(path: Path) -> list[str]:
    """The addresses in a host file: one a line, ``#`` starting a comment. OSError or UnsafeFileError."""
    data = read_small(path, MAX_HOSTFILE_BYTES, follow_links=True)
    lines = []
    for raw in data.decode("utf-8", errors="replace").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines
