"""Run ``train()`` in a child process, relaying its events and the caller's commands.

Why a process: a launch-bound loop (small model, small batch) spends most of its time in Python,
and in one process the UI's rendering competes with it for the GIL. Measured on an H200 with the
guide's workload, a trainer thread beside the live UI ran at 0.88 of headless throughput; in its own
process the UI cannot slow it that way. The child is spawned (never forked: the parent has threads),
so torch is imported there, not in the UI's process.

The caller sees the same contract as ``train(config, emit, control)``: events arrive through ``emit``
in order, and the caller's RunControl (pause, save, stop) reaches the child's own RunControl within
about ``2 * POLL_S`` seconds. If the child dies without a final event, a RunFailed says so.
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
import time
from collections.abc import Iterator
from typing import Any

from rocmtui.config import TrainConfig
from rocmtui.events import Emit, RunControl, RunFailed, RunFinished, TrainEvent

POLL_S = 0.1
"""How often the parent mirrors commands and checks the child, and the child reads them (seconds): a
key press reaches the loop within about 0.2 s, and neither side wakes more than ten times a second."""


def _resolve(target: str) -> Any:
    """``"package.module:function"`` -> the function."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


STOP, PAUSED, SAVES = range(3)
"""Slots of the shared command flags: stop requested, paused, count of save requests."""


def _send_commands(control: RunControl, flags: Any) -> None:
    """Parent side: publish the caller's commands in the shared flags.

    Plain shared integers, no locks or condition variables: a cross-process Event whose waiter
    dies mid-wait makes the next ``set()`` block forever, and the child can die at any moment.
    """
    flags[STOP] = int(control.stop.is_set())
    flags[PAUSED] = int(control.paused)
    if control.take_save_request():
        flags[SAVES] += 1


def _receive_commands(flags: Any, control: RunControl, parent_pid: int) -> None:
    """Child side, on a thread: apply the shared flags to the loop's own RunControl.

    Also stops the run when the parent goes away (the UI died without telling us).
    """
    saves_seen = 0
    while not control.stop.is_set():
        if flags[STOP] or os.getppid() != parent_pid:
            control.request_stop()
            return
        if flags[PAUSED] and not control.paused:
            control.pause()
        elif not flags[PAUSED] and control.paused:
            control.resume()
        if flags[SAVES] != saves_seen:
            saves_seen = flags[SAVES]
            control.request_save()
        time.sleep(POLL_S)


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


def _child_main(target: str, config: TrainConfig, events: Any, flags: Any, parent_pid: int) -> None:
    """The child's entry point: stop cleanly on SIGTERM/SIGHUP, a stop command, or the parent's death."""
    _silence_stdio()
    control = RunControl()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the UI reads Ctrl-C as a key and relays stop itself
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: control.request_stop())
    threading.Thread(
        target=_receive_commands, args=(flags, control, parent_pid), name="rocmtui-commands", daemon=True
    ).start()
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
            flags = ctx.RawArray("i", 3)
            self.process = ctx.Process(
                target=_child_main,
                args=(self.target, config, events, flags, os.getpid()),
                name="rocmtui-train",
            )
            self.process.start()
        final = self._relay(events, emit, control, flags)
        self.process.join()
        if final is None:
            final = RunFailed(
                message=f"the training process ended unexpectedly (exit code {self.process.exitcode})", kind="error"
            )
            emit(final)
        events.close()
        return final

    def _relay(self, events: Any, emit: Emit, control: RunControl, flags: Any) -> TrainEvent | None:
        final: TrainEvent | None = None
        child_gone = False
        while True:
            _send_commands(control, flags)
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
