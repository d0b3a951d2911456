"""Crash-safe small files: write to a per-process temp name, fsync, rename, fsync the folder."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any


def atomic_write(path: Path, payload: bytes) -> None:
    """Replace ``path`` with ``payload`` so that a crash at any point leaves the old file or the new one.

    The temp name carries the pid, so two processes never write through the same temp file.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """A small JSON file, written atomically."""
    atomic_write(path, (json.dumps(data, indent=2) + "\n").encode())


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(err: BaseException) -> bool:
    """True for "no space left" and "quota exceeded", wherever they surface."""
    return isinstance(err, OSError) and err.errno in DISK_FULL_ERRNOS
