"""``status.json``: who writes the run, in what state, a heartbeat, and the progress ``rocmtui runs`` lists.

A writer killed with ``-9`` cannot say so: a reader sees "lost" when the status says live but the
folder's lock is free (same machine) or the heartbeat is stale (a folder shared with another machine); one
frozen (SIGSTOP) still holds the lock and reads "stalled" once its heartbeat is stale.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import msgspec

from rocmtui.base.errors import UsageError
from rocmtui.base.files import atomic_write
from rocmtui.codec import CodecError
from rocmtui.run.format import LIVE_STATES, STATUS, RunStatus, State, encode_file, read_record, write_record
from rocmtui.run.lock import is_locked

__all__ = ["LIVE_STATES", "RunStatus", "State", "effective", "new_status", "read_status", "write_status"]

HEARTBEAT_S = 2.0
STALE_S = 15.0
"""A live status whose heartbeat is older than this reads as lost (written on another machine) or stalled (its
writer still holds the lock here)."""


def new_status(name: str) -> RunStatus:
    now = time.time()
    return RunStatus(os.getpid(), socket.gethostname(), "starting", now, now, name=name)


def write_status(run_dir: Path, status: RunStatus, *, durable: bool) -> None:
    """Durable writes (state changes, epoch ends) are fsynced; heartbeats are only renamed into place."""
    if durable:
        write_record(run_dir / STATUS, status)
        return
    atomic_write(run_dir / STATUS, encode_file(status), durable=False)


class StatusUnreadable(Exception):
    """``status.json`` exists but is not a status this version reads: its one-line reason."""


def read_status(run_dir: Path) -> RunStatus | None:
    """The status as written, or None when there is none or it cannot be read."""
    try:
        return load_status(run_dir)
    except StatusUnreadable:
        return None


def load_status(run_dir: Path) -> RunStatus | None:
    """The status as written; None when there is none; StatusUnreadable (with the reason) when it is bad."""
    try:
        return read_record(run_dir / STATUS, RunStatus)
    except FileNotFoundError:
        return None
    except (OSError, CodecError, UsageError) as err:
        raise StatusUnreadable(str(err)) from None


def effective(run_dir: Path, status: RunStatus) -> RunStatus:
    """The status as it really is: a live state whose writer is gone becomes "lost"; one whose writer is
    still here (on this machine) but has not beaten for ``STALE_S`` becomes "stalled"."""
    if not status.live:
        return status
    fresh = time.time() - status.heartbeat < STALE_S
    if status.host != socket.gethostname():
        return status if fresh else msgspec.structs.replace(status, state="lost")
    if not is_locked(run_dir):
        return msgspec.structs.replace(status, state="lost")
    return status if fresh else msgspec.structs.replace(status, state="stalled")
