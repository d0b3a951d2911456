"""Each host's ``/metrics`` page, fetched concurrently (at most ``MAX_PARALLEL`` at once, a timeout each),
parsed and mapped; a host that does not answer is down with the reason and tried again with backoff."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace

from rocmtui.gpu.cluster.exposition import LabelCache, Sample, parse_page
from rocmtui.gpu.cluster.fetch import Answer, Connection, FetchError
from rocmtui.gpu.cluster.mapping import Names, fold
from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.retry import Retry

MAX_PARALLEL = 64
"""Scrapes in flight at once, at most."""
MAX_PAGE_BYTES = 8 << 20
"""A page larger than this is refused (dcgm-exporter's page for 8 GPUs is about 40 KB)."""
DEFAULT_TIMEOUT_S = 5.0
STOPPING = "not read: stopping"
ACCEPT = "text/plain;version=0.0.4"
"""The classic text format: what every exporter serves and prometheus_client's parser reads."""


@dataclass(frozen=True)
class Target:
    """One exporter to scrape: the address as the user gave it, and the URL it stands for."""

    address: str
    url: str


class Scraper:
    """``round()``: every target scraped once. Thread-safe for one caller at a time."""

    def __init__(
        self,
        targets: Sequence[Target],
        *,
        token: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_parallel: int = MAX_PARALLEL,
    ) -> None:
        self.targets = tuple(targets)
        self.token = token
        self.timeout_s = timeout_s
        self._retries = {t.address: Retry() for t in self.targets}
        self._connections = {t.address: Connection(t.url, token=token, accept=ACCEPT) for t in self.targets}
        """Each host's connection, kept open between rounds: one fetch at a time each (a round asks a host once)."""
        self._names = Names()
        self._labels = LabelCache()
        self._last: dict[str, tuple[bytes, HostReading, Mapping[str, Sample | None]]] = {}
        """Each host's last page and what it read: an exporter that has not sampled since (dcgm-exporter collects
        every 30 s by default) serves the same page, which is then not read again. The page itself is kept, not a
        digest of it: comparing 40 KB is a memcmp that stops at the first change, hashing every page of 256 hosts
        was 13 ms of CPU a round (about 10 MB kept). A page that changed is read with the last one's lines at hand
        (``parse_page``'s ``last``): only its changed lines are parsed."""
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(max_parallel, len(self.targets))),
                                        thread_name_prefix="rocmtui-scrape")  # fmt: skip
        self._lock = threading.Lock()
        self._closing = threading.Event()

    def round(self) -> ClusterRound:
        """Fetch every page on the pool's threads (waiting on the network), and read each on this thread as it
        comes (the reading is Python work, which threads would only take turns at: measured, 0.47 s of CPU a
        round of 256 hosts read on the pool, 0.26 s here)."""
        with self._lock:
            futures = {self._pool.submit(self._fetch, target): i for i, target in enumerate(self.targets)}
            hosts: list[HostReading | None] = [None] * len(self.targets)
            for future in as_completed(futures):
                i = futures[future]
                hosts[i] = self._read(self.targets[i], future.result())
        return ClusterRound(timestamp=time.time(), source="scrape", hosts=tuple(h for h in hosts if h is not None))

    def close(self) -> None:
        """Fetches not yet started give up (their hosts read as not read, stopping); it returns at once.

        Not the pool's own ``cancel_futures``: a future it cancels never wakes ``as_completed``."""
        self._closing.set()
        self._pool.shutdown(wait=False)

    def _fetch(self, target: Target) -> Answer | str:
        """The page, or why there is none (the host is then in backoff)."""
        if self._closing.is_set():
            return STOPPING
        retry = self._retries[target.address]
        if not retry.ready(time.monotonic()):
            return retry.error or ""
        try:
            answer = self._connections[target.address].get(timeout_s=self.timeout_s, max_bytes=MAX_PAGE_BYTES)
        except FetchError as err:
            retry.failed(str(err), time.monotonic())
            return retry.error or ""
        retry.succeeded()
        return answer

    def _read(self, target: Target, got: Answer | str) -> HostReading:
        now = time.time()
        if isinstance(got, str):
            return HostReading(target.address, up=False, timestamp=now, error=got)
        last = self._last.get(target.address)
        if last is not None and last[0] == got.body:
            return replace(last[1], timestamp=now, latency_s=got.seconds)
        reading, lines = self._parse(target, got, now, last[2] if last is not None else None)
        self._last[target.address] = (got.body, reading, lines)
        return reading

    def _parse(
        self, target: Target, got: Answer, now: float, last: Mapping[str, Sample | None] | None
    ) -> tuple[HostReading, Mapping[str, Sample | None]]:
        try:
            text = got.body.decode("utf-8", errors="replace")
            page = parse_page(text, self._names.wanted, self._labels, last)
            found = fold(page.samples, now, self._names)
        except Exception as err:  # a page no reader foresaw: this host's problem, never the round's
            reason = f"page not readable: {type(err).__name__}"
            return HostReading(target.address, up=False, timestamp=now, error=reason, latency_s=got.seconds), {}
        note = f"{page.malformed} malformed lines skipped" if page.malformed else None
        if page.cut:
            note = "page cut short: too many samples"
        reading = HostReading(
            target.address,
            up=True,
            timestamp=now,
            gpus=found.gpus,
            host=found.host,
            hostname=found.hostname,
            exporter=found.exporter,
            error=note,
            malformed=page.malformed,
            latency_s=got.seconds,
        )
        return reading, page.lines
