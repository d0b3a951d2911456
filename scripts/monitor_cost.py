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
    python scripts/monitor_cost.py --tool rocmtui,nvtop,nvitop --size 80x24,120x40 --seconds 30 -- --backend nvml
        # side by side with nvtop and nvitop (each from PATH / this Python), the tools interleaved at each size

The first frame is the same kind of moment for every tool: the first time the bottom-most text that the
tool always paints in its first full frame reaches the terminal. Each of them paints a whole frame in one
burst, top row first, so that text arrives as the frame completes (see TOOLS for each tool's text and
where it comes from). Some tools paint before they have read the GPU: the first GPU reading is reported
apart, as the first time the tool's reading text is on the terminal.

``--replay``, ``--source`` and the arguments after ``--`` apply to rocmtui alone; nvtop and nvitop run with
their defaults. A table of all runs, in markdown, ends the output (``--table FILE`` writes it there too).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import sys
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil


@dataclass(frozen=True)
class Tool:
    """A monitor to measure, and the texts that mark its first frame and its first GPU reading."""

    name: str
    frame_text: bytes  # the bottom-most text it always paints in its first full frame
    frame_where: str  # where that text is, for the report
    reading_text: bytes | None  # on the terminal once a GPU reading is; None: read before the first frame
    reading_where: str
    reads_gpu: bool = True  # False: a reference that draws no GPU (the Textual floor)


TOOLS = {
    tool.name: tool
    for tool in (
        Tool(
            "rocmtui",
            b"Quit",
            'the key bar\'s "q Quit", on the bottom row (that frame says "waiting for the first sample": '
            "the backend is detected once it is on screen)",
            # the GPU card's border title "GPU 0 · <name>", set when the first sample with that GPU is shown
            "GPU 0 \N{MIDDLE DOT}".encode(),
            'the first GPU card\'s title "GPU 0 \N{MIDDLE DOT} <name>", drawn with its first sample',
        ),
        Tool(
            "textual",
            b"Quit",
            'the bottom row\'s "q Quit" (scripts/textual_floor.py: a Textual app of one text line and that row, '
            "the floor of any app on this Textual)",
            None,
            "none: it reads no GPU",
            reads_gpu=False,
        ),
        Tool(
            "nvtop",
            b"Quit",
            'the shortcut bar\'s "F10Quit", on the bottom row (interface.c: draw_process_shortcuts, the last '
            "window refreshed before the frame's doupdate)",
            None,
            "read before the first frame (nvtop.c: the main loop refreshes the GPUs' data before its first draw)",
        ),
        Tool(
            "nvitop",
            b"GPU-MEM",
            'the process panel\'s column header " GPU  PID  USER  GPU-MEM ...", the bottom panel of its main '
            "screen (panels/process.py; only a status line and the panel's border follow it in the first frame)",
            None,
            "read before the first frame (panels/device.py: DevicePanel.__init__ takes the first snapshot)",
        ),
    )
}


@dataclass
class Result:
    """One launch of one tool at one size."""

    tool: str
    size: str
    first_frame: float | None = None
    first_reading: float | None = None
    cpu_percent: float | None = None
    bytes_per_s: float | None = None
    rss_mib: float | None = None
    error: str | None = None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured window after settling")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds ignored after the first frame")
    parser.add_argument("--size", default="80x24", help="terminal COLSxROWS, or several separated by commas")
    parser.add_argument("--tool", default="rocmtui", help=f"one of {', '.join(TOOLS)}, or several separated by commas")
    parser.add_argument("--warmup", action="store_true", help="launch each tool once to its first frame, unmeasured")
    parser.add_argument("--frame-timeout", type=float, default=20.0, help="seconds allowed from launch to first frame")
    parser.add_argument("--table", default=None, help="also write the final markdown table to this file")
    parser.add_argument("--replay", default=None, help="a 'rocmtui monitor --json'/--record file to show, looped")
    parser.add_argument("--source", default=None, help="run the rocmtui found in this folder (default: installed)")
    parser.add_argument("--rss-every", type=float, default=0.0, help="print RSS every N seconds (0: start/end)")
    parser.add_argument("monitor_args", nargs=argparse.REMAINDER, help="arguments for 'rocmtui monitor' after --")
    args = parser.parse_args()
    extra = [a for a in args.monitor_args if a != "--"]
    unknown = [name for name in args.tool.split(",") if name not in TOOLS]
    if unknown:
        parser.error(f"unknown tool {', '.join(unknown)} (known: {', '.join(TOOLS)})")
    tools = [TOOLS[name] for name in args.tool.split(",")]
    sizes = [(int(c), int(r)) for c, r in (size.split("x") for size in args.size.split(","))]
    if args.warmup:
        for tool in tools:
            warm_up(args, tool, *sizes[0], extra)
    results = [measure(args, tool, cols, rows, extra) for cols, rows in sizes for tool in tools]
    table = markdown_table(results, tools)
    print()
    print(table)
    if args.table:
        with open(args.table, "w", encoding="utf-8") as out:
            out.write(table + "\n")
    return 1 if any(r.error for r in results) else 0


LAUNCH_REPLAY = (
    "import sys; from rocmtui.config import MonitorConfig; from rocmtui.gpu.replay import ReplaySource; "
    "from rocmtui.ui.app import run_monitor_app; "
    "sys.exit(run_monitor_app(MonitorConfig(), ReplaySource.from_jsonl(sys.argv[1], loop=True, interval_s=1.0)))"
)


class ToolMissingError(Exception):
    """The tool's program is not installed here."""


def command(args: argparse.Namespace, tool: Tool, extra: list[str]) -> list[str]:
    """The tool's command line; its first item is the program's path."""
    if tool.name == "nvtop":
        path = shutil.which("nvtop")
        if path is None:
            raise ToolMissingError("nvtop is not on PATH")
        return [path]
    if tool.name == "nvitop":
        return [sys.executable, "-m", "nvitop"]
    if tool.name == "textual":
        return [sys.executable, str(Path(__file__).resolve().parent / "textual_floor.py")]
    if args.replay:
        return [sys.executable, "-c", LAUNCH_REPLAY, os.path.abspath(args.replay)]
    return [sys.executable, "-m", "rocmtui", "monitor", *extra]


class ExitedError(Exception):
    """The program ended (or closed its terminal) while it was being measured."""


ESCAPES = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[@-Z\\-_])")


@dataclass
class Terminal:
    """A program in a pseudo-terminal of a given size, read as a terminal would, watching for texts."""

    pid: int
    fd: int
    launched: float
    seen: dict[bytes, float] = field(default_factory=dict)  # text -> seconds from launch to its first arrival
    watched: tuple[bytes, ...] = ()
    tail: bytes = b""

    @classmethod
    def start(cls, argv: list[str], cols: int, rows: int, watched: tuple[bytes, ...], source: str | None) -> Terminal:
        launched = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the program, on the terminal
            os.environ["TERM"] = "xterm-256color"
            if not any(os.environ.get(name) for name in ("LC_ALL", "LC_CTYPE", "LANG")):
                os.environ["LANG"] = "C.UTF-8"  # as a modern terminal would have it (curses tools draw ASCII otherwise)
            if source:
                os.environ["PYTHONPATH"] = os.pathsep.join(
                    p for p in (os.path.abspath(source), os.environ.get("PYTHONPATH", "")) if p
                )
                os.chdir(source)
            try:
                os.execv(argv[0], argv)
            except OSError as err:
                os.write(2, f"cannot run {argv[0]}: {err}\n".encode())
            os._exit(127)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        return cls(pid, fd, launched, watched=watched)

    def read(self, until: float, stop_at: bytes | None = None) -> int:
        """Read until ``until`` (perf_counter), or until ``stop_at`` has arrived; returns the bytes read."""
        total = 0
        while (left := until - time.perf_counter()) > 0 and not (stop_at and stop_at in self.seen):
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # EIO: the program has ended and the terminal is closed
                chunk = b""
            if not chunk:
                raise ExitedError(self.ended())
            total += len(chunk)
            self.tail = (self.tail + chunk)[-4096:]
            for text in self.watched:
                if text not in self.seen and text in self.tail:
                    self.seen[text] = time.perf_counter() - self.launched
        return total

    def ended(self) -> str:
        """Why the program is gone: its exit status and the last text it wrote."""
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        how = f"exit code {os.waitstatus_to_exitcode(status)}"
        text = " ".join(ESCAPES.sub(b" ", self.tail).decode(errors="replace").split())
        return f"{how}: {text[-1000:]}" if text else how

    def stop(self) -> None:
        """End the program (SIGTERM, SIGKILL after 3 s) and close the terminal."""
        if self.pid:
            os.kill(self.pid, signal.SIGTERM)
            give_up = time.perf_counter() + 3.0
            while os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                if time.perf_counter() > give_up:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    break
                self.discard(0.05)
            self.pid = 0
        os.close(self.fd)

    def discard(self, seconds: float) -> None:
        """Drop what arrives within ``seconds``: a program that is ending never blocks on a full terminal."""
        if select.select([self.fd], [], [], seconds)[0]:
            try:
                os.read(self.fd, 65536)
            except OSError:  # closed: nothing more will come
                time.sleep(seconds)


def warm_up(args: argparse.Namespace, tool: Tool, cols: int, rows: int, extra: list[str]) -> None:
    """One launch to the first frame, unmeasured: files in the page cache, bytecode written."""
    try:
        term = Terminal.start(command(args, tool, extra), cols, rows, (tool.frame_text,), args.source)
    except ToolMissingError as err:
        print(f"warm-up {tool.name}: {err}")
        return
    try:
        term.read(term.launched + args.frame_timeout, stop_at=tool.frame_text)
    except ExitedError as err:
        print(f"warm-up {tool.name}: {err}")
        return
    finally:
        term.stop()
    frame = term.seen.get(tool.frame_text)
    print(f"warm-up {tool.name}: " + (f"first frame {frame:.3f} s" if frame is not None else "no first frame"))


def measure(args: argparse.Namespace, tool: Tool, cols: int, rows: int, extra: list[str]) -> Result:
    """One launch at one size: first frame, then CPU, bytes drawn and RSS."""
    result = Result(tool.name, f"{cols}x{rows}")
    if tool.name == "rocmtui":
        what = f"replay {args.replay}" if args.replay else f"args {' '.join(extra) or '(defaults)'}"
        what += f", code from {args.source}" if args.source else ""
    else:
        what = f"{tool.name} (defaults)"
    print(f"size {cols}x{rows}, {what}")
    try:
        argv = command(args, tool, extra)
    except ToolMissingError as err:
        result.error = str(err)
        print(f"not run: {err}")
        return result
    watched = (tool.frame_text,) if tool.reading_text is None else (tool.frame_text, tool.reading_text)
    term = Terminal.start(argv, cols, rows, watched, args.source if tool.name == "rocmtui" else None)
    try:
        term.read(term.launched + args.frame_timeout, stop_at=tool.frame_text)
        if tool.frame_text not in term.seen:
            raise ExitedError(f"no first frame within {args.frame_timeout:g} s")
        result.first_frame = term.seen[tool.frame_text]
        term.read(time.perf_counter() + args.settle)

        proc = psutil.Process(term.pid)
        cpu0, start = sum(proc.cpu_times()[:2]), time.perf_counter()
        rss = [(0.0, proc.memory_info().rss)]
        end, drawn = start + args.seconds, 0
        step = args.rss_every or args.seconds
        while time.perf_counter() < end:
            drawn += term.read(min(end, time.perf_counter() + step))
            rss.append((time.perf_counter() - start, proc.memory_info().rss))
        elapsed = time.perf_counter() - start
        cpu = sum(proc.cpu_times()[:2]) - cpu0
    except (ExitedError, psutil.NoSuchProcess) as err:
        result.error = str(err) or "the program ended"
        print(f"failed: {result.error}")
        return result
    finally:
        term.stop()
    result.first_reading = term.seen.get(tool.reading_text) if tool.reading_text else result.first_frame
    result.cpu_percent, result.bytes_per_s = 100 * cpu / elapsed, drawn / elapsed
    result.rss_mib = rss[-1][1] / 2**20

    print(f"launch to first frame: {result.first_frame:.3f} s")
    if tool.reading_text is not None:
        reading = term.seen.get(tool.reading_text)
        print(f"first GPU reading: {f'{reading:.3f} s' if reading is not None else 'none on screen'}")
    print(f"over {elapsed:.0f} s: CPU {result.cpu_percent:.2f}% of one core, {result.bytes_per_s:.0f} bytes/s drawn")
    print("RSS: " + ", ".join(f"{t:.0f}s {r / 2**20:.1f} MiB" for t, r in rss))
    return result


def markdown_table(results: list[Result], tools: list[Tool]) -> str:
    """All runs in one table, then what each tool's first frame and first reading are."""
    lines = [
        "| tool | size | launch to first frame | first GPU reading | CPU, % of one core | drawn | RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.error:
            error = r.error if len(r.error) <= 200 else f"{r.error[:80]} … {r.error[-110:]}"
            lines.append(f"| {r.tool} | {r.size} | failed: {error.replace('|', '/')} | | | | |")
            continue
        tool = TOOLS[r.tool]
        reading = "none on screen" if r.first_reading is None else f"{r.first_reading:.3f} s"
        if not tool.reads_gpu:
            reading = "(reads no GPU)"
        elif tool.reading_text is None:
            reading += " (in the first frame)"
        lines.append(
            f"| {r.tool} | {r.size} | {r.first_frame:.3f} s | {reading} | {r.cpu_percent:.2f} "
            f"| {r.bytes_per_s:,.0f} B/s | {r.rss_mib:.1f} MiB |"
        )
    lines.append("")
    for tool in tools:
        lines.append(f"- {tool.name}: first frame = {tool.frame_where}; first GPU reading = {tool.reading_where}.")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
