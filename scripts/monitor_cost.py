"""What a standing ``rocmtui monitor`` costs: launch to first frame, CPU, bytes drawn and RSS over time.

Runs the monitor in a pseudo-terminal of the given size, drains its output as a terminal would, and
reports: seconds from launch until the first frame is on screen (the footer's "Quit" key is drawn),
then, after a settling period, CPU use (% of one core) and bytes/s written to the terminal, and the
resident memory every ``--rss-every`` seconds, so growth over a long session shows.

    python scripts/monitor_cost.py --seconds 60                  # the 60 s CPU figure
    python scripts/monitor_cost.py --seconds 600 --rss-every 60  # RSS over 10 minutes
    python scripts/monitor_cost.py --replay screenshots/h200-monitor-recording.jsonl --size 80x24,120x40
        # a recorded GPU, looped at 1 sample/s, at each size in turn (``--source DIR``: another checkout's code,
        # for before/after figures; the replay is started through the app factory, which old versions have too)
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

import psutil


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured window after settling")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds ignored after the first frame")
    parser.add_argument("--size", default="80x24", help="terminal COLSxROWS, or several separated by commas")
    parser.add_argument("--replay", default=None, help="a 'rocmtui monitor --json'/--record file to show, looped")
    parser.add_argument("--source", default=None, help="run the rocmtui found in this folder (default: installed)")
    parser.add_argument("--rss-every", type=float, default=0.0, help="print RSS every N seconds (0: start/end)")
    parser.add_argument("monitor_args", nargs=argparse.REMAINDER, help="arguments for 'rocmtui monitor' after --")
    args = parser.parse_args()
    extra = [a for a in args.monitor_args if a != "--"]
    for size in args.size.split(","):
        cols, rows = (int(x) for x in size.split("x"))
        measure(args, cols, rows, extra)
    return 0


LAUNCH_REPLAY = (
    "import sys; from rocmtui.config import MonitorConfig; from rocmtui.gpu.replay import ReplaySource; "
    "from rocmtui.ui.app import run_monitor_app; "
    "sys.exit(run_monitor_app(MonitorConfig(), ReplaySource.from_jsonl(sys.argv[1], loop=True, interval_s=1.0)))"
)


def command(args: argparse.Namespace, extra: list[str]) -> list[str]:
    """The monitor's command line: the CLI, or the replay launcher."""
    if args.replay:
        return [sys.executable, "-c", LAUNCH_REPLAY, os.path.abspath(args.replay)]
    return [sys.executable, "-m", "rocmtui", "monitor", *extra]


def measure(args: argparse.Namespace, cols: int, rows: int, extra: list[str]) -> None:
    """One launch at one size: first frame, then CPU, bytes drawn and RSS."""
    argv = command(args, extra)
    launched = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        if args.source:
            os.environ["PYTHONPATH"] = os.pathsep.join(
                p for p in (os.path.abspath(args.source), os.environ.get("PYTHONPATH", "")) if p
            )
            os.chdir(args.source)
        os.execv(sys.executable, argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = psutil.Process(pid)

    def drain(until: float) -> int:
        """Read the terminal until ``until`` (perf_counter); returns bytes read."""
        total = 0
        while (left := until - time.perf_counter()) > 0:
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                total += len(os.read(fd, 65536))
        return total

    seen = b""
    while b"Quit" not in seen:
        ready, _, _ = select.select([fd], [], [], 10.0)
        if not ready:
            raise SystemExit("no frame within 10 s")
        seen = (seen + os.read(fd, 65536))[-4096:]
    first_frame = time.perf_counter() - launched
    drain(time.perf_counter() + args.settle)

    cpu0, start = sum(proc.cpu_times()[:2]), time.perf_counter()
    rss = [(0.0, proc.memory_info().rss)]
    end, drawn = start + args.seconds, 0
    step = args.rss_every or args.seconds
    while time.perf_counter() < end:
        drawn += drain(min(end, time.perf_counter() + step))
        rss.append((time.perf_counter() - start, proc.memory_info().rss))
    elapsed = time.perf_counter() - start
    cpu = sum(proc.cpu_times()[:2]) - cpu0
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)

    what = f"replay {args.replay}" if args.replay else f"args {' '.join(extra) or '(defaults)'}"
    print(f"size {cols}x{rows}, {what}{f', code from {args.source}' if args.source else ''}")
    print(f"launch to first frame: {first_frame:.2f} s")
    print(f"over {elapsed:.0f} s: CPU {100 * cpu / elapsed:.2f}% of one core, {drawn / elapsed:.0f} bytes/s drawn")
    print("RSS: " + ", ".join(f"{t:.0f}s {r / 2**20:.1f} MiB" for t, r in rss))


if __name__ == "__main__":
    raise SystemExit(main())
