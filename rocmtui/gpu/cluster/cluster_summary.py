"""The numbers a round comes to (hosts up and down, GPUs, mean use, total power), and ``--once``'s text."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rocmtui.base import units
from rocmtui.base.text import plain
from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.sample import GpuSample

NAME_CHARS = 24
HOST_CHARS = 40


@dataclass(frozen=True)
class Totals:
    hosts_up: int
    hosts_down: int
    gpus: int
    mean_util_pct: float | None
    mean_memory_pct: float | None
    power_w: float | None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


HostFigures = tuple[list[float], list[float], list[float]]
"""A host's GPUs' utilisations, memory percentages and powers (the GPUs read, those with the reading)."""


def totals(cluster: ClusterRound, memo: dict[str, tuple[tuple[GpuSample, ...], HostFigures]] | None = None) -> Totals:
    """Over the GPUs read this round; a mean or sum over none is None. ``memo`` (kept by the caller from one round
    to the next): a host whose GPUs are the very objects of the last call keeps its figures."""
    utils: list[float] = []
    memory: list[float] = []
    powers: list[float] = []
    kept: dict[str, tuple[tuple[GpuSample, ...], HostFigures]] = {}
    for host in cluster.hosts:
        held = memo.get(host.target) if memo is not None else None
        figures = held[1] if held is not None and held[0] is host.gpus else _figures(host.gpus)
        kept[host.target] = (host.gpus, figures)
        utils.extend(figures[0])
        memory.extend(figures[1])
        powers.extend(figures[2])
    if memo is not None:
        memo.clear()
        memo |= kept
    up = sum(1 for h in cluster.hosts if h.up)
    return Totals(
        up, len(cluster.hosts) - up, cluster.gpus, _mean(utils), _mean(memory), sum(powers) if powers else None
    )


def _figures(gpus: tuple[GpuSample, ...]) -> HostFigures:
    read = [g for g in gpus if g.error is None]
    return (
        [g.utilization_pct for g in read if g.utilization_pct is not None],
        [pct for g in read if (pct := g.memory_pct) is not None],
        [g.power_w for g in read if g.power_w is not None],
    )


def totals_line(t: Totals) -> str:
    """``hosts 7/8 up · GPUs 56 · util 43% · mem 61% · 12.3 kW`` (means over the GPUs read, power summed)."""
    power = units.NA if t.power_w is None else (
        f"{t.power_w / 1000:.1f} kW" if t.power_w >= 10_000 else units.fmt_watts(t.power_w))  # fmt: skip
    hosts = t.hosts_up + t.hosts_down
    return (f"hosts {t.hosts_up}/{hosts} up · GPUs {t.gpus} · util {units.fmt_pct(t.mean_util_pct)} · "
            f"mem {units.fmt_pct(t.mean_memory_pct)} · {power}")  # fmt: skip


def host_title(host: HostReading) -> str:
    """The host's name (exporter text, cleaned), its address when that differs, and what serves it."""
    name = plain(host.label, limit=HOST_CHARS)
    where = f" ({plain(host.target, limit=HOST_CHARS)})" if host.hostname and host.hostname != host.target else ""
    if not host.up:
        return f"{name}{where}  DOWN: {plain(host.error or 'no answer')}"
    served = f"  {host.exporter}" if host.exporter else "  no GPU metrics found"
    note = f"  ({plain(host.error)})" if host.error else ""
    return f"{name}{where}{served}{note}"


def gpu_cells(gpu: GpuSample) -> list[str]:
    """GPU, name, util, memory, temperature, power: as text (the name cleaned)."""
    if gpu.error is not None:
        return [str(gpu.index), plain(gpu.name, limit=NAME_CHARS), plain(gpu.error), "", "", ""]
    return [
        str(gpu.index),
        plain(gpu.name, limit=NAME_CHARS),
        units.fmt_pct(gpu.utilization_pct),
        units.fmt_used_total(gpu.memory_used_bytes, gpu.memory_total_bytes),
        units.fmt_temp(gpu.temperature_c),
        units.fmt_watts(gpu.power_w),
    ]


def format_round(cluster: ClusterRound) -> str:
    """``monitor --hosts ... --once``: the totals, then each host and its GPUs."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cluster.timestamp))
    lines = [f"rocmtui monitor (cluster, {cluster.source})  {stamp}", totals_line(totals(cluster))]
    for host in cluster.hosts:
        lines.append(host_title(host))
        rows = [gpu_cells(g) for g in host.gpus]
        if rows:
            widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
            lines.extend("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
    return "\n".join(lines) + "\n"
