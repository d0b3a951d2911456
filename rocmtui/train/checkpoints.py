"""Checkpoints: serialised in memory, written atomically on a background thread, loaded as data."""

from __future__ import annotations

import io
import math
import os
import pickle
import threading
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from rocmtui.base.errors import CheckpointError
from rocmtui.base.files import atomic_write

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


@dataclass(frozen=True)
class _Slot:
    """Where a GPU tensor of the state lies in its group's flat host buffer."""

    group: tuple[torch.device, torch.dtype]
    offset: int
    shape: tuple[int, ...]


class HostCopy:
    """A checkpoint on its way to host memory, taken at a step boundary without waiting for its copy.

    The GPU tensors of each device and dtype are gathered on the device at once, into one flat buffer (later
    steps cannot change what is saved), then copied into one pinned host buffer on a side stream, so the copy
    overlaps the next steps instead of stalling them (a pageable copy on the training stream added about 5 ms
    to each of fastnet's 0.21 s epochs on an H200, and a clone, a pinned buffer and a copy for each of its
    tensors cost the training thread about 5 ms a checkpoint). ``state`` waits for those copies and cuts the
    buffers back into tensors: the writer's thread calls it. The gathered buffers cost one copy of the state in
    GPU memory until then; where that memory is not there, the tensors are copied to the host at once instead.
    """

    def __init__(self, state: dict[str, Any]) -> None:
        self._groups: dict[tuple[torch.device, torch.dtype], list[torch.Tensor]] = {}
        self._sizes: dict[tuple[torch.device, torch.dtype], int] = {}
        shaped = self._slotted(state)
        self._hosts, self._events, self._frozen = self._gathered()
        self._state: dict[str, Any] = shaped

    def _slotted(self, value: Any) -> Any:
        """``value`` with each GPU tensor replaced by its slot (CPU tensors cloned now)."""
        if isinstance(value, torch.Tensor):
            tensor = value.detach()
            if not tensor.is_cuda:
                return tensor.clone()
            group = (tensor.device, tensor.dtype)
            offset = self._sizes.get(group, 0)
            self._groups.setdefault(group, []).append(tensor)
            self._sizes[group] = offset + tensor.numel()
            return _Slot(group, offset, tuple(tensor.shape))
        if isinstance(value, dict):
            return {key: self._slotted(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._slotted(item) for item in value)
        return value

    def _gathered(
        self,
    ) -> tuple[dict[tuple[torch.device, torch.dtype], torch.Tensor], list[torch.cuda.Event], list[torch.Tensor]]:
        hosts: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}
        events: list[torch.cuda.Event] = []
        frozen: list[torch.Tensor] = []
        for group, tensors in self._groups.items():
            device = group[0]
            try:
                flat = torch.cat([t.reshape(-1) for t in tensors])
            except torch.cuda.OutOfMemoryError:  # no room for the gathered copy: a synchronous one, as before
                hosts[group] = torch.cat([t.reshape(-1).cpu() for t in tensors])
                continue
            stream = torch.cuda.Stream(device)  # type: ignore[no-untyped-call]
            stream.wait_stream(torch.cuda.current_stream(device))  # the gather first, then its copy
            flat.record_stream(stream)
            host = torch.empty_like(flat, device="cpu", pin_memory=True)
            with torch.cuda.stream(stream):
                host.copy_(flat, non_blocking=True)
            event = torch.cuda.Event()  # type: ignore[no-untyped-call]
            event.record(stream)
            hosts[group] = host
            frozen.append(flat)
            events.append(event)
        self._groups.clear()
        return hosts, events, frozen

    def completed(self, values: dict[str, Any]) -> HostCopy:
        """This copy with ``values`` added: host values only (CPU tensors are cloned), known after it was taken,
        such as the run's position once its epoch has been evaluated."""
        added = self._slotted(values)
        if self._groups:
            self._groups.clear()
            raise ValueError("a copy's GPU tensors are gathered when it is taken, not added afterwards")
        self._state = {**self._state, **added}
        return self

    def state(self) -> dict[str, Any]:
        for event in self._events:
            event.synchronize()
        self._frozen.clear()
        restored: dict[str, Any] = self._restored(self._state)
        return restored

    def _restored(self, value: Any) -> Any:
        if isinstance(value, _Slot):
            size = math.prod(value.shape)
            return self._hosts[value.group][value.offset : value.offset + size].view(value.shape).clone()
        if isinstance(value, dict):
            return {key: self._restored(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._restored(item) for item in value)
        return value


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


MAX_INFLATION = 2
"""torch.save stores a checkpoint's entries uncompressed: its zip directory adds up to about the file's size. A
file whose entries say they inflate to more than twice that is refused before ``torch.load`` reads any (a
crafted one of a few KB that inflates to gigabytes)."""
INFLATION_SLACK = 1 << 20


def _inflated_size(file: Any) -> int | None:
    """What the entries of the zip open in ``file`` add up to, inflated, as its directory says; None when the
    directory cannot be read."""
    try:
        file.seek(0)
        with zipfile.ZipFile(file) as archive:
            return sum(entry.file_size for entry in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return None


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Read a checkpoint onto the CPU as data only; CheckpointError (one line) if it is corrupt or not ours.

    ``weights_only=True`` unpickles tensors, state dicts and plain values and refuses everything else, so
    a crafted file cannot run code; a file that is not torch's zip format is refused before unpickling.
    """
    try:
        with path.open("rb") as file:
            is_zip = zipfile.is_zipfile(file)
            inflated = _inflated_size(file) if is_zip else 0
            size = os.fstat(file.fileno()).st_size
    except OSError as err:
        raise CheckpointError(f"{path} cannot be read ({err.strerror or type(err).__name__})") from None
    if not is_zip:
        raise CheckpointError(f"{path} is corrupt or not a checkpoint (not a torch zip archive)")
    if inflated is None:
        raise CheckpointError(f"{path} is corrupt or not a checkpoint (an unreadable zip directory)")
    if inflated > size * MAX_INFLATION + INFLATION_SLACK:
        raise CheckpointError(
            f"{path} is not a rocmtui checkpoint: its {size:,} bytes would inflate to {inflated:,} "
            f"(torch stores checkpoints uncompressed)"
        )
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
