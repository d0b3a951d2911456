"""Run ``train()`` in a child process, relaying its events and the caller's commands.

Why a process: a launch-bound loop (small model, small batch) spends most of its time in Python,
and in one process the UI's rendering competes with it for the GIL. Measured on an H200 with the
guide's workload, a trainer thread beside the live UI ran at 0.88 of headless throughput; in its own
process the UI cannot slow it that way. The child is spawned (never forked: the parent has threads),
so torch is imported there, not in the UI's process.

The caller sees the same contract as ``train(config, emit, control)``: events arrive through ``emit``
in order, and the caller's RunControl (pause, save, stop) is mirrored to the child every
``POLL_S`` seconds. If the child dies without a final event, a RunFailed says so.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any, cast

from rocmtui.config import TrainConfig
from rocmtui.events import Emit, RunControl, RunFailed, RunFinished, TrainEvent

POLL_S = 0.05
"""How often the parent mirrors commands and checks the child (seconds)."""


def _resolve(target: str) -> Any:
    """``"package.module:function"`` -> the function."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _shared_control(ctx: Any) -> RunControl:
    """A RunControl whose flags are process-shared Events (same methods as threading.Event)."""
    return RunControl(
        stop=cast(threading.Event, ctx.Event()),
        _running=cast(threading.Event, ctx.Event()),
        _save=cast(threading.Event, ctx.Event()),
    )


def _mirror(source: RunControl, target: RunControl) -> None:
    """Copy the caller's commands to the child's control."""
    if source.stop.is_set() and not target.stop.is_set():
        target.request_stop()
        return
    if source.paused and not target.paused:
        target.pause()
    elif not source.paused and target.paused:
        target.resume()
    if source.take_save_request():
        target.request_save()


@contextlib.contextmanager
def _real_stdio() -> Iterator[None]:
    """Put the process's real stdout/stderr back while a child is created.

    A TUI replaces sys.stdout/sys.stderr with capture objects, whose file numbers multiprocessing
    cannot hand to its helper processes.
    """
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = sys.__stdout__ or saved[0], sys.__stderr__ or saved[1]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _silence_stdio() -> None:
    """Point the child's stdin/stdout/stderr at /dev/null: it shares the UI's terminal, and reports by events."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _child_main(target: str, config: TrainConfig, events: Any, control: RunControl, parent_pid: int) -> None:
    """The child's entry point: stop cleanly on SIGTERM/SIGHUP or when the parent goes away."""
    _silence_stdio()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the UI reads Ctrl-C as a key and relays stop itself
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: control.request_stop())

    def watch_parent() -> None:
        while not control.stop.wait(1.0):
            if os.getppid() != parent_pid:  # orphaned: the UI died without telling us
                control.request_stop()

    threading.Thread(target=watch_parent, name="rocmtui-parent-watch", daemon=True).start()
    try:
        _resolve(target)(config, events.put, control)
    except BaseException as err:  # the parent must hear about any failure, as an event, not a traceback
        events.put(RunFailed(message=f"{type(err).__name__}: {err}", kind="error"))


class ProcessTrainer:
    """A trainer callable that runs ``target`` (``"module:function"``) in a spawned child process."""

    def __init__(self, target: str = "rocmtui.train.loop:train") -> None:
        self.target = target
        self.process: Any = None

    def __call__(self, config: TrainConfig, emit: Emit, control: RunControl) -> TrainEvent | None:
        """Run to the end; returns the final RunFinished or RunFailed event."""
        ctx = mp.get_context("spawn")
        with _real_stdio():
            events = ctx.Queue()
            child_control = _shared_control(ctx)
            self.process = ctx.Process(
                target=_child_main,
                args=(self.target, config, events, child_control, os.getpid()),
                name="rocmtui-train",
            )
            self.process.start()
        final = self._relay(events, emit, control, child_control)
        self.process.join()
        if final is None:
            final = RunFailed(
                message=f"the training process ended unexpectedly (exit code {self.process.exitcode})", kind="error"
            )
            emit(final)
        events.close()
        return final

    def _relay(self, events: Any, emit: Emit, control: RunControl, child_control: RunControl) -> TrainEvent | None:
        final: TrainEvent | None = None
        child_gone = False
        while True:
            _mirror(control, child_control)
            try:
                event = events.get(timeout=POLL_S)
            except queue.Empty:
                if child_gone:
                    return final  # the child exited and its queue is drained
                child_gone = not self.process.is_alive()
                continue
            emit(event)
            if isinstance(event, RunFinished | RunFailed):
                final = event

    def kill(self) -> None:
        """Stop the child at once, without a checkpoint."""
        with contextlib.suppress(AttributeError, ProcessLookupError):
            self.process.kill()
