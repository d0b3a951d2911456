"""``track()`` and ``Run``: log scalars from any training loop into a run folder.

Cost per ``run.log`` call: a few list appends and a clock read; values are converted and written only when
the window is flushed (every ``FLUSH_S``), as one MetricsLogged that holds every value at its step (none is
dropped or averaged away). Nothing is fsynced per step: only epoch ends and the end of the run are
(BENCHMARKS.md, "track()").
"""

from __future__ import annotations

import atexit
import operator
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Literal

from rocmtui.base.clock import RunClock
from rocmtui.base.errors import UsageError, first_line
from rocmtui.events import (
    EpochMetrics,
    FailureKind,
    LogMessage,
    MetricsLogged,
    ParamValue,
    RunFailed,
    RunFinished,
    TrackStarted,
    TrainEvent,
)
from rocmtui.tracking import env
from rocmtui.tracking.rank_reporting import RankReporter, RankSink, place, shared_folder
from rocmtui.tracking.sink import Sink, UntrackedSink, open_sink
from rocmtui.tracking.values import (
    CALL_BYTES,
    INT64,
    LINE_BUDGET,
    VALUE_BYTES,
    Scalar,
    Window,
    alone_bytes,
    call_bytes,
    check_name,
    check_params,
    check_scalars,
    check_total_steps,
    note_parts,
    to_float,
)

FLUSH_S = 0.25
"""Seconds between conversions of the logged values (each may wait for the GPU) and writes."""
PAUSE_POLL_S = 0.1
MAX_WINDOW = 4096
"""Calls a flush holds at most: a loop faster than that over FLUSH_S flushes sooner, so that a window's memory
stays small. Its bytes are bounded too (``values.LINE_BUDGET``): a line the reader would refuse is never written."""


class Run:
    """One tracked run. Use it as a context manager, or call ``finish()`` / ``fail()`` yourself."""

    def __init__(
        self,
        sink: Sink,
        name: str,
        total_steps: int | None = None,
        reporter: RankReporter | None = None,
        on_save: Callable[[], object] | None = None,
    ) -> None:
        self._sink = sink
        self._on_save = on_save
        self._reporter = reporter
        """This rank's line in ``ranks/`` when the script runs as several ranks."""
        self.name = name
        self.run_dir: Path = sink.run_dir
        self._total_steps = check_total_steps(total_steps)
        self.step = 0
        """The last step logged."""
        self.epochs = 0
        """``log_epoch`` calls so far."""
        self._window = Window()
        self._clock = RunClock()
        self._next_flush = time.monotonic() + FLUSH_S
        self._broken = False
        self._ended = False
        self._lock = threading.RLock()
        """``log`` from several threads: one at a time into the window, one flush at a time."""
        _LIVE.add(self)

    # -- what the loop calls --------------------------------------------------------------
    @property
    def total_steps(self) -> int | None:
        """Steps the script expects to run (progress and ETA in the viewer); may be set at any time."""
        return self._total_steps

    @total_steps.setter
    def total_steps(self, value: int | None) -> None:
        self._total_steps = check_total_steps(value)

    @property
    def should_stop(self) -> bool:
        """True once a viewer (``q``, ``rocmtui stop``) asked the run to stop: end the loop at a good point."""
        return self._sink.control.stop.is_set()

    @property
    def should_save(self) -> bool:
        """True once for each viewer's save request (``s``): save a checkpoint now, then ``note`` where."""
        return self._sink.control.take_save_request()

    @property
    def elapsed_s(self) -> float:
        """Seconds since the run started, pauses excluded."""
        return self._clock.now()

    def log(self, step: int | None = None, **scalars: Scalar) -> None:
        """Record ``scalars`` at ``step`` (default: the last step + 1). Blocks while a viewer has paused the run.

        Real numbers and 0-d tensors; a tensor is kept as is (detached) and converted at the next flush. Anything
        else is a TypeError naming its key (a ValueError for an int no float holds, or a call too large for one
        line of the stream), raised before anything is kept: the run goes on. Thread-safe.
        """
        checked = check_scalars(scalars)
        if self._sink.control.paused:
            self._wait_while_paused()
        with self._lock:
            if step is None:
                at = self.step + 1
            else:
                at = operator.index(step)
                if not -INT64 <= at < INT64:  # its text would outgrow the line's bound (CALL_BYTES)
                    raise ValueError(f"step: an int of {at.bit_length()} bits is out of range; give one below 2**63")
            window = self._window
            cost = CALL_BYTES + VALUE_BYTES * len(checked)  # inline: this runs at every call (call_bytes)
            if not window.values.keys() >= checked.keys():
                cost = call_bytes(checked, window.values)
            if window.bytes + cost > LINE_BUDGET:
                self._add_beyond(at, checked)
            else:
                window.add(at, checked, cost)
            self.step = at
            if self._window.count >= MAX_WINDOW or time.monotonic() >= self._next_flush:
                self.flush()
        if self._on_save is not None and self.should_save:
            self._save()

    def _add_beyond(self, at: int, checked: dict[str, object]) -> None:
        """A call that does not fit the window's line: the window is written first, then the call starts the
        next one (alone, measured, when it is too wide for ``call_bytes``' quick bound)."""
        if self._window.count:
            self.flush()
        cost = call_bytes(checked)
        if cost <= LINE_BUDGET:
            self._window.add(at, checked, cost)
            return
        size = alone_bytes(checked)
        if size > LINE_BUDGET:
            biggest = max(checked, key=len)
            raise ValueError(
                f"{biggest[:40]!r}: one log() call of {len(checked):,} values takes up to {size:,} bytes written "
                f"out, more than a line of the run's stream holds ({LINE_BUDGET:,}); log them in several calls"
            )
        self._window.add_alone(at, checked)

    def log_epoch(self, epoch: int, **scalars: Scalar) -> None:
        """Record an epoch's values (validation loss, accuracy...), numbered as the script counts epochs."""
        values = {name: to_float(value) for name, value in check_scalars(scalars).items()}
        with self._lock:
            self.flush()
            self.epochs += 1
            self._emit(EpochMetrics(operator.index(epoch), values, self.elapsed_s, step=self.step, wall=time.time()))

    def note(self, message: str, level: str = "info") -> None:
        """A line in the viewer's log panel; a message longer than a line of the stream holds goes in parts."""
        kind: Literal["info", "warning", "error"] = (
            "warning" if level == "warning" else "error" if level == "error" else "info"
        )
        for part in note_parts(message):
            self._emit(LogMessage(part, kind))

    def flush(self) -> None:
        """Convert and write what was logged since the last flush (the one sync point of ``log``)."""
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        self._next_flush = time.monotonic() + FLUSH_S
        if self._window.count == 0:
            return
        window = self._window.drain()
        self._emit(
            MetricsLogged(
                self.step,
                window.last,
                self.elapsed_s,
                count=len(window.steps),
                total_steps=self.total_steps,
                wall=time.time(),
                **window.written(),
            )
        )
        if self._reporter is not None and not self._broken:
            try:
                self._reporter.progress(self.epochs, self.step, self.elapsed_s)
            except OSError:
                self._reporter = None  # the folder cannot take it: the training goes on

    # -- the end --------------------------------------------------------------------------
    def finish(self, *, interrupted: bool = False) -> None:
        """End the run: completed, or stopped when a viewer asked (or ``interrupted``, Ctrl-C)."""
        if self._ended:
            return
        self.flush()
        stopped = interrupted or self.should_stop
        self._end(
            RunFinished(
                reason=("interrupted" if interrupted else "stopped") if stopped else "completed",
                epochs_completed=self.epochs,
                best_test_acc=None,
                final_test_acc=None,
                total_s=self.elapsed_s,
                images_per_s=0.0,
                peak_memory_bytes=None,
                run_dir=str(self.run_dir),
            )
        )

    def fail(self, err: BaseException) -> None:
        """End the run as failed with ``err``'s type and the first line of its message."""
        if self._ended:
            return
        try:
            self.flush()
        except Exception:  # the values may be what failed (a dead GPU): the failure matters more
            self._window.drain_unconverted()
        kind: FailureKind = "oom" if type(err).__name__ == "OutOfMemoryError" else "error"
        self._end(RunFailed(first_line(err, with_type=True), kind, step=self.step, run_dir=str(self.run_dir)))

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None or (isinstance(exc, SystemExit) and exc.code in (0, None)):
            self.finish()
        elif isinstance(exc, KeyboardInterrupt):
            self.finish(interrupted=True)
        else:
            self.fail(exc)  # recorded, then raised on: the script fails as it would have

    # -- inside ---------------------------------------------------------------------------
    def _save(self) -> None:
        """The script's own save, asked for by a viewer; what it returns (a path) is named in the log."""
        assert self._on_save is not None
        where = self._on_save()
        self.note(f"checkpoint saved: {where}" if where else "checkpoint saved")

    def _wait_while_paused(self) -> None:
        self.flush()
        self._emit(LogMessage("Paused"))
        control = self._sink.control
        self._clock.hold(
            lambda: control.paused and not control.stop.is_set(), lambda: control.wait_while_paused(PAUSE_POLL_S)
        )
        self._emit(LogMessage("Resumed"))

    def _emit(self, event: TrainEvent) -> None:
        if self._broken or self._ended:
            return
        try:
            with self._lock:
                self._sink.emit(event)
        except OSError as err:  # a full disk or a gone supervisor: tracking stops, the training goes on
            self._broken = True
            print(f"rocmtui: tracking stopped, cannot write {self.run_dir}: {first_line(err)}", file=sys.stderr)

    def _at_exit(self) -> None:
        """The interpreter ends with the run still open (no ``with``, or a framework that never said it ended)."""
        err = getattr(sys, "last_value", None)  # set when an uncaught exception ended the script
        if isinstance(err, KeyboardInterrupt):
            self.finish(interrupted=True)
        elif isinstance(err, BaseException):
            self.fail(err)
        else:
            self.finish()

    def _end(self, event: TrainEvent) -> None:
        self._ended = True
        atexit.unregister(self._at_exit)
        if self._reporter is not None:
            self._reporter.close()
        try:
            self._sink.end(event)
        except OSError as err:
            print(f"rocmtui: cannot record the end of {self.run_dir}: {first_line(err)}", file=sys.stderr)

    def _forked_away(self) -> None:
        """In a forked child: the run is its parent's; nothing the child logs or ends reaches it."""
        self._ended = self._broken = True
        self._reporter = None
        self._lock = threading.RLock()  # a parent's thread may have held it at the fork: the child's is free
        atexit.unregister(self._at_exit)


_LIVE: weakref.WeakSet[Run] = weakref.WeakSet()
"""The runs of this process, for the fork hook."""


def _after_fork_in_child() -> None:
    for run in list(_LIVE):
        run._forked_away()
    _LIVE.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _params(config: Mapping[str, object] | None) -> dict[str, ParamValue]:
    out: dict[str, ParamValue] = {}
    for key, value in (config or {}).items():
        plain = value is None or isinstance(value, str | int | float | bool)
        out[str(key)] = value if plain else str(value)  # type: ignore[assignment]  # narrowed just above
    return check_params(out)


def _tracked(sink: Sink) -> bool:
    return not isinstance(sink, UntrackedSink)


def default_name() -> str:
    """The launcher's name for the run, else the script's file name."""
    return os.environ.get(env.RUN_NAME) or Path(sys.argv[0] or "track").stem or "track"


def track(
    name: str | None = None,
    *,
    config: Mapping[str, object] | None = None,
    runs_dir: str | Path | None = None,
    total_steps: int | None = None,
    run_dir: str | Path | None = None,
    rank: int | None = None,
    world_size: int | None = None,
    on_save: Callable[[], object] | None = None,
    saves: bool = False,
) -> Run:
    """Start a tracked run and return it (use it in a ``with`` block).

    The run folder: the one a launcher gave (``$ROCMTUI_RUN_DIR``), else a new one under ``runs_dir``,
    ``$ROCMTUI_RUNS_DIR`` or ``runs``. ``config`` is shown with the run (plain values; others as text).

    Several ranks (``rank``/``world_size``, default ``$RANK``/``$WORLD_SIZE``): rank 0 reports the run, and
    every rank its own progress. Rank 0's folder reaches the others through ``run_dir``, or through the
    script's process group: then every rank must call ``track()``, as it would any collective.

    A viewer's save (``s``): ``on_save`` is called at the next ``log()`` and may return where it saved; or
    pass ``saves=True`` and check ``run.should_save`` yourself. Without either, viewers say the script
    cannot save on request.
    """
    name = check_name(name or default_name())
    check_total_steps(total_steps)
    params = _params(config)  # refused before any folder is made
    rank, world_size = place(rank, world_size)
    given = Path(run_dir) if run_dir is not None else None
    base = Path(runs_dir) if runs_dir is not None else None
    reporter: RankReporter | None = None
    sink: Sink
    if world_size > 1 and rank > 0:
        folder = given or (Path(os.environ[env.RUN_DIR]) if os.environ.get(env.RUN_DIR) else None)
        sink = RankSink(folder or shared_folder(rank, None))
    else:
        try:
            sink = open_sink(name, base, given)
        except (OSError, UsageError) as err:  # as a full disk mid-run: one line, and the script trains on
            print(f"rocmtui: not tracked, cannot make the run folder: {first_line(err)}", file=sys.stderr)
            sink = UntrackedSink(given or base or Path("runs"))
        if world_size > 1 and given is None and not os.environ.get(env.RUN_DIR) and _tracked(sink):
            shared_folder(rank, sink.run_dir)  # the other ranks receive it
    if world_size > 1 and _tracked(sink):
        reporter = RankReporter(sink.run_dir, rank, world_size)
    run = Run(sink, name, total_steps, reporter, on_save)
    atexit.register(run._at_exit)
    started = TrackStarted(
        name, str(sink.run_dir), params, started_at=time.time(), total_steps=total_steps,
        saves=saves or on_save is not None,
    )  # fmt: skip
    run._emit(started)
    return run
