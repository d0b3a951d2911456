"""The cluster screen's lines: hosts and their GPUs, sorted and filtered, each with its utilisation history.

No Textual here: lines are ``rich.text.Text`` built from text that already crossed the boundary (the app
cleans each round where it enters), so the widget only draws them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from rich.text import Text

from rocmtui.base import units
from rocmtui.base.text import plain
from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.sample import GpuSample

SORTS = ("host", "util", "memory", "power", "temp")
"""What ``s`` steps through: hosts as given and GPUs by index, then by each reading (highest first)."""
FILTERS = ("all", "idle")
"""``i``: every GPU, or the idle ones that hold memory (0% busy, at least ``IDLE_MEMORY_BYTES`` in use)."""
IDLE_MEMORY_BYTES = 256 << 20
SPARK = "▁▂▃▄▅▆▇█"
SPARK_POINTS = 16
NAME_CHARS = 18
HEADER = f"  GPU {'NAME':<{NAME_CHARS}}  UTIL {'HISTORY':<{SPARK_POINTS}} {'MEMORY':>11}  TEMP  POWER"

GpuKey = tuple[str, int, str | None]


def gpu_key(host: HostReading, gpu: GpuSample) -> GpuKey:
    return (host.target, gpu.index, gpu.uuid)


def is_idle(gpu: GpuSample) -> bool:
    """Busy 0% while holding memory: a GPU someone reserved and does not use."""
    return (
        gpu.error is None
        and gpu.utilization_pct is not None
        and gpu.utilization_pct < 1.0
        and (gpu.memory_used_bytes or 0) >= IDLE_MEMORY_BYTES
    )


class UtilHistory:
    """The last ``SPARK_POINTS`` utilisation readings of every GPU seen (bounded: GPUs gone are dropped).

    Kept by host: a host whose GPUs are the very objects of the last round (its page unchanged, its GPUs cleaned
    then) has its readings appended in order, without a key made and looked up for each of its GPUs."""

    def __init__(self) -> None:
        self._hosts: dict[str, tuple[tuple[GpuSample, ...], list[deque[float | None]]]] = {}

    def add(self, cluster: ClusterRound) -> None:
        hosts: dict[str, tuple[tuple[GpuSample, ...], list[deque[float | None]]]] = {}
        for host in cluster.hosts:
            held = self._hosts.get(host.target)
            if held is not None and held[0] is host.gpus:
                series = held[1]
            else:
                old = {(g.index, g.uuid): s for g, s in zip(*held, strict=True)} if held is not None else {}
                series = [old.get((g.index, g.uuid)) or deque(maxlen=SPARK_POINTS) for g in host.gpus]
            for gpu, points in zip(host.gpus, series, strict=True):
                points.append(None if gpu.error else gpu.utilization_pct)
            hosts[host.target] = (host.gpus, series)
        self._hosts = hosts

    def spark(self, key: GpuKey) -> str:
        """The history as block characters, newest right, blank where nothing was read."""
        gpus, series = self._hosts.get(key[0], ((), []))
        points = next((s for g, s in zip(gpus, series, strict=True) if (g.index, g.uuid) == key[1:]), ())
        chars = [" " if v is None else SPARK[min(7, max(0, int(v / 100 * 7.999)))] for v in points]
        return "".join(chars).rjust(SPARK_POINTS)


@dataclass
class ClusterQuery:
    sort_by: str = "host"
    reverse: bool = False
    show: str = "all"
    text: str = ""
    """Shown: hosts or GPUs whose name or address holds this (case-insensitive)."""

    def describe(self) -> str:
        order = f"sort {self.sort_by}{' reversed' if self.reverse else ''}"
        shown = " · idle GPUs holding memory" if self.show == "idle" else ""
        found = f" · find {plain(self.text, limit=30)!r}" if self.text else ""
        return order + shown + found


_VALUE: dict[str, Callable[[GpuSample], float | None]] = {
    "util": lambda g: g.utilization_pct,
    "memory": lambda g: None if g.memory_used_bytes is None else float(g.memory_used_bytes),
    "power": lambda g: g.power_w,
    "temp": lambda g: g.temperature_c,
}


class Line:
    """One line of the list: a host's header or one of its GPUs; its text is made when drawn (a round of 256 hosts
    is 2,304 lines, of which a screen shows about 20), from the history as it is then."""

    __slots__ = ("_make", "key", "target")

    def __init__(self, key: str, target: str, make: Callable[[], Text]) -> None:
        self.key = key
        self.target = target
        """The host it belongs to (Enter opens it)."""
        self._make = make

    @property
    def text(self) -> Text:
        return self._make()


Group = tuple[HostReading, list[GpuSample], list[Line]]
"""A host, its GPUs shown (in the query's order) and its lines: the header, then a line a GPU."""
GroupMemo = dict[str, tuple[tuple[GpuSample, ...], tuple[object, ...], Group]]
"""Each host's group of the last call, with the GPUs and the header's fields and query it was made from."""


def lines(
    cluster: ClusterRound, query: ClusterQuery, history: UtilHistory, memo: GroupMemo | None = None
) -> list[Line]:
    """Hosts (each followed by its GPUs) in the query's order, those with no GPU shown left out when filtering.

    ``memo`` (kept by the caller from one round to the next): a host whose GPUs are the very objects of the last
    call, with the same header and query, keeps its lines (their text is made when drawn, from the history)."""
    asked = (query.sort_by, query.reverse, query.show, query.text)
    groups: list[Group] = []
    kept: GroupMemo = {}
    for host in cluster.hosts:
        header = (host.label, host.hostname, host.up, host.error, host.exporter, asked)
        held = memo.get(host.target) if memo is not None else None
        if held is not None and held[0] is host.gpus and held[1] == header:
            group: Group | None = held[2]
        else:
            group = _group(host, query, history)
        if group is not None:
            groups.append(group)
            kept[host.target] = (host.gpus, header, group)
    if memo is not None:
        memo.clear()
        memo |= kept
    out: list[Line] = []
    for _, _, group_lines in _sorted_hosts(groups, query):
        out.extend(group_lines)
    return out


def _group(host: HostReading, query: ClusterQuery, history: UtilHistory) -> Group | None:
    gpus = [g for g in host.gpus if _shown(host, g, query)]
    if not gpus and (query.show != "all" or (query.text and not _matches(query.text, host.label, host.target))):
        return None
    gpus = _sorted(gpus, query)
    made = [Line(f"host:{host.target}", host.target, partial(host_text, host))]
    for gpu in gpus:
        make = partial(_gpu_line, gpu, history, gpu_key(host, gpu))
        made.append(Line(f"gpu:{host.target}:{gpu.index}:{gpu.uuid}", host.target, make))
    return host, gpus, made


def _gpu_line(gpu: GpuSample, history: UtilHistory, key: GpuKey) -> Text:
    return gpu_text(gpu, history.spark(key))


def _matches(text: str, *values: str | None) -> bool:
    needle = text.casefold()
    return any(needle in (v or "").casefold() for v in values)


def _shown(host: HostReading, gpu: GpuSample, query: ClusterQuery) -> bool:
    if query.show == "idle" and not is_idle(gpu):
        return False
    return not query.text or _matches(query.text, host.label, host.target, gpu.name)


def _sort_value(gpu: GpuSample, query: ClusterQuery) -> tuple[bool, float]:
    value = _VALUE[query.sort_by](gpu)
    return (value is None, -(value or 0.0) if not query.reverse else (value or 0.0))  # N/A last either way


def _sorted(gpus: list[GpuSample], query: ClusterQuery) -> list[GpuSample]:
    if query.sort_by == "host":
        return sorted(gpus, key=lambda g: g.index, reverse=query.reverse)
    return sorted(gpus, key=lambda g: _sort_value(g, query))


def _sorted_hosts(groups: list[Group], query: ClusterQuery) -> list[Group]:
    if query.sort_by == "host":  # the order they were given in (a Prometheus's: by instance)
        return groups[::-1] if query.reverse else groups
    worst = (True, 0.0)  # a host without a GPU reading goes last
    return sorted(groups, key=lambda hg: (not hg[0].up, _sort_value(hg[1][0], query) if hg[1] else worst))


def host_text(host: HostReading) -> Text:
    """``▾ name (address) · exporter · 8 GPUs`` or ``✗ address  DOWN: reason``."""
    name = plain(host.label, limit=40)
    where = f" ({plain(host.target, limit=40)})" if host.hostname and host.hostname != host.target else ""
    if not host.up:
        return Text.assemble(("✗ ", "bold red"), (name + where, "bold"), ("  DOWN: ", "bold red"),
                             plain(host.error or "no answer"))  # fmt: skip
    count = len(host.gpus)
    served = host.exporter or "no GPU metrics found"
    note = f" · {plain(host.error)}" if host.error else ""
    return Text.assemble(("▾ ", "bold"), (name + where, "bold"),
                         (f" · {served} · {count} GPU{'s' if count != 1 else ''}{note}", "dim"))  # fmt: skip


def short_memory(gpu: GpuSample) -> str:
    """``139/192G``: used and total in GiB (or MiB below 1 GiB in all)."""
    used, total = gpu.memory_used_bytes, gpu.memory_total_bytes
    if used is None:
        return units.NA
    if total is not None and total < 1 << 30:
        return f"{used / 2**20:.0f}/{total / 2**20:.0f}M"
    return f"{used / 2**30:.1f}/{total / 2**30:.0f}G" if total is not None else f"{used / 2**30:.1f}G"


def gpu_text(gpu: GpuSample, spark: str) -> Text:
    """One GPU: index, name, utilisation and its history, memory, temperature, power."""
    name = plain(gpu.name, limit=NAME_CHARS).ljust(NAME_CHARS)
    if gpu.error is not None:
        return Text.assemble(f"  {gpu.index:>3} {name}  ", (plain(gpu.error), "red"))
    util = units.fmt_pct(gpu.utilization_pct).rjust(4)
    style = "bold yellow" if is_idle(gpu) else ""
    return Text.assemble(
        f"  {gpu.index:>3} {name}  ",
        (util, style),
        " ",
        (spark, "green"),
        f" {short_memory(gpu):>11}  {units.fmt_temp(gpu.temperature_c):>4}  {units.fmt_watts(gpu.power_w):>5}",
    )
