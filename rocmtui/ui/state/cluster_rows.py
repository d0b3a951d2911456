"""The cluster screen's lines: hosts and their GPUs, sorted and filtered, each with its utilisation history.

No Textual here: a line's ``rich.text.Text`` is made when it is drawn, from its host's latest reading, each text
of the exporter's in it through the boundary (``plain``) then; so a round costs what its hosts' lines need, not
what its 2,048 GPUs would, and the widget only draws the lines on screen.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

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
    """The last ``SPARK_POINTS`` utilisation readings of every GPU seen (bounded: hosts gone are dropped).

    Kept as each host's GPUs of the last rounds, the round's own tuples (a round costs an append a host, not one a
    GPU); a GPU's points are read from them when its line is drawn, newest first, back to the first round without
    it (a GPU gone, or its host down, starts again from nothing)."""

    def __init__(self) -> None:
        self._hosts: dict[str, deque[tuple[GpuSample, ...]]] = {}

    def add(self, cluster: ClusterRound) -> None:
        held, hosts = self._hosts, {}
        for host in cluster.hosts:
            rounds = held.get(host.target)
            if rounds is None:
                rounds = deque(maxlen=SPARK_POINTS)
            rounds.append(host.gpus)
            hosts[host.target] = rounds
        self._hosts = hosts

    def spark(self, key: GpuKey, at: int = -1) -> str:
        """The history as block characters, newest right, blank where nothing was read. ``at``: where the GPU
        is among its host's GPUs, most likely (looked for by its key elsewhere)."""
        identity = key[1:]
        chars = []
        for gpus in reversed(self._hosts.get(key[0], ())):
            gpu = gpus[at] if 0 <= at < len(gpus) else None
            if gpu is None or (gpu.index, gpu.uuid) != identity:
                gpu = next((g for g in gpus if (g.index, g.uuid) == identity), None)
                if gpu is None:
                    break
            value = None if gpu.error else gpu.utilization_pct
            chars.append(" " if value is None else SPARK[min(7, max(0, int(value / 100 * 7.999)))])
        return "".join(reversed(chars)).rjust(SPARK_POINTS)


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


class HostSlot:
    """A host's latest reading, which its lines draw: a round that brings the host again with the same GPUs in the
    same order (new values, most rounds) sets it, and the lines stay as they are."""

    __slots__ = ("reading",)

    def __init__(self, reading: HostReading) -> None:
        self.reading = reading


class Line:
    """One line of the list: a host's header or one of its GPUs (``at``: its place among the host's GPUs). Its text
    is made when drawn (a round of 256 hosts is 2,304 lines, of which a screen shows about 20), from the host's
    reading and the history as they are then; the exporter's text in it is cleaned then (``plain``)."""

    __slots__ = ("_at", "_history", "_slot", "key", "target")

    def __init__(self, key: str, slot: HostSlot, at: int, history: UtilHistory) -> None:
        self.key = key
        self.target = slot.reading.target
        """The host it belongs to (Enter opens it)."""
        self._slot = slot
        self._at = at
        self._history = history

    @property
    def text(self) -> Text:
        host = self._slot.reading
        if self._at < 0:
            return host_text(host)
        gpu = host.gpus[self._at]
        return gpu_text(gpu, self._history.spark(gpu_key(host, gpu), self._at))


Group = tuple[HostSlot, list[int], list[Line]]
"""A host, where its GPUs shown are among its GPUs (in the query's order) and its lines: the header, then a line
a GPU."""


class GroupMemo:
    """What the last call of ``lines`` made, kept by the caller from one round to the next."""

    def __init__(self) -> None:
        self.groups: dict[str, tuple[tuple[object, ...], Group | None]] = {}
        """Each host's group (None: none of it shown), with what it was made from (``_shape``)."""
        self.order: list[Group] = []
        self.lines: list[Line] = []


def _by_value(query: ClusterQuery) -> bool:
    """Whether the query's choice or order of GPUs depends on their readings (so is made again each round)."""
    return query.sort_by != "host" or query.show != "all"


def _shape(host: HostReading, query: ClusterQuery) -> tuple[object, ...]:
    """What a host's lines are made of but for its readings: its header's fields, the query, its GPUs' identity
    and order (and their names, which a find matches)."""
    gpus = tuple((g.index, g.uuid, g.name) if query.text else (g.index, g.uuid) for g in host.gpus)
    asked = (query.sort_by, query.reverse, query.show, query.text)
    return host.label, host.hostname, host.up, host.error, host.exporter, asked, gpus


def lines(
    cluster: ClusterRound, query: ClusterQuery, history: UtilHistory, memo: GroupMemo | None = None
) -> list[Line]:
    """Hosts (each followed by its GPUs) in the query's order, those with no GPU shown left out when filtering.

    ``memo``: a host whose GPUs are the same GPUs in the same order as at the last call, with the same header and
    query, keeps its lines, which then draw its new reading; when every host does, the list is the last one.
    A query that chooses or orders GPUs by their readings makes every line again."""
    memo = memo if memo is not None else GroupMemo()
    kept: dict[str, tuple[tuple[object, ...], Group | None]] = {}
    groups: list[Group] = []
    reuse = not _by_value(query)
    all_kept = reuse
    for host in cluster.hosts:
        shape = _shape(host, query) if reuse else ()
        held = memo.groups.get(host.target) if reuse else None
        if held is not None and held[0] == shape:
            group = held[1]
            if group is not None:
                group[0].reading = host
        else:
            all_kept = False
            group = _group(host, query, history)
        if reuse:
            kept[host.target] = (shape, group)
        if group is not None:
            groups.append(group)
    if all_kept and len(groups) == len(memo.order):
        all_kept = all(a is b for a, b in zip(groups, memo.order, strict=True))
    else:
        all_kept = False
    memo.groups, memo.order = kept, groups
    if not all_kept:
        memo.lines = [line for _, _, group_lines in _sorted_hosts(groups, query) for line in group_lines]
    return memo.lines


def _group(host: HostReading, query: ClusterQuery, history: UtilHistory) -> Group | None:
    shown = [at for at, g in enumerate(host.gpus) if _shown(host, g, query)]
    if not shown and (query.show != "all" or (query.text and not _matches(query.text, host.label, host.target))):
        return None
    shown = _sorted(host.gpus, shown, query)
    slot = HostSlot(host)
    made = [Line(f"host:{host.target}", slot, -1, history)]
    for at in shown:
        gpu = host.gpus[at]
        made.append(Line(f"gpu:{host.target}:{gpu.index}:{gpu.uuid}", slot, at, history))
    return slot, shown, made


def _matches(text: str, *values: str | None) -> bool:
    """Whether a value, as it is drawn (cleaned), holds ``text``."""
    needle = text.casefold()
    return any(needle in plain(v or "", lines=True).casefold() for v in values)


def _shown(host: HostReading, gpu: GpuSample, query: ClusterQuery) -> bool:
    if query.show == "idle" and not is_idle(gpu):
        return False
    return not query.text or _matches(query.text, host.label, host.target, gpu.name)


def _sort_value(gpu: GpuSample, query: ClusterQuery) -> tuple[bool, float]:
    value = _VALUE[query.sort_by](gpu)
    return (value is None, -(value or 0.0) if not query.reverse else (value or 0.0))  # N/A last either way


def _sorted(gpus: tuple[GpuSample, ...], shown: list[int], query: ClusterQuery) -> list[int]:
    if query.sort_by == "host":
        return sorted(shown, key=lambda at: gpus[at].index, reverse=query.reverse)
    return sorted(shown, key=lambda at: _sort_value(gpus[at], query))


def _sorted_hosts(groups: list[Group], query: ClusterQuery) -> list[Group]:
    if query.sort_by == "host":  # the order they were given in (a Prometheus's: by instance)
        return groups[::-1] if query.reverse else groups
    worst = (True, 0.0)  # a host without a GPU reading goes last

    def order(group: Group) -> tuple[bool, tuple[bool, float]]:
        host = group[0].reading
        return not host.up, _sort_value(host.gpus[group[1][0]], query) if group[1] else worst

    return sorted(groups, key=order)


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
