"""Where a run's seconds go, from the process's start to its first step and from its last step to the end.

Runs ``train()`` in this process as ``rocmtui train --headless`` would (checkpoints and the GPU recorder
included) and prints each phase's start, from the process's start (read from psutil), with its length:
interpreter and imports, settings and the data, the engine (data to the device, model, optimizer), the
CUDA graph, the first step, the epochs, the final save and test pass. The train option
``--no-cudnn-benchmark`` shows what cudnn's algorithm search costs before the first step.

    python scripts/startup_profile.py -- cifar --recipe fast --data-dir ~/d
"""

from __future__ import annotations

import sys
import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import psutil  # noqa: E402

STARTED = time.perf_counter() - (time.time() - psutil.Process(os.getpid()).create_time())
marks: list[tuple[str, float, float]] = []


def timed(owner: Any, name: str, label: str, after: Callable[[], None] | None = None) -> None:
    original = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            if after is not None:
                after()
            marks.append((label, start - STARTED, time.perf_counter() - start))

    setattr(owner, name, wrapper)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train_args", nargs=argparse.REMAINDER, help="arguments for 'rocmtui train' after --")
    args = parser.parse_args()
    before_imports = time.perf_counter()
    import torch  # noqa: F401 - timed on its own

    imported_torch = time.perf_counter()
    from rocmtui.cli.parser import build_parser
    from rocmtui.cli.train_options import config_from_args
    from rocmtui.config import MonitorConfig
    from rocmtui.events import RunControl, StepsCompleted, TrainEvent
    from rocmtui.train import checkpoints, epochs, loop, step

    marks.append(("interpreter and this script's start", 0.0, before_imports - STARTED))
    marks.append(("import torch", before_imports - STARTED, imported_torch - before_imports))
    marks.append(("import rocmtui's CLI and engine", imported_torch - STARTED, time.perf_counter() - imported_torch))

    timed(loop, "GpuRecorder", "start the GPU recorder (the run folder's samples)")
    timed(loop, "load_arrays", "load the data set (the .npy cache)")
    timed(loop, "build_engine", "build the engine (data to the device, model, whitening, optimizer)")
    timed(loop, "capture_graph", "capture the CUDA graphs (one eager step first for each)")
    timed(step.GraphStep, "__init__", "a graph's warm-up step and capture (each)")
    timed(epochs, "evaluate", "test passes (each)")
    timed(checkpoints.CheckpointWriter, "wait", "wait for a checkpoint write")
    timed(step.GraphStep, "__call__", "a graph step (host side)")
    timed(step.EagerStep, "__call__", "an eager step (host side)")
    first_emit: list[float] = []

    def emit(event: TrainEvent) -> None:
        if isinstance(event, StepsCompleted) and not first_emit:
            first_emit.append(time.perf_counter() - STARTED)

    train_args = [a for a in args.train_args if a != "--"] or ["cifar"]
    parsed = build_parser().parse_args(["train", *train_args])
    with tempfile.TemporaryDirectory() as runs:
        config = dataclasses.replace(config_from_args(parsed), runs_dir=Path(runs))
        began = time.perf_counter()
        summary = loop.train(config, emit, RunControl(), telemetry=MonitorConfig())
        ended = time.perf_counter()
    done = summary.event
    print(f"`rocmtui train {' '.join(train_args)}`")
    first = first_emit[0] if first_emit else float("nan")
    print(
        f"train() from {began - STARTED:.3f} s to {ended - STARTED:.3f} s; first steps reported at {first:.3f} s; "
        f"the run's clock {getattr(done, 'total_s', 0):.3f} s, test passes {getattr(done, 'eval_s', 0):.3f} s"
    )
    print("| phase | starts at s | lasts s |")
    print("|---|---|---|")
    folded: dict[str, list[float]] = {}
    for label, start, length in marks:
        if label.startswith(("a graph step", "an eager step", "test passes", "a graph's warm-up")):
            folded.setdefault(label, []).append(length)
            continue
        print(f"| {label} | {start:.3f} | {length:.3f} |")
    for label, lengths in folded.items():
        print(f"| {label}: {len(lengths)}, first {lengths[0]:.3f} s, then median "
              f"{sorted(lengths[1:])[len(lengths[1:]) // 2] if len(lengths) > 1 else 0:.4f} s; "
              f"all {' '.join(f'{x:.3f}' for x in lengths[:4])} | | |")  # fmt: skip
    from bytecode import compile_rocmtui  # after the timing: compiling is not part of what an install pays

    compiled = compile_rocmtui()
    if compiled:
        print(f"note: {compiled} of rocmtui's modules had no bytecode, so the imports above include compiling "
              "them; they are compiled now: run again for the import times of an installed package")  # fmt: skip
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
