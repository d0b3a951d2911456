"""Writing and reading a run folder's event stream: seconds for N lines each way, and per line.

The stream is what a long run leaves: a ``StepsCompleted`` a line (10 losses each, as a fast loop reports
them), an ``EpochCompleted`` every 100 lines. Writing goes through ``EventWriter`` (one ``write()`` a line,
no fsync); reading through ``read_events``, which a viewer opening the run uses.

    .venv/bin/python scripts/bench_stream.py --lines 1000000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rocmtui.events import EpochCompleted, StepsCompleted, TrainEvent
from rocmtui.run.stream import EventWriter, read_events

STEPS_PER_EPOCH = 1000


def event(i: int) -> TrainEvent:
    epoch = i // 100
    if i % 100 == 99:
        return EpochCompleted(epoch, 10_000, 1.25, 0.61, 1.31, 0.58, 0.01, 2.5, 40_000.0, False, 0.3, 2.5 * epoch)
    step = 10 * (i + 1)
    losses = tuple(2.0 / (1.0 + 1e-4 * (step - 9 + k)) for k in range(10))
    return StepsCompleted(epoch, step, step % STEPS_PER_EPOCH, STEPS_PER_EPOCH, losses, 41_234.5, 0.01, 0.25 * i)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    events = [event(i) for i in range(args.lines)]
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        start = time.perf_counter()
        writer = EventWriter(run_dir)
        for e in events:
            writer.write(e)
        writer.close()
        write_s = time.perf_counter() - start
        size = (run_dir / "metrics.jsonl").stat().st_size
        start = time.perf_counter()
        read = read_events(run_dir)
        read_s = time.perf_counter() - start
    assert len(read) == len(events), (len(read), len(events))
    n = args.lines
    print(f"{n:,} lines, {size / 2**20:.0f} MiB")
    print(f"write: {write_s:.2f} s ({1e6 * write_s / n:.2f} us a line)")
    print(f"read:  {read_s:.2f} s ({1e6 * read_s / n:.2f} us a line)")


if __name__ == "__main__":
    main()
