"""TailSource: a TelemetrySource over sample lines that something else appends (a run folder's ``gpu.jsonl``).

It publishes what was recorded, as recorded: a viewer that attaches to a run later sees the GPU
history of the whole run, then each new sample as the trainer records it. Where the lines come from
is the caller's (``rocmtui.run.samples.SampleTail``): this layer knows samples, not run folders.
"""

from __future__ import annotations

from collections.abc import Callable

from rocmtui.gpu.feed import Feed
from rocmtui.gpu.sample_codec import loads


class TailSource(Feed):
    """Polls ``read_lines`` every interval; each new, readable, newer-than-last line is published."""

    thread_name = "rocmtui-tail-samples"

    def __init__(
        self, read_lines: Callable[[], list[bytes]], *, interval_s: float = 0.5, history_len: int = 600
    ) -> None:
        super().__init__(interval_s, history_len)
        self._read_lines = read_lines
        self._last_timestamp = float("-inf")
        self.skipped = 0
        """Lines that were not samples this version can read."""

    def catch_up(self) -> int:
        """Publish everything recorded so far now, on the caller's thread; returns how many samples."""
        return self._drain()

    def _tick(self) -> None:
        self._drain()

    def _drain(self) -> int:
        published = 0
        for raw in self._read_lines():
            try:
                sample = loads(raw.decode(errors="replace"))
            except ValueError:
                self.skipped += 1
                continue
            if sample.timestamp <= self._last_timestamp:  # a rotated file read again
                continue
            self._last_timestamp = sample.timestamp
            self._publish(sample)
            published += 1
        return published
