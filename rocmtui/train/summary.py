"""How a run ended: ``RunSummary`` for the caller (the folder's ``summary.json`` is the session's)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from rocmtui.events import Emit, RunFailed, RunFinished
from rocmtui.train.saving import Saver


@dataclass(frozen=True)
class RunSummary:
    """How a run ended: its last event, and the run folder if one was made."""

    event: RunFinished | RunFailed
    run_dir: Path | None

    @property
    def ok(self) -> bool:
        return isinstance(self.event, RunFinished)


def end_failed(failed: RunFailed, saver: Saver, send: Emit) -> RunSummary:
    """Send and record ``failed``, after any pending save has landed (its own error is secondary)."""
    with contextlib.suppress(Exception):
        saver.wait()
    run_dir = saver.run_dir
    failed = RunFailed(failed.message, failed.kind, failed.step, failed.epoch, str(run_dir))
    with contextlib.suppress(OSError):  # a full disk: the caller still hears of it; nothing written is lost
        send(failed)  # the leader's session writes it to the stream and summary.json
    return RunSummary(failed, run_dir)
