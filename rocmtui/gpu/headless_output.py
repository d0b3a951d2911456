"""The headless outputs of ``rocmtui monitor``: ``--once`` (one readable table) and ``--json`` (JSON lines).

Neither imports torch or textual. CPU % needs a measuring window, so both wait a quarter of a
second after opening the sampler before the first reading.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from rocmtui.base import units
from rocmtui.base.text import one_line, plain
from rocmtui.config import MonitorConfig
from rocmtui.gpu.detect import open_sampler
from rocmtui.gpu.sample import GpuSample, SampleSet
from rocmtui.gpu.sample_codec import dumps
from rocmtui.gpu.sampler import Sampler
from rocmtui.gpu.stdio import redirect_to_devnull

SETTLE_S = 0.25
"""Seconds between opening the sampler and the first reading, so CPU % is measured over something."""


def print_once(config: MonitorConfig, out: TextIO | None = None) -> int:
    """Read everything once, print it as text, exit 0."""
    sampler = open_sampler(config)
    try:
        _settle(sampler)
        text = format_sample_set(sampler.sample_now())
    finally:
        sampler.stop()
    (out or sys.stdout).write(text)
    return 0


def stream_json(config: MonitorConfig, count: int | None, out: TextIO | None = None) -> int:
    """Print one JSON object per sample every interval, ``count`` times or until Ctrl-C (exit 130).

    A closed pipe (``| head -1``) ends quietly with exit 0.
    """
    sampler = open_sampler(config)
    try:
        _settle(sampler)
        return write_lines(lambda: dumps(sampler.sample_now()), lambda: sampler.interval_s, count, out)
    finally:
        sampler.stop()


def write_lines(
    next_line: Callable[[], str], interval_s: Callable[[], float], count: int | None, out: TextIO | None = None
) -> int:
    """Write ``next_line()`` every ``interval_s()`` seconds, ``count`` times or until Ctrl-C (exit 130); a closed
    pipe ends quietly with exit 0. The loop of every ``--json`` stream (this machine's, a cluster's)."""
    stream = out or sys.stdout
    pause = threading.Event()  # never set: waits between lines without busy-looping
    written = 0
    try:
        while count is None or written < count:
            started = time.monotonic()
            stream.write(next_line() + "\n")
            stream.flush()
            written += 1
            if count is None or written < count:
                pause.wait(max(0.0, interval_s() - (time.monotonic() - started)))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_stdout(stream)
        return 0
    return 0


def format_sample_set(s: SampleSet) -> str:
    """The ``--once`` text: backend, each GPU, host, processes and unavailable backends."""
    lines = [f"rocmtui monitor  {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(s.timestamp))}"]
    count = len(s.gpus)
    lines.append(f"backend: {s.backend} ({count} GPU{'s' if count != 1 else ''})")
    if not s.gpus:
        lines.append("no GPU telemetry: showing the host only")
    for gpu in s.gpus:
        lines.extend(_gpu_lines(gpu))
    host = s.host
    cpu_label = f"{plain(host.cpu_name or 'CPU')}, {host.cpu_count or '?'} logical CPUs"
    lines.append(f"host: {cpu_label}")
    lines.append(_row("CPU", units.fmt_pct(host.cpu_pct)))
    lines.append(_row("RAM", units.fmt_used_total(host.ram_used_bytes, host.ram_total_bytes)))
    if s.processes:
        lines.append("processes:")
        table = [["GPU", "PID", "USER", "GPU MEMORY", "COMMAND"]]
        for p in s.processes:
            gpu_label = units.fmt_gpu_index(p.gpu_index)
            memory = units.fmt_bytes(p.gpu_memory_bytes)
            user, command = plain(p.user or units.NA, limit=32), one_line(p.command or units.NA, limit=1024)
            table.append([gpu_label, str(p.pid), user, memory, command])  # other users' text: shown, never sent
        lines.extend("  " + line for line in _align(table))
    elif s.gpus:
        lines.append("processes: none listed")
    unavailable = [st for st in s.statuses if not st.available]
    if unavailable:
        lines.append("unavailable backends:")
        lines.extend(f"  {st.name}: {plain(st.reason or 'unknown reason')}" for st in unavailable)
    return "\n".join(lines) + "\n"


def _gpu_lines(g: GpuSample) -> list[str]:
    lines = [f"GPU {g.index}: {plain(g.name)}"]
    if g.error is not None:
        return [*lines, _row("error", plain(g.error))]
    util = units.fmt_pct(g.utilization_pct)
    if g.memory_busy_pct is not None:
        util += f"  (memory busy {units.fmt_pct(g.memory_busy_pct)})"
    lines.append(_row("utilization", util))
    vram = units.fmt_used_total(g.memory_used_bytes, g.memory_total_bytes)
    if g.memory_pct is not None:
        vram += f"  ({units.fmt_pct(g.memory_pct)})"
    lines.append(_row("VRAM", vram))
    if g.gtt_total_bytes is not None:
        lines.append(_row("GTT", units.fmt_used_total(g.gtt_used_bytes, g.gtt_total_bytes)))
    lines.append(_row("temperature", units.fmt_temps(g.temperatures_c)))
    lines.append(_row("power", units.fmt_power(g.power_w, g.power_cap_w)))
    lines.append(_row("clocks", f"sclk {units.fmt_mhz(g.sclk_mhz)}, mclk {units.fmt_mhz(g.mclk_mhz)}"))
    lines.append(_row("fan", units.fmt_fan(g.fan_rpm, g.fan_pct)))
    return lines


def _row(label: str, value: str) -> str:
    return f"  {label:<12}  {value}"


def _align(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _settle(sampler: Sampler) -> None:
    time.sleep(max(0.0, SETTLE_S - sampler.host_window_s))


def _silence_stdout(stream: TextIO) -> None:
    """After a broken pipe, point stdout at /dev/null so Python's exit-time flush stays quiet."""
    if stream is sys.stdout:
        redirect_to_devnull((sys.stdout.fileno(),))
