"""``python -m rocmtui.train.fused_build FOLDER``: build a fused-kernel cache for later runs (see ``fused``).

Reads ``request.json`` (the run's settings and input shape), holds ``build.lock`` (a second builder leaves at
once), builds the same engine over random images of that shape, compiles its model, its epochs' draw and its
test pass, and captures the step as a run would; then writes ``ready.json`` with every cached file's SHA-256,
last and atomically, and removes the caches least recently used beyond a few (``fused_prune``). A failure
writes ``failed.json`` with its one line. Exit status: 0 built or already building, 1 failed, 2 bad request.

Then it weighs the cache (also a ready cache not weighed yet): ``python -m rocmtui.train.fused_build --weigh
fused|eager FOLDER`` runs in fresh processes, as a run starts, and prints what its engine build and captures
took from CUDA up and what a step takes, with the cached kernels and with eager ones; each kind is weighed
twice (``WEIGH_ORDER``) and ``costs.json`` records the lower of each (``fused.Costs``), which a run reads to
load the kernels only where they pay (``fused.weighed``). Two weighings of a kind that disagree (other work on
the GPU) record nothing: the next run weighs the cache again.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from rocmtui.base.errors import first_line
from rocmtui.codec import decode_json, encode_json
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


WEIGH_STEPS = 50
"""Replays of the captured step timed to weigh a step (after ``WEIGH_WARMUP`` unmeasured ones)."""
WEIGH_WARMUP = 10


def weigh_here(folder: Path, kind: str) -> dict[str, float]:
    """In a fresh process, as a run: seconds from CUDA up to the captured steps with ``kind`` kernels (``fused``:
    the cache's; ``eager``), and the seconds a step of the widest crop takes."""
    request = fused._read_json(folder / fused.REQUEST)
    config = replace(TrainConfig.from_dict(request["config"]), fused_kernels=False, resume=None)
    parts = request["identity"]
    images, tests, classes = int(parts["images"]), int(parts["tests"]), int(parts["classes"])
    arrays = random_arrays(parts["input"], classes, images, tests)
    device = torch.device("cuda")
    torch.cuda.init()  # type: ignore[no-untyped-call]
    torch.zeros(1, device=device)  # CUDA up: a run's start pays this either way
    torch.cuda.synchronize()
    plan = fused.Plan("ready", folder, fallback=False) if kind == "fused" else fused.OFF
    if kind == "fused":
        fused.use_cache(folder)
    started = time.perf_counter()
    engine = build_engine(config, arrays, device, fused_plan=plan)
    capture_graph(engine)
    torch.cuda.synchronize()
    setup_s = time.perf_counter() - started
    graphs = engine.optimisation.step
    if not isinstance(graphs, GraphSteps):
        raise TypeError("the weighed run captured no step")
    step = graphs.steps[max(graphs.steps)]  # the widest crop's: most of a run's epochs
    for _ in range(WEIGH_WARMUP):
        step(step.x, step.y, engine.stats)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    start.record()
    for _ in range(WEIGH_STEPS):
        step(step.x, step.y, engine.stats)
    end.record()
    torch.cuda.synchronize()
    step_s = start.elapsed_time(end) / 1000 / WEIGH_STEPS
    return {"setup_s": setup_s, "step_s": step_s}


WEIGH_ORDER = ("fused", "eager", "eager", "fused")
"""Each kind weighed twice, in an order that gives both the same share of a load that changes slowly."""
WEIGH_AGREE = 1.3
"""The most one kind's two weighed steps may differ (the larger over the smaller) for the costs to be recorded."""


class UnsettledError(RuntimeError):
    """The two weighings of a kind disagree: other work on the GPU, most likely. Nothing is recorded, so the
    cache is weighed again after the next run."""


def weigh(folder: Path) -> fused.Costs:
    """The weighings (``WEIGH_ORDER``), each in a process of its own (a second in one process would find CUDA,
    cuDNN and the compiled code already loaded), combined and recorded in ``costs.json``."""
    measured: dict[str, list[dict[str, float]]] = {"fused": [], "eager": []}
    for kind in WEIGH_ORDER:
        measured[kind].append(_weigh_in_process(folder, kind))
    costs = combined(measured)
    write_record(folder / fused.COSTS, costs)
    return costs


def _weigh_in_process(folder: Path, kind: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-m", "rocmtui.train.fused_build", "--weigh", kind, str(folder)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise RuntimeError(f"weighing {kind} kernels failed: {last[0]}")
    return decode_json(done.stdout.strip().splitlines()[-1].encode(), dict[str, float], what=kind)


def combined(measured: dict[str, list[dict[str, float]]]) -> fused.Costs:
    """The lower of each kind's weighings (a GPU's time is only ever added to by other work, a start's by cold
    file caches); UnsettledError where a kind's steps differ by more than ``WEIGH_AGREE`` (a start moves
    with the files the first process reads from disk, a captured step only with other work on the GPU)."""
    for kind, weighings in measured.items():
        steps = [weighing["step_s"] for weighing in weighings]
        if max(steps) > WEIGH_AGREE * min(steps):
            shown = " and ".join(f"{1000 * step:.3f} ms" for step in steps)
            raise UnsettledError(f"a step with {kind} kernels weighed {shown}: other work on the GPU?")
    low = {kind: {field: min(w[field] for w in weighings) for field in ("setup_s", "step_s")}
           for kind, weighings in measured.items()}  # fmt: skip
    return fused.Costs(
        fused_setup_s=low["fused"]["setup_s"],
        eager_setup_s=low["eager"]["setup_s"],
        fused_step_s=low["fused"]["step_s"],
        eager_step_s=low["eager"]["step_s"],
    )


def _stop_compile_workers() -> None:
    try:
        from torch._inductor.async_compile import shutdown_compile_workers
    except ImportError:  # an Inductor without it: its workers end with this process
        return
    shutdown_compile_workers()


def main(argv: list[str]) -> int:
    os.umask(0o077)  # every file of the cache, Inductor's and Triton's too, is this user's alone (fused.damage)
    if len(argv) == 3 and argv[0] == "--weigh" and argv[1] in ("fused", "eager"):
        print(encode_json(weigh_here(Path(argv[2]), argv[1])).decode())
        return 0
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
        if (folder / fused.READY).exists() and fused.read_costs(folder) is not None:
            return 0
        return _build_and_weigh(folder)


def _build_and_weigh(folder: Path) -> int:
    """Build the cache unless it is ready, then weigh it; the lock held."""
    try:
        if not (folder / fused.READY).exists():
            seconds = build(folder)
            print(f"fused kernels: built in {seconds:.1f} s in {folder}", file=sys.stderr)
        costs = weigh(folder)
    except UnsettledError as err:  # nothing recorded: the next run finds the cache unweighed and asks again
        print(f"fused kernels: not weighed: {err}; weighed again after the next run", file=sys.stderr)
        return 0
    except Exception as err:  # any failure is recorded once, so no later run tries again
        write_record(folder / fused.FAILED, {"error": first_line(err, with_type=True)})
        print(f"fused kernels: build failed: {first_line(err, with_type=True)}", file=sys.stderr)
        return 1
    print(
        f"fused kernels: weighed: start {costs.fused_setup_s:.2f} s against {costs.eager_setup_s:.2f} s eager, "
        f"a step {1000 * costs.fused_step_s:.3f} ms against {1000 * costs.eager_step_s:.3f} ms",
        file=sys.stderr,
    )
    for old in fused_prune.prune(folder.parent, folder):
        print(f"fused kernels: removed the unused cache {old}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
