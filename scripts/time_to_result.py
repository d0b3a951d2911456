"""From Enter to exit: a ``rocmtui train`` command against the floor, with where the seconds went.

The floor is what any torch program pays on the machine before it can train: ``python -c`` importing
torch and running one small convolution forward and backward on the GPU (no optimizer). Each repeat
runs the floor, then the command (in the TUI, in a pseudo-terminal that is drained as a terminal would,
with ``--exit-on-finish``; or ``--headless``), and reads the run folder:

- setup: launch until ``config.json`` is written (imports, CUDA, data, model, graph capture);
- training: the run's own clock (``summary.json``'s ``total_s``), and its test passes (``eval_s``);
- other: the rest until ``summary.json`` is written (checkpoints, the relay to the UI);
- exit: from ``summary.json`` to the process's end.

``--cold`` gives each run a cache folder of its own (``XDG_CACHE_HOME``, fresh: no data cache, no fused kernels),
as on a machine that never ran rocmtui, and ends the fused-kernel build such a run starts before the next one.
``--floor-after`` measures the floor after each run too (it moves by a second between runs a few seconds
apart on an H200) and gives the overhead against the mean of the two.

    python scripts/time_to_result.py --repeats 2 --mode tui,headless -- cifar --recipe fast --data-dir ~/c10
    python scripts/time_to_result.py --repeats 6 --cold --floor-after -- cifar --recipe fast --data-dir ~/c10
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import psutil
from bytecode import compile_rocmtui
from tui_overhead import parse_run_args, run_tui

FLOOR = (
    "import sys, torch; d = sys.argv[1]; x = torch.randn(8, 3, 32, 32, device=d); "
    "conv = torch.nn.Conv2d(3, 8, 3).to(d); conv(x).sum().backward(); "
    "torch.cuda.synchronize() if d != 'cpu' else None"
)


def floor_s(device: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR, device], check=True)
    return time.perf_counter() - start


@contextlib.contextmanager
def fresh_cache() -> Iterator[None]:
    """A cache folder of the run's own, as on a new machine; the fused build the run left behind is ended after."""
    with tempfile.TemporaryDirectory() as cache, mock.patch.dict(os.environ, XDG_CACHE_HOME=cache):
        try:
            yield
        finally:
            end_builds(cache)


def end_builds(cache: str) -> None:
    """End the background fused-kernel builds that write under ``cache``."""
    builds = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            cmdline = process.cmdline()
            if "rocmtui.train.fused_build" in cmdline and any(cache in part for part in cmdline):
                process.terminate()
                builds.append(process)
    for process in psutil.wait_procs(builds, timeout=10)[1]:
        process.kill()


def one_run(mode: str, train_args: list[str], cols: int, rows: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        launched = time.time()
        if mode == "tui":
            wall, _, _ = run_tui(train_args, runs, cols, rows)
        else:
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "rocmtui", "train", *train_args, "--headless", "--runs-dir", str(runs)],
                check=True,
                capture_output=True,
            )
            wall = time.perf_counter() - start
        ended = launched + wall
        (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
        deadline = time.monotonic() + 10.0  # the TUI may end before its trainer has written the summary
        while not (run_dir / "summary.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        summary = json.loads((run_dir / "summary.json").read_text())
        setup_done = (run_dir / "config.json").stat().st_mtime
        summary_at = (run_dir / "summary.json").stat().st_mtime
    training, tests = float(summary["total_s"]), float(summary.get("eval_s", 0.0))
    return {
        "wall": wall,
        "setup": setup_done - launched,
        "training": training,
        "tests": tests,
        "other": summary_at - setup_done - training - tests,
        "exit": ended - summary_at,
        "tta": summary.get("tta_test_acc") or summary.get("final_test_acc") or 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="tui", help="tui, headless, or both as 'tui,headless'")
    parser.add_argument("--device", default="cuda", help="where the floor's convolution runs")
    parser.add_argument("--cold", action="store_true", help="each run with a fresh cache folder, as on a new machine")
    parser.add_argument("--floor-after", action="store_true", help="measure the floor after each run too")
    args, train_args, (cols, rows) = parse_run_args(parser)
    compiled = compile_rocmtui()  # before any timed launch: an installed package has its bytecode
    print(f"`rocmtui train {' '.join(train_args)}`" + (f" ({compiled} modules compiled first)" if compiled else ""))
    after = "floor after s | over mean floor + training s | " if args.floor_after else ""
    print(f"| mode | floor s | Enter to exit s | setup s | training s | test passes s | other s | exit s | "
          f"over floor + training s | {after}accuracy |")  # fmt: skip
    print("|---" * (10 + 2 * args.floor_after) + "|")
    for _ in range(args.repeats):
        for mode in args.mode.split(","):
            floor = floor_s(args.device)
            with fresh_cache() if args.cold else contextlib.nullcontext():
                r = one_run(mode, train_args, cols, rows)
            over = r["wall"] - floor - r["training"]
            cells = [floor, r["wall"], r["setup"], r["training"], r["tests"], r["other"], r["exit"]]
            row = f"| {mode} | " + " | ".join(f"{cell:.2f}" for cell in cells) + f" | **{over:.2f}** | "
            if args.floor_after:
                floor_then = floor_s(args.device)
                row += f"{floor_then:.2f} | **{r['wall'] - (floor + floor_then) / 2 - r['training']:.2f}** | "
            print(row + f"{100 * r['tta']:.2f}% |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
