"""ClusterSource: rounds over the cluster every interval on a daemon thread, with a bounded history.

It is a ``PacedFeed`` of ClusterRounds: the same interval, listeners and thread as the one-machine sampler.
"""

from __future__ import annotations

from typing import Protocol

from rocmtui.gpu.cluster.reading import ClusterRound
from rocmtui.gpu.feed import PacedFeed

DEFAULT_INTERVAL_S = 2.0
HISTORY = 30
"""Rounds kept (a host opened with Enter starts its graphs from them): 256 hosts of 8 GPUs are 2,048 samples a
round, so a long history would be most of the viewer's memory."""


class RoundReader(Protocol):
    """A Scraper or a PrometheusReader."""

    def round(self) -> ClusterRound: ...

    def close(self) -> None: ...


class ClusterSource(PacedFeed[ClusterRound]):
    """Publishes one ClusterRound per interval; ``round_now()`` reads one on the caller's thread."""

    thread_name = "rocmtui-cluster"

    def __init__(
        self, reader: RoundReader, *, interval_s: float = DEFAULT_INTERVAL_S, history_len: int = HISTORY
    ) -> None:
        super().__init__(interval_s, history_len)
        self.reader = reader

    def round_now(self) -> ClusterRound:
        """One round, published and returned (``--once``, ``--json``)."""
        cluster = self.reader.round()
        self._publish(cluster)
        return cluster

    def _tick(self) -> None:
        cluster = self.reader.round()
        if not self._stop_event.is_set():
            self._publish(cluster)

    def stop(self) -> None:
        """Stop: the round under way gives up its fetches not yet started (those running end within their
        timeout), then the thread is joined."""
        self._stop_event.set()
        self.reader.close()
        super().stop()
