"""What ``run.log`` costs a training loop: per call, against a 10 ms step (target: at most 1%).

A real CPU tensor loss (0-d, from a small matmul) is logged with two Python numbers at each step,
the way a script does; the loop runs with and without logging, and the per-call cost is the difference
of the means over many calls (conversion and writes at ``FLUSH_S`` included).

    .venv/bin/python scripts/bench_track.py
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

import rocmtui

STEP_S = 0.010


def loop(calls: int, run: rocmtui.Run | None) -> float:
    """Seconds per step of a loop that makes a 0-d loss tensor and (maybe) logs it."""
    x = torch.randn(64, 64)
    start = time.perf_counter()
    for step in range(calls):
        loss = (x @ x).mean()
        if run is not None:
            run.log(step=step, loss=loss, lr=1e-3, tokens_per_s=12345.0)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        costs = []
        with rocmtui.track("bench", runs_dir=Path(tmp)) as run:
            for _ in range(args.repeats):
                bare = loop(args.calls, None)
                logged = loop(args.calls, run)
                costs.append(logged - bare)
        lines = sum(1 for _ in (run.run_dir / "metrics.jsonl").open())
    cost = statistics.median(costs)
    print(f"run.log: {cost * 1e6:.1f} us per call (median of {args.repeats} x {args.calls:,} calls)")
    print(f"against a {STEP_S * 1e3:.0f} ms step: {100 * cost / STEP_S:.3f}%")
    print(f"metrics.jsonl lines written: {lines:,} for {args.repeats * args.calls:,} calls")


if __name__ == "__main__":
    main()
