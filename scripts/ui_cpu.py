"""What the training UI's own process costs while a run trains: CPU (% of one core) and bytes drawn.

Starts ``rocmtui train ARGS`` in a pseudo-terminal of the given size (the trainer runs in its own process, so
the UI process is the pty's child alone), drains and counts what it draws, waits ``--settle`` seconds, then
measures the UI process with psutil over ``--seconds``; then stops the run (q, y) and waits for the exit.

    python scripts/ui_cpu.py --size 120x40 --seconds 30 -- cifar --data-dir ~/c10 --epochs 20
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import struct
import sys
import termios
import time

import psutil


def drain(fd: int, until: float) -> int:
    """Read what the UI draws until ``until``; returns the bytes read."""
    total = 0
    while (left := until - time.monotonic()) > 0:
        if select.select([fd], [], [], min(left, 0.2))[0]:
            try:
                total += len(os.read(fd, 65536))
            except OSError:
                break
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="120x40")
    parser.add_argument("--settle", type=float, default=15.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("train_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cols, rows = (int(x) for x in args.size.split("x"))
    train_args = [a for a in args.train_args if a != "--"]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "rocmtui", "train", *train_args])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    ui = psutil.Process(pid)
    drain(fd, time.monotonic() + args.settle)
    cpu_before, start = sum(ui.cpu_times()[:2]), time.monotonic()
    drawn = drain(fd, start + args.seconds)
    cpu = sum(ui.cpu_times()[:2]) - cpu_before
    wall = time.monotonic() - start
    print(f"UI process: {100 * cpu / wall:.2f}% of one core, {drawn / wall / 1000:.2f} KB/s drawn over {wall:.0f} s")
    os.write(fd, b"q")
    drain(fd, time.monotonic() + 1.0)
    os.write(fd, b"y")
    drain(fd, time.monotonic() + 30.0)
    os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
