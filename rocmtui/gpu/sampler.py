"""The Sampler: a daemon thread that reads every GPU and the host each interval into a bounded history.

Every backend call runs on a helper thread (``call_runner.CallRunner``) with a timeout: a call that
raises or hangs marks only that device's GpuSample.error, the device is retried with
exponential backoff (1 s doubling to 60 s), and the other devices and the host keep
updating. One tick spends at most ``call_timeout_s`` waiting on the backend in total;
devices left unread when that budget runs out show "not read" and are tried next tick.

Process lists are refreshed at most every ``PROCESS_REFRESH_S`` seconds (each tick at
intervals of 2 s or more, every other tick at the default 1 s) and the last list is
repeated in between: listing processes costs more than reading counters. Where there is no GPU, a sampler
made with ``host_processes`` lists the host's busiest processes at the same pace instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from rocmtui.gpu.backend import GpuBackend, describe_error, release_quietly
from rocmtui.gpu.call_runner import CallInterrupted, CallRunner, CallTimedOut
from rocmtui.gpu.feed import Feed
from rocmtui.gpu.host import HostReader
from rocmtui.gpu.proc_stats import BusiestProcesses
from rocmtui.gpu.retry import Retry
from rocmtui.gpu.sample import BackendStatus, GpuProcess, GpuSample, SampleSet

PROCESS_REFRESH_S = 2.0
DEFAULT_CALL_TIMEOUT_S = 2.0
CLOSE_TIMEOUT_S = 0.5
_T = TypeVar("_T")


class Sampler(Feed):
    """A TelemetrySource over one opened backend (or none: host only). ``start()`` is the caller's."""

    thread_name = "rocmtui-sampler"

    def __init__(
        self,
        backend: GpuBackend | None,
        statuses: tuple[BackendStatus, ...] = (),
        *,
        interval_s: float = 1.0,
        history_len: int = 600,
        host: HostReader | None = None,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        host_processes: int = 0,
    ) -> None:
        """``host_processes``: how many of the host's busiest processes to list where there is no GPU (the
        monitor's table; 0 lists none, as ``--json`` and ``--once`` want)."""
        super().__init__(interval_s, history_len)
        self.backend = backend
        self.statuses = statuses
        self._host = host or HostReader()
        self._call_timeout_s = call_timeout_s
        self._worker = CallRunner()
        count = self._safe_count(backend)
        self._names = [f"GPU {i}" for i in range(count)]
        self._retries = [Retry() for _ in range(count)]
        self._process_retries = [Retry() for _ in range(count)]
        self._processes: list[tuple[GpuProcess, ...]] = [() for _ in range(count)]
        self._next_processes_at = 0.0
        self._busiest = BusiestProcesses(host_processes) if host_processes > 0 and not count else None
        self._host_processes: tuple[GpuProcess, ...] = ()
        self._closed = False
        self._tick_lock = threading.Lock()

    @property
    def backend_name(self) -> str:
        """The GPU backend's name, or ``host`` when there is none."""
        return self.backend.name if self.backend is not None else "host"

    @property
    def host_window_s(self) -> float:
        """Seconds since the host's CPU % was last measured (CPU % over less than 0.05 s is None)."""
        return self._host.cpu_window_s

    def sample_now(self) -> SampleSet:
        """One synchronous tick: read everything, publish, return the SampleSet (used by ``--once``).

        Listeners are called on the caller's thread here, not the sampler's.
        """
        sample_set = self._read_all()
        self._publish(sample_set)
        return sample_set

    def _tick(self) -> None:
        sample_set = self._read_all()
        if not self._stop_event.is_set():  # a tick cut short by stop() is not worth showing
            self._publish(sample_set)

    def read(self) -> SampleSet:
        """One tick's readings, not published: for a feed that keeps the history itself (DetectingSampler)."""
        return self._read_all()

    def _read_all(self) -> SampleSet:
        with self._tick_lock:  # sample_now() from another thread waits for the running tick
            return self._read_all_locked()

    def _read_all_locked(self) -> SampleSet:
        deadline = time.monotonic() + self._call_timeout_s
        gpus = tuple(self._read_gpu(i, deadline) for i in range(len(self._retries)))
        if time.monotonic() >= self._next_processes_at:
            self._next_processes_at = time.monotonic() + PROCESS_REFRESH_S
            for i in range(len(self._processes)):
                self._processes[i] = self._read_processes(i, deadline)
            if self._busiest is not None:
                self._host_processes = self._busiest.read()
        return SampleSet(
            timestamp=time.time(),
            backend=self.backend_name,
            gpus=gpus,
            host=self._host.sample(),
            processes=tuple(p for per_gpu in self._processes for p in per_gpu),
            statuses=self.statuses,
            host_processes=self._host_processes,
        )

    def stop(self) -> None:
        """Stop sampling (promptly, even mid-call on a hung backend) and close the backend."""
        self._stop_event.set()
        self._worker.interrupt()
        super().stop()
        self._close_backend()

    def _read_gpu(self, index: int, deadline: float) -> GpuSample:
        retry = self._retries[index]
        now = time.monotonic()
        if not retry.ready(now):
            return self._error_sample(index, retry.error or "unavailable")
        if now >= deadline:
            return self._error_sample(index, "not read: the backend was slow this tick")
        backend = self.backend
        assert backend is not None  # devices exist only with a backend
        try:
            sample = self._call(lambda: backend.sample(index), deadline)
        except CallInterrupted:
            return self._error_sample(index, "sampler stopping")
        except Exception as err:  # any library failure becomes this device's error, then backoff
            retry.failed(_reason(err), time.monotonic())
            return self._error_sample(index, retry.error or "")
        retry.succeeded()
        self._names[index] = sample.name
        return sample

    def _read_processes(self, index: int, deadline: float) -> tuple[GpuProcess, ...]:
        retry = self._process_retries[index]
        backend = self.backend
        now = time.monotonic()
        if backend is None or now >= deadline or not (retry.ready(now) and self._retries[index].ready(now)):
            return self._processes[index] if now >= deadline else ()
        try:
            processes = self._call(lambda: backend.processes(index), deadline)
        except CallInterrupted:
            return ()
        except Exception as err:  # the process table shows nothing for this GPU until a retry works
            retry.failed(_reason(err), time.monotonic())
            return ()
        retry.succeeded()
        return processes

    def _call(self, fn: Callable[[], _T], deadline: float) -> _T:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CallTimedOut("not read: the backend was slow this tick")
        return self._worker.call(fn, remaining)

    def _error_sample(self, index: int, reason: str) -> GpuSample:
        return GpuSample(index=index, name=self._names[index], timestamp=time.time(), error=reason)

    def _close_backend(self) -> None:
        if self._closed or self.backend is None:
            return
        self._closed = True
        backend = self.backend
        closer = CallRunner(name="rocmtui-backend-close")
        # Closing is best effort at exit: a failing or hung close must not block quitting.
        release_quietly(lambda: closer.call(backend.close, CLOSE_TIMEOUT_S))
        closer.close()
        self._worker.close()

    @staticmethod
    def _safe_count(backend: GpuBackend | None) -> int:
        if backend is None:
            return 0
        try:
            return max(0, int(backend.device_count()))
        except Exception:
            return 0  # the count was read once at detection; a failure here leaves the host panel only


def _reason(err: BaseException) -> str:
    return str(err) if isinstance(err, CallTimedOut) else describe_error(err)
