"""SIGTERM and SIGHUP (a closed terminal, a dropped SSH link) stop the run cleanly, then restore."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

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
