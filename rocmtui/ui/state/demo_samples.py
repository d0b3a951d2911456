"""PacedSamples: a recorded run's GPU samples, released on the demo's ``Pace`` (``rocmtui demo``).

The samples are published as recorded (the real hardware's readings); those taken before the pace's
origin are history at the first frame. Each later pass of a ``--loop`` shifts the timestamps by the
recording's length, so time keeps moving forward for the history graphs.
"""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.gpu.feed import Feed
from rocmtui.gpu.replay import recorded_interval, shifted
from rocmtui.gpu.sample import SampleSet
from rocmtui.run.replay_pace import Pace

TICK_S = 0.1


class PacedSamples(Feed):
    """Publishes each recorded SampleSet once the pace reaches its timestamp."""

    thread_name = "rocmtui-demo-samples"

    def __init__(self, samples: Sequence[SampleSet], pace: Pace, *, history_len: int = 3600) -> None:
        super().__init__(TICK_S, history_len)
        self._samples = tuple(samples)
        self._pace = pace
        self._index = 0
        self._pass = pace.passes
        self._pass_s = (
            self._samples[-1].timestamp - self._samples[0].timestamp + recorded_interval(self._samples)
            if self._samples
            else 0.0
        )

    def catch_up(self) -> int:
        """Publish every sample that is due now, on the caller's thread; returns how many."""
        if self._pace.passes != self._pass:
            self._pass, self._index = self._pace.passes, 0
        now = self._pace.now()
        published = 0
        while self._index < len(self._samples) and self._samples[self._index].timestamp <= now:
            sample = self._samples[self._index]
            self._index += 1
            self._publish(shifted(sample, self._pass * self._pass_s) if self._pass else sample)
            published += 1
        return published

    def _tick(self) -> None:
        self.catch_up()
