"""The run folder: config.json, metrics.jsonl (one event a line, flushed), atomic checkpoints, summary.json."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path
from typing import IO, Any

import torch

from rocmtui.config import TrainConfig
from rocmtui.errors import CheckpointError
from rocmtui.events import TrainEvent, event_to_dict
from rocmtui.run.files import atomic_write

LAST = "checkpoint-last.pt"
BEST = "checkpoint-best.pt"
CHECKPOINT_FORMAT = 1


def new_run_dir(config: TrainConfig) -> Path:
    """``runs/<YYYYmmdd-HHMMSS>-<dataset>-<model>/``, with a numeric suffix if that name is taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = config.runs_dir / f"{stamp}-{config.dataset}-{config.model}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    path.mkdir(parents=True)
    return path


class RunLog:
    """Appends events to metrics.jsonl, one JSON object a line, flushed as written."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._file: IO[str] = (run_dir / "metrics.jsonl").open("a", encoding="utf-8")

    def write(self, event: TrainEvent) -> None:
        self._file.write(json.dumps(event_to_dict(event)) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def serialize(state: dict[str, Any]) -> bytes:
    """A checkpoint's bytes, taken synchronously: later training steps cannot change what is saved."""
    buffer = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, **state}, buffer)
    return buffer.getvalue()


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Serialise in memory (fast for small models), then write atomically."""
    atomic_write(path, serialize(state))


class CheckpointWriter:
    """Writes checkpoint bytes on a background thread, one save at a time, so fsync never stalls training.

    A write error is raised by the next ``submit`` or ``wait``, which the loop turns into a RunFailed.
    """

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def submit(self, payload: bytes, paths: list[Path]) -> None:
        self.wait()

        def work() -> None:
            try:
                for path in paths:
                    atomic_write(path, payload)
            except BaseException as err:  # handed to the training thread by wait()
                self._error = err

        self._thread = threading.Thread(target=work, name="rocmtui-checkpoint")
        self._thread.start()

    def wait(self) -> None:
        """Block until the pending save is on disk; re-raise its error, if any."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def checkpoint_file(path: Path) -> Path:
    """A run folder means its checkpoint-last.pt; a file is taken as it is."""
    if path.is_dir():
        path = path / LAST
        if not path.is_file():
            raise CheckpointError(f"{path.parent} has no {LAST} to resume from")
    return path


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Read a checkpoint onto the CPU; CheckpointError (one line) if it is corrupt or not ours."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # torch raises many types for a torn or foreign file; all mean "unusable"
        raise CheckpointError(f"{path} is corrupt or not a checkpoint ({type(err).__name__})") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT or "config" not in state:
        raise CheckpointError(f"{path} is not a rocmtui checkpoint")
    return state


def check_compatible(saved: TrainConfig, wanted: TrainConfig, path: Path) -> None:
    """The settings that shape the model and the data must match to resume."""
    for name in ("dataset", "model", "batch_size", "optimizer", "amp"):
        if getattr(saved, name) != getattr(wanted, name):
            raise CheckpointError(
                f"{path} was trained with {name}={getattr(saved, name)!r}, not {getattr(wanted, name)!r}; "
                "resume with the run's own settings"
            )
