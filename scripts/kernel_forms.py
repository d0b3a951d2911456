"""What the fast recipe's captured step costs on a GPU for each form of fastnet's layers (CUDA events, medians).

Each form's fused kernels are compiled in this process as a background build compiles them
(``fused_build.compiled_engine``, over random images of CIFAR-10's shape, in a fresh Inductor cache), then
each captured step (one a crop side) is timed and its GPU time split by kernel under ``torch.profiler``:

- the 2x2 pools as ``max_pool2d`` or as ``models.window_max`` under ``torch.compile`` (``_Pool``);
- the whitening conv's outputs as they are (24 channels) or zero-padded to 32 (``_Whiten.pad_outputs``);
- with ``--coordesc``, the last form again with Inductor's coordinate-descent tuning of its kernels.

Then the first group's conv alone in cuDNN (3x3, 64 filters, 31x31, batch 2,000, bf16, channels_last; forward,
input and weight gradients) for 24 to 64 input channels.

    python scripts/kernel_forms.py --out $OUT/forms.json
    python scripts/kernel_forms.py --forms "as before,both" --coordesc
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch
import torch._inductor.config
from fast_levers import gpu_ms, recipe_config
from torch.profiler import ProfilerActivity, profile

from rocmtui.config import TrainConfig
from rocmtui.run.format import write_record
from rocmtui.train import fused, fused_build, models
from rocmtui.train.step import GraphSteps

FORMS = {"as before": (False, False), "window max": (True, False), "whiten padded": (False, True), "both": (True, True)}
"""Each form's (``_Pool.window_max_when_compiled``, ``_Whiten.pad_outputs``)."""
STEPS_AT = {32: 175, 24: 25}
"""The recipe's steps at each crop side (its first epoch of 25 steps at 24 px)."""


def form_steps(config: TrainConfig, form: str, root: Path, coordesc: bool) -> dict[str, Any]:
    window, padded = FORMS[form]
    models._Pool.window_max_when_compiled = window
    models._Whiten.pad_outputs = padded
    torch._dynamo.reset()
    torch._inductor.config.coordinate_descent_tuning = coordesc
    device, shape = torch.device("cuda"), (3, 32, 32)
    folder = root / f"{form}{' coordesc' if coordesc else ''}".replace(" ", "-")
    folder.mkdir(parents=True)
    identity = fused.identity(config, device, shape, 10, 50_000)
    write_record(folder / fused.REQUEST, {"identity": identity, "config": config.to_dict()})
    started = time.perf_counter()
    engine = fused_build.compiled_engine(folder)
    built_s = time.perf_counter() - started
    graphs = engine.optimisation.step
    assert isinstance(graphs, GraphSteps)
    result: dict[str, Any] = {"built_s": built_s, "steps_ms": {}, "kernels_32": []}
    for (step_shape, _frozen), step in graphs.steps.items():
        ms = gpu_ms(lambda step=step: step(step.x, step.y, engine.stats), repeats=40)
        engine.stats.drain()
        result["steps_ms"][int(step_shape[-1])] = ms
        if step_shape[-1] == 32:
            result["kernels_32"] = kernel_table(lambda step=step: step(step.x, step.y, engine.stats))
            engine.stats.drain()
    result["run_steps_s"] = sum(result["steps_ms"].get(side, 0.0) * n for side, n in STEPS_AT.items()) / 1000
    return result


def kernel_table(work: Any, steps: int = 10) -> list[dict[str, Any]]:
    """The GPU time a step of ``work`` spends in each kernel, the largest first."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            work()
        torch.cuda.synchronize()
    totals: defaultdict[str, float] = defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            totals[event.name[:90]] += (event.time_range.end - event.time_range.start) / 1000 / steps
    return [{"name": name, "us": ms * 1000} for name, ms in sorted(totals.items(), key=lambda kv: -kv[1])[:20]]


def conv_ms(channels: int, batch: int = 2000, side: int = 31) -> float:
    """The first group's conv over ``channels`` inputs: forward, input and weight gradients."""
    last = torch.channels_last
    x = torch.randn(batch, channels, side, side, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=last)
    w = torch.randn(64, channels, 3, 3, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=last)
    x.requires_grad_(True)
    w.requires_grad_(True)
    grad = torch.randn(batch, 64, side, side, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=last)

    def work() -> None:
        torch.nn.functional.conv2d(x, w, padding=1).backward(grad)

    return gpu_ms(work, repeats=20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forms", default=",".join(FORMS), help="comma list of: " + ", ".join(FORMS))
    parser.add_argument("--coordesc", action="store_true", help="the last form again, with coordinate descent")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    forms = [form for form in args.forms.split(",") if form]
    unknown = sorted(set(forms) - set(FORMS))
    if unknown:
        parser.error(f"unknown forms: {', '.join(unknown)}")
    config = dataclasses.replace(recipe_config(), fused_kernels=True)
    torch.backends.cudnn.benchmark = config.cudnn_benchmark
    results: dict[str, Any] = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "forms": {}}
    runs = [(form, False) for form in forms] + ([(forms[-1], True)] if args.coordesc else [])
    with tempfile.TemporaryDirectory(prefix="kernel-forms-") as root:
        for form, coordesc in runs:
            name = form + (" + coordinate descent" if coordesc else "")
            results["forms"][name] = form_steps(config, form, Path(root), coordesc)
            got = results["forms"][name]
            steps = ", ".join(f"{side} px {ms:.3f} ms" for side, ms in sorted(got["steps_ms"].items()))
            print(f"{name}: {steps}; the recipe's steps {got['run_steps_s']:.3f} s; built in {got['built_s']:.1f} s")
            for row in got["kernels_32"][:12]:
                print(f"    {row['us']:8.1f} us  {row['name']}")
            print(flush=True)
    results["conv_ms"] = {channels: conv_ms(channels) for channels in (24, 32, 48, 64)}
    print("first group's conv alone:", {c: round(ms, 3) for c, ms in results["conv_ms"].items()}, flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
