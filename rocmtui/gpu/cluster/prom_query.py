"""Every GPU a Prometheus server knows, through its HTTP API (``/api/v1/query``), one instant query a round.

The query asks for every metric of the mapping table (AMD's under any configured prefix) and ``up``; the
series are grouped by their ``instance`` label (the address Prometheus scrapes), each group mapped as one
host's page would be. An instance whose ``up`` is 0 is shown down; one that is up without GPU metrics (a
node_exporter, Prometheus itself) is left out.
"""

from __future__ import annotations

import re
import time
import urllib.parse

import msgspec

from rocmtui.codec import CodecError, decode_json
from rocmtui.gpu.cluster.exposition import Sample
from rocmtui.gpu.cluster.fetch import FetchError, get
from rocmtui.gpu.cluster.mapping import TABLE, Names, fold
from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.retry import Retry

MAX_ANSWER_BYTES = 64 << 20
"""A query's answer larger than this is refused (2,048 GPUs with every mapped metric is about 10 MB)."""
DEFAULT_TIMEOUT_S = 10.0


class _Series(msgspec.Struct):
    metric: dict[str, str]
    value: tuple[float, str]


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
        self._names = Names(labels_reused=False)  # each answer's labels are new objects
        self._retry = Retry()

    def round(self) -> ClusterRound:
        now = time.time()
        if not self._retry.ready(time.monotonic()):
            return self._down(now, self._retry.error or "")
        try:
            answer = get(self._query_url, timeout_s=self.timeout_s, max_bytes=MAX_ANSWER_BYTES, token=self.token,
                         accept="application/json")  # fmt: skip
            parsed = decode_json(answer.body, _Answer, what="Prometheus answer")
            if parsed.status != "success" or parsed.data is None or parsed.data.resultType != "vector":
                raise FetchError(f"Prometheus: {parsed.error or parsed.status}")
        except (FetchError, CodecError) as err:
            reason = f"Prometheus: {err}" if isinstance(err, CodecError) else str(err)
            self._retry.failed(reason, time.monotonic())
            return self._down(now, self._retry.error or "")
        self._retry.succeeded()
        return ClusterRound(timestamp=now, source="prometheus", hosts=self._hosts(parsed.data.result, now))

    def _down(self, now: float, reason: str) -> ClusterRound:
        return ClusterRound(now, "prometheus", (HostReading(self.url, up=False, timestamp=now, error=reason),))

    def _hosts(self, series: list[_Series], now: float) -> tuple[HostReading, ...]:
        by_instance: dict[str, list[Sample]] = {}
        up: dict[str, float] = {}
        for one in series:
            labels = dict(one.metric)
            name = labels.pop("__name__", "")
            instance = labels.get("instance", "")
            try:
                value = float(one.value[1])
            except ValueError:
                continue
            if name == "up":
                up[instance] = value
            else:
                by_instance.setdefault(instance, []).append(Sample(name, labels, value))
        hosts = []
        for instance in sorted(set(by_instance) | {i for i, v in up.items() if v == 0.0}):
            if up.get(instance) == 0.0:
                reason = "down: Prometheus could not scrape it at its last try"
                hosts.append(HostReading(instance, up=False, timestamp=now, error=reason))
                continue
            found = fold(by_instance[instance], now, self._names)
            hosts.append(HostReading(instance, up=True, timestamp=now, gpus=found.gpus, host=found.host,
                                     hostname=found.hostname, exporter=found.exporter))  # fmt: skip
        return tuple(hosts)

    def close(self) -> None:
        """Nothing held between rounds."""
