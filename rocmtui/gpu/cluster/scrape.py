"""Each host's ``/metrics`` page, fetched concurrently from one thread (at most ``MAX_PARALLEL`` at once, a timeout
each), parsed and mapped; a host that does not answer is down with the reason and tried again with backoff."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rocmtui.gpu.cluster.exposition import LabelCache, Page, read_page
from rocmtui.gpu.cluster.fetch import Connection, Fetcher, FetchError, Reply
from rocmtui.gpu.cluster.mapping import Folded, Names, fold_again
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
        self._last: dict[str, tuple[bytes, HostReading, Page | None, Folded | None]] = {}
        """Each host's last page and what it read: an exporter that has not sampled since (dcgm-exporter collects
        every 30 s by default) serves the same page, which is then not read again. The page itself is kept as it
        arrived (a chunked one with its framing), not a digest of it: comparing 40 KB is a memcmp that stops at
        the first change, hashing every page of 256 hosts was 13 ms of CPU a round (about 10 MB kept). A page
        that changed is read with the last one at hand (``read_page``): only its changed lines are decoded and
        read; and folded with the last fold at hand (``fold_again``): only the samples of those lines are looked
        at, and only the GPUs whose values changed are made again."""
        self._fetcher = Fetcher(timeout_s=timeout_s, max_bytes=MAX_PAGE_BYTES, max_parallel=max_parallel)
        self._lock = threading.Lock()
        self._closing = threading.Event()

    def round(self) -> ClusterRound:
        """Fetch every page from this thread, without blocking on any (``Fetcher``), then read them one after
        another: read as each came, between waits for the next, the same pages took about a third more CPU (on
        the 2-core CPU box, 256 hosts, each page changed)."""
        with self._lock:
            now = time.time()
            hosts: list[HostReading | None] = [None] * len(self.targets)
            jobs = []
            pages: list[tuple[int, bytes, tuple[tuple[int, int], ...] | None, float, float]] = []
            """(host, its answer's body as it came, its chunks, when, seconds it took)"""
            for i, target in enumerate(self.targets):
                retry = self._retries[target.address]
                if retry.ready(time.monotonic()):
                    jobs.append((i, self._connections[target.address]))
                else:
                    hosts[i] = HostReading(target.address, up=False, timestamp=now, error=retry.error or "")

            def answered(i: int, got: Reply | FetchError) -> None:
                target = self.targets[i]
                retry = self._retries[target.address]
                if isinstance(got, FetchError):
                    retry.failed(str(got), time.monotonic())
                    hosts[i] = HostReading(target.address, up=False, timestamp=time.time(), error=retry.error or "")
                else:
                    retry.succeeded()
                    pages.append((i, bytes(got.raw), got.spans, time.time(), got.seconds))  # a copy: see Reply

            for i in self._fetcher.run(jobs, answered, self._closing):
                hosts[i] = HostReading(self.targets[i].address, up=False, timestamp=time.time(), error=STOPPING)
            for i, raw, spans, when, seconds in pages:
                hosts[i] = self._read(self.targets[i], raw, spans, when, seconds)
            if self._closing.is_set():
                for connection in self._connections.values():
                    connection.close()
                self._fetcher.close()
        return ClusterRound(timestamp=time.time(), source="scrape", hosts=tuple(h for h in hosts if h is not None))

    def close(self) -> None:
        """Fetches not yet started give up (their hosts read as not read, stopping); it returns at once."""
        self._closing.set()

    def _read(
        self, target: Target, raw: bytes, spans: tuple[tuple[int, int], ...] | None, now: float, seconds: float
    ) -> HostReading:
        """The host's reading from its answer ``raw`` (a copy of the buffer's bytes, compared with the last one as
        bytes: comparing the buffer's view itself went a byte at a time), answered at ``now``."""
        last = self._last.get(target.address)
        if last is not None and last[0] == raw:
            held = last[1]
            return HostReading(held.target, held.up, now, held.gpus, held.host, held.hostname, held.exporter,
                               held.error, held.malformed, seconds)  # fmt: skip
        reading, page, folded = self._parse(target, Reply(memoryview(raw), spans, seconds), now, last, raw)
        self._last[target.address] = (raw, reading, page, folded)
        return reading

    def _parse(
        self,
        target: Target,
        got: Reply,
        now: float,
        last: tuple[bytes, HostReading, Page | None, Folded | None] | None,
        raw: bytes,
    ) -> tuple[HostReading, Page | None, Folded | None]:
        try:
            body = raw if got.spans is None else got.body()
            page, changed = read_page(body, self._names.wanted, self._labels, last[2] if last is not None else None)
            held = last[3] if last is not None else None
            found, folded = fold_again(page.samples, now, self._names, held, changed)
        except Exception as err:  # a page no reader foresaw: this host's problem, never the round's
            reason = f"page not readable: {type(err).__name__}"
            down = HostReading(target.address, up=False, timestamp=now, error=reason, latency_s=got.seconds)
            return down, None, None
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
        return reading, page, folded
