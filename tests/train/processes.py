"""Helpers for the tests that drive real processes and ptys: waiting, draining a pty, liveness."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def drain(fd: int) -> None:
    """Read what the UI drew, so that its writes never block on a full pty."""
    while select.select([fd], [], [], 0)[0]:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:
            return


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Terminal:
    """The reading end of a pty: everything drawn on it so far, read without blocking."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.drawn = bytearray()

    def read(self) -> bytes:
        while select.select([self.fd], [], [], 0.05)[0]:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            self.drawn.extend(chunk)
        return bytes(self.drawn)
