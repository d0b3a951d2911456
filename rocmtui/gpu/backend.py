"""The GpuBackend protocol every telemetry backend implements, and the error that says one cannot run."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Protocol

from rocmtui.gpu.sample import GpuProcess, GpuSample

UNKNOWN_GPU = -1
"""``GpuProcess.gpu_index`` when the library lists a process without saying which GPU it uses (pyrsmi)."""


class BackendUnavailable(Exception):
    """A backend cannot run on this machine; ``str(err)`` is the one-line reason shown to the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GpuBackend(Protocol):
    """One telemetry library, opened. Methods may raise or hang: the sampler guards every call."""

    @property
    def name(self) -> str:
        """Short backend name: ``rocm``, ``sysfs`` or ``nvml``."""
        ...

    def device_count(self) -> int:
        """GPUs this backend sees (fixed when it was opened)."""
        ...

    def sample(self, index: int) -> GpuSample:
        """Read GPU ``index`` now; fields the hardware cannot report are None."""
        ...

    def processes(self, index: int) -> tuple[GpuProcess, ...]:
        """Processes using GPU ``index``; empty when the backend cannot list them."""
        ...

    def close(self) -> None:
        """Release the library (idempotent)."""
        ...


def describe_error(err: BaseException) -> str:
    """One line for an exception from a vendor library: its message, or its type when it has none."""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def release_quietly(release: Callable[[], object]) -> None:
    """Call a shutdown/close function whose failure the user could do nothing about.

    Used where a backend is being given up anyway (it failed to open, or the app is
    quitting): what the user sees is the reason it was given up, not a second error.
    """
    with contextlib.suppress(Exception):
        release()
