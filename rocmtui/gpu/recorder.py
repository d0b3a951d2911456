"""``rocmtui monitor --record FILE``: each SampleSet appended as one JSON line, the format ``--replay`` reads."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TextIO

from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.sample_codec import dumps

log = logging.getLogger(__name__)


class Recorder:
    """A sample listener that writes JSON lines through the one codec; stops (and says why) on a write error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # never blocks: a FIFO without a reader is refused at once (ENXIO); OSError: the caller says it in one line
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        os.set_blocking(fd, True)
        self._handle: TextIO | None = os.fdopen(fd, "a", encoding="utf-8")
        self._lock = threading.Lock()
        self.error: str | None = None
        """Why recording stopped early (a full disk, a removed folder), else None."""
        self.written = 0

    def __call__(self, sample_set: SampleSet) -> None:
        """Append one line; called on the sampler's thread (a line a sample is cheap: no fsync)."""
        with self._lock:
            if self._handle is None:
                return
            try:
                self._handle.write(dumps(sample_set) + "\n")
                self._handle.flush()
                self.written += 1
            except OSError as err:
                self.error = f"recording to {self.path} stopped: {err.strerror or err}"
                log.warning(self.error)
                self._close()

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            try:
                handle.close()
            except OSError as err:
                self.error = self.error or f"recording to {self.path}: {err.strerror or err}"
