"""The one way a test waits for another thread or process: poll a condition until it holds, with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(
    condition: Callable[[], object], timeout: float = 10.0, what: str = "the condition", poll_s: float = 0.02
) -> None:
    """Return once ``condition()`` is true; fail the test after ``timeout`` seconds, naming ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(poll_s)
