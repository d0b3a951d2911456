"""How soon fastnet's compiled step is ready in a fresh process: eager, ``torch.compile`` over a warm Inductor
cache (how the fused kernels load today), and torch's precompile (``aot_compile`` saved once, then
``torch.compiler.load_compiled_function``), which skips Dynamo's tracing and AOTAutograd at load.

One process builds both (the cache and the saved function), then each way runs in fresh processes, interleaved:
each times from its start to its first forward and backward (the recipe's batch, bf16 autocast, channels-last,
32x32), then the capture of that step in a CUDA graph and one replay. ``--device cpu`` checks the script on a
machine without a GPU (Inductor's C++ kernels, no capture).

    python scripts/precompile_probe.py --repeats 3
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

WAYS = ("eager", "compile", "precompile")


DEVICE = os.environ.get("PROBE_DEVICE", "cuda")


def _model_and_batch(batch: int) -> tuple[Any, Any, Any]:
    import torch

    from rocmtui.train.models import build_model

    torch.manual_seed(0)
    model = build_model("fastnet", 3, 32, 10).to(DEVICE).to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, 32, 32, device=DEVICE).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (batch,), device=DEVICE)
    return model, x, y


def _sync() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def forward(model: Any, x: Any) -> Any:
    import torch

    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        return model(x)


def _build(folder: Path, batch: int) -> None:
    """Fill Inductor's cache (a compiled forward and backward) and save the precompiled function."""
    import torch

    model, x, y = _model_and_batch(batch)
    compiled = torch.compile(forward, fullgraph=True)
    torch.nn.functional.cross_entropy(compiled(model, x).float(), y).backward()
    _sync()
    model.zero_grad(set_to_none=True)  # a saved function holds no gradient of the build's step
    precompiling: Any = torch.compile(forward, fullgraph=True)  # aot_compile: torch's precompile, untyped there
    saved = precompiling.aot_compile(((model, x), {}))
    saved.save_compiled_function(str(folder / "step.bin"))
    print(json.dumps({"built": True}))


def _one(way: str, folder: Path, batch: int) -> None:
    """One way in this fresh process: seconds from its start to its first step, then to a captured step."""
    import torch

    model, x, y = _model_and_batch(batch)
    ready = time.perf_counter()
    if way == "eager":
        step_fn: Any = forward
    elif way == "compile":
        step_fn = torch.compile(forward, fullgraph=True)
    else:
        with (folder / "step.bin").open("rb") as file:
            step_fn = torch.compiler.load_compiled_function(file)
    loaded = time.perf_counter()

    def step() -> None:
        model.zero_grad(set_to_none=False)
        torch.nn.functional.cross_entropy(step_fn(model, x).float(), y).backward()

    step()
    _sync()
    first = time.perf_counter()
    if DEVICE == "cuda":
        _capture(step)
    captured = time.perf_counter()
    print(
        json.dumps(
            {
                "way": way,
                "setup_s": ready - STARTED,
                "load_s": loaded - ready,
                "first_step_s": first - loaded,
                "capture_s": captured - first,
                "to_captured_s": captured - STARTED,
            }
        )
    )


def _capture(step: Any) -> None:
    """Warm ``step`` up on a side stream, capture it in a CUDA graph and replay it once."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    graph.replay()
    torch.cuda.synchronize()


def _child(args: list[str], folder: Path) -> dict[str, Any]:
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor"),
        "TRITON_CACHE_DIR": str(folder / "triton"),
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")])
        ),
    }
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False, timeout=900
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--child", choices=("build", *WAYS), help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ["PROBE_DEVICE"] = args.device
    if args.child == "build":
        _build(args.folder, args.batch)
        return 0
    if args.child is not None:
        _one(args.child, args.folder, args.batch)
        return 0
    with tempfile.TemporaryDirectory(prefix="precompile-") as tmp:
        folder = Path(tmp)
        common = ["--folder", str(folder), "--batch", str(args.batch)]
        began = time.perf_counter()
        built = _child(["--child", "build", *common], folder)
        print(f"build: {built} in {time.perf_counter() - began:.1f} s", flush=True)
        results: dict[str, list[dict[str, Any]]] = {way: [] for way in WAYS}
        for _ in range(args.repeats):
            for way in WAYS:
                result = _child(["--child", way, *common], folder)
                results[way].append(result)
                print(way, result, flush=True)
    print("\n| way | process start to the model on the GPU | load | first step | capture | start to captured step |")
    print("|---|---|---|---|---|---|")
    for way, runs in results.items():
        good = [run for run in runs if "error" not in run]
        if not good:
            print(f"| {way} | failed: {runs[0].get('error')} | | | | |")
            continue
        cells = [statistics.median(run[key] for run in good) for key in ("setup_s", "load_s", "first_step_s")]
        cells += [statistics.median(run[key] for run in good) for key in ("capture_s", "to_captured_s")]
        print(f"| {way} | " + " | ".join(f"{value:.2f} s" for value in cells) + f" |  ({len(good)} runs, medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
