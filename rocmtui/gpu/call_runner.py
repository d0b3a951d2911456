"""Runs backend calls on a helper thread with a timeout, so a hung GPU library cannot stall the sampler.

A call that times out abandons its thread (a daemon: it cannot block interpreter exit) and
the next call starts a fresh one. At most ``max_stuck`` abandoned threads may still be
stuck at once; beyond that calls are refused (``RunnerSaturated``) until one returns, so a
library that hangs forever costs a bounded number of threads.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

_T = TypeVar("_T")
_Job = tuple[Callable[[], object], "Future[object]"] | None


class CallTimedOut(Exception):
    """The call did not return within its timeout."""


class CallInterrupted(Exception):
    """``interrupt()`` was called while waiting (the sampler is stopping)."""


class RunnerSaturated(Exception):
    """Too many earlier calls are still stuck; not calling the library again yet."""


class CallRunner:
    """One helper thread at a time; ``call`` waits for its result up to a timeout."""

    def __init__(self, name: str = "rocmtui-backend", max_stuck: int = 4) -> None:
        self._name = name
        self._max_stuck = max_stuck
        self._queue: queue.SimpleQueue[_Job] | None = None
        self._stuck: list[threading.Thread] = []
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._waiting: threading.Event | None = None
        self._interrupted = False

    @property
    def stuck(self) -> int:
        """Abandoned threads whose call has not returned yet."""
        self._stuck = [t for t in self._stuck if t.is_alive()]
        return len(self._stuck)

    def call(self, fn: Callable[[], _T], timeout_s: float) -> _T:
        """``fn()`` on the helper thread; its exception is re-raised here.

        Raises CallTimedOut, CallInterrupted or RunnerSaturated instead of waiting longer.
        """
        with self._lock:
            if self._interrupted:
                raise CallInterrupted
            if self.stuck >= self._max_stuck:
                raise RunnerSaturated(f"{self._max_stuck} earlier calls are still stuck")
            jobs = self._ensure_thread()
            future: Future[object] = Future()
            done = self._waiting = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        jobs.put((fn, future))
        deadline = time.monotonic() + timeout_s
        while not future.done():
            remaining = deadline - time.monotonic()
            if self._interrupted:
                raise CallInterrupted
            if remaining <= 0:
                self._abandon()
                raise CallTimedOut(f"timed out after {timeout_s:.1f} s")
            done.wait(remaining)
        return future.result()  # type: ignore[return-value]  # the future holds fn's own result

    def interrupt(self) -> None:
        """Make the current and every later ``call`` raise CallInterrupted at once."""
        with self._lock:
            self._interrupted = True
            if self._waiting is not None:
                self._waiting.set()

    def close(self) -> None:
        """Let the helper thread end after its current job (it is a daemon: nothing waits for it)."""
        with self._lock:
            if self._queue is not None:
                self._queue.put(None)
            self._queue = self._thread = None

    def _ensure_thread(self) -> queue.SimpleQueue[_Job]:
        if self._queue is None or self._thread is None:
            self._queue = queue.SimpleQueue()
            self._thread = threading.Thread(target=_serve, args=(self._queue,), name=self._name, daemon=True)
            self._thread.start()
        return self._queue

    def _abandon(self) -> None:
        with self._lock:
            if self._thread is not None:
                self._stuck.append(self._thread)
            if self._queue is not None:
                self._queue.put(None)  # the stuck thread exits if its call ever returns
            self._queue = self._thread = None


def _serve(jobs: queue.SimpleQueue[_Job]) -> None:
    while (job := jobs.get()) is not None:
        fn, future = job
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(fn())
        except BaseException as err:  # handed to the caller, who turns it into a device error
            future.set_exception(err)
