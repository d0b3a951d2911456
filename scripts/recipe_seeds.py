"""A recipe over several seeds, in one process: final accuracy (plain and with TTA), training time, time to 94%.

Each run is ``train()`` as ``rocmtui train cifar --recipe NAME --seed S`` runs it (checkpoints included),
so the figures are the run's own clock: training time with test passes and pauses left out. Runs after
the first reuse the process's CUDA context and cudnn plans, as a second run in a terminal would not:
the start-up cost is measured apart (``scripts/time_to_result.py``).

    python scripts/recipe_seeds.py --seeds 5 --epochs 8,9 --data-dir ~/cifar10   # a folder holding cifar10.npz
    python scripts/recipe_seeds.py --data-dir ~/cifar10 -- --no-cudnn-benchmark   # more options after --
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
from pathlib import Path

from rocmtui.cli.parser import build_parser
from rocmtui.cli.train_options import config_from_args
from rocmtui.config import RECIPES, TrainConfig
from rocmtui.events import EpochCompleted, RunControl, RunFinished, TrainEvent
from rocmtui.milestones import accuracy_times, first_reached
from rocmtui.train.loop import train

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
        "acc": done.final_test_acc,
        "tta": done.tta_test_acc,
        "train_s": done.total_s,
        "epochs_s": sum(e.seconds for e in epochs),
        "eval_s": done.eval_s,
        "to_target_s": first_reached(accuracy_times(epochs, done), TARGET),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default="fast", choices=sorted(RECIPES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", default="", help="comma list of epoch counts to try (default: the recipe's)")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("train_args", nargs=argparse.REMAINDER, help="more 'rocmtui train' options, after --")
    args = parser.parse_args()
    more = [a for a in args.train_args if a != "--"]
    where = ["--data-dir", str(args.data_dir)] if args.data_dir else []
    base = config_from_args(build_parser().parse_args(["train", "cifar", "--recipe", args.recipe, *where, *more]))
    counts = [int(x) for x in args.epochs.split(",") if x] or [base.epochs]
    print(f"`rocmtui train cifar --recipe {args.recipe} {' '.join(more)}`".replace("  ", " ").replace(" `", "`"))
    print("| epochs | seed | test acc | with TTA | training s | epochs' own s | test passes s | 94% at s |")
    print("|---|---|---|---|---|---|---|---|")
    for count in counts:
        results = []
        for seed in range(args.seeds):
            r = one_run(dataclasses.replace(base, epochs=count, seed=seed))
            results.append(r)
            to = "-" if r["to_target_s"] is None else f"{r['to_target_s']:.2f}"
            print(
                f"| {count} | {seed} | {100 * (r['acc'] or 0):.2f}% | {100 * (r['tta'] or 0):.2f}% | "
                f"{r['train_s']:.3f} | {r['epochs_s']:.3f} | {r['eval_s']:.2f} | {to} |",
                flush=True,
            )
        tta = [100 * (r["tta"] or 0) for r in results]
        secs = [float(r["train_s"] or 0) for r in results]
        spread = statistics.stdev(tta) if len(tta) > 1 else 0.0
        print(
            f"| {count} | mean of {len(results)} | {statistics.mean(100 * (r['acc'] or 0) for r in results):.2f}% | "
            f"**{statistics.mean(tta):.2f}%** (sd {spread:.2f}) | **{statistics.mean(secs):.3f}** "
            f"(max {max(secs):.3f}) | | | |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
