"""``RunSession``: one writer's hold on a run folder, for ``rocmtui train`` and ``rocmtui.track()`` alike.

It takes the lock, opens the event stream, keeps ``status.json`` current with a heartbeat, and reads
the control channel into the writer's RunControl, on one daemon thread that wakes ``POLL_S`` apart.
Events go through ``emit``: each is appended whole; epoch ends and the final event are fsynced.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import replace
from pathlib import Path

from rocmtui.events import (
    EpochCompleted,
    EpochMetrics,
    LogMessage,
    MetricsLogged,
    RunControl,
    RunFailed,
    RunFinished,
    RunStarted,
    StepsCompleted,
    TrackStarted,
    TrainEvent,
)
from rocmtui.run.control import CommandReader, create_channel, remove_channel
from rocmtui.run.lock import RunLock
from rocmtui.run.status import HEARTBEAT_S, RunStatus, State, new_status, write_status
from rocmtui.run.stream import EventWriter

POLL_S = 0.1
"""How often the session reads commands: a key in a viewer reaches the loop within about 0.3 s."""


class RunSession:
    """Lock, stream, status and control channel of one run folder, held until ``close``."""

    def __init__(self, run_dir: Path, control: RunControl, *, name: str) -> None:
        self.run_dir = run_dir
        self.control = control
        self._lock = RunLock.acquire(run_dir)
        try:
            self.events = EventWriter(run_dir)
            self.status = new_status(name)
            write_status(run_dir, self.status, durable=True)
            create_channel(run_dir)
        except BaseException:
            self._lock.release()
            raise
        self._commands = CommandReader(run_dir)
        self._status_lock = threading.Lock()
        self._closed = threading.Event()
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
        self.events.write(event)
        durable = isinstance(event, RunStarted | TrackStarted | EpochCompleted | EpochMetrics | RunFinished | RunFailed)
        if durable:
            self.events.sync()
        self._update(event, durable)

    def _update(self, event: TrainEvent, durable: bool) -> None:
        with self._status_lock:
            s = self.status
            if isinstance(event, RunStarted):
                s = replace(s, state="running", device_name=event.device_name, epoch=event.start_epoch)
                s = replace(s, epochs=event.config.epochs)
            elif isinstance(event, TrackStarted):  # a script reporting through rocmtui.track()
                s = replace(s, state="running", name=event.name or s.name)
            elif isinstance(event, StepsCompleted | MetricsLogged):
                s = replace(s, elapsed_s=event.elapsed_s)
            elif isinstance(event, EpochMetrics):
                s = replace(s, epoch=s.epoch + 1, elapsed_s=event.elapsed_s)
            elif isinstance(event, EpochCompleted):
                best = event.test_acc if s.best_acc is None else max(s.best_acc, event.test_acc)
                s = replace(s, epoch=event.epoch + 1, epochs=event.epochs, best_acc=best)
            elif isinstance(event, RunFinished):
                state: State = "finished" if event.reason == "completed" else "stopped"
                s = replace(s, state=state, epoch=event.epochs_completed, elapsed_s=event.total_s)
            elif isinstance(event, RunFailed):
                s = replace(s, state="failed", message=event.message)
            self.status = s
        if durable:
            self._write(durable=True)

    def _write(self, *, durable: bool) -> None:
        with self._status_lock:
            self.status = replace(self.status, heartbeat=time.time(), state=self._live_state(self.status))
            status = self.status
        write_status(self.run_dir, status, durable=durable)

    def _live_state(self, status: RunStatus) -> State:
        if not status.live or status.state == "starting":
            return status.state
        if self.control.stop.is_set():
            return "stopping"
        return "paused" if self.control.paused else "running"

    def _serve(self) -> None:
        """The session's thread: commands every POLL_S, the heartbeat every HEARTBEAT_S."""
        next_beat = time.monotonic() + HEARTBEAT_S
        while not self._closed.wait(POLL_S):
            with contextlib.suppress(OSError):  # a full disk or a removed folder: the loop will hear of it
                if self._commands.apply(self.control):
                    self._write(durable=False)
                if time.monotonic() >= next_beat:
                    next_beat = time.monotonic() + HEARTBEAT_S
                    self._write(durable=False)

    def close(self) -> None:
        """Stop the thread, write the last status, remove the channel, let go of the folder."""
        self._closed.set()
        self._thread.join()
        self._commands.close()
        remove_channel(self.run_dir)
        with contextlib.suppress(OSError):
            if self.status.live:  # ended without a final event: say so rather than leave "running"
                self.status = replace(self.status, state="failed", message=self.status.message or "ended early")
            self._write(durable=True)
        self.events.close()
        self._lock.release()
