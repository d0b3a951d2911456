"""The control channel: viewers ask a live run to pause, resume, save or stop.

It is a file in the run folder, ``control``, that the trainer creates once (``O_EXCL``, ``O_NOFOLLOW``, mode
0600 whatever the umask) and removes when it ends: only the run's owner (and root) can open it, and a finished
run has none. Viewers append one JSON line a command; the trainer reads new lines at ``POLL_S`` through the
descriptor it created the file with and applies them to its RunControl at the next step boundary. A file put
in its place later (by anyone who can write the folder: a group under umask 002, everyone under umask 0) is
never read: the trainer reports the replacement once and keeps listening to its own file. No network port is
ever opened.
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

__all__ = ["COMMANDS", "Command", "CommandReader", "NotLiveError", "send_command"]
_DECODER = msgspec.json.Decoder(ControlLine)


class NotLiveError(UsageError):
    """The run has no control channel: it ended, or it never started."""


def _create(path: Path) -> int:
    """A fresh, empty channel, mode 0600 whatever the umask; its descriptor (read-only)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a channel left by a writer that died
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


class CommandReader:
    """Trainer side: creates the channel and applies the commands appended since the last ``apply`` to a
    RunControl, read through the descriptor it was created with, never through the path again."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / CONTROL
        fd = _create(self.path)
        info = os.fstat(fd)
        self._identity = (info.st_dev, info.st_ino)
        self._lines = LineTailer.held(fd, self.path)
        self._replaced: str | None = None
        self._told = False

    def apply(self, control: RunControl) -> list[Command]:
        done: list[Command] = []
        self._watch_path()
        for raw in self._lines.read_lines():
            try:
                command = _DECODER.decode(raw).command
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue  # not a command this version knows
            _apply(control, command)
            done.append(command)
        return done

    def _watch_path(self) -> None:
        if self._replaced is not None:
            return
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            self._replaced = "removed"
            return
        if (info.st_dev, info.st_ino) != self._identity:
            owner = "" if info.st_uid == os.geteuid() else f" by uid {info.st_uid}"
            self._replaced = f"replaced{owner} ({stat.filemode(info.st_mode)})"

    def take_replacement(self) -> str | None:
        """Once: one line saying the channel's path no longer names the file this run created (the new file
        is never read), else None."""
        if self._replaced is None or self._told:
            return None
        self._told = True
        return (
            f"the control channel {self.path} was {self._replaced}: what is there now is ignored, "
            "and viewers' commands no longer reach this run"
        )

    def close(self) -> None:
        """Stop reading, and remove the channel if the path still names this run's own file."""
        self._lines.close()
        with contextlib.suppress(OSError):
            info = os.lstat(self.path)
            if (info.st_dev, info.st_ino) == self._identity:
                self.path.unlink()


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
