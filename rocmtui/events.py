"""The contract between the trainer and whoever watches it: small frozen msgspec Structs of plain values.

No torch and no textual here: the UI, the headless printer, the metrics log and the tests all read
these. ``train()`` calls ``emit(event)`` from its own thread; receivers must not block.
On disk each event is a JSON object tagged with its class name under ``"event"`` (``rocmtui.codec``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from rocmtui.base.float_bytes import unpack_floats
from rocmtui.codec import CodecError, convert, to_builtins
from rocmtui.config import TrainConfig

FailureKind = Literal["nan", "oom", "error", "data", "disk"]
FinishReason = Literal["completed", "stopped", "interrupted"]


class _Event(msgspec.Struct, frozen=True, tag=True, tag_field="event", gc=False):
    """Base of every event: frozen, and tagged with its class name under ``"event"`` when encoded.

    ``gc=False``: events hold plain values and never take part in a reference cycle, so the collector need
    not track them; reading a long stream (a million events) is a third faster without its passes."""


class RunStarted(_Event, frozen=True):
    """The run is set up: data on the device, model built; the first step comes next."""

    config: TrainConfig
    run_dir: str
    device: str
    """Torch device string, e.g. ``cuda:0`` or ``cpu``."""
    device_name: str
    """Human name: ``NVIDIA H200``, ``AMD Radeon RX 7900 XTX`` or the CPU model."""
    backend: str
    """``ROCm 6.2``, ``CUDA 12.8`` or ``CPU``: the torch build that runs."""
    torch_version: str
    dataset: str
    train_size: int
    test_size: int
    classes: tuple[str, ...]
    steps_per_epoch: int
    start_epoch: int
    """First epoch to run (non-zero when resuming)."""
    data_source: str
    """Where the data came from: a folder, the cache, a download or the bundled sample."""
    notice: str | None = None
    """A line to show prominently, e.g. that only the bundled offline sample is used."""
    started_at: float = 0.0
    """time.time() at start."""
    world_size: int = 1
    """Processes training together (DDP ranks); each writes its progress to ``ranks/rank-N.jsonl``."""
    best_acc: float | None = None
    """A resumed run's best test accuracy over the epochs before ``start_epoch`` (from its checkpoint): a
    viewer or a status that folds only the events since the resume still reports the run's best."""


class StepsCompleted(_Event, frozen=True):
    """A batch of optimizer steps since the last StepsCompleted (throttled at the source)."""

    epoch: int
    """0-based epoch."""
    step: int
    """Global step index of the last step in this batch (1-based count of steps done)."""
    epoch_step: int
    """Steps done in this epoch."""
    steps_per_epoch: int
    losses: tuple[float, ...]
    """Per-step training loss for each step in this batch, in order."""
    images_per_s: float
    """Throughput since the previous StepsCompleted."""
    lr: float
    elapsed_s: float
    """Training seconds since the run (or resume) started, pauses excluded."""
    wall: float = 0.0
    """time.time() when its last step had run (0 in streams older than this field)."""


class EpochCompleted(_Event, frozen=True):
    """An epoch ended and the test set was evaluated."""

    epoch: int
    epochs: int
    train_loss: float
    train_acc: float
    """0..1"""
    test_loss: float
    test_acc: float
    """0..1"""
    lr: float
    seconds: float
    """Training time of the epoch (its test pass is ``eval_s``, outside the run's clock)."""
    images_per_s: float
    is_best: bool
    """True when test_acc is the best so far (a checkpoint-best.pt was written)."""
    eval_s: float = 0.0
    """Wall time of the epoch's test pass."""
    elapsed_s: float = 0.0
    """The run's clock when the epoch ended: training time, test passes and pauses left out (0 in
    recordings older than this field)."""
    wall: float = 0.0
    """time.time() when the epoch's last step had run, before its test pass (0 in older streams)."""


class LogMessage(_Event, frozen=True):
    """Something worth a line in the log panel: checkpoint saved, paused, resumed, a warning."""

    message: str
    level: Literal["info", "warning", "error"] = "info"


class RunFinished(_Event, frozen=True):
    """The run ended without error: all epochs done, or stopped by the user."""

    reason: FinishReason
    epochs_completed: int
    best_test_acc: float | None
    final_test_acc: float | None
    total_s: float
    images_per_s: float
    """Mean training throughput over the whole run."""
    peak_memory_bytes: int | None
    """Peak memory torch allocated on the device; None on the CPU."""
    run_dir: str
    per_class_acc: tuple[tuple[str, float], ...] = ()
    checkpoint: str | None = None
    tta_test_acc: float | None = None
    """Test accuracy of the final model with test-time augmentation (fastnet), after the run's clock stopped."""
    eval_s: float = 0.0
    """Wall time of all test passes, the final one included: not part of ``total_s``."""


class RunFailed(_Event, frozen=True):
    """The run stopped on an error; metrics and checkpoints written so far are kept."""

    message: str
    kind: FailureKind
    step: int | None = None
    epoch: int | None = None
    run_dir: str | None = None


ParamValue = str | int | float | bool | None
"""A setting a tracked script reports about itself (``track(config=...)``): plain JSON scalars."""


class TrackStarted(_Event, frozen=True):
    """A script began reporting through ``rocmtui.track()``: a name and its own settings, no TrainConfig."""

    name: str
    run_dir: str
    params: dict[str, ParamValue] = msgspec.field(default_factory=dict)
    started_at: float = 0.0
    """time.time() at start."""
    total_steps: int | None = None
    """Steps the script expects to run, when it knows (progress bar and ETA)."""
    saves: bool = False
    """The script saves a checkpoint when a viewer asks (``track(on_save=...)``, ``run.should_save``, the
    Lightning and Hugging Face callbacks); without it a viewer's save request is refused, not promised."""


class MetricsLogged(_Event, frozen=True):
    """Every scalar a tracked script logged since the last MetricsLogged, each at its own step.

    ``track()`` writes one of these at most a few times a second, whatever the step rate, and loses no
    value: ``steps`` are the steps of the ``run.log`` calls in the window, ``logged`` each name's values
    at those steps (or at its own steps in ``logged_at``, for a name not given to every call). A long
    window (format 5) is packed: its steps as ``step_run`` when they follow one another, each name's
    values as float64 bytes in ``packed``. ``points()`` reads every form alike.
    Streams before format version 4 have no ``steps``: their ``values`` were the window's means.
    """

    step: int
    """The last step logged in this window."""
    values: dict[str, float]
    """Each name's newest value (format 3 and older: its mean over the window)."""
    elapsed_s: float
    """Seconds since the run started, pauses excluded."""
    count: int = 1
    """``run.log`` calls in the window."""
    total_steps: int | None = None
    steps: tuple[int, ...] = ()
    """The step of each ``run.log`` call in the window, in order (empty when ``step_run`` gives them)."""
    logged: dict[str, tuple[float, ...]] = msgspec.field(default_factory=dict)
    """Every value of each name, in order: one per entry of ``steps``, unless ``logged_at`` has the name."""
    logged_at: dict[str, tuple[int, ...]] = msgspec.field(default_factory=dict)
    """The steps of a name that was not given to every call of the window."""
    step_run: tuple[int, int] | None = None
    """The window's steps as ``(first, count)``: first, first + 1, ... (format 5, a long window)."""
    packed: dict[str, bytes] = msgspec.field(default_factory=dict)
    """Each name's values as little-endian float64 bytes, base64 in JSON, in place of ``logged`` (format 5)."""
    wall: float = 0.0
    """time.time() when the window was written (0 in streams older than this field)."""

    def call_steps(self) -> Sequence[int]:
        """The step of each ``run.log`` call of the window, whichever form the line has."""
        if self.step_run is None:
            return self.steps
        first, count = self.step_run
        return range(first, first + max(count, 0))

    def points(self) -> dict[str, tuple[Sequence[int], Sequence[float]]]:
        """Each name's (steps, values): every logged value (format 4 and 5), or the one point per window of
        older streams (the window's last step, its mean). ValueError for packed bytes of a partial value."""
        if not self.logged and not self.packed:
            return {name: ((self.step,), (value,)) for name, value in self.values.items()}
        steps = self.call_steps()
        points: dict[str, tuple[Sequence[int], Sequence[float]]] = {
            name: (self.logged_at.get(name, steps), values) for name, values in self.logged.items()
        }
        for name, raw in self.packed.items():
            points[name] = (self.logged_at.get(name, steps), unpack_floats(raw))
        return points


class EpochMetrics(_Event, frozen=True):
    """Scalars a tracked script logged for a whole epoch (``run.log_epoch``)."""

    epoch: int
    values: dict[str, float]
    elapsed_s: float
    step: int | None = None
    """The last step logged before this epoch's values, to place them on a step axis."""
    wall: float = 0.0
    """time.time() when the values were written (0 in streams older than this field)."""


class WriterStalled(_Event, frozen=True):
    """A viewer's own event, never written to a stream: the run's writer still holds the folder but its
    heartbeat is older than ``run.status.STALE_S`` (``stalled``), or beats again (not ``stalled``)."""

    stalled: bool
    heartbeat_age_s: float = 0.0


TrainEvent = (
    RunStarted
    | StepsCompleted
    | EpochCompleted
    | LogMessage
    | RunFinished
    | RunFailed
    | TrackStarted
    | MetricsLogged
    | EpochMetrics
    | WriterStalled
)
Emit = Callable[[TrainEvent], None]
_EVENT_TYPES: dict[str, type[TrainEvent]] = {
    cls.__name__: cls
    for cls in (
        RunStarted,
        StepsCompleted,
        EpochCompleted,
        LogMessage,
        RunFinished,
        RunFailed,
        TrackStarted,
        MetricsLogged,
        EpochMetrics,
        WriterStalled,
    )
}


def event_to_dict(event: TrainEvent) -> dict[str, Any]:
    """JSON-ready form of an event, tagged with its type (one line of metrics.jsonl)."""
    data: dict[str, Any] = to_builtins(event)
    return data


EVENT_NAMES: tuple[str, ...] = tuple(_EVENT_TYPES)


def event_class(name: object) -> type[TrainEvent]:
    """The event type tagged ``name``; CodecError (one line) for a name that is no event of this version."""
    cls = _EVENT_TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise CodecError(f"bad event: unknown event {name!r} (expected one of {', '.join(_EVENT_TYPES)})")
    return cls


def event_from_dict(data: dict[str, Any]) -> TrainEvent:
    """Inverse of ``event_to_dict`` (replays, run folders); other top-level keys (``seq``, ``t``) are ignored.

    Raises CodecError (one line) for an unknown event name, a missing field or a value of the wrong type.
    """
    if not isinstance(data, dict):
        raise CodecError(f"bad event: expected a JSON object, got {type(data).__name__}")
    cls = event_class(data.get("event"))
    # The class, not the TrainEvent union: msgspec caches a class's decoding plan, a union's it rebuilds per call.
    return convert(data, cls, what=f"bad {cls.__name__}")


@dataclass
class RunControl:
    """Commands from the caller to a running ``train()``; thread-safe, checked at step boundaries.

    ``stop`` is a plain ``threading.Event`` so it can be shared with signal handlers and samplers.
    """

    stop: threading.Event = field(default_factory=threading.Event)
    leave: threading.Event = field(default_factory=threading.Event)
    """The viewer is going away and the run goes on: a follower returns, a launched trainer keeps training."""
    _running: threading.Event = field(default_factory=threading.Event)
    _save: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._running.set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def request_stop(self) -> None:
        """Stop at the next step boundary (also wakes a paused run)."""
        self.stop.set()
        self._running.set()

    def request_save(self) -> None:
        """Write a checkpoint at the next step boundary."""
        self._save.set()

    def take_save_request(self) -> bool:
        """True once per ``request_save`` call (called by the trainer)."""
        if self._save.is_set():
            self._save.clear()
            return True
        return False

    def wait_while_paused(self, timeout: float = 0.1) -> bool:
        """Block while paused, waking every ``timeout`` s; True when running (or stopping)."""
        return self._running.wait(timeout)
