"""How far a run source's thread may run ahead of the UI: events posted and not yet applied.

A viewer that opens a long run reads its history far faster than the UI folds it; unchecked, every decoded
event would wait in the message queue at once (hundreds of MB for ten million points). ``Backlog`` makes the
source wait once ``high`` events are unapplied, until the UI has brought them down to ``low``: the two threads
then take turns a batch at a time, not an event at a time, so neither keeps taking the interpreter from the
other. A live run's events never come that fast, so its source never waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

WAIT_S = 0.1
"""How often a waiting source asks whether to give up (the app going away)."""


class Backlog:
    def __init__(self, high: int, low: int = 0) -> None:
        if not 0 <= low < high:
            raise ValueError(f"need 0 <= low < high, not low={low}, high={high}")
        self.high, self.low = high, low
        self.unapplied = 0
        self._changed = threading.Condition()
        self._draining = False

    def add(self, give_up: Callable[[], bool]) -> None:
        """One more event posted (call before posting it); waits first while the backlog is full, or until
        ``give_up()`` says the app is going away."""
        with self._changed:
            if self.unapplied >= self.high:
                self._draining = True
            while self._draining and not give_up():
                self._changed.wait(WAIT_S)
            self._draining = False
            self.unapplied += 1

    def applied(self) -> None:
        """One event applied by the UI."""
        with self._changed:
            self.unapplied = max(0, self.unapplied - 1)
            if self._draining and self.unapplied <= self.low:
                self._draining = False
                self._changed.notify_all()
