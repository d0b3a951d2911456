"""What the boundary for outside text costs the UI: ``cleaned`` (every string of an event or a sample set through
``plain``) on a recorded run's events and a real GPU recording's samples, in this process.

Each object is cleaned once untimed (what the first of its kind costs: the field names found, the strings kept),
then timed over ``--calls`` calls: the steady state of a screen receiving a run's events and a sample a second.

    python scripts/clean_cost.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from rocmtui.events import EpochCompleted, StepsCompleted
from rocmtui.gpu.replay import ReplaySource
from rocmtui.gpu.sample import GpuProcess, SampleSet
from rocmtui.run.format import decode_event_line
from rocmtui.ui.look.safe_text import cleaned

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


def _events() -> tuple[StepsCompleted, EpochCompleted]:
    steps: StepsCompleted | None = None
    epoch: EpochCompleted | None = None
    for raw in (DATA / "recorded-run.jsonl").read_bytes().splitlines():
        event = decode_event_line(raw).event
        if isinstance(event, StepsCompleted) and steps is None:
            steps = event
        if isinstance(event, EpochCompleted) and epoch is None:
            epoch = event
    if steps is None or epoch is None:
        raise SystemExit("clean_cost: the recorded run has no StepsCompleted or no EpochCompleted")
    return steps, epoch


def _samples() -> tuple[SampleSet, SampleSet]:
    """The H200 recording's last sample set, and the same with 100 processes on its GPU."""
    source = ReplaySource.from_jsonl(DATA / "h200-fastnet-run" / "gpu.jsonl")
    last = source.latest
    while source.step():
        last = source.latest
    if last is None:
        raise SystemExit("clean_cost: the GPU recording has no samples")
    crowd = tuple(
        GpuProcess(0, 10_000 + i, "user", 512 << 20, f"python train.py --seed {i}", cpu_pct=99.0) for i in range(100)
    )
    return last, dataclasses.replace(last, processes=crowd)


def _time(value: object, calls: int) -> float:
    """Microseconds a call of ``cleaned(value)``, the mean of ``calls`` after one untimed."""
    cleaned(value)
    start = time.perf_counter()
    for _ in range(calls):
        cleaned(value)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000, help="timed calls of each (default 20,000)")
    args = parser.parse_args()
    steps, epoch = _events()
    sample, crowded = _samples()
    rows = [
        ("a StepsCompleted of tests/data/recorded-run.jsonl", steps, args.calls),
        ("an EpochCompleted", epoch, args.calls),
        ("the last sample set of the H200 recording (1 GPU)", sample, args.calls),
        ("the same with 100 processes", crowded, max(1, args.calls // 50)),
    ]
    print("| what | µs a call |\n|---|---|")
    for what, value, calls in rows:
        print(f"| {what} | {_time(value, calls):.1f} |")


if __name__ == "__main__":
    main()
