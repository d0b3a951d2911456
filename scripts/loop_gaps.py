"""Where a run's clock goes outside its training steps: the GPU's idle time inside one run, by loop phase.

Runs a recipe (``--recipe fast`` by default) as ``rocmtui train`` does (``train()``, checkpoints included),
once as a warm-up, then once under ``torch.profiler`` (CPU and CUDA activities) with the loop's phases
labelled: the epoch's draw, each step, the epoch's end, the test pass (set aside by the run's clock), the
checkpoint, the final pass. Prints the run's clock, the GPU's busy time inside it, and its idle time by the
phase the host was in when the GPU waited, with the longest gaps; a third run without the profiler bounds
what the profiler itself added to the clock.

    python scripts/loop_gaps.py --data-dir ~/c10            # a folder holding cifar10.npz
    python scripts/loop_gaps.py -- --crop-sizes 24          # more 'rocmtui train' options after --
    python scripts/loop_gaps.py --random-images             # random images of CIFAR-10's shape (timing only)

It also sums the GPU's kernels and copies inside the training by name (``kernels``), so that the steps' own
GPU time in a run can be set beside the time a captured step takes alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from fast_levers import random_arrays
from recipe_seeds import build_fused, config_of
from torch.profiler import ProfilerActivity, profile, record_function

from rocmtui.config import TrainConfig
from rocmtui.events import RunControl, RunFinished
from rocmtui.train import engine as engine_module
from rocmtui.train import epochs, saving, step
from rocmtui.train import progress_events as report
from rocmtui.train.data import save_npz
from rocmtui.train.loop import train

PHASES = "loop."
"""The labels' prefix; every label below is a phase of the loop."""
GAP_FLOOR_US = 5.0
"""Idle stretches shorter than this are the GPU's own launch spacing, not waiting for the host."""


def labelled(owner: Any, name: str, label: str) -> None:
    """Run ``owner.name`` inside ``record_function(label)`` from now on."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with record_function(PHASES + label):
            return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def label_loop() -> None:
    labelled(engine_module.Augmenter, "epoch", "draw")
    labelled(epochs, "permutation", "permutation")
    labelled(step.GraphSteps, "__call__", "step")
    labelled(step.EagerStep, "__call__", "step")
    labelled(epochs, "set_lr", "rates")
    labelled(report.Reporter, "flush", "flush")
    labelled(epochs.EpochLoop, "_end_epoch", "end_epoch")
    labelled(epochs, "evaluate", "evaluate")
    labelled(saving.Saver, "take", "checkpoint")
    labelled(saving.Saver, "after_epoch", "checkpoint")
    labelled(epochs.EpochLoop, "_finish", "finish")


def one_run(config: TrainConfig) -> RunFinished:
    with tempfile.TemporaryDirectory() as runs:
        summary = train(dataclasses.replace(config, runs_dir=Path(runs)), lambda _event: None, RunControl())
    if not isinstance(summary.event, RunFinished):
        raise SystemExit(f"run failed: {summary.event.message}")
    return summary.event


def launched_ms(prof: Any) -> dict[str, float]:
    """The GPU time of the work each labelled phase launched (its whole subtree), over the profiled run."""
    totals: defaultdict[str, float] = defaultdict(float)
    for event in prof.events():
        if event.name.startswith(PHASES) and event.device_type != torch.autograd.DeviceType.CUDA:
            totals[event.name[len(PHASES) :]] += float(event.device_time_total) / 1000
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def spans(prof: Any) -> tuple[list[tuple[float, float, str]], list[tuple[float, float, str]]]:
    """The host's labelled phases and the GPU's kernels and copies, each (start µs, end µs, name)."""
    host, gpu = [], []
    for event in prof.events():
        start, end = float(event.time_range.start), float(event.time_range.end)
        if event.device_type == torch.autograd.DeviceType.CUDA:
            if not event.name.startswith(PHASES):  # the labels' own spans on the GPU's timeline: not work
                gpu.append((start, end, event.name))
        elif event.name.startswith(PHASES):
            host.append((start, end, event.name[len(PHASES) :]))
    return sorted(host), sorted(gpu)


def innermost(host: list[tuple[float, float, str]], at: float) -> str:
    """The shortest labelled phase the host was in at ``at`` (µs), or ``loop`` between phases."""
    inside = [(end - start, name) for start, end, name in host if start <= at <= end]
    return min(inside)[1] if inside else "loop"


def analyse(host: list[tuple[float, float, str]], gpu: list[tuple[float, float, str]]) -> dict[str, Any]:
    """The GPU's busy and idle time from the first draw to the last step's end, test passes left out."""
    draws = [s for s in host if s[2] == "draw"]
    steps = [s for s in host if s[2] == "step"]
    if not draws or not steps:
        raise SystemExit("no labelled draw or step in the profile: the loop's names have changed")
    set_aside = [(s, e) for s, e, name in host if name == "evaluate"]
    begin = draws[0][0]
    final_pass = max(s for s, _ in set_aside) if set_aside else steps[-1][1]  # the TTA pass after the last step
    end = max((e for s, e, _ in gpu if s < final_pass), default=steps[-1][1])
    busy, gaps = 0.0, []
    idle_by_phase: defaultdict[str, float] = defaultdict(float)
    cursor = begin
    for began, stop, _name in gpu:
        if stop <= cursor or began >= end:
            continue
        start = max(began, cursor)
        if start - cursor >= GAP_FLOOR_US:
            idle = _without(cursor, start, set_aside)
            if idle > 0:
                phase = innermost(host, (cursor + start) / 2)
                idle_by_phase[phase] += idle
                gaps.append((idle, phase, cursor - begin))
        busy += _without(start, min(stop, end), set_aside)
        cursor = max(cursor, min(stop, end))
    aside = sum(min(e, end) - max(s, begin) for s, e in set_aside if e > begin and s < end)
    return {
        "span_ms": (end - begin) / 1000,
        "set_aside_ms": aside / 1000,
        "busy_ms": busy / 1000,
        "idle_ms": {k: v / 1000 for k, v in sorted(idle_by_phase.items(), key=lambda kv: -kv[1])},
        "longest_gaps": [
            {"ms": g / 1000, "phase": p, "at_ms": t / 1000} for g, p, t in sorted(gaps, reverse=True)[:15]
        ],
        "steps": len(steps),
        "kernels": kernels(gpu, begin, end, set_aside),
        "kernels_total_ms": sum(k["ms"] for k in kernels(gpu, begin, end, set_aside, top=10**6)),
    }


def kernels(
    gpu: list[tuple[float, float, str]], begin: float, end: float, holes: list[tuple[float, float]], top: int = 25
) -> list[dict[str, Any]]:
    """The GPU time of each kernel or copy name inside [begin, end] less the test passes, the largest first."""
    totals: defaultdict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for start, stop, name in gpu:
        if stop <= begin or start >= end:
            continue
        took = _without(max(start, begin), min(stop, end), holes)
        if took > 0:
            totals[name][0] += took
            totals[name][1] += 1
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])
    return [{"name": name[:90], "ms": ms / 1000, "count": int(count)} for name, (ms, count) in ranked[:top]]


def _without(start: float, stop: float, holes: list[tuple[float, float]]) -> float:
    """The length of [start, stop] outside the ``holes`` (the test passes the clock sets aside)."""
    length = stop - start
    for s, e in holes:
        length -= max(0.0, min(stop, e) - max(start, s))
    return max(0.0, length)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default="fast")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--trace", type=Path, default=None, help="write the profiled run's Chrome trace here")
    parser.add_argument("--random-images", action="store_true", help="random images of CIFAR-10's shape")
    parser.add_argument("train_args", nargs=argparse.REMAINDER, help="more 'rocmtui train' options, after --")
    args = parser.parse_args()
    if args.random_images:
        args.data_dir = Path(tempfile.mkdtemp(prefix="loop-gaps-"))
        save_npz(random_arrays(), args.data_dir / "cifar10.npz")
    where = ["--data-dir", str(args.data_dir)] if args.data_dir else []
    config = config_of(args.recipe, [*where, *(a for a in args.train_args if a != "--")])
    build_fused(config)
    label_loop()
    warm = one_run(config)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities) as prof:
        profiled = one_run(config)
    plain = one_run(config)
    if args.trace:
        prof.export_chrome_trace(str(args.trace))
    figures = analyse(*spans(prof)) | {
        "launched_ms": launched_ms(prof),
        "clock_s": {"warm_up": warm.total_s, "profiled": profiled.total_s, "plain": plain.total_s},
    }
    clock = figures["clock_s"]
    print(f"run's clock: {clock['plain']:.3f} s plain, {clock['profiled']:.3f} s profiled", end="")
    print(f" (warm-up {clock['warm_up']:.3f})")
    print(f"profiled span {figures['span_ms']:.1f} ms over {figures['steps']} steps: ", end="")
    print(f"GPU busy {figures['busy_ms']:.1f} ms, test passes set aside {figures['set_aside_ms']:.1f} ms")
    print("| phase | GPU time it launched, ms |\n|---|---|")
    for phase, ms in figures["launched_ms"].items():
        print(f"| {phase} | {ms:.2f} |")
    print("| host phase while the GPU waited | GPU idle, ms |\n|---|---|")
    for phase, ms in figures["idle_ms"].items():
        print(f"| {phase} | {ms:.2f} |")
    print("| kernel or copy, inside the training | GPU ms | count |\n|---|---|---|")
    for kernel in figures["kernels"]:
        print(f"| {kernel['name']} | {kernel['ms']:.2f} | {kernel['count']} |")
    print(f"all kernels and copies inside the training: {figures['kernels_total_ms']:.1f} ms")
    print(
        "longest gaps: "
        + ", ".join(f"{g['ms']:.2f} ms in {g['phase']} at {g['at_ms']:.0f} ms" for g in figures["longest_gaps"])
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
