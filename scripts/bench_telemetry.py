#!/usr/bin/env python3
"""Cost of telemetry: one read of every device (median over N ticks), and a sampler's CPU use over T seconds.

Needs only rocmtui's telemetry layer (stdlib + psutil, plus pynvml / pyrsmi for those
backends): run it from the repository root on any machine.

    python scripts/bench_telemetry.py --make-tree 8            # sysfs backend on a generated 8-card tree
    python scripts/bench_telemetry.py --backend nvml --cpu-seconds 60
    python scripts/bench_telemetry.py --backend sysfs --root /sys --cpu-seconds 60
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from rocmtui.config import MonitorConfig  # noqa: E402  # after the path set-up above
from rocmtui.gpu.detect import detect  # noqa: E402
from rocmtui.gpu.sampler import Sampler  # noqa: E402


def _percentiles(samples_s: list[float]) -> str:
    ordered = sorted(samples_s)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return f"median {statistics.median(ordered) * 1e3:8.3f} ms   p90 {p90 * 1e3:8.3f} ms"


def bench_reads(config: MonitorConfig, ticks: int) -> int:
    """Time direct backend reads and full sampler ticks; returns the exit code."""
    started = time.perf_counter()
    backend, statuses = detect(config)
    open_s = time.perf_counter() - started
    if backend is None:
        for status in statuses:
            print(f"{status.name}: unavailable: {status.reason}")
        print("no GPU backend: timing the host-only sampler tick")
    count = backend.device_count() if backend is not None else 0
    name = backend.name if backend is not None else "host"
    print(f"backend {name}: {count} device(s), opened in {open_s * 1e3:.1f} ms")
    if backend is not None:
        reads = []
        for _ in range(ticks):
            t0 = time.perf_counter()
            for i in range(count):
                backend.sample(i)
            reads.append(time.perf_counter() - t0)
        print(f"  read all devices (direct)       {_percentiles(reads)}   over {ticks} ticks")
    sampler = Sampler(backend, statuses, interval_s=config.interval_s)
    tick_times = []
    for _ in range(ticks):
        t0 = time.perf_counter()
        sampler.sample_now()
        tick_times.append(time.perf_counter() - t0)
    print(f"  sampler tick (+host, processes) {_percentiles(tick_times)}   over {ticks} ticks")
    sampler.stop()
    return 0


def bench_cpu(config: MonitorConfig, seconds: float) -> None:
    """Run the sampler thread at the configured interval and report this process's CPU use."""
    backend, statuses = detect(config)
    sampler = Sampler(backend, statuses, interval_s=config.interval_s)
    ticks = []
    sampler.subscribe(lambda s: ticks.append(s.timestamp))
    cpu0, wall0 = time.process_time(), time.monotonic()
    sampler.start()
    threading.Event().wait(seconds)
    sampler.stop()
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    print(
        f"  sampler loop at {config.interval_s:g} s for {wall:.1f} s: {len(ticks)} ticks, "
        f"CPU {cpu:.3f} s = {100 * cpu / wall:.2f}% of one core"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="sysfs", choices=("auto", "rocm", "sysfs", "nvml", "host"))
    parser.add_argument("--root", type=Path, default=Path("/sys"), help="sysfs root (default /sys)")
    parser.add_argument("--make-tree", type=int, metavar="CARDS", help="generate a sysfs test tree with CARDS cards")
    parser.add_argument("--ticks", type=int, default=200, help="reads to time (default 200)")
    parser.add_argument("--interval", type=float, default=1.0, help="sampler interval for --cpu-seconds")
    parser.add_argument("--cpu-seconds", type=float, default=0.0, help="also measure the sampler loop's CPU use")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.root
        if args.make_tree:
            from fakes.sysfs_tree import build_card

            root = Path(tmp)
            for card in range(args.make_tree):
                build_card(root, card)
            print(f"generated sysfs test tree: {args.make_tree} amdgpu cards under {root}")
        config = MonitorConfig(backend=args.backend, sysfs_root=root, interval_s=args.interval)
        code = bench_reads(config, args.ticks)
        if args.cpu_seconds > 0:
            bench_cpu(config, args.cpu_seconds)
    return code


if __name__ == "__main__":
    sys.exit(main())
