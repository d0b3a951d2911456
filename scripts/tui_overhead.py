"""Measure what the live UI costs the training: the same run headless and in the TUI, alternated.

The TUI run happens in a pseudo-terminal of the given size whose output is drained (and counted) by this
script, as a terminal would. Each run's throughput comes from its own metrics.jsonl (EpochCompleted
images/s, epochs after the first, so warm-up is left out). Pairs alternate their order (headless first,
then TUI first, ...) so a drift of the machine's speed over the session does not favour either mode.
Prints one row per run, the ratio TUI / headless of each pair, and the median of those ratios.
``--control`` replaces the TUI run by a second headless run: the spread of its ratios is the noise floor
of the measurement on that machine.

    python scripts/tui_overhead.py --repeats 2 -- cifar --epochs 3 --batch-size 64

Also imported by ``scripts/time_to_result.py`` (``parse_run_args``, ``run_tui``): keep those two stable.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from rocmtui.events import EpochCompleted
from rocmtui.run.stream import read_events


def epoch_rates(runs_dir: Path) -> list[float]:
    """images/s of each EpochCompleted after the first, from the only run folder under ``runs_dir``."""
    (run_dir,) = [p for p in runs_dir.iterdir() if p.is_dir()]
    rates = [e.images_per_s for e in read_events(run_dir) if isinstance(e, EpochCompleted)]
    return rates[1:] or rates


def children_cpu_s() -> float:
    """CPU seconds used so far by this process's waited-for children."""
    usage = os.times()
    return usage.children_user + usage.children_system


def run_headless(train_args: list[str], runs_dir: Path) -> tuple[float, int, float]:
    """(wall s, bytes written, cpu s) of a --headless run."""
    cpu, start = children_cpu_s(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rocmtui", "train", *train_args, "--headless", "--runs-dir", str(runs_dir)],
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start, len(done.stdout), children_cpu_s() - cpu


def run_tui(train_args: list[str], runs_dir: Path, cols: int, rows: int) -> tuple[float, int, float]:
    """(wall s, bytes drawn, cpu s) of a TUI run in a pty of cols x rows that exits when training ends."""
    cpu = children_cpu_s()
    pid, fd = pty.fork()
    if pid == 0:  # child: become the app
        os.environ["TERM"] = "xterm-256color"
        os.execv(
            sys.executable,
            [sys.executable, "-m", "rocmtui", "train", *train_args, "--exit-on-finish", "--runs-dir", str(runs_dir)],
        )
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    start, drawn = time.perf_counter(), 0
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            drawn += len(chunk)
    _, status = os.waitpid(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"TUI run failed with exit status {os.waitstatus_to_exitcode(status)}")
    return wall, drawn, children_cpu_s() - cpu


def parse_run_args(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, list[str], tuple[int, int]]:
    """``--repeats``, ``--size`` and the train arguments after ``--``, beside the caller's own options."""
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--size", default="120x40", help="terminal size for the TUI runs, COLSxROWS")
    parser.add_argument("train_args", nargs=argparse.REMAINDER, help="arguments for 'rocmtui train' after --")
    args = parser.parse_args()
    train_args = [a for a in args.train_args if a != "--"] or ["cifar"]
    cols, rows = (int(x) for x in args.size.split("x"))
    return args, train_args, (cols, rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--control", action="store_true", help="headless against headless: the noise floor")
    args, train_args, (cols, rows) = parse_run_args(parser)

    other = "headless2" if args.control else "tui"
    ratios: list[float] = []
    print(f"{'mode':9} {'images/s':>10} {'wall s':>7} {'cpu s':>6} {'bytes/s out':>11}")
    for repeat in range(args.repeats):
        rates: dict[str, float] = {}
        for mode in ("headless", other) if repeat % 2 == 0 else (other, "headless"):
            with tempfile.TemporaryDirectory() as tmp:
                runs = Path(tmp)
                if mode == "tui":
                    wall, out, cpu = run_tui(train_args, runs, cols, rows)
                else:
                    wall, out, cpu = run_headless(train_args, runs)
                rates[mode] = statistics.median(epoch_rates(runs))
            print(f"{mode:9} {rates[mode]:10.0f} {wall:7.1f} {cpu:6.1f} {out / wall:11.0f}", flush=True)
        ratios.append(rates[other] / rates["headless"])
        print(f"pair {repeat + 1}: {other} / headless = {ratios[-1]:.3f}", flush=True)
    where = "control, headless twice" if args.control else f"TUI at {cols}x{rows}"
    print(
        f"{other} / headless throughput: median {statistics.median(ratios):.3f}, "
        f"range {min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} pairs ({' '.join(train_args)}; {where})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
