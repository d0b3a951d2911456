"""Where a tracked run's events go: its run folder directly, or the supervisor that holds the folder.

``rocmtui run`` starts the script under ``rocmtui.launch.script_supervisor``, which holds the folder for the
whole life of the process (so a script that never calls ``track()`` still has a status). The script's
``track()`` then sends its events up one pipe and hears pause, resume and stop on another.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path
from typing import Protocol

from rocmtui.base.errors import UsageError
from rocmtui.base.private_dir import make_dirs
from rocmtui.events import RunControl, TrainEvent
from rocmtui.run.format import encode_line
from rocmtui.run.layout import RUN_MODE, create_run_dir, default_runs_dir, run_name
from rocmtui.run.session import RunSession
from rocmtui.tracking import env


class Sink(Protocol):
    run_dir: Path
    control: RunControl

    def emit(self, event: TrainEvent) -> None: ...

    def end(self, event: TrainEvent) -> None:
        """The final event (RunFinished or RunFailed), then let go."""


class FolderSink:
    """The script holds its run folder itself, through a RunSession."""

    def __init__(self, run_dir: Path, name: str) -> None:
        self.run_dir = run_dir
        self.control = RunControl()
        self.session = RunSession(run_dir, self.control, name=name)

    def emit(self, event: TrainEvent) -> None:
        self.session.emit(event)

    def end(self, event: TrainEvent) -> None:
        try:
            self.session.emit(event)
        finally:
            self.session.close()


class UntrackedSink:
    """No folder could be made at the start: the script trains on, its events go nowhere (as after a full disk)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.control = RunControl()

    def emit(self, event: TrainEvent) -> None:
        """Nothing: the warning was given once, when the folder could not be made."""

    def end(self, event: TrainEvent) -> None:
        """Nothing to close."""


class PipeSink:
    """Events up to the supervisor, commands down from it; one per process at a time."""

    _active: PipeSink | None = None
    _reader: threading.Thread | None = None
    _lock = threading.Lock()

    def __init__(self, run_dir: Path, events_fd: int, commands_fd: int) -> None:
        self.run_dir = run_dir
        self.control = RunControl()
        self._fd = events_fd
        with PipeSink._lock:
            if PipeSink._active is not None:
                raise UsageError("one rocmtui.track() at a time under 'rocmtui run': finish the first one")
            PipeSink._active = self
            if PipeSink._reader is None:  # one reader for the life of the process: the pipe outlives runs
                PipeSink._reader = threading.Thread(
                    target=_read_commands, args=(commands_fd,), name="rocmtui-track-commands", daemon=True
                )
                PipeSink._reader.start()

    def emit(self, event: TrainEvent) -> None:
        data = memoryview(encode_line(event))
        while data:
            data = data[os.write(self._fd, data) :]

    def end(self, event: TrainEvent) -> None:
        try:
            self.emit(event)
        finally:
            with PipeSink._lock:
                PipeSink._active = None


def _read_commands(fd: int) -> None:
    with contextlib.suppress(OSError), os.fdopen(fd, "rb", closefd=False) as stream:
        for raw in stream:
            with PipeSink._lock:
                sink = PipeSink._active
            command = raw.strip().decode(errors="replace")
            if sink is None:
                continue
            if command == "pause":
                sink.control.pause()
            elif command == "resume":
                sink.control.resume()
            elif command == "stop":
                sink.control.request_stop()
            elif command == "save":
                sink.control.request_save()


def _link() -> tuple[int, int] | None:
    """The supervisor's pipes, when this process was given them and they are still open."""
    spec = os.environ.get(env.LINK, "")
    try:
        events_fd, commands_fd = (int(part) for part in spec.split(","))
        os.fstat(events_fd)
        os.fstat(commands_fd)
    except (ValueError, OSError):
        return None
    return events_fd, commands_fd


SLUG_CHARS = 64
"""The run name's part of a folder name: file systems refuse a name over 255 bytes."""


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)[:SLUG_CHARS].strip("-.") or "track"


def open_sink(name: str, runs_dir: Path | None, run_dir: Path | None = None) -> Sink:
    """``run_dir`` when the script names one, else the launcher's folder (through its supervisor, or
    directly), else a new folder under the runs folder."""
    if run_dir is not None:
        make_dirs(run_dir, RUN_MODE)  # what it makes: 0700 whatever the umask
        return FolderSink(run_dir, name)
    given = os.environ.get(env.RUN_DIR)
    if given:
        link = _link()
        if link is not None:
            return PipeSink(Path(given), *link)
        if env.LINK not in os.environ:  # a launcher that made the folder but holds nothing
            path = Path(given)
            make_dirs(path, RUN_MODE)
            return FolderSink(path, name)
        # a process the script started inherited the environment but not the pipes: a folder of its own
    base = runs_dir or default_runs_dir()
    return FolderSink(create_run_dir(base, run_name(slug(name))), name)
