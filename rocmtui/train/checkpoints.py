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


class HostCopy:
    """A checkpoint on its way to host memory, taken at a step boundary without waiting for its copy.

    GPU tensors are cloned on the device at once (later steps cannot change what is saved), then copied to
    pinned host memory on a side stream, so the copy overlaps the next steps instead of stalling them (a
    pageable copy on the training stream added about 5 ms to each of fastnet's 0.21 s epochs on an H200).
    ``state`` waits for those copies: the writer's thread calls it. The clones cost one copy of the state in
    GPU memory until then; where that memory is not there, a tensor is copied to the host at once instead.
    """

    def __init__(self, state: dict[str, Any]) -> None:
        self._frozen: list[torch.Tensor] = []
        self._streams: dict[torch.device, torch.cuda.Stream] = {}
        self._state: dict[str, Any] = self._copied(state)
        self._events: list[torch.cuda.Event] = []
        for stream in self._streams.values():
            event = torch.cuda.Event()  # type: ignore[no-untyped-call]
            event.record(stream)
            self._events.append(event)

    def _copied(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return self._tensor(value.detach())
        if isinstance(value, dict):
            return {key: self._copied(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._copied(item) for item in value)
        return value

    def _tensor(self, tensor: torch.Tensor) -> torch.Tensor:
        if not tensor.is_cuda:
            return tensor.clone()
        try:
            frozen = tensor.clone()
        except torch.cuda.OutOfMemoryError:  # no room for the clone: a synchronous copy, as before
            return tensor.cpu()
        stream = self._streams.get(tensor.device)
        if stream is None:
            stream = self._streams[tensor.device] = torch.cuda.Stream(tensor.device)  # type: ignore[no-untyped-call]
        stream.wait_stream(torch.cuda.current_stream(tensor.device))  # this clone first, then its copy
        frozen.record_stream(stream)
        self._frozen.append(frozen)
        host = torch.empty_like(frozen, device="cpu", pin_memory=True)
        with torch.cuda.stream(stream):
            host.copy_(frozen, non_blocking=True)
        return host

    def state(self) -> dict[str, Any]:
        for event in self._events:
            event.synchronize()
        self._frozen.clear()
        return self._state


class CheckpointWriter:
    """Serialises and writes checkpoints on a background thread, one save at a time, so neither the copy to
    the host nor fsync stalls training.

    A write error is raised by the next ``submit`` or ``wait``, which the loop turns into a RunFailed.
    """

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def submit(self, copy: HostCopy, paths: list[Path]) -> None:
        """Save ``copy`` to each of ``paths``."""
        self.wait()

        def work() -> None:
            try:
                payload = serialize(copy.state())
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
