"""What a viewer of a run folder costs: ``rocmtui watch`` to its first full frame, and tailing a live run.

python scripts/watch_cost.py make RUNS_DIR --steps 10000 --samples-hours 1
    # a real CPU run of the bundled sample for 10,000 steps, then an hour of GPU samples in its
    # folder (this machine's real host recording, repeated with shifted timestamps)
python scripts/watch_cost.py first-frame RUN_DIR [--size 80x24]
    # seconds from launch until the finished run's summary is drawn (whole history applied)
python scripts/watch_cost.py tail RUN_DIR --seconds 30
    # CPU of the follower alone (% of one core) while a live run writes RUN_DIR
python scripts/watch_cost.py make-tracked RUNS_DIR --steps 10000000
    # a tracked script's finished run: one loss a step, logged as fast as it goes
python scripts/watch_cost.py first-frame RUN_DIR --marker "Run finished"
    # the same first-frame measure for it, with the watcher's RSS at that moment
python scripts/watch_cost.py live-tracked RUNS_DIR --rate 1000 --seconds 30
    # the CPU of rocmtui watch (% of one core, the whole process) following a script logging RATE steps a second
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


def watch_in_pty(run_dir: Path, size: str) -> tuple[int, int]:
    """``rocmtui watch RUN_DIR`` in a pty of ``size`` (COLSxROWS): its pid and the pty's fd."""
    cols, rows = (int(x) for x in size.split("x"))
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "rocmtui", "watch", str(run_dir)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    return pid, fd


def first_frame(run_dir: Path, size: str, marker: str = "best test accuracy") -> tuple[float, float]:
    """Seconds from launch until ``marker`` is drawn, and the watcher's RSS (MiB) then."""
    import psutil

    launched = time.perf_counter()
    pid, fd = watch_in_pty(run_dir, size)
    seen = b""
    try:
        while marker.encode() not in seen:
            if select.select([fd], [], [], 60)[0]:
                seen = seen[-4096:] + os.read(fd, 65536)
            else:
                raise SystemExit(f"no {marker!r} within 60 s")
        took = time.perf_counter() - launched
        return took, psutil.Process(pid).memory_info().rss / 2**20
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


TRACKED = """
import sys, time, rocmtui
steps, rate = int(sys.argv[1]), float(sys.argv[2])
with rocmtui.track("tracked", runs_dir=sys.argv[3]) as run:
    start = time.perf_counter()
    for step in range(1, steps + 1):
        run.log(step=step, loss=1.0 / step ** 0.5)
        if rate and step % 10 == 0:
            time.sleep(max(0.0, start + step / rate - time.perf_counter()))
"""


def make_tracked(runs_dir: Path, steps: int) -> Path:
    subprocess.run([sys.executable, "-c", TRACKED, str(steps), "0", str(runs_dir)], check=True)
    run_dir = sorted(runs_dir.iterdir())[-1]
    print(run_dir)
    return run_dir


def live_tracked(runs_dir: Path, rate: float, seconds: float, size: str) -> float:
    """The watcher's CPU (% of one core) over ``seconds`` while a script logs ``rate`` steps a second."""
    import psutil

    script = subprocess.Popen(
        [sys.executable, "-c", TRACKED, str(int(rate * (seconds + 30))), str(rate), str(runs_dir)]
    )
    try:
        while not runs_dir.is_dir() or not any(runs_dir.iterdir()):
            time.sleep(0.1)
        pid, fd = watch_in_pty(sorted(runs_dir.iterdir())[-1], size)
        try:
            end = time.monotonic() + 5  # settle: start-up and history
            while time.monotonic() < end:
                if select.select([fd], [], [], 0.1)[0]:
                    os.read(fd, 65536)
            watcher = psutil.Process(pid)
            before = watcher.cpu_times()
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if select.select([fd], [], [], 0.1)[0]:
                    os.read(fd, 65536)
            after = watcher.cpu_times()
            return 100 * (after.user + after.system - before.user - before.system) / seconds
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    finally:
        script.kill()
        script.wait()


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
    parser.add_argument("what", choices=("make", "first-frame", "tail", "make-tracked", "live-tracked"))
    parser.add_argument("path", type=Path)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--samples-hours", type=float, default=1.0)
    parser.add_argument("--size", default="80x24")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--marker", default="best test accuracy", help="what first-frame waits for")
    parser.add_argument("--rate", type=float, default=1000.0, help="live-tracked: steps a second")
    args = parser.parse_args()
    if args.what == "make":
        make(args.path, args.steps, args.samples_hours)
    elif args.what == "first-frame":
        took, rss = first_frame(args.path, args.size, args.marker)
        print(f"first full frame in {took:.2f} s at {args.size}; watcher RSS {rss:.0f} MiB")
    elif args.what == "make-tracked":
        make_tracked(args.path, args.steps)
    elif args.what == "live-tracked":
        cpu = live_tracked(args.path, args.rate, args.seconds, args.size)
        print(f"watch CPU {cpu:.2f}% of one core over {args.seconds:.0f} s, {args.rate:.0f} steps/s, {args.size}")
    else:
        print(f"follower CPU {tail(args.path, args.seconds):.2f}% of one core over {args.seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
