"""Following a run folder: its events to a viewer, the viewer's commands to the run.

``follow`` is what ``rocmtui watch`` runs, and what the UI of ``rocmtui train`` runs over the folder of
the trainer it started: one path for both. It emits the whole history first, then new events as they
are appended, and mirrors the viewer's RunControl (pause, save, stop) into the folder's control
channel. It returns when the run ends, when the writer is gone without a last word ("lost"), or when
the viewer leaves (``control.leave``), which never affects the run.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.events import (
    Emit,
    LogMessage,
    RunControl,
    RunFailed,
    RunFinished,
    RunStarted,
    TrainEvent,
    WriterStalled,
)
from rocmtui.run.control import Command, send_command
from rocmtui.run.lock import is_locked
from rocmtui.run.status import effective, read_status
from rocmtui.run.stream import EventTail

POLL_S = 0.1
LIVENESS_EVERY_S = 1.0


class CommandMirror:
    """Sends a RunControl's changes (pause, resume, each save request, stop) to a folder's control channel."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._paused = False
        self._stopped = False

    def sync(self, control: RunControl) -> None:
        commands: list[Command] = []
        if control.paused != self._paused:
            self._paused = control.paused
            commands.append("pause" if control.paused else "resume")
        if control.take_save_request():
            commands.append("save")
        if control.stop.is_set() and not self._stopped:
            self._stopped = True
            commands.append("stop")
        for command in commands:
            with contextlib.suppress(UsageError):  # the run ended meanwhile: nothing left to command
                send_command(self.run_dir, command)


def superseded(batch: list[tuple[int, TrainEvent]], history_until: int) -> list[TrainEvent]:
    """The batch's events, where a final event that a resume followed is only a log line.

    A run resumed in its own folder has ended before (``RunFinished(stopped)``); those ends are history,
    not the end of what is being watched. ``history_until``: finals up to this sequence number are history.
    """
    restarts = [seq for seq, event in batch if isinstance(event, RunStarted)]
    last_start = restarts[-1] if restarts else 0
    out: list[TrainEvent] = []
    for seq, event in batch:
        if isinstance(event, RunFinished | RunFailed) and (seq < last_start or seq <= history_until):
            what = event.reason if isinstance(event, RunFinished) else f"failed: {event.message}"
            out.append(LogMessage(f"the run {what}; resumed later"))
        else:
            out.append(event)
    return out


def follow(
    run_dir: Path,
    emit: Emit,
    control: RunControl,
    *,
    history_until: int = 0,
    writer_alive: Callable[[], bool] | None = None,
    poll_s: float = POLL_S,
) -> TrainEvent | None:
    """Emit the run's events until it ends; returns its final event (None when the viewer left first).

    ``writer_alive`` says whether the writer still runs (default: whether the folder is locked).
    """
    alive = writer_alive or (lambda: is_locked(run_dir))
    tail = EventTail(run_dir)
    mirror = CommandMirror(run_dir)
    checked_at = 0.0
    skipped = 0
    stalled = False
    try:
        while not control.leave.is_set():
            mirror.sync(control)
            batch = _next_batch(tail)
            if tail.skipped > skipped:
                emit(LogMessage(f"{tail.skipped} unreadable line(s) of {tail.path.name} skipped", "warning"))
                skipped = tail.skipped
            final = _emit_all(superseded(batch, history_until), emit)
            if final is not None:
                return final
            if tail.behind:
                continue  # a long history: the next part at once
            now = time.monotonic()
            if not batch and now - checked_at >= LIVENESS_EVERY_S:
                checked_at = now
                if not alive():  # read what it wrote last, then call it lost
                    final = _emit_all(superseded(tail.poll_all(), history_until), emit)
                    return final if final is not None else _lost(run_dir, emit)
                stalled = _stalled_report(run_dir, stalled, emit)
            control.leave.wait(poll_s)
        mirror.sync(control)  # a command given just before leaving still reaches the run
        return None
    finally:
        tail.close()


def _next_batch(tail: EventTail) -> list[tuple[int, TrainEvent]]:
    """What was appended since the last call, a part at a time (``EventTail.poll``), so that a long history
    reaches the viewer in parts and is never all decoded at once; a part that holds a final event is read on
    to the end, to see whether a resume follows that end (``superseded``)."""
    batch = tail.poll()
    while tail.behind and any(isinstance(event, RunFinished | RunFailed) for _, event in batch):
        batch += tail.poll()
    return batch


def _emit_all(events: list[TrainEvent], emit: Emit) -> TrainEvent | None:
    """Emit in order up to and including a final event; returns that final event, if any."""
    for event in events:
        emit(event)
        if isinstance(event, RunFinished | RunFailed):
            return event
    return None


def _stalled_report(run_dir: Path, was: bool, emit: Emit) -> bool:
    """Whether the writer, alive, has a stale heartbeat; a change is told (``WriterStalled`` and a log line)."""
    status = read_status(run_dir)
    now = effective(run_dir, status) if status is not None else None
    stalled = now is not None and now.state == "stalled"
    if stalled != was and status is not None:
        age = time.time() - status.heartbeat
        emit(WriterStalled(stalled, age))
        emit(
            LogMessage(f"stalled: process {status.pid} holds the run but has written no heartbeat for {age:.0f} s",
                       "warning")
            if stalled
            else LogMessage("the writer beats again")
        )  # fmt: skip
    return stalled


def _lost(run_dir: Path, emit: Emit) -> RunFailed:
    """The writer is gone without a final event: killed, or its machine went down."""
    status = read_status(run_dir)
    where = f" (process {status.pid} on {status.host})" if status else ""
    failed = RunFailed(
        f"the training process{where} is gone without a last word; continue it with --resume {run_dir}",
        "error",
        run_dir=str(run_dir),
    )
    emit(failed)
    return failed
