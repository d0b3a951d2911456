"""From Enter to exit: a ``rocmtui train`` command against the floor, with where the seconds went.

The floor is what any torch program pays on the machine before it can train: ``python -c`` importing
torch and running one small convolution forward and backward on the GPU (no optimizer). Each repeat
runs the floor, then the command (in the TUI, in a pseudo-terminal that is drained as a terminal would,
with ``--exit-on-finish``; or ``--headless``), and reads the run folder:

- setup: launch until ``config.json`` is written (imports, CUDA, data, model, graph capture);
- training: the run's own clock (``summary.json``'s ``total_s``), and its test passes (``eval_s``);
- other: the rest until ``summary.json`` is written (checkpoints, the relay to the UI);
- exit: from ``summary.json`` to the process's end.

    python scripts/time_to_result.py --repeats 2 --mode tui,headless -- cifar --recipe fast --data-dir ~/c10
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    args, train_args, (cols, rows) = parse_run_args(parser)
    compiled = compile_rocmtui()  # before any timed launch: an installed package has its bytecode
    print(f"`rocmtui train {' '.join(train_args)}`" + (f" ({compiled} modules compiled first)" if compiled else ""))
    print("| mode | floor s | Enter to exit s | setup s | training s | test passes s | other s | exit s | "
          "over floor + training s | accuracy |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for _ in range(args.repeats):
        for mode in args.mode.split(","):
            floor = floor_s(args.device)
            r = one_run(mode, train_args, cols, rows)
            over = r["wall"] - floor - r["training"]
            print(
                f"| {mode} | {floor:.2f} | {r['wall']:.2f} | {r['setup']:.2f} | {r['training']:.2f} | "
                f"{r['tests']:.2f} | {r['other']:.2f} | {r['exit']:.2f} | **{over:.2f}** | {100 * r['tta']:.2f}% |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
