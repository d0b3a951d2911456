"""ReplaySource: a TelemetrySource that plays recorded SampleSets (for tests, demos and screenshots).

Signature::

    ReplaySource(samples: Sequence[SampleSet], *, interval_s: float = 1.0,
                 history_len: int = 600, loop: bool = False)
    ReplaySource.from_jsonl(path: str | Path, **same_keywords) -> ReplaySource
        # a file written by ``rocmtui monitor --json``; CodecError (a ValueError) names the bad line and field
    source.step() -> SampleSet | None
        # deterministic: publish the next recorded sample now (history + listeners, on the
        # caller's thread); None when the recording is exhausted (never when loop=True)
    source.start() / source.stop()
        # optional timed playback: a daemon thread calls step() every interval_s
    source.interval_s, source.subscribe(listener), source.history(), source.latest
    source.remaining -> int   # samples not yet played (loop=False)
    source.samples -> tuple[SampleSet, ...]   # the whole recording
    source.span() -> (first, last) | None      # the recording's first and last sample times

    ManualReplay(...same arguments)   # played only by step(): start() spawns no thread (tests, screenshots)
    recorded_interval(samples) -> float   # the median spacing of a recording (``monitor --replay --speed``)

Samples are published as recorded (timestamps unchanged), so pictures made from a replay are
those of the real hardware that was recorded. A looping replay shifts each later pass by the
recording's length, so time keeps moving forward (history graphs need that).
"""

from __future__ import annotations

import io
import itertools
import os
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from rocmtui.base.files import UnsafeFileError, open_regular
from rocmtui.codec import CodecError
from rocmtui.gpu.feed import Feed
from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.sample_codec import loads


class ReplaySource(Feed):
    """Plays a fixed list of SampleSets; see the module docstring for the whole interface."""

    thread_name = "rocmtui-replay"

    def __init__(
        self, samples: Sequence[SampleSet], *, interval_s: float = 1.0, history_len: int = 600, loop: bool = False
    ) -> None:
        super().__init__(interval_s, history_len)
        self._samples = tuple(samples)
        self._loop = loop
        self._position = 0
        self._step_lock = threading.Lock()
        self._pass_s = (
            self._samples[-1].timestamp - self._samples[0].timestamp + recorded_interval(self._samples)
            if self._samples
            else 0.0
        )
        """How far each later pass of a loop is shifted in time."""

    @classmethod
    def from_jsonl(
        cls, path: str | Path, *, interval_s: float = 1.0, history_len: int = 600, loop: bool = False
    ) -> ReplaySource:
        """Load a ``monitor --json`` recording; blank lines are skipped, and so is a torn last line (a recorder
        killed mid-write): what is whole plays. A regular file only, at most ``MAX_RECORDING_BYTES``, lines of
        at most ``MAX_LINE_BYTES``: ValueError (one line) otherwise, and a FIFO or a device never blocks."""
        samples: list[SampleSet] = []
        read = 0
        with open_recording(Path(path)) as handle:
            for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), start=1):
                read += len(line)
                if read > MAX_RECORDING_BYTES:  # a file that grows as it is read
                    raise CodecError(f"{path}: over the cap of {_mib(MAX_RECORDING_BYTES)}")
                if len(line) > MAX_LINE_BYTES:
                    raise CodecError(f"{path}:{number}: a line longer than {MAX_LINE_BYTES // 1024} KiB")
                if not line.strip():
                    continue
                try:
                    samples.append(loads(line))
                except CodecError as err:
                    if not line.endswith(b"\n") and not handle.peek(1):
                        break  # the last line, torn: the recording up to it plays
                    raise CodecError(f"{path}:{number}: {err}") from None
        return cls(samples, interval_s=interval_s, history_len=history_len, loop=loop)

    @property
    def samples(self) -> tuple[SampleSet, ...]:
        """The whole recording, in order (whether played yet or not)."""
        return self._samples

    def span(self) -> tuple[float, float] | None:
        """The recording's first and last sample times, as recorded (a loop's later passes are shifted, the
        recording is not)."""
        return (self._samples[0].timestamp, self._samples[-1].timestamp) if self._samples else None

    @property
    def remaining(self) -> int:
        """Samples not yet played (always the full length when looping)."""
        return len(self._samples) if self._loop else len(self._samples) - self._position

    def step(self) -> SampleSet | None:
        """Publish the next recorded sample now; None when there is none left."""
        with self._step_lock:
            if not self._samples or (self._position >= len(self._samples) and not self._loop):
                return None
            passes, position = divmod(self._position, len(self._samples))
            sample = self._samples[position]
            self._position += 1
        if passes:
            sample = shifted(sample, passes * self._pass_s)
        self._publish(sample)
        return sample

    def _tick(self) -> None:
        if self.step() is None:
            self._stop_event.set()  # recording finished: the thread ends, the history stays


MAX_RECORDING_BYTES = 256 * 1024**2
"""The largest recording replayed (a day of one 8-GPU sample a second is about 170 MB)."""
MAX_LINE_BYTES = 1024**2
"""The longest line: one sample of many GPUs and processes is a few KB."""


def open_recording(path: Path) -> io.BufferedReader:
    """``path`` opened for reading if it is a regular file within the size cap; OSError, UnsafeFileError or
    ValueError in one line otherwise. Opened without blocking, so a FIFO or a device is refused at once; a link
    the user made to their own recording is followed."""
    try:
        fd = open_regular(path, follow_links=True)
    except UnsafeFileError as err:
        raise ValueError(f"{err} (a recording is a file written by --record)") from None
    size = os.fstat(fd).st_size
    if size > MAX_RECORDING_BYTES:
        os.close(fd)
        raise ValueError(f"{path}: {size / 1024**2:.0f} MiB, over the cap of {_mib(MAX_RECORDING_BYTES)}")
    return os.fdopen(fd, "rb")


def _mib(size: int) -> str:
    return f"{size // 1024**2} MiB"


def load_replay(path: Path, speed: float = 1.0) -> ReplaySource:
    """``monitor --replay FILE --speed X``: the recording looped at its own pace times ``speed``.
    OSError when the file cannot be read, CodecError (a ValueError) naming a bad line, ValueError when empty."""
    source = ReplaySource.from_jsonl(path, loop=True)
    if not source.samples:
        raise ValueError(f"{path}: no samples in this recording")
    source.interval_s = recorded_interval(source.samples) / speed
    return source


def recorded_interval(samples: Sequence[SampleSet]) -> float:
    """The median time between a recording's samples; 1 s when it has fewer than two."""
    gaps = [b.timestamp - a.timestamp for a, b in itertools.pairwise(samples)]
    positive = [gap for gap in gaps if gap > 0]
    import statistics  # here, not at the top: the monitor's first frame does not need it

    return statistics.median(positive) if positive else 1.0


def shifted(sample: SampleSet, seconds: float) -> SampleSet:
    """``sample`` with every timestamp moved ``seconds`` later."""
    return replace(
        sample,
        timestamp=sample.timestamp + seconds,
        gpus=tuple(replace(gpu, timestamp=gpu.timestamp + seconds) for gpu in sample.gpus),
        host=replace(sample.host, timestamp=sample.host.timestamp + seconds),
    )


class ManualReplay(ReplaySource):
    """A ReplaySource played only by the caller's ``step()``: ``start`` spawns no thread, so a test or a
    screenshot shows exactly the samples played. ``stopped`` tells whether its viewer stopped it."""

    thread_name = "rocmtui-manual-replay"

    def start(self) -> None:
        return None
