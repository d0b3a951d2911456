"""How a training fails: every exception as a one-line ``RunFailed`` with its kind, never a traceback."""

from __future__ import annotations

import torch

from rocmtui.base.errors import CheckpointError, DataError, UsageError, first_line
from rocmtui.base.files import is_disk_full
from rocmtui.events import FailureKind, RunFailed

OUT_OF_MEMORY = "out of GPU memory; try a smaller --batch-size or --amp bf16"


class NonFiniteLoss(Exception):
    def __init__(self, step: int) -> None:
        super().__init__(f"the loss became NaN or infinite at step {step}; try a lower --lr")
        self.step = step


def setup_failure(err: Exception) -> RunFailed:
    """A failure before the run has a folder: bad input, a busy folder, a full disk."""
    if is_disk_full(err):
        return RunFailed(disk_full_message(err), "disk")
    return RunFailed(str(err), "data") if isinstance(err, UsageError) else _error(err)  # input to fix: exit 2


def training_failure(err: Exception, step: int, epoch: int) -> RunFailed:
    """A failure once the run has its folder, at global ``step`` of ``epoch``."""
    if isinstance(err, NonFiniteLoss):
        return RunFailed(str(err), "nan", step=err.step, epoch=epoch)
    if isinstance(err, torch.cuda.OutOfMemoryError):
        return RunFailed(OUT_OF_MEMORY, "oom", step=step, epoch=epoch)
    if isinstance(err, UsageError):
        return RunFailed(str(err), _usage_kind(err))
    if is_disk_full(err):
        return RunFailed(disk_full_message(err), "disk", step, epoch)
    return RunFailed(_error(err).message, "error", step, epoch)


def disk_full_message(err: BaseException) -> str:
    where = getattr(err, "filename", None)
    return f"disk full{f' writing {where}' if where else ''}: free some space; everything already written is kept"


def _usage_kind(err: UsageError) -> FailureKind:
    """Bad data or a checkpoint that does not fit is input the user must fix ("data", exit 2 headless)."""
    return "data" if isinstance(err, DataError | CheckpointError) else "error"


def _error(err: BaseException) -> RunFailed:
    """Any other exception as a one-line failure: its type and the first line of its message."""
    return RunFailed(first_line(err, with_type=True), "error")
