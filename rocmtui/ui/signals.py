"""SIGTERM and SIGHUP (a closed terminal, a dropped SSH link) routed to the app while it runs, then restored."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from rocmtui.gpu.stdio import redirect_to_devnull

HANGUP = getattr(signal, "SIGHUP", -1)
HANDLED = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


@contextmanager
def stop_on_signals(on_signal: Callable[[int], None]) -> Iterator[None]:
    """Route SIGTERM/SIGHUP to ``on_signal(signum)`` while the block runs; put the old handlers back after.

    ``on_signal`` runs on the main thread between bytecodes: it must only set flags and schedule
    work thread-safely (``loop.call_soon_threadsafe``), never draw.
    """

    def handler(signum: int, frame: FrameType | None) -> None:
        on_signal(signum)

    previous = {sig: signal.signal(sig, handler) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def detach_from_terminal() -> None:
    """After a hangup, point stdin/stdout/stderr at /dev/null.

    The terminal is gone: without this, the UI's next write fails (EIO), Textual's output thread
    dies, and its shutdown then waits forever on a full output queue.
    """
    redirect_to_devnull()


def exit_watchdog(code: int, delay_s: float = 10.0) -> None:
    """End the process with ``code`` if a clean exit has not happened ``delay_s`` from now.

    Only used after a hangup, once the run has stopped and its checkpoint is written: an exit
    that hangs on a dead terminal must not keep the process alive forever.
    """
    timer = threading.Timer(delay_s, os._exit, args=(code,))
    timer.daemon = True
    timer.start()
