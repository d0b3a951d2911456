"""The control channel: viewers ask a live run to pause, resume, save or stop.

It is a file in the run folder, ``control``, that the trainer creates with mode 0600 and removes
when it ends: only the run's owner (and root) can open it, and a finished run has none. Viewers
append one JSON line a command; the trainer reads new lines at ``POLL_S`` and applies them to its
RunControl at the next step boundary. No network port is ever opened.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

import msgspec

from rocmtui.base.errors import UsageError
from rocmtui.events import RunControl
from rocmtui.run.format import COMMANDS, CONTROL, Command, ControlLine, encode_line
from rocmtui.run.lines import LineTailer

__all__ = ["COMMANDS", "Command", "CommandReader", "NotLiveError", "create_channel", "send_command"]
_DECODER = msgspec.json.Decoder(ControlLine)


class NotLiveError(UsageError):
    """The run has no control channel: it ended, or it never started."""


def create_channel(run_dir: Path) -> Path:
    """Trainer side: an empty command file, mode 0600 whatever the umask."""
    path = run_dir / CONTROL
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchmod(fd, 0o600)
    os.close(fd)
    return path


def remove_channel(run_dir: Path) -> None:
    with contextlib.suppress(OSError):
        (run_dir / CONTROL).unlink()


class CommandReader:
    """Trainer side: applies the commands appended since the last ``apply`` to a RunControl."""

    def __init__(self, run_dir: Path) -> None:
        self._lines = LineTailer(run_dir / CONTROL)

    def apply(self, control: RunControl) -> list[Command]:
        done: list[Command] = []
        for raw in self._lines.read_lines():
            try:
                command = _DECODER.decode(raw).command
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue  # not a command this version knows
            _apply(control, command)
            done.append(command)
        return done

    def close(self) -> None:
        self._lines.close()


def _apply(control: RunControl, command: Command) -> None:
    if command == "pause":
        control.pause()
    elif command == "resume":
        control.resume()
    elif command == "save":
        control.request_save()
    else:
        control.request_stop()


def send_command(run_dir: Path, command: Command) -> None:
    """Viewer side: append ``command`` to a live run's channel; a one-line UsageError when it cannot."""
    path = run_dir / CONTROL
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise NotLiveError(f"{run_dir} is not running (it has no control channel)") from None
    except PermissionError:
        raise UsageError(f"{run_dir} belongs to another user: only the run's owner can control it") from None
    except OSError as err:  # a link (ELOOP) or a FIFO without a reader (ENXIO) planted in the folder
        raise UsageError(f"{path} is not a private control channel ({err.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or info.st_uid != os.geteuid():
            raise UsageError(f"{path} is not a private control channel (mode {stat.filemode(info.st_mode)})")
        os.write(fd, encode_line(ControlLine(command, round(time.time(), 3))))
    finally:
        os.close(fd)
