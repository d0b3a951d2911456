"""``rocmtui bench``: the guide's loop against the engine on the same workload, one shareable line each;
then a recipe (on a GPU, ``fast``) with its time to 94%."""

from __future__ import annotations

import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from rocmtui.bench import reference_loop as reference
from rocmtui.bench.anchor_file import load_anchor
from rocmtui.codec import encode_json
from rocmtui.config import ModelName, TrainConfig
from rocmtui.events import EpochCompleted, RunControl, RunFinished, TrainEvent
from rocmtui.run.milestones import accuracy_times, first_reached
from rocmtui.run.shareable import shareable_line
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.device import describe_device, resolve_device
from rocmtui.train.loop import train
from rocmtui.train.recipes import RECIPES
from rocmtui.train.telemetry import TemperatureWatch

QUICK_STEPS = 300
"""Steps per epoch with ``--quick`` (one epoch)."""
TARGET_ACC = 0.94
"""The recipe run reports when it first reached this test accuracy."""


@dataclass(frozen=True)
class BenchOptions:
    epochs: int
    model: ModelName
    quick: bool
    json: bool
    data_dir: Path | None
    device: str
    fast: bool
    recipe: str | None = None
    """A recipe to run after the two, reporting its time to ``TARGET_ACC``: default ``fast`` on a GPU, none on
    the CPU (``none`` leaves it out)."""
    anchors: tuple[Path, ...] = ()
    """JSONs of other programs' times (``anchor_file.load_anchor``), each printed beside the recipe's."""


@dataclass(frozen=True)
class BenchResult:
    """One run's shareable figures."""

    run: str
    model: str
    dataset: str
    gpu: str
    torch: str
    epochs: int
    seconds: float
    images_per_s: float
    peak_vram_bytes: int | None
    peak_temp_c: float | None
    test_acc: float
    time_to_target_s: float | None = None
    """A recipe run's training time until its test accuracy first reached ``TARGET_ACC`` (None: not reached)."""
    tta: bool = False
    """Whether ``test_acc`` is the final pass with test-time augmentation."""
    result_s: float | None = None
    """Time to result, at airbench's boundaries: the training and the final test pass (with TTA where the
    model has it); the per-epoch test passes left out."""

    def line(self) -> str:
        line = shareable_line(
            run=self.run, model=self.model, dataset=self.dataset, gpu=self.gpu, torch=self.torch,
            epochs=self.epochs, seconds=self.seconds, images_per_s=self.images_per_s,
            peak_vram_bytes=self.peak_vram_bytes, peak_temp_c=self.peak_temp_c, test_acc=self.test_acc, tta=self.tta,
        )  # fmt: skip
        if self.run.startswith("recipe"):  # its accuracy is the final test-time-augmented pass's, where it has one
            reached = self.time_to_target_s
            line += f" | {TARGET_ACC:.0%} " + ("not reached" if reached is None else f"at {reached:.2f} s")
            if self.result_s is not None:
                line += f" | result in {self.result_s:.2f} s"
        return line


def run_bench(options: BenchOptions) -> int:
    """Run both loops in this process and print the results; 0 when both finished, 1 otherwise."""
    epochs = 1 if options.quick else options.epochs
    anchors = [load_anchor(path) for path in options.anchors]  # each refused in one line before any run
    config = TrainConfig(model=options.model, epochs=epochs, device=options.device, data_dir=options.data_dir)
    device = resolve_device(config)
    source = resolve_source(config)
    arrays = load_arrays(source)
    name, backend = describe_device(device)
    dataset = "cifar10" + (" (sample)" if source.kind == "sample" else "")
    common = {"model": options.model, "dataset": dataset, "gpu": name, "torch": f"{torch.__version__} ({backend})"}
    max_steps = QUICK_STEPS if options.quick else None
    watch = TemperatureWatch()
    watch.start()
    try:
        train_set, test_set = reference.datasets(None if source.kind == "folder" else arrays, source.path)
        t0 = time.time()
        ref = reference.run_reference(train_set, test_set, config.epochs, device, options.model, max_steps)
        guide = BenchResult(
            "guide loop", common["model"], common["dataset"], common["gpu"], common["torch"],
            epochs=config.epochs, seconds=ref.seconds, images_per_s=ref.images / ref.seconds,
            peak_vram_bytes=ref.peak_memory_bytes, peak_temp_c=watch.peak(t0, time.time()), test_acc=ref.test_acc,
        )  # fmt: skip
        ours = _engine_run(config, options, device, max_steps, common, watch)
        recipe = options.recipe or ("fast" if device.type == "cuda" else "none")
        cooked = None if ours is None or recipe == "none" else _recipe_run(recipe, config, max_steps, common, watch)
    finally:
        watch.stop()
    if ours is None or (recipe != "none" and cooked is None):
        return 1
    speedup = guide.seconds / ours.seconds if ours.seconds > 0 else float("inf")
    if options.json:
        out = {"guide": asdict(guide), "rocmtui": asdict(ours), "speedup": round(speedup, 2)}
        out |= {"recipe": asdict(cooked)} if cooked else {}
        out |= {"anchors": [asdict(anchor) | {"median_s": anchor.median_s} for anchor in anchors]} if anchors else {}
        print(encode_json(out).decode())
    else:
        print(guide.line())
        print(ours.line())
        print(f"speedup: {speedup:.1f}x (rocmtui {'fastest settings' if options.fast else 'default settings'})")
        if cooked is not None:
            print(cooked.line())
        for anchor in anchors:
            print(anchor.line())
            if cooked is not None and cooked.result_s:
                print(f"time to result: {cooked.run} {cooked.result_s:.2f} s against {anchor.median_s:.2f} s "
                      f"({anchor.median_s / cooked.result_s:.2f}x)")  # fmt: skip
    return 0


def _engine_run(  # noqa: PLR0917 - a private helper of run_bench, called once
    config: TrainConfig,
    options: BenchOptions,
    device: torch.device,
    max_steps: int | None,
    common: dict[str, str],
    watch: TemperatureWatch,
) -> BenchResult | None:
    fast = options.fast and device.type == "cuda"
    run_config = replace(config, cuda_graph=fast, max_steps_per_epoch=max_steps, checkpoint_every_epoch=False)
    return _timed_run("rocmtui" + (" --cuda-graph" if fast else ""), run_config, common, watch)


def _recipe_run(
    name: str, config: TrainConfig, max_steps: int | None, common: dict[str, str], watch: TemperatureWatch
) -> BenchResult | None:
    """The recipe as ``train --recipe NAME`` runs it (checkpoints too), on the same data and device."""
    settings = RECIPES[name].settings
    run_config = replace(config, **settings, max_steps_per_epoch=max_steps)
    if max_steps is not None:
        run_config = replace(run_config, epochs=1)
    return _timed_run(f"recipe {name}", run_config, common | {"model": run_config.model}, watch)


def _timed_run(run: str, config: TrainConfig, common: dict[str, str], watch: TemperatureWatch) -> BenchResult | None:
    epochs: list[EpochCompleted] = []

    def keep(event: TrainEvent) -> None:
        if isinstance(event, EpochCompleted):
            epochs.append(event)

    with tempfile.TemporaryDirectory(prefix="rocmtui-bench-") as runs_dir:
        t0 = time.time()
        summary = train(replace(config, runs_dir=Path(runs_dir)), keep, RunControl())
    event = summary.event
    if not isinstance(event, RunFinished):
        print(f"rocmtui bench: the {run} run failed ({event.kind}): {event.message}")
        return None
    return BenchResult(
        run, common["model"], common["dataset"], common["gpu"], common["torch"],
        epochs=event.epochs_completed, seconds=event.total_s, images_per_s=event.images_per_s,
        peak_vram_bytes=event.peak_memory_bytes, peak_temp_c=watch.peak(t0, time.time()),
        test_acc=event.tta_test_acc or event.final_test_acc or 0.0, tta=event.tta_test_acc is not None,
        time_to_target_s=first_reached(accuracy_times(epochs, event), TARGET_ACC),
        result_s=event.total_s + final_pass_s(event, epochs),
    )  # fmt: skip


def final_pass_s(finished: RunFinished, epochs: list[EpochCompleted]) -> float:
    """Seconds of the run's last test pass (with TTA where it has one): all passes less the epochs' own."""
    return max(0.0, finished.eval_s - sum(e.eval_s for e in epochs))
