"""Textual's Linux driver with an input thread that sleeps until a key comes or the app stops.

Textual's input thread wakes every 0.1 s, to see whether the app is stopping and whether a lone Esc has waited
long enough to be the Esc key: a monitor left open for a day wakes 864,000 times for nothing. Here the thread
waits on the terminal and on a pipe that the stop writes to; it polls at 0.1 s only while keys are coming (a
lone Esc is decided ``ESCDELAY`` after it), and blocks again once the keyboard has been quiet for a second.
Everything else (the parser, the events, the terminal modes) is Textual's own.
"""

from __future__ import annotations

import contextlib
import functools
import os
import selectors
import sys
import threading
import time
from codecs import getincrementaldecoder
from typing import Any, TypeVar

from textual import constants
from textual.app import App
from textual.driver import Driver

POLL_S = 0.1
"""How often the thread looks while keys are coming: Textual's own interval."""
QUIET_S = 1.0
"""Keyboard silence after which the thread stops polling and blocks."""


class WakingEvent(threading.Event):
    """An Event whose ``set`` also writes a byte to a pipe, waking a thread blocked in ``select`` on it."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self.wake_fd = wake_fd

    def set(self) -> None:
        super().set()
        with contextlib.suppress(OSError):  # the pipe is full (already woken) or closed (the driver is gone)
            os.write(self.wake_fd, b"\0")


def quiet_wait(last_input: float, now: float) -> float | None:
    """How long the thread may wait for input: the poll interval while keys came within ``QUIET_S``
    (a lone Esc's timeout is checked at each poll), else as long as it takes (None)."""
    return POLL_S if now - last_input < max(QUIET_S, 2 * constants.ESCAPE_DELAY) else None


def driver_class(default: type[Driver]) -> type[Driver]:
    """The quiet driver where Textual would use its Linux driver; any other (Windows, the web, headless) as is."""
    if sys.platform == "win32":
        return default
    from textual.drivers.linux_driver import LinuxDriver

    if default is not LinuxDriver:
        return default
    return _quiet_linux_driver()


@functools.cache
def _quiet_linux_driver() -> type[Driver]:
    from textual._loop import loop_last
    from textual._parser import ParseError
    from textual._xterm_parser import XTermParser
    from textual.drivers.linux_driver import LinuxDriver

    class QuietLinuxDriver(LinuxDriver):
        """LinuxDriver whose input thread blocks while the keyboard is quiet (see the module's docstring)."""

        def __init__(self, app: App[Any], **kwargs: Any) -> None:
            super().__init__(app, **kwargs)
            self._wake_read, self._wake_write = os.pipe()
            os.set_blocking(self._wake_read, False)
            os.set_blocking(self._wake_write, False)
            self.exit_event = WakingEvent(self._wake_write)

        def close(self) -> None:
            super().close()
            for fd in (self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)

        def _drain_wake(self) -> None:
            try:
                while os.read(self._wake_read, 512):
                    pass
            except OSError:  # nothing left (EAGAIN)
                pass

        def run_input_thread(self) -> None:
            """Textual's input loop, waiting on the terminal and the wake pipe with ``quiet_wait``."""
            self._drain_wake()  # a stop before this start (suspend and resume) left its byte
            selector = selectors.SelectSelector()
            selector.register(self.fileno, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            parser = XTermParser(self._debug)
            decode = getincrementaldecoder("utf-8")().decode
            last_input = time.monotonic()

            def process(events: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
                nonlocal last_input
                for last, (key, mask) in loop_last(events):
                    if key.fd == self._wake_read:
                        self._drain_wake()
                        continue
                    if mask & selectors.EVENT_READ:
                        last_input = time.monotonic()
                        data = decode(os.read(self.fileno, 1024 * 4), final=final and last)
                        if not data:
                            break
                        for event in parser.feed(data):
                            self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)

            try:
                while not self.exit_event.is_set():
                    process(selector.select(quiet_wait(last_input, time.monotonic())))
                selector.unregister(self.fileno)
                process(selector.select(POLL_S), final=True)
            finally:
                selector.close()
                try:
                    for _ in parser.feed(""):
                        pass
                except (EOFError, ParseError):
                    pass

    return QuietLinuxDriver


ReturnT = TypeVar("ReturnT")


class QuietApp(App[ReturnT]):
    """A Textual App on the quiet driver where a terminal's would be Textual's Linux driver."""

    def get_driver_class(self) -> type[Driver]:
        return driver_class(super().get_driver_class())
