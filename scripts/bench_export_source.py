"""Time the exporter's GPU source beside a live run: the switch to the run, and ``latest()`` at a scrape.

    .venv/bin/python scripts/bench_export_source.py

A copy of the H200 run, made live (its lock held by this process); the source must not open a sampler.
``latest()`` is timed with nothing appended (a ``stat``) and with one sample line appended before each
call, as a scrape sees a trainer that records one sample between two scrapes.
"""

from __future__ import annotations

import json
import shutil
import socket
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from rocmtui.export.gpu_source import ExportSamples
from rocmtui.run.lock import RunLock

H200 = Path(__file__).resolve().parents[1] / "tests" / "data" / "h200-fastnet-run"


def no_sampler() -> NoReturn:
    raise AssertionError("a live run records samples: no sampler may be opened")


def micros(call: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    call()
    return (time.perf_counter() - t0) * 1e6


def main() -> None:
    lines = (H200 / "gpu.jsonl").read_text().splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "20261201-071828-cifar10-fastnet"
        shutil.copytree(H200, run)
        status = json.loads((run / "status.json").read_text())
        status.update(state="running", host=socket.gethostname())
        (run / "status.json").write_text(json.dumps(status))
        lock = RunLock.acquire(run)
        source = ExportSamples(Path(tmp), no_sampler)
        try:
            switch_ms = micros(source.check) / 1000
            idle = [micros(source.latest) for _ in range(2000)]
            grown = []
            with (run / "gpu.jsonl").open("a") as gpu:
                for n in range(200):
                    line = json.loads(lines[-1])
                    line["timestamp"] += n + 1
                    gpu.write(json.dumps(line) + "\n")
                    gpu.flush()
                    grown.append(micros(source.latest))
            check_ms = micros(source.check) / 1000
        finally:
            source.stop()
            lock.release()
    print(
        f"{len(lines)} recorded samples: switch to the run {switch_ms:.1f} ms; latest() with nothing new: median "
        f"{statistics.median(idle):.1f} µs, with one new line: median {statistics.median(grown):.1f} µs; "
        f"a re-check of the runs folder {check_ms:.2f} ms"
    )


if __name__ == "__main__":
    main()
