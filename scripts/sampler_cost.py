"""What the monitor's sampler costs on its own, without a UI: CPU per tick, in all, and by part.

Opens the backend as ``rocmtui monitor`` does (``--backend``: auto, nvml, rocm, sysfs, host), then:

- times each part of a tick in a loop, as CPU seconds of this process per call (``time.process_time``,
  every thread counted): ``backend.sample(i)``, ``backend.processes(i)``, the host's reading, and a whole
  ``Sampler.read()`` (the calls handed to the sampler's helper thread, as they run in the monitor);
- with the NVML backend, also each NVML function the reading calls (a timing wrapper on pynvml's
  functions): its CPU per call and how many calls fail (NOT_SUPPORTED and the like);
- runs the sampler on its own thread at ``--interval`` for ``--seconds`` and reports its CPU as % of one core,
  the figure to set against the monitor's whole CPU (``scripts/monitor_cost.py``).

    python scripts/sampler_cost.py --backend nvml --seconds 30
"""

from __future__ import annotations

import argparse
import functools
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from rocmtui.config import MonitorConfig
from rocmtui.gpu.detect import detect
from rocmtui.gpu.host import HostReader
from rocmtui.gpu.nvml import NvmlBackend
from rocmtui.gpu.sampler import PROCESS_REFRESH_S, Sampler


def cpu_us_per_call(fn: Callable[[], object], repeats: int) -> float:
    fn()  # the first call may open files or fill caches
    start = time.process_time()
    for _ in range(repeats):
        fn()
    return (time.process_time() - start) / repeats * 1e6


class NvmlCallTimes:
    """Wraps pynvml's ``nvmlDevice*`` functions to add up each one's CPU time, calls and failures."""

    def __init__(self, pynvml: Any) -> None:
        self.cpu_s: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.failures: dict[str, int] = defaultdict(int)
        for name in dir(pynvml):
            if name.startswith("nvmlDevice") and callable(getattr(pynvml, name)):
                setattr(pynvml, name, self._wrap(name, getattr(pynvml, name)))

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            except Exception:
                self.failures[name] += 1
                raise
            finally:
                self.cpu_s[name] += time.process_time() - start
                self.calls[name] += 1

        return timed

    def report(self) -> None:
        print("| NVML function | calls | failed | CPU µs per call |")
        print("|---|---|---|---|")
        for name in sorted(self.calls, key=lambda n: -self.cpu_s[n]):
            per_call_us = self.cpu_s[name] / self.calls[name] * 1e6
            print(f"| {name} | {self.calls[name]} | {self.failures[name]} | {per_call_us:.0f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the sampler runs on its thread")
    parser.add_argument("--repeats", type=int, default=50, help="calls per part in the per-part loops")
    args = parser.parse_args()
    config = MonitorConfig(backend=args.backend, interval_s=args.interval)
    backend, statuses = detect(config)
    print("backends:", "; ".join(f"{s.name}: {'ok' if s.available else s.reason}" for s in statuses) or "host only")
    calls = None
    if isinstance(backend, NvmlBackend):
        calls = NvmlCallTimes(backend._nvml)  # the pynvml module the backend calls
    count = 0 if backend is None else backend.device_count()
    print("| part | CPU µs per call |")
    print("|---|---|")
    for i in range(count):
        assert backend is not None
        print(f"| backend.sample({i}) | {cpu_us_per_call(functools.partial(backend.sample, i), args.repeats):.0f} |")
        processes_us = cpu_us_per_call(functools.partial(backend.processes, i), args.repeats)
        print(f"| backend.processes({i}) | {processes_us:.0f} |")
    print(f"| host reading | {cpu_us_per_call(HostReader().sample, args.repeats):.0f} |")
    sampler = Sampler(backend, statuses, interval_s=args.interval, history_len=2)
    tick_us = cpu_us_per_call(sampler.read, args.repeats)
    print(f"| Sampler.read() (the tick, processes every {PROCESS_REFRESH_S:g} s) | {tick_us:.0f} |")
    if calls is not None:
        calls.report()
    ticks: list[float] = []
    sampler.subscribe(lambda _: ticks.append(time.monotonic()))
    start_cpu, start = time.process_time(), time.monotonic()
    sampler.start()
    time.sleep(args.seconds)
    cpu = time.process_time() - start_cpu
    wall = time.monotonic() - start
    sampler.stop()
    print(
        f"sampler on its thread: {len(ticks)} ticks in {wall:.1f} s at {args.interval:g} s, "
        f"CPU {100 * cpu / wall:.3f}% of one core ({cpu / max(1, len(ticks)) * 1e3:.2f} ms per tick)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
