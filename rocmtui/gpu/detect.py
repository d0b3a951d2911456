"""Which telemetry backend works here: ``auto`` tries rocm, sysfs, nvml in turn; ``--backend`` forces one.

The sampler and the call runner are imported where they are used, so that ``rocmtui monitor`` can import
this module before its first frame without loading psutil.

Every attempt is recorded as a BackendStatus (the panel's and doctor's "unavailable because").
Opening runs under a timeout too, so a wedged driver cannot hang start-up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from rocmtui.config import MonitorConfig
from rocmtui.gpu.backend import BackendUnavailable, GpuBackend, describe_error, release_quietly
from rocmtui.gpu.feed import Feed
from rocmtui.gpu.sample import BackendStatus

if TYPE_CHECKING:
    from rocmtui.gpu.sampler import Sampler

AUTO_ORDER: tuple[str, ...] = ("rocm", "sysfs", "nvml")
OPEN_TIMEOUT_S = 15.0

Detected = tuple[GpuBackend | None, tuple[BackendStatus, ...]]
"""What detection finds: the backend (None: host only) and every backend's status."""


def _open_rocm(config: MonitorConfig) -> GpuBackend:
    from rocmtui.gpu import rocm

    return rocm.open_backend(config)


def _open_sysfs(config: MonitorConfig) -> GpuBackend:
    from rocmtui.gpu import sysfs

    return sysfs.open_backend(config)


def _open_nvml(config: MonitorConfig) -> GpuBackend:
    from rocmtui.gpu import nvml

    return nvml.open_backend(config)


OPENERS: dict[str, Callable[[MonitorConfig], GpuBackend]] = {
    "rocm": _open_rocm,
    "sysfs": _open_sysfs,
    "nvml": _open_nvml,
}
"""Backend name -> opener (imports its vendor library only when called). Tests may replace entries."""


def probe(name: str, config: MonitorConfig) -> tuple[GpuBackend | None, BackendStatus]:
    """Open backend ``name``; (backend, available status) or (None, the reason it cannot run)."""
    from rocmtui.gpu.call_runner import CallRunner

    worker = CallRunner(name=f"rocmtui-open-{name}")
    opening = _Opening(lambda: OPENERS[name](config))
    try:
        backend = worker.call(opening.open, OPEN_TIMEOUT_S)
    except BackendUnavailable as err:
        return None, BackendStatus(name, False, err.reason)
    except Exception as err:  # an unexpected library failure (or the timeout) is a reason, not a crash
        opening.give_up()
        return None, BackendStatus(name, False, f"failed to open: {describe_error(err)}")
    finally:
        worker.close()
    try:
        count = backend.device_count()
    except Exception as err:  # same: the status says why
        release_quietly(backend.close)
        return None, BackendStatus(name, False, f"cannot count devices: {describe_error(err)}")
    if count < 1:
        release_quietly(backend.close)
        return None, BackendStatus(name, False, "no devices")
    return backend, BackendStatus(name, True, f"{count} GPU{'s' if count != 1 else ''}")


class _Opening:
    """An open that may finish after its caller gave up waiting: the backend it returns then is closed."""

    def __init__(self, opener: Callable[[], GpuBackend]) -> None:
        self._opener = opener
        self._lock = threading.Lock()
        self._abandoned = False
        self._opened: GpuBackend | None = None

    def open(self) -> GpuBackend:
        backend = self._opener()
        with self._lock:
            if self._abandoned:
                release_quietly(backend.close)  # nobody is waiting for it any more
                raise BackendUnavailable("opened after the caller gave up")
            self._opened = backend
        return backend

    def give_up(self) -> None:
        """Called once the caller stops waiting; closes a backend that was opened in the meantime."""
        with self._lock:
            self._abandoned = True
            late, self._opened = self._opened, None
        if late is not None:
            release_quietly(late.close)


def detect(config: MonitorConfig) -> tuple[GpuBackend | None, tuple[BackendStatus, ...]]:
    """The first backend with at least one GPU, and the status of every backend tried.

    ``backend == "host"`` tries none. A forced backend that fails gives (None, its reason).
    """
    if config.backend == "host":
        return None, ()
    names = AUTO_ORDER if config.backend == "auto" else (config.backend,)
    statuses: list[BackendStatus] = []
    for name in names:
        if name not in OPENERS:
            statuses.append(BackendStatus(name, False, "unknown backend"))
            continue
        backend, status = probe(name, config)
        statuses.append(status)
        if backend is not None:
            return backend, tuple(statuses)
    return None, tuple(statuses)


def open_sampler(config: MonitorConfig, *, host_processes: int = 0) -> Sampler:
    """A Sampler over the detected backend (host only when none works); not started: call ``start()``.
    ``host_processes``: how many of the host's busiest processes it lists where there is no GPU."""
    from rocmtui.gpu.sampler import Sampler

    backend, statuses = detect(config)
    return Sampler(
        backend, statuses, interval_s=config.interval_s, history_len=config.history_len, host_processes=host_processes
    )


class DetectingSampler(Feed):
    """A Sampler that detects its backend on its own thread, at its first tick.

    ``rocmtui monitor`` paints its first frame before any vendor library is loaded or initialised
    (NVML's init, a ROCm import, a sysfs walk: 0.1 s on a GPU-less VM, more on a GPU host); the
    readings fill in when the first sample arrives. Same contract as a Sampler: history, listeners
    and the interval are this feed's; the detected Sampler only reads.
    """

    thread_name = "rocmtui-sampler"

    def __init__(
        self,
        config: MonitorConfig,
        *,
        detector: Callable[[MonitorConfig], Detected] | None = None,
        host_processes: int = 0,
    ) -> None:
        """``host_processes``: the Sampler's (the busiest host processes it lists where there is no GPU)."""
        super().__init__(config.interval_s, config.history_len)
        self._host_processes = host_processes
        self._config = config
        self._detector = detector or detect
        self._sampler: Sampler | None = None
        self._sampler_lock = threading.Lock()

    @property
    def sampler(self) -> Sampler | None:
        """The Sampler over the detected backend; None until the first tick has detected it."""
        return self._sampler

    def _tick(self) -> None:
        sampler = self._sampler
        if sampler is None:
            from rocmtui.gpu.sampler import Sampler  # psutil and the call runner: after the first frame

            backend, statuses = self._detector(self._config)
            sampler = Sampler(
                backend,
                statuses,
                interval_s=self._config.interval_s,
                history_len=1,
                host_processes=self._host_processes,
            )
            with self._sampler_lock:
                if self.stopped:  # stopped while detecting: nobody will read this backend
                    sampler.stop()
                    return
                self._sampler = sampler
        sample_set = sampler.read()
        if not self.stopped:  # a tick cut short by stop() is not worth showing
            self._publish(sample_set)

    def stop(self) -> None:
        """Stop ticking and close the detected backend (promptly, even mid-call on a hung one).

        While detection still runs (a wedged driver can hold it for ``OPEN_TIMEOUT_S`` per backend), stop
        does not wait for it: the thread is a daemon and closes what it opens once it sees the stop.
        """
        with self._sampler_lock:
            self._stop_event.set()
            self._wake.set()
            sampler = self._sampler
        if sampler is not None:
            sampler.stop()
            super().stop()
