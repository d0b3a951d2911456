"""What a training step costs at each crop side of ``--crop-sizes``, on a GPU (CUDA events, medians).

Builds the fast recipe's engine with the given sides over random images of CIFAR-10's shape, with its fused
kernels (the cache built first, as ``scripts/recipe_seeds.py`` does, unless ``--no-fused-kernels``), captures
one graph a side (and, with eager kernels and Muon, one for the whitening bias frozen) as a run does,
and times each captured step:

    python scripts/crop_cost.py --sides 28,24,20
    python scripts/crop_cost.py --sides 24 --no-fused-kernels
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import torch
from fast_levers import gpu_ms, random_arrays, recipe_config

from rocmtui.train import fused
from rocmtui.train.engine import build_engine, capture_graph
from rocmtui.train.step import GraphSteps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", default="28,24", help="crop sides to time beside the full 32 px, comma list")
    parser.add_argument("--no-fused-kernels", action="store_true", help="eager kernels in the graphs")
    parser.add_argument("--fused-mode", default="default", choices=["default", "max-autotune"])
    args = parser.parse_args()
    sides = tuple(int(side) for side in args.sides.split(",") if side)
    config = dataclasses.replace(
        recipe_config(), crop_sizes=sides, fused_kernels=not args.no_fused_kernels, fused_mode=args.fused_mode
    )
    device, arrays = torch.device("cuda"), random_arrays()
    start = time.perf_counter()
    process = fused.build_later(
        fused.plan(config, device, (3, 32, 32), 10, len(arrays.train_labels), len(arrays.test_labels))
    )
    if process is not None:
        process.wait()
    print(f"fused kernels built or found in {time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    engine = build_engine(config, arrays, device)
    capture_graph(engine)
    torch.cuda.synchronize()
    graphs = engine.optimisation.step
    assert isinstance(graphs, GraphSteps)
    print(f"engine and {len(graphs.steps)} captures: {time.perf_counter() - start:.1f} s, fused {engine.fused.state}")
    base = None
    print("| side | whitening bias | step, ms | against 32 px, learning | pixels against 32 px |")
    print("|---|---|---|---|---|")
    for (shape, frozen), step in sorted(graphs.steps.items(), key=lambda item: (-item[0][0][-1], item[0][1])):
        ms = gpu_ms(lambda step=step: step(step.x, step.y, engine.stats), repeats=40)
        engine.stats.drain()
        base = base or ms
        side, state = shape[-1], "frozen" if frozen else "learning"
        print(f"| {side} | {state} | {ms:.3f} | {ms / base:.3f} | {(side - 1) ** 2 / 31**2:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
