"""How long ``rocmtui runs`` takes to show its table over many runs: 1,000 and 10,000 run folders.

Makes the folders (half train runs of 3 epochs, half tracked scripts of 200 logged steps, each with its status,
config or stream, summary; the learning rate differs between them), then starts ``python -m rocmtui runs`` in a
pseudo-terminal of 120x40 and times, from the start of the process, the moment its first frame reaches the
terminal: the status line's run count, which the table draws in the same frame as its rows. The process is then
left with ``q``. Interpreter start and imports are counted: it is what a user waits for. Also timed, in this
process: reading the rows (``load_rows``) and folding every run's series from its stream (``fold_metrics``, which
the table does on a worker after its first frame, filling the best and last columns as it goes).

    .venv/bin/python scripts/runs_table_cost.py [--counts 1000 10000] [--repeats 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import msgspec

from rocmtui.config import TrainConfig
from rocmtui.events import EpochCompleted, MetricsLogged, RunFinished, RunStarted, StepsCompleted, TrackStarted
from rocmtui.run.format import CONFIG, STATUS, SUMMARY, RunStatus, encode_file
from rocmtui.run.run_table import fold_metrics, load_rows
from rocmtui.run.stream import EventWriter

FIRST_FRAME_TIMEOUT_S = 120.0


def make_runs(runs_dir: Path, count: int) -> None:
    """``count`` finished run folders, half of each kind, newest first by name."""
    runs_dir.mkdir(parents=True)
    t0 = 1_796_000_000.0
    for n in range(count):
        run_dir = runs_dir / f"20261201-{n:06d}-run"
        run_dir.mkdir()
        lr = 10 ** (-4 + 3 * (n % 97) / 97)
        writer = EventWriter(run_dir)
        if n % 2 == 0:
            config = TrainConfig(lr=lr, epochs=3, device="cpu")
            (run_dir / CONFIG).write_bytes(encode_file(config.to_dict()))
            writer.write(
                RunStarted(config, str(run_dir), "cpu", "CPU", "CPU", "2.5", "cifar10", 1900, 100, ("a",), 30, 0, "s")
            )
            for epoch in range(3):
                writer.write(StepsCompleted(epoch, 30 * (epoch + 1), 30, 30, (2.0 - epoch * 0.3,) * 30, 1e3, lr, 1.0))
                acc = 0.3 + 0.05 * epoch + (n % 7) / 100
                writer.write(EpochCompleted(epoch, 3, 1.5, acc, 1.6, acc, lr, 1.0, 1e3, True))
            final = RunFinished("completed", 3, acc, acc, 3.0, 1e3, None, str(run_dir))
            status = RunStatus(1, "bench", "finished", t0 + n, t0 + n, "cifar10 simplecnn", "CPU", 3, 3, acc, 3.0)
        else:
            writer.write(TrackStarted("mlp", str(run_dir), {"lr": lr, "width": 64 * (1 + n % 4)}))
            steps = tuple(range(1, 201))
            losses = tuple(2.0 / (1 + s / 50) for s in steps)
            writer.write(MetricsLogged(200, {"loss": losses[-1]}, 2.0, steps=steps, logged={"loss": losses}))
            final = RunFinished("completed", 0, None, None, 2.0, 0.0, None, str(run_dir))
            status = RunStatus(1, "bench", "finished", t0 + n, t0 + n, "mlp", step=200, metric="loss")
            status = msgspec.structs.replace(status, metric_value=losses[-1], elapsed_s=2.0)
        writer.write(final)
        writer.close()
        (run_dir / SUMMARY).write_bytes(encode_file(final))
        (run_dir / STATUS).write_bytes(encode_file(status))


def first_frame_s(runs_dir: Path, count: int) -> float:
    """Seconds from starting ``rocmtui runs`` in a 120x40 pseudo-terminal to its first frame on the terminal."""
    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    marker = f"{count:,} runs".encode()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "rocmtui", "runs", "--runs-dir", str(runs_dir)],
        stdin=sub, stdout=sub, stderr=sub, env=env, start_new_session=True, close_fds=True,
    )  # fmt: skip
    os.close(sub)
    seen = b""
    try:
        while True:
            if time.perf_counter() - started > FIRST_FRAME_TIMEOUT_S:
                raise SystemExit(f"no first frame within {FIRST_FRAME_TIMEOUT_S:.0f} s")
            ready, _, _ = select.select([main], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:
                raise SystemExit("rocmtui runs ended before its first frame") from None
            seen = (seen + chunk)[-200_000:]
            if marker in seen:
                return time.perf_counter() - started
    finally:
        os.write(main, b"q")
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        os.close(main)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="make the folders here and keep them")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="runs-table-cost-"))
    try:
        for count in args.counts:
            runs_dir = root / f"runs-{count}"
            if not runs_dir.exists():
                made = time.perf_counter()
                make_runs(runs_dir, count)
                print(f"{count:,} run folders made in {time.perf_counter() - made:.1f} s", flush=True)
            frames = [first_frame_s(runs_dir, count) for _ in range(args.repeats)]
            loaded = time.perf_counter()
            rows = load_rows(runs_dir)
            load_s = time.perf_counter() - loaded
            folded = time.perf_counter()
            for row in rows:
                fold_metrics(row)
            fold_s = time.perf_counter() - folded
            print(
                f"{count:>6,} runs: first frame median {statistics.median(frames):.2f} s "
                f"(min {min(frames):.2f}, max {max(frames):.2f}, {args.repeats} starts); "
                f"rows read {load_s:.2f} s; every series folded {fold_s:.1f} s",
                flush=True,
            )
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
