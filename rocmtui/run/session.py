"""``RunSession``: one writer's hold on a run folder, for ``rocmtui train`` and ``rocmtui.track()`` alike.

It takes the lock, opens the event stream, keeps ``status.json`` current with a heartbeat, and reads
the control channel into the writer's RunControl, on one daemon thread that wakes ``POLL_S`` apart.
Events go through ``emit``: each is appended whole; the start and the final event are fsynced before
``emit`` returns, epoch ends by the session's thread at once (so that the training loop, whose clock runs,
never waits for the disk), and the final event is also the folder's ``summary.json`` (this is the one place
that writes it).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

from msgspec.structs import replace

from rocmtui.base.errors import UsageError
from rocmtui.base.files import held_folder
from rocmtui.events import (
    EpochCompleted,
    EpochMetrics,
    LogMessage,
    RunControl,
    RunFailed,
    RunFinished,
    RunStarted,
    TrackStarted,
    TrainEvent,
)
from rocmtui.run.control import CommandReader
from rocmtui.run.fold import RunFold
from rocmtui.run.format import write_summary
from rocmtui.run.lock import RunLock
from rocmtui.run.status import HEARTBEAT_S, RunStatus, State, new_status, write_status
from rocmtui.run.stream import EventWriter

POLL_S = 0.1
"""How often the session reads commands: a key in a viewer reaches the loop within about 0.3 s."""


class RunSession:
    """Lock, stream, status and control channel of one run folder, held until ``close``."""

    def __init__(self, run_dir: Path, control: RunControl, *, name: str) -> None:
        run_dir = Path(os.path.abspath(run_dir))  # once: a script's later chdir cannot move its files
        self.run_dir = run_dir
        self.control = control
        self._lock = RunLock.acquire(run_dir)
        self._dir_fd = -1
        try:
            self._dir_fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            self._held = held_folder(self._dir_fd, run_dir)
            """The folder as held at the start: status and summary go there even if a parent is renamed and
            another folder put in its place (the lock, the stream and the channel are held open already)."""
            self.events = EventWriter(run_dir)
            self.status = new_status(name)
            self.fold = RunFold()
            write_status(self._held, self.status, durable=True)
            self._commands = CommandReader(run_dir)
        except BaseException:
            if self._dir_fd >= 0:
                os.close(self._dir_fd)
            self._lock.release()
            raise
        self._emit_lock = threading.Lock()
        """One appender of the stream at a time: the session's thread tells of a replaced channel."""
        self._status_lock = threading.Lock()
        self._file_lock = threading.Lock()
        """One writer of ``status.json`` at a time: the loop's thread and the session's share its temp name."""
        self._closed = threading.Event()
        self._sync_due = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="rocmtui-run-session", daemon=True)
        self._thread.start()
        if self.events.set_aside:
            self.emit(
                LogMessage(
                    f"the stream's last line was torn ({self.events.set_aside} bytes); set aside in metrics.torn",
                    "warning",
                )
            )

    def emit(self, event: TrainEvent) -> None:
        """Append ``event`` and fold it into the status. OSError (a full disk) reaches the caller."""
        with self._emit_lock:
            self.events.write(event)
        if isinstance(event, EpochCompleted | EpochMetrics):  # durable within a moment, on the session's thread
            self._update(event, durable=False)
            self._sync_due.set()
            self._wake.set()
            return
        durable = isinstance(event, RunStarted | TrackStarted | RunFinished | RunFailed)
        if durable:
            self.events.sync()
        if isinstance(event, RunFinished | RunFailed):
            write_summary(self._held, event)
        self._update(event, durable)

    def _update(self, event: TrainEvent, durable: bool) -> None:
        with self._status_lock:
            self.fold.apply(event)
            self.status = status_from(self.status, self.fold)
        if durable:
            self._write(durable=True)

    def _write(self, *, durable: bool) -> None:
        with self._status_lock:
            self.status = replace(self.status, heartbeat=time.time(), state=self._live_state(self.status))
            status = self.status
        with self._file_lock:
            write_status(self._held, status, durable=durable)

    def _live_state(self, status: RunStatus) -> State:
        if not status.live or status.state == "starting":
            return status.state
        if self.control.stop.is_set():
            return "stopping"
        return "paused" if self.control.paused else "running"

    def _serve(self) -> None:
        """The session's thread: epoch ends made durable as they come, commands every POLL_S, the heartbeat
        every HEARTBEAT_S."""
        next_beat = time.monotonic() + HEARTBEAT_S
        while True:
            self._wake.wait(POLL_S)
            self._wake.clear()
            if self._closed.is_set():
                return
            # A full disk or a removed folder: the loop hears of them through its own writes; the heartbeat
            # never stops. A control file replaced (by a link, a FIFO, another user's file) is told once and
            # never read: commands are read through the descriptor the channel was created with.
            if self._sync_due.is_set():
                self._sync_due.clear()
                with contextlib.suppress(OSError, UsageError):
                    self.events.sync()
                    self._write(durable=True)
            with contextlib.suppress(OSError, UsageError):
                if self._commands.apply(self.control):
                    self._write(durable=False)
                replaced = self._commands.take_replacement()
                if replaced:
                    self.emit(LogMessage(replaced, "warning"))
            if time.monotonic() >= next_beat:
                next_beat = time.monotonic() + HEARTBEAT_S
                with contextlib.suppress(OSError, UsageError):
                    self._write(durable=False)

    def close(self) -> None:
        """Stop the thread, write the last status, remove the channel, let go of the folder."""
        self._closed.set()
        self._wake.set()
        self._thread.join()
        with contextlib.suppress(OSError):
            self.events.sync()  # an epoch end the thread had not reached yet
        self._commands.close()
        with contextlib.suppress(OSError):
            if self.status.live:  # ended without a final event: say so rather than leave "running"
                self.status = replace(self.status, state="failed", message=self.status.message or "ended early")
            self._write(durable=True)
        self.events.close()
        os.close(self._dir_fd)
        self._lock.release()


def status_from(status: RunStatus, fold: RunFold) -> RunStatus:
    """The status a writer reports for what its events said (its live state is set when written)."""
    state: State = status.state
    headline = fold.headline
    if fold.finished is not None:
        state = "finished" if fold.finished.reason == "completed" else "stopped"
    elif fold.failed is not None:
        state = "failed"
    elif fold.phase == "training" and status.state == "starting":
        state = "running"
    return replace(
        status,
        state=state,
        name=fold.tracked.name or status.name if fold.tracked else status.name,
        device_name=fold.started.device_name if fold.started else status.device_name,
        epoch=fold.epochs_done,
        epochs=fold.total_epochs,
        best_acc=fold.best_acc,
        elapsed_s=fold.reported_s,
        message=fold.failed.message if fold.failed else status.message,
        step=fold.step or 0,
        metric=headline[0] if headline else "",
        metric_value=headline[1] if headline else None,
    )
