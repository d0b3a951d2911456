"""Time one scrape of ``rocmtui export`` over HTTP on 127.0.0.1: GPU metrics from the H200 recording, live runs.

    .venv/bin/python scripts/bench_export.py [--scrapes 500] [--runs 20]

The runs folder holds ``--runs`` copies of the H200 run: half finished, half live (their lock held by this
process), so each scrape lists them, reads changed statuses and polls the live streams. Bounded: one client,
one request at a time, only against 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from rocmtui.export.metrics_server import serve
from rocmtui.gpu.replay import ReplaySource
from rocmtui.run.lock import RunLock

H200 = Path(__file__).resolve().parents[1] / "tests" / "data" / "h200-fastnet-run"


def make_runs(root: Path, count: int) -> list[RunLock]:
    locks = []
    for n in range(count):
        run = root / f"20261201-0718{n:02d}-cifar10-fastnet"
        shutil.copytree(H200, run)
        if n % 2:
            status = json.loads((run / "status.json").read_text())
            status.update(state="running", host=socket.gethostname())
            (run / "status.json").write_text(json.dumps(status))
            locks.append(RunLock.acquire(run))
    return locks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scrapes", type=int, default=500)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    source = ReplaySource.from_jsonl(H200 / "gpu.jsonl")
    source.step()
    with tempfile.TemporaryDirectory() as tmp:
        locks = make_runs(Path(tmp), args.runs)
        endpoint = serve(lambda: source.latest, host="127.0.0.1", port=0, runs_dir=Path(tmp))
        url = f"http://127.0.0.1:{endpoint.port}/metrics"
        times, size = [], 0
        try:
            for _ in range(args.scrapes):
                t0 = time.perf_counter()
                with urllib.request.urlopen(url, timeout=5) as response:
                    size = len(response.read())
                times.append((time.perf_counter() - t0) * 1000)
        finally:
            endpoint.close()
            for lock in locks:
                lock.release()
    times.sort()
    print(
        f"{args.scrapes} scrapes, {args.runs} runs ({len(locks)} live), {size} bytes: "
        f"median {statistics.median(times):.2f} ms, p95 {times[int(0.95 * len(times))]:.2f} ms, max {times[-1]:.2f} ms"
    )


if __name__ == "__main__":
    main()
