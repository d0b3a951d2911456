"""Checkpoints: serialised in memory, written atomically on a background thread, loaded as data."""

from __future__ import annotations

import io
import pickle
import threading
import warnings
import zipfile
from pathlib import Path
from typing import Any

import torch

from rocmtui.errors import CheckpointError
from rocmtui.run.files import atomic_write

LAST = "checkpoint-last.pt"
BEST = "checkpoint-best.pt"
CHECKPOINT_FORMAT = 1


def serialize(state: dict[str, Any]) -> bytes:
    """A checkpoint's bytes, taken synchronously: later training steps cannot change what is saved."""
    buffer = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, **state}, buffer)
    return buffer.getvalue()


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Serialise in memory (fast for small models), then write atomically."""
    atomic_write(path, serialize(state))


def detached(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with every tensor copied where it lies (a device-side copy is queued, not waited for), so that
    training can go on while another thread serialises it: later steps cannot change what is saved."""

    def copy(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.detach().clone()
        if isinstance(value, dict):
            return {key: copy(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(copy(item) for item in value)
        return value

    return copy(state)


class CheckpointWriter:
    """Serialises and writes checkpoints on a background thread, one save at a time, so neither the copy to
    the host nor fsync stalls training.

    A write error is raised by the next ``submit`` or ``wait``, which the loop turns into a RunFailed.
    """

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def submit(self, state: dict[str, Any], paths: list[Path]) -> None:
        """Save ``state`` (a ``detached`` one: it is read later, on the writer's thread) to each of ``paths``."""
        self.wait()

        def work() -> None:
            try:
                payload = serialize(state)
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
    """Read a checkpoint onto the CPU as data only; CheckpointError (one line) if it is corrupt or not ours.

    ``weights_only=True`` unpickles tensors, state dicts and plain values and refuses everything else, so
    a crafted file cannot run code; a file that is not torch's zip format is refused before unpickling.
    """
    try:
        with path.open("rb") as file:
            is_zip = zipfile.is_zipfile(file)
    except OSError as err:
        raise CheckpointError(f"{path} cannot be read ({err.strerror or type(err).__name__})") from None
    if not is_zip:
        raise CheckpointError(f"{path} is corrupt or not a checkpoint (not a torch zip archive)")
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols: the error below says it all
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:  # the weights-only unpickler met a global it does not allow
        raise CheckpointError(f"{path} is not a rocmtui checkpoint (it holds objects, not just data)") from None
    except Exception as err:  # torch raises many types for a torn or foreign file; all mean "unusable"
        raise CheckpointError(f"{path} is corrupt or not a checkpoint ({type(err).__name__})") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT or "config" not in state:
        raise CheckpointError(f"{path} is not a rocmtui checkpoint")
    return state
