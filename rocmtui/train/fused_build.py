"""``python -m rocmtui.train.fused_build FOLDER``: build a fused-kernel cache for later runs (see ``fused``).

Reads ``request.json`` (the run's settings and input shape), holds ``build.lock`` (a second builder leaves at
once), builds the same engine over random images of that shape, compiles its model, its epochs' draw and its
test pass, and captures the step as a run would; then writes ``ready.json`` with every cached file's SHA-256,
last and atomically, and removes the caches least recently used beyond a few (``fused_prune``). A failure
writes ``failed.json`` with its one line. Exit status: 0 built or already building, 1 failed, 2 bad request.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from rocmtui.base.errors import first_line
from rocmtui.config import TrainConfig
from rocmtui.run.format import write_record
from rocmtui.train import fused, fused_prune
from rocmtui.train.dataset import Arrays
from rocmtui.train.engine import build_engine, capture_graph
from rocmtui.train.gpudata import place_images
from rocmtui.train.step import GraphSteps


def random_arrays(shape: list[int], classes: int, count: int, tests: int) -> Arrays:
    """``count`` training and ``tests`` test random NHWC images of the run's channels x size x size (the compiled
    graphs see only shapes)."""
    channels, height, width = shape
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (count + tests, height, width, channels), dtype=np.uint8)
    labels = (np.arange(count + tests) % classes).astype(np.int64)
    names = tuple(str(i) for i in range(classes))
    return Arrays(images[:count], labels[:count], images[count:], labels[count:], names)


def build(folder: Path) -> float:
    """Compile and capture as the run would; the seconds it took."""
    request = fused._read_json(folder / fused.REQUEST)
    config = replace(TrainConfig.from_dict(request["config"]), fused_kernels=False, resume=None)
    parts = request["identity"]
    fused.use_cache(folder)
    started = time.perf_counter()
    device = torch.device("cuda")
    # as many images as the run's: an epoch's draw is compiled for their count, the test pass for its batches
    images, tests, classes = int(parts["images"]), int(parts["tests"]), int(parts["classes"])
    if fused.identity(config, device, tuple(parts["input"]), classes, images, tests) != parts:
        raise ValueError("this machine's torch, GPU or code differ from the request's")
    arrays = random_arrays(parts["input"], classes, images, tests)
    engine = build_engine(config, arrays, device)
    engine.eager.model = fused.compile_for(engine.model, config.fused_mode)
    tests_compiled = fused.compile_for(engine.nets.eager_test_logits, config.fused_mode)
    engine.nets = replace(engine.nets, test_logits=tests_compiled)
    if engine.augmenter.augmentation is not None:
        placement = fused.compile_for(place_images, config.fused_mode)
        engine.augmenter = replace(engine.augmenter, placement=placement)
    engine.fused = fused.Plan("ready", folder, fallback=False)  # a fused run's steps: the same graphs captured
    capture_graph(engine)  # and the placement compiled for each crop side, the test pass for each batch size
    graphs = engine.optimisation.step
    for step in graphs.steps.values() if isinstance(graphs, GraphSteps) else ():
        step(step.x, step.y, engine.stats)  # each captured step replays
    torch.cuda.synchronize()
    _stop_compile_workers()  # their last writes land before the files are listed
    write_record(folder / fused.READY, {"identity": parts, "files": fused.manifest(folder)})
    return time.perf_counter() - started


def _stop_compile_workers() -> None:
    try:
        from torch._inductor.async_compile import shutdown_compile_workers
    except ImportError:  # an Inductor without it: its workers end with this process
        return
    shutdown_compile_workers()


def main(argv: list[str]) -> int:
    os.umask(0o077)  # every file of the cache, Inductor's and Triton's too, is this user's alone (fused.damage)
    if len(argv) != 1 or not (Path(argv[0]) / fused.REQUEST).is_file():
        print("usage: python -m rocmtui.train.fused_build FOLDER (a folder holding request.json)", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    with open(folder / fused.LOCK, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"already building in {folder}", file=sys.stderr)
            return 0
        if (folder / fused.READY).exists():
            return 0
        try:
            seconds = build(folder)
        except Exception as err:  # any failure is recorded once, so no later run tries again
            write_record(folder / fused.FAILED, {"error": first_line(err, with_type=True)})
            print(f"fused kernels: build failed: {first_line(err, with_type=True)}", file=sys.stderr)
            return 1
    print(f"fused kernels: built in {seconds:.1f} s in {folder}", file=sys.stderr)
    for old in fused_prune.prune(folder.parent, folder):
        print(f"fused kernels: removed the unused cache {old}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
