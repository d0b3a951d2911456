"""Hostile input through real terminals and real special files: what reaches the pty holds no escape sequence
from outside, a recording that cannot be written is an error, a FIFO replay is refused at once."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from dataclasses import replace
from pathlib import Path

import pytest

from rocmtui.gpu.replay import ReplaySource
from rocmtui.gpu.sample_codec import dumps

pytestmark = pytest.mark.slow

RECORDING = Path(__file__).resolve().parent / "ui" / "data" / "monitor-h200-nvml.jsonl"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x1b\\"
TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[3J"


def _spawn(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, int]:
    pid, master = pty.fork()
    if pid == 0:
        for signum in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):  # at their defaults, as a terminal's shell
            signal.signal(signum, signal.SIG_DFL)  # starts a program (a background or nohup parent ignores them)
        os.environ["TERM"] = "xterm-256color"
        os.environ.update(env or {})
        os.execv(sys.executable, [sys.executable, "-m", "rocmtui", *argv])
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 200, 0, 0))
    return pid, master


CSI = re.compile(rb"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]")


def _text(seen: bytes | bytearray) -> bytes:
    """What the terminal shows, roughly: the bytes less the app's own CSI sequences (colours, moves)."""
    return CSI.sub(b"", seen)


def _read_until(master: int, wanted: bytes, timeout: float, seen: bytearray) -> bool:
    deadline = time.monotonic() + timeout
    while wanted not in _text(seen):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return wanted in _text(seen)
            if not chunk:
                return wanted in _text(seen)
            seen += chunk
    return True


def _finish(pid: int, master: int, seen: bytearray) -> int:
    """q, then the exit code (killed after 20 s: a hang fails the test)."""
    os.write(master, b"q")
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            _read_until(master, b"\0never", 0.2, seen)
            os.close(master)
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError("did not exit after q")
        _read_until(master, b"\0never", 0.1, seen)


def _hostile_recording(path: Path) -> None:
    source = ReplaySource.from_jsonl(RECORDING)
    lines = []
    for sample in source.samples[:5]:
        procs = tuple(
            replace(p, command=f"{CLIPBOARD}{TITLE}{CLEAR} [/] [@click=app.quit]x[/] python train.py", user=TITLE)
            for p in sample.processes
        )
        gpus = tuple(replace(g, name=f"{g.name} {TITLE}[b]") for g in sample.gpus)
        lines.append(dumps(replace(sample, processes=procs, gpus=gpus)))
    path.write_text("\n".join(lines) + "\n")


def test_a_hostile_process_command_line_in_the_monitor_sends_no_escape_to_the_terminal(tmp_path: Path) -> None:
    recording = tmp_path / "hostile.jsonl"
    _hostile_recording(recording)
    pid, master = _spawn(["monitor", "--replay", str(recording)])
    seen = bytearray()
    assert _read_until(master, b"\\x1b]52", 30, seen), _text(seen)[-3000:]  # drawn as visible text
    code = _finish(pid, master, seen)
    assert code == 0
    for hostile in (CLIPBOARD, TITLE, "\x1b]52", "pwned\x07"):
        assert hostile.encode() not in seen
    assert b"Traceback" not in seen and b"MarkupError" not in seen


def test_a_recording_to_a_full_device_says_so_and_exits_non_zero() -> None:
    pid, master = _spawn(["monitor", "--record", "/dev/full"])
    seen = bytearray()
    assert _read_until(master, b"rocmtui monitor", 30, seen)
    _read_until(master, b"CPU", 10, seen)
    code = _finish(pid, master, seen)
    assert code == 1 and b"No space left on device" in seen


def test_replaying_a_fifo_or_dev_zero_is_one_line_in_well_under_5_s(tmp_path: Path) -> None:
    fifo = tmp_path / "rec.jsonl"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        started = time.monotonic()
        pid, master = _spawn(["monitor", "--replay", str(target)])
        seen = bytearray()
        _read_until(master, b"\0never", 5, seen)
        done, status = 0, 0
        while not done and time.monotonic() - started < 5:
            done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(master)
        assert done, "the replay hung"
        assert time.monotonic() - started < 5
        said = seen.decode(errors="replace").strip()
        assert os.waitstatus_to_exitcode(status) == 2 and "not a regular file" in said
        assert len(said.splitlines()) == 1


def test_plain_runs_output_in_a_pty_holds_no_escape(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / f"20261201-080000-{CLIPBOARD}"
    run_dir.mkdir(parents=True)
    (run_dir / "status.json").write_text(json.dumps({"state": "finished", "name": TITLE}))
    pid, master = _spawn(["runs", "--plain", "--runs-dir", str(tmp_path / "runs")])  # the listing, not the table
    seen = bytearray()
    _read_until(master, b"\0never", 10, seen)
    os.waitpid(pid, 0)
    os.close(master)
    assert CLIPBOARD.encode() not in seen and TITLE.encode() not in seen


def _run_to_end(argv: list[str], env: dict[str, str], timeout: float = 60) -> tuple[int, bytes]:
    pid, master = _spawn(argv, env)
    seen = bytearray()
    deadline = time.monotonic() + timeout
    while True:
        _read_until(master, b"\0never", 0.2, seen)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            _read_until(master, b"\0never", 0.2, seen)
            os.close(master)
            return os.waitstatus_to_exitcode(status), bytes(seen)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError("did not end")


def test_term_dumb_gets_plain_lines_and_a_scripts_escapes_are_shown_not_sent(tmp_path: Path) -> None:
    script = f"print({CLIPBOARD!r} + ' hello')"
    code, seen = _run_to_end(["run", "--runs-dir", str(tmp_path), "--", sys.executable, "-c", script], {"TERM": "dumb"})
    assert code == 0 and b"hello" in seen
    assert CLIPBOARD.encode() not in seen and b"\\x1b]52" in seen
    assert b"\x1b[?1049h" not in seen  # no full-screen UI on a dumb terminal
    pid, master = _spawn(["monitor"], {"TERM": "dumb"})  # what a pipe gets: JSON lines, not the full-screen UI
    lines = bytearray()
    try:
        assert _read_until(master, b'"schema"', 30, lines)
        assert b"\x1b[?1049h" not in lines
    finally:
        os.kill(pid, signal.SIGINT)
        os.waitpid(pid, 0)
        os.close(master)
