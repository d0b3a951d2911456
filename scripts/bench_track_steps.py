"""How fast ``run.log`` takes steps, and that every one lands in the run folder.

N steps of one float each are logged as fast as a loop can (flushes and writes included), or of a 0-d tensor
each (``--tensor``: converted in bulk at each flush, one host copy per device); then the folder is read back
and every (step, value) counted.

    .venv/bin/python scripts/bench_track_steps.py --steps 1000000
    .venv/bin/python scripts/bench_track_steps.py --steps 100000 --tensor --device cuda   # one sync per flush
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import rocmtui
from rocmtui.events import MetricsLogged
from rocmtui.run.stream import read_events
from rocmtui.tracking.values import Scalar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--tensor", action="store_true", help="log a 0-d tensor per step instead of a float")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    values: list[Scalar] = [1.0 / (1 + i) for i in range(args.steps)]
    syncs = 0
    if args.tensor:
        import torch

        base = torch.arange(1, args.steps + 1, dtype=torch.float32, device=args.device)
        values = list((1.0 / base).unbind())
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
            original = torch.Tensor.cpu

            def counted(
                self: torch._C.TensorBase, memory_format: torch.memory_format = torch.preserve_format
            ) -> torch.Tensor:
                nonlocal syncs
                syncs += 1
                return original(self, memory_format=memory_format)

            torch.Tensor.cpu = counted  # type: ignore[method-assign]  # the count of host copies: patched on purpose
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with rocmtui.track("bench", runs_dir=Path(tmp)) as run:
            for step, value in enumerate(values, start=1):
                run.log(step=step, loss=value)
        took = time.perf_counter() - start
        flushes, kept = 0, 0
        for event in read_events(run.run_dir):
            if isinstance(event, MetricsLogged):
                flushes += 1
                kept += sum(len(v) for _, v in event.points().values())
    what = f"tensors on {args.device}" if args.tensor else "floats"
    print(f"{args.steps:,} steps ({what}) logged in {took:.2f} s ({1e6 * took / args.steps:.2f} us a step); "
          f"{kept:,} values in the folder over {flushes} flushes")  # fmt: skip
    if syncs:
        print(f"host copies: {syncs} ({syncs / flushes:.2f} a flush)")


if __name__ == "__main__":
    main()
