"""Helpers for the tests that drive real processes and ptys: waiting, draining a pty, liveness."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import sys
import termios
from pathlib import Path

from steady_run import first_running
from waiting import wait_for

from rocmtui.run.status import RunStatus, read_status

wait_until = wait_for


def drain(fd: int) -> None:
    """Read what the UI drew, so that its writes never block on a full pty."""
    while select.select([fd], [], [], 0)[0]:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:
            return


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Terminal:
    """The reading end of a pty: everything drawn on it so far, read without blocking."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.drawn = bytearray()

    def read(self) -> bytes:
        while select.select([self.fd], [], [], 0.05)[0]:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            self.drawn.extend(chunk)
        return bytes(self.drawn)


class UiProcess:
    """A UI started in a pty, its screen drained while waiting; ``ended`` gets its exit code once it exits."""

    def __init__(self, pid: int, master: int) -> None:
        self.pid, self.terminal = pid, Terminal(master)
        self.ended: list[int] = []

    def exited(self) -> bool:
        self.terminal.read()
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.ended.append(os.waitstatus_to_exitcode(status))
        return bool(pid)


def first_epoch(runs: Path, ui_fd: int, where: str) -> tuple[Path, RunStatus]:
    """Wait, reading what the UI draws on ``ui_fd``, until the one run under ``runs`` has trained an epoch."""
    return first_running(runs, lambda status: status.epoch >= 1, 120, f"the first epoch {where}", lambda: drain(ui_fd))


def trains_on(run_dir: Path, epoch_then: int, after: str) -> None:
    """Wait until the run has trained past ``epoch_then``."""

    def advanced() -> bool:
        status = read_status(run_dir)
        return status is not None and status.epoch > epoch_then

    wait_until(advanced, 60, f"an epoch after {after}")


def start_tui(runs: Path, *flags: str) -> tuple[int, int]:
    """``rocmtui train cifar`` in a pty of 80x24, in the pty's session as a login shell would start it."""
    return start_in_pty("train", "cifar", "--epochs", "200", "--runs-dir", str(runs), *flags)


def start_in_pty(*args: str) -> tuple[int, int]:
    """``rocmtui ARGS`` in a pty of 80x24, in the pty's session as a login shell would start it."""
    argv = [sys.executable, "-m", "rocmtui", *args]
    ui_pid, master = pty.fork()
    if ui_pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, argv)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    return ui_pid, master
