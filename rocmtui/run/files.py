"""Small run-folder files written crash-safe: replaced whole, through a per-process temp name, fsynced,
renamed; never written through a link (``rocmtui.base.files`` opens them)."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from rocmtui.base.files import open_regular


def write_new(path: Path, payload: bytes, mode: int = 0o644) -> None:
    """Write ``path`` afresh (replacing a file of ours, never writing through a link), without fsync."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(payload)


def atomic_write(path: Path, payload: bytes) -> None:
    """Replace ``path`` with ``payload`` so that a crash at any point leaves the old file or the new one.

    The temp name carries the pid, so two processes never write through the same temp file; the rename
    replaces a link at ``path`` itself, never its target.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        fd = open_regular(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def held_folder(fd: int, path: Path) -> Path:
    """A path through ``fd``, a descriptor of an open folder: ``/proc/self/fd/N`` names that folder wherever it
    is moved or renamed, so writes through it never land in a folder put in its place. ``path`` where /proc is
    not mounted."""
    proc = Path(f"/proc/self/fd/{fd}")
    try:
        same = os.path.samestat(os.stat(proc), os.fstat(fd))
    except OSError:
        return path
    return proc if same else path


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
