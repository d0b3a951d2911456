"""Every GPU a Prometheus server knows, through its HTTP API (``/api/v1/query``), one instant query a round.

The query asks for every metric of the mapping table (AMD's under any configured prefix) and ``up``; the
series are grouped by their ``instance`` label (the address Prometheus scrapes), each group mapped as one
host's page would be. An instance whose ``up`` is 0 is shown down; one that is up without GPU metrics (a
node_exporter, Prometheus itself) is left out.

The query goes through the scrapes' own client (``fetch.Connection``): one connection kept open from one round to
the next, the token, TLS, the cap, the timeout and the refusal of redirects as for a page. Each series' labels
arrive as the same JSON text at every round (only its value changes): they are read once and kept by that text
(``_Series.metric`` is left raw), so a series' labels are the same dict from one round to the next, and an
instance's GPUs are folded with its last fold at hand (``fold_again``), as a page's are. 256 hosts of 8 GPUs of
dcgm-exporter are about 22,500 series, a 7 MB answer.
"""

from __future__ import annotations

import re
import threading
import time
import urllib.parse

import msgspec

from rocmtui.codec import CodecError, decode_json
from rocmtui.gpu.cluster.exposition import Sample
from rocmtui.gpu.cluster.fetch import Connection, Fetcher, FetchError, Reply
from rocmtui.gpu.cluster.mapping import TABLE, Folded, Names, fold_again
from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.retry import Retry

MAX_ANSWER_BYTES = 64 << 20
"""A query's answer larger than this is refused (2,048 GPUs with every mapped metric is about 10 MB)."""
DEFAULT_TIMEOUT_S = 10.0
MAX_KEPT_SERIES = 200_000
"""Series whose labels are kept (256 hosts of 8 GPUs: about 22,500); past it, they are read again from nothing."""
STOPPING = "not read: stopping"


class _Series(msgspec.Struct):
    metric: msgspec.Raw
    """The labels as the answer's JSON text (read by ``_labels``, once for each text)."""
    value: tuple[float, str]


_LABELS = msgspec.json.Decoder(dict[str, str])


class _Data(msgspec.Struct):
    resultType: str
    result: list[_Series]


class _Answer(msgspec.Struct):
    status: str
    data: _Data | None = None
    error: str | None = None


def selector() -> str:
    """The PromQL selector for every mapped metric and ``up``."""
    fixed = sorted({row.metric for row in TABLE if not row.exporter.prefixable})
    prefixable = sorted({row.metric for row in TABLE if row.exporter.prefixable})
    names = "|".join([*map(re.escape, fixed), "up", f"(?:[a-zA-Z_:][a-zA-Z0-9_:]*_)?(?:{'|'.join(prefixable)})"])
    return '{__name__=~"' + names.replace("\\", "\\\\") + '"}'


class PrometheusReader:
    """``round()``: one query, every GPU of every instance; the server itself down is one line, retried."""

    def __init__(self, url: str, *, token: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self._query_url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": selector()})
        self._connection = Connection(self._query_url, token=token, accept="application/json")
        self._fetcher = Fetcher(timeout_s=timeout_s, max_bytes=MAX_ANSWER_BYTES, max_parallel=1)
        self._names = Names()
        self._series: dict[bytes, tuple[str, str, dict[str, str]]] = {}
        """A series' labels as JSON text -> its name, its instance and its other labels."""
        self._folded: dict[str, Folded] = {}
        """Each instance's last fold."""
        self._retry = Retry()
        self._lock = threading.Lock()
        self._closing = threading.Event()

    def round(self) -> ClusterRound:
        with self._lock:
            now = time.time()
            if not self._retry.ready(time.monotonic()):
                return self._down(now, self._retry.error or "")
            got: list[tuple[HostReading, ...] | FetchError | CodecError] = []

            def answered(_: int, reply: Reply | FetchError) -> None:
                try:
                    got.append(reply if isinstance(reply, FetchError) else self._read(reply, now))
                except (FetchError, CodecError) as err:
                    got.append(err)

            if self._fetcher.run([(0, self._connection)], answered, self._closing):
                return self._down(now, STOPPING)
            if self._closing.is_set():
                self._connection.close()
                self._fetcher.close()
            result = got[0]
            if isinstance(result, FetchError | CodecError):
                reason = f"Prometheus: {result}" if isinstance(result, CodecError) else str(result)
                self._retry.failed(reason, time.monotonic())
                return self._down(now, self._retry.error or "")
            self._retry.succeeded()
            return ClusterRound(timestamp=now, source="prometheus", hosts=result)

    def close(self) -> None:
        """A query not yet started gives up (the round reads as not read, stopping); it returns at once."""
        self._closing.set()

    def _read(self, reply: Reply, now: float) -> tuple[HostReading, ...]:
        """The answer's hosts; FetchError for an answer that is not a vector, CodecError for one that is not JSON."""
        parsed = decode_json(reply.body(), _Answer, what="Prometheus answer")
        if parsed.status != "success" or parsed.data is None or parsed.data.resultType != "vector":
            raise FetchError(f"Prometheus: {parsed.error or parsed.status}")
        return self._hosts(parsed.data.result, now)

    def _down(self, now: float, reason: str) -> ClusterRound:
        return ClusterRound(now, "prometheus", (HostReading(self.url, up=False, timestamp=now, error=reason),))

    def _labels(self, metric: msgspec.Raw) -> tuple[str, str, dict[str, str]]:
        """(name, instance, the other labels) of a series, read from its labels' text once; CodecError."""
        text = bytes(metric)
        known = self._series.get(text)
        if known is None:
            try:
                labels = _LABELS.decode(text)
            except msgspec.DecodeError as err:  # valid JSON (the answer was), not an object of strings
                raise CodecError(f"Prometheus answer: a series' labels are not strings ({err})") from None
            name = labels.pop("__name__", "")
            known = (name, labels.get("instance", ""), labels)
            if len(self._series) >= MAX_KEPT_SERIES:
                self._series.clear()
            self._series[text] = known
        return known

    def _hosts(self, series: list[_Series], now: float) -> tuple[HostReading, ...]:
        by_instance: dict[str, list[Sample]] = {}
        up: dict[str, float] = {}
        for one in series:
            name, instance, labels = self._labels(one.metric)
            try:
                value = float(one.value[1])
            except ValueError:
                continue
            if name == "up":
                up[instance] = value
            else:
                by_instance.setdefault(instance, []).append(Sample(name, labels, value))
        hosts = []
        folded: dict[str, Folded] = {}
        for instance in sorted(set(by_instance) | {i for i, v in up.items() if v == 0.0}):
            if up.get(instance) == 0.0:
                reason = "down: Prometheus could not scrape it at its last try"
                hosts.append(HostReading(instance, up=False, timestamp=now, error=reason))
                continue
            found, folded[instance] = fold_again(
                tuple(by_instance[instance]), now, self._names, self._folded.get(instance)
            )
            hosts.append(HostReading(instance, up=True, timestamp=now, gpus=found.gpus, host=found.host,
                                     hostname=found.hostname, exporter=found.exporter))  # fmt: skip
        self._folded = folded
        return tuple(hosts)
