"""A recipe over several seeds, in one process: final accuracy (plain and with TTA), training time, time to 94%.

"Result" is the time to result at airbench's boundaries: the whitening layer's initialisation (timed apart,
once), the training (the run's clock) and the final test pass with test-time augmentation. With the recipe's
fused kernels, a missing cache is built first (in the background process a run would start, waited for), so
that every seed runs with the same kernels; ``--json FILE`` keeps each run's figures.

Each run is ``train()`` as ``rocmtui train cifar --recipe NAME --seed S`` runs it (checkpoints included),
so the figures are the run's own clock: training time with test passes and pauses left out. Runs after
the first reuse the process's CUDA context and cudnn plans, as a second run in a terminal would not:
the start-up cost is measured apart (``scripts/time_to_result.py``).

    python scripts/recipe_seeds.py --seeds 5 --epochs 8,9 --data-dir ~/cifar10   # a folder holding cifar10.npz
    python scripts/recipe_seeds.py --data-dir ~/cifar10 -- --no-cudnn-benchmark   # more options after --
    python scripts/recipe_seeds.py --variant "" --variant "--jitter 0.1"   # several settings, one process

Also imported by ``scripts/loop_gaps.py`` (``build_fused``, ``config_of``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from rocmtui.cli.parser import build_parser
from rocmtui.cli.train_options import config_from_args
from rocmtui.config import TrainConfig
from rocmtui.events import EpochCompleted, RunControl, RunFinished, TrainEvent
from rocmtui.run.milestones import accuracy_times, first_reached
from rocmtui.train import models
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.gpudata import Normalizer, to_device
from rocmtui.train.loop import train
from rocmtui.train.recipes import RECIPES

TARGET = 0.94


def one_run(config: TrainConfig) -> dict[str, float | None]:
    epochs: list[EpochCompleted] = []

    def keep(event: TrainEvent) -> None:
        if isinstance(event, EpochCompleted):
            epochs.append(event)

    with tempfile.TemporaryDirectory() as runs:
        summary = train(dataclasses.replace(config, runs_dir=Path(runs)), keep, RunControl())
    done = summary.event
    if not isinstance(done, RunFinished):
        raise SystemExit(f"run failed: {done.message}")
    return {
        "seed": config.seed,
        "acc": done.final_test_acc,
        "tta": done.tta_test_acc,
        "train_s": done.total_s,
        "epochs_s": sum(e.seconds for e in epochs),
        "eval_s": done.eval_s,
        "tta_s": final_pass_s(done, epochs),
        "to_target_s": first_reached(accuracy_times(epochs, done), TARGET),
    }


def final_pass_s(finished: RunFinished, epochs: list[EpochCompleted]) -> float:
    """The last test pass's seconds (with TTA): all passes less the epochs' own (also for older trees, which
    this script can measure through ``PYTHONPATH``)."""
    return max(0.0, finished.eval_s - sum(e.eval_s for e in epochs))


def whitening_s(config: TrainConfig) -> float:
    """The median seconds of fastnet's whitening initialisation on the run's device and data (synced)."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = to_device(load_arrays(resolve_source(config)), device)
    model = models.FastNet(data.channels, data.size, len(data.classes)).to(device)
    normalizer = Normalizer(data.channels, device, plain=False)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        model.init_whitening(normalizer(data.train_x[:5000]))
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def build_fused(config: TrainConfig) -> None:
    """Build the recipe's fused-kernel cache now if it is missing, as a run's background build would."""
    if not (getattr(config, "fused_kernels", False) and torch.cuda.is_available()):
        return
    from rocmtui.train import fused

    arrays = load_arrays(resolve_source(config))
    shape = (arrays.train_images.shape[3], arrays.train_images.shape[1], arrays.train_images.shape[2])
    count, tests = len(arrays.train_labels), len(arrays.test_labels)
    plan = fused.plan(config, torch.device("cuda"), shape, len(arrays.classes), count, tests)
    start = time.perf_counter()
    process = fused.build_later(plan)
    if process is not None:
        process.wait()
        plan = fused.plan(config, torch.device("cuda"), shape, len(arrays.classes), count, tests)
    print(f"fused kernels: {plan.state} ({time.perf_counter() - start:.1f} s to get there) {plan.folder}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default="fast", choices=sorted(RECIPES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0, help="the seeds are this one and the next")
    parser.add_argument("--epochs", default="", help="comma list of epoch counts to try (default: the recipe's)")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every run's figures here")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="more 'rocmtui train' options for one line of the table, quoted (repeat it: one line each)",
    )
    parser.add_argument("train_args", nargs=argparse.REMAINDER, help="more 'rocmtui train' options, after --")
    args = parser.parse_args()
    more = [a for a in args.train_args if a != "--"]
    where = ["--data-dir", str(args.data_dir)] if args.data_dir else []
    lines = [(variant, config_of(args.recipe, [*where, *more, *shlex.split(variant)])) for variant in args.variant]
    base = config_of(args.recipe, [*where, *more])
    lines = lines or [("", base)]
    whiten = whitening_s(base)
    print(f"whitening initialisation: {1000 * whiten:.1f} ms (median of 5)")
    kept = []
    for variant, config in lines:
        build_fused(config)
        counts = [int(x) for x in args.epochs.split(",") if x] or [config.epochs]
        kept += seeds_table(args, f"{' '.join(more)} {variant}", config, counts, whiten)
    if args.json:
        args.json.write_text(json.dumps({"whitening_s": whiten, "runs": kept}, indent=2))
    return 0


def config_of(recipe: str, options: list[str]) -> TrainConfig:
    return config_from_args(build_parser().parse_args(["train", "cifar", "--recipe", recipe, *options]))


def seeds_table(
    args: argparse.Namespace, options: str, base: TrainConfig, counts: list[int], whiten: float
) -> list[dict[str, Any]]:
    """One table: each epoch count over the seeds, a line a run and one for their means."""
    kept = []
    print(f"`rocmtui train cifar --recipe {args.recipe} {options.strip()}`".replace("  ", " ").replace(" `", "`"))
    print(
        "| epochs | seed | test acc | with TTA | training s | epochs' own s | test passes s | TTA pass s | result s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for count in counts:
        results = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            r = one_run(dataclasses.replace(base, epochs=count, seed=seed))
            r["result_s"] = whiten + float(r["train_s"] or 0) + float(r["tta_s"] or 0)
            results.append(r)
            kept.append(r | {"epochs": count, "options": options.strip()})
            print(
                f"| {count} | {seed} | {100 * (r['acc'] or 0):.2f}% | {100 * (r['tta'] or 0):.2f}% | "
                f"{r['train_s']:.3f} | {r['epochs_s']:.3f} | {r['eval_s']:.2f} | {r['tta_s']:.3f} | "
                f"{r['result_s']:.3f} |",
                flush=True,
            )
        tta = [100 * (r["tta"] or 0) for r in results]
        secs = [float(r["train_s"] or 0) for r in results]
        done = [float(r["result_s"] or 0) for r in results]
        spread = statistics.stdev(tta) if len(tta) > 1 else 0.0
        print(
            f"| {count} | mean of {len(results)} | {statistics.mean(100 * (r['acc'] or 0) for r in results):.2f}% | "
            f"**{statistics.mean(tta):.2f}%** (sd {spread:.2f}) | **{statistics.mean(secs):.3f}** "
            f"(max {max(secs):.3f}) | | | | median **{statistics.median(done):.3f}** "
            f"({min(done):.3f} to {max(done):.3f}) |",
            flush=True,
        )
    return kept


if __name__ == "__main__":
    raise SystemExit(main())
