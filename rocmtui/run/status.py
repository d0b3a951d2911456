"""``status.json``: who writes the run, in what state, a heartbeat, and the progress ``rocmtui runs`` lists.

A writer killed with ``-9`` cannot say so: a reader sees "lost" when the status says live but the
folder's lock is free (same machine) or the heartbeat is stale (a folder shared with another machine).
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from rocmtui.run.files import atomic_write
from rocmtui.run.layout import STATUS
from rocmtui.run.lock import is_locked

State = Literal["starting", "running", "paused", "stopping", "finished", "stopped", "failed", "lost"]
LIVE_STATES: tuple[State, ...] = ("starting", "running", "paused", "stopping")
HEARTBEAT_S = 2.0
STALE_S = 15.0
"""A live status whose heartbeat is older than this, written on another machine, reads as lost."""


@dataclass(frozen=True)
class RunStatus:
    pid: int
    host: str
    state: State
    started_at: float
    heartbeat: float
    name: str = ""
    """What runs: ``cifar10 simplecnn``, or a script's run name."""
    device_name: str = ""
    epoch: int = 0
    """Epochs completed."""
    epochs: int = 0
    best_acc: float | None = None
    elapsed_s: float = 0.0
    message: str = ""
    """The failure, when failed."""

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES


def new_status(name: str) -> RunStatus:
    now = time.time()
    return RunStatus(os.getpid(), socket.gethostname(), "starting", now, now, name=name)


def write_status(run_dir: Path, status: RunStatus, *, durable: bool) -> None:
    """Durable writes (state changes, epoch ends) are fsynced; heartbeats are only renamed into place."""
    payload = (json.dumps(asdict(status), indent=1) + "\n").encode()
    if durable:
        atomic_write(run_dir / STATUS, payload)
        return
    tmp = run_dir / f".{STATUS}.{os.getpid()}.beat"
    tmp.write_bytes(payload)
    os.replace(tmp, run_dir / STATUS)


def read_status(run_dir: Path) -> RunStatus | None:
    """The status as written, or None when there is none or it cannot be read."""
    try:
        data = json.loads((run_dir / STATUS).read_text(encoding="utf-8"))
        return RunStatus(**{k: v for k, v in data.items() if k in RunStatus.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None


def effective(run_dir: Path, status: RunStatus) -> RunStatus:
    """The status as it really is: a live state whose writer is gone becomes "lost"."""
    if not status.live:
        return status
    same_host = status.host == socket.gethostname()
    alive = is_locked(run_dir) if same_host else time.time() - status.heartbeat < STALE_S
    return status if alive else replace(status, state="lost")
