"""Exponential backoff for one failing device: when to try again and what to show meanwhile."""

from __future__ import annotations

from dataclasses import dataclass

BASE_DELAY_S = 1.0
MAX_DELAY_S = 60.0


@dataclass
class Retry:
    """Failure count and next attempt time of one device (times from ``time.monotonic``)."""

    failures: int = 0
    next_at: float = 0.0
    error: str | None = None
    """The last failure's reason, with when the next attempt is; None while healthy."""

    def ready(self, now: float) -> bool:
        """True when the device may be read (healthy, or its backoff has passed)."""
        return now >= self.next_at

    def failed(self, reason: str, now: float) -> None:
        """Record a failure: wait 1, 2, 4 ... up to 60 s before the next attempt."""
        self.failures += 1
        delay = min(BASE_DELAY_S * 2 ** (self.failures - 1), MAX_DELAY_S)
        self.next_at = now + delay
        self.error = f"{reason} (retrying in {delay:g} s)"

    def succeeded(self) -> None:
        """Back to healthy."""
        self.failures = 0
        self.next_at = 0.0
        self.error = None
