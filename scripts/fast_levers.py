"""The fast recipe's step, piece by piece, on a GPU: what each lever of the training time is worth.

Builds the fast recipe's engine (fastnet, Muon, batch 2,000, bf16, channels_last) over random images of
CIFAR-10's shape, so no data set is needed, and times with CUDA events (medians over repeats):

- ``optimizer``: the optimizer step alone, captured in a CUDA graph: Newton-Schulz per filter, batched
  over padded filters, and the batched one without the filters' renormalisation (the most that applying
  it less often could save);
- ``step``: the whole captured training step (forward, backward, optimizer), both Newton-Schulz forms;
- ``outside``: what the loop does outside the graph each step (the batch's gather and crops, the rates),
  as GPU time per step;
- ``tta``: the final test pass with test-time augmentation: six forward passes per batch, the five
  extra views in one batch, those views for the least certain quarter only, and that through
  ``torch.compile``;
- ``compile MODE``: the model through ``torch.compile(mode=MODE)`` inside the captured step, with the
  seconds the compile and capture took (Inductor's cache: ``TORCHINDUCTOR_CACHE_DIR``).

    python scripts/fast_levers.py --out $OUT/levers.json
    python scripts/fast_levers.py --only compile --compile-mode max-autotune-no-cudagraphs

Also imported by ``scripts/fused_cache.py`` (``gpu_ms``, ``random_arrays``) and ``scripts/loop_gaps.py``
(``random_arrays``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import torch

from rocmtui.config import TrainConfig
from rocmtui.train import evaluate as evaluation
from rocmtui.train import tta as views
from rocmtui.train.dataset import Arrays
from rocmtui.train.engine import Engine, build_engine, capture_graph
from rocmtui.train.gpudata import batch_rows, permutation
from rocmtui.train.learning_rates import set_lr
from rocmtui.train.recipes import RECIPES

CLASSES = tuple(f"class{i}" for i in range(10))


def random_arrays(train: int = 50_000, test: int = 10_000) -> Arrays:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (train + test, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, train + test).astype(np.int64)
    return Arrays(images[:train], labels[:train], images[train:], labels[train:], CLASSES)


def recipe_config() -> TrainConfig:
    return TrainConfig(**{**RECIPES["fast"].settings, "device": "cuda"})


def gpu_ms(work: Callable[[], object], repeats: int = 100, rounds: int = 5) -> float:
    """Median over ``rounds`` of the mean milliseconds of ``work`` over ``repeats`` calls (after a warm-up)."""
    for _ in range(10):
        work()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            work()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / repeats)
    return statistics.median(times)


def set_muon(engine: Engine, batched: bool) -> None:
    for group in engine.optimizer.param_groups:
        if group.get("muon"):
            group["batched"] = batched


def unit_norm(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
    """``Tensor.norm`` without its work: every norm 1 (the filters' renormalisation skipped)."""
    return torch.ones((), device=self.device)


def optimizer_ms(engine: Engine, batched: bool, renormalise: bool = True) -> float:
    set_muon(engine, batched)
    for param in engine.model.parameters():
        if param.requires_grad:
            param.grad = torch.randn_like(param) * 1e-3
    optimizer = engine.optimizer
    with contextlib.ExitStack() as patches:
        if not renormalise:
            patches.enter_context(mock.patch.object(torch.Tensor, "norm", unit_norm))
        optimizer.step()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            optimizer.step()
    return gpu_ms(graph.replay)


def step_ms(arrays: Arrays, batched: bool, compile_mode: str | None = None) -> dict[str, float]:
    engine = build_engine(recipe_config(), arrays, torch.device("cuda"))
    set_muon(engine, batched)
    started = time.perf_counter()
    if compile_mode:
        # torch.compile of a Module gives an OptimizedModule, itself a Module; its stubs promise only a callable
        engine.eager.model = torch.compile(engine.eager.model, mode=compile_mode, dynamic=False)  # type: ignore[assignment]
    capture_graph(engine)
    torch.cuda.synchronize()
    ready_s = time.perf_counter() - started
    step = engine.optimisation.step
    x, y = engine.data.train_x[:2000], engine.data.train_y[:2000]
    ms = gpu_ms(lambda: step(x, y, engine.stats), repeats=20)
    engine.stats.drain()
    return {"step_ms": ms, "ready_s": ready_s}


def outside_ms(arrays: Arrays) -> float:
    """GPU time per step of the loop's work outside the graph: the batch cut from the epoch's images, the rates."""
    engine = build_engine(recipe_config(), arrays, torch.device("cuda"))
    config, n = engine.config, int(engine.data.train_y.shape[0])
    order = permutation(n, engine.batching.gen)
    images, labels = engine.augmenter.epoch(engine.data.train_x, order, 0), engine.data.train_y[order]
    state = {"step": 0}

    def one() -> None:
        step = state["step"] % engine.batching.steps_per_epoch
        x = batch_rows(images, step, config.batch_size, True)
        y = batch_rows(labels, step, config.batch_size, True)
        set_lr(engine.optimizer, config, state["step"] % engine.total_steps, engine.total_steps)
        x.sum(), y.sum()
        state["step"] += 1

    return gpu_ms(one, repeats=25)


def old_tta(model: torch.nn.Module, x: torch.Tensor, tta: bool, share: float = 1.0) -> torch.Tensor:
    """The TTA pass as it was: six forward passes of the batch."""

    def mirrored(images: torch.Tensor) -> torch.Tensor:
        return (model(images) + model(images.flip(-1))) / 2

    h, w = x.shape[-2:]
    padded = torch.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect")
    return (mirrored(x) + (mirrored(padded[..., :h, :w]) + mirrored(padded[..., 2:, 2:])) / 2) / 2


def tta_ms(arrays: Arrays) -> dict[str, float]:
    """The final test pass each way: the eager ones, then the quarter's through ``torch.compile`` (its compile
    outside the timing, as a run loads it from the fused cache before its clock starts)."""
    engine = build_engine(recipe_config(), arrays, torch.device("cuda"))
    model, prepare = engine.eval_model, engine.eager.prepare
    out: dict[str, float] = {}
    quarter = views.batch_logits(model, prepare, 0.25)
    ways = (
        ("six_passes", lambda images, tta: old_tta(model, prepare(images), tta)),
        ("views_batched", views.batch_logits(model, prepare, 1.0)),
        ("quarter", quarter),
        ("quarter_compiled", torch.compile(quarter, dynamic=False)),
    )
    for name, of_batch in ways:
        engine.nets = dataclasses.replace(engine.nets, test_logits=of_batch)
        out[name] = gpu_ms(lambda: evaluation.evaluate(engine, tta=True), repeats=3, rounds=5)
    engine.nets = dataclasses.replace(engine.nets, test_logits=quarter)
    out["plain"] = gpu_ms(lambda: evaluation.evaluate(engine), repeats=3, rounds=5)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=["optimizer", "step", "outside", "tta"])
    parser.add_argument("--compile-mode", default="default")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    arrays = random_arrays()
    results: dict[str, Any] = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
    if "optimizer" in args.only:
        engine = build_engine(recipe_config(), arrays, torch.device("cuda"))
        results["optimizer"] = {
            "per_filter_ms": optimizer_ms(engine, batched=False),
            "batched_ms": optimizer_ms(engine, batched=True),
            "batched_no_renorm_ms": optimizer_ms(engine, batched=True, renormalise=False),
        }
        print("optimizer", results["optimizer"], flush=True)
    if "step" in args.only:
        results["step"] = {"per_filter": step_ms(arrays, False), "batched": step_ms(arrays, True)}
        print("step", results["step"], flush=True)
    if "outside" in args.only:
        results["outside_ms"] = outside_ms(arrays)
        print("outside", results["outside_ms"], flush=True)
    if "tta" in args.only:
        results["tta_ms"] = tta_ms(arrays)
        print("tta", results["tta_ms"], flush=True)
    if "compile" in args.only:
        results[f"compile {args.compile_mode}"] = step_ms(arrays, True, args.compile_mode)
        print(f"compile {args.compile_mode}", results[f"compile {args.compile_mode}"], flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
