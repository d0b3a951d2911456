"""The one way a test waits for another thread or process: poll a condition until it holds, with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.pilot import Pilot


def wait_for(
    condition: Callable[[], object], timeout: float = 10.0, what: str = "the condition", poll_s: float = 0.02
) -> None:
    """Return once ``condition()`` is true; fail the test after ``timeout`` seconds, naming ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(poll_s)


async def pilot_wait_for(
    pilot: Pilot[Any], condition: Callable[[], object], timeout: float = 10.0, what: str = "the condition"
) -> None:
    """``wait_for`` inside a Textual app test: the app runs its messages and timers between two looks."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        await pilot.pause(0.02)
