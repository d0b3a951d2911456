"""What a viewer of a run folder costs: ``rocmtui watch`` to its first full frame, and tailing a live run.

python scripts/watch_cost.py make RUNS_DIR --steps 10000 --samples-hours 1
    # a real CPU run of the bundled sample for 10,000 steps, then an hour of GPU samples in its
    # folder (this machine's real host recording, repeated with shifted timestamps)
python scripts/watch_cost.py first-frame RUN_DIR [--size 80x24]
    # seconds from launch until the finished run's summary is drawn (whole history applied)
python scripts/watch_cost.py tail RUN_DIR --seconds 30
    # CPU of the follower alone (% of one core) while a live run writes RUN_DIR
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

HOST_RECORDING = Path(__file__).resolve().parents[1] / "tests" / "ui" / "data" / "monitor-cpu-host.jsonl"


def make(runs_dir: Path, steps: int, hours: float) -> Path:
    epochs = -(-steps // 30)  # 30 steps an epoch: the bundled sample at batch 64
    command = [sys.executable, "-m", "rocmtui", "train", "cifar", "--headless", "--device", "cpu"]
    subprocess.run([*command, "--epochs", str(epochs), "--runs-dir", str(runs_dir)], check=True)
    run_dir = sorted(runs_dir.iterdir())[-1]
    lines = [json.loads(line) for line in HOST_RECORDING.read_text().splitlines() if line.strip()]
    start = time.time() - hours * 3600
    with (run_dir / "gpu.jsonl").open("w") as out:
        for n in range(int(hours * 3600)):
            sample = dict(lines[n % len(lines)])
            sample["timestamp"] = start + n
            sample["host"] = {**sample["host"], "timestamp": start + n}
            out.write(json.dumps(sample, separators=(",", ":")) + "\n")
    print(run_dir)
    return run_dir


def first_frame(run_dir: Path, size: str) -> float:
    cols, rows = (int(x) for x in size.split("x"))
    launched = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "rocmtui", "watch", str(run_dir)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    seen = b""
    try:
        while b"best test accuracy" not in seen:
            if select.select([fd], [], [], 30)[0]:
                seen = seen[-4096:] + os.read(fd, 65536)
            else:
                raise SystemExit("no summary within 30 s")
        return time.perf_counter() - launched
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def tail(run_dir: Path, seconds: float) -> float:
    from rocmtui.events import RunControl
    from rocmtui.run.follow import follow

    control = RunControl()
    counted: list[float] = []

    def run() -> None:
        begin = time.thread_time()
        follow(run_dir, lambda event: None, control)
        counted.append(time.thread_time() - begin)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(seconds)
    control.leave.set()
    thread.join()
    return 100 * counted[0] / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("make", "first-frame", "tail"))
    parser.add_argument("path", type=Path)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--samples-hours", type=float, default=1.0)
    parser.add_argument("--size", default="80x24")
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    if args.what == "make":
        make(args.path, args.steps, args.samples_hours)
    elif args.what == "first-frame":
        print(f"first full frame in {first_frame(args.path, args.size):.2f} s at {args.size}")
    else:
        print(f"follower CPU {tail(args.path, args.seconds):.2f}% of one core over {args.seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
