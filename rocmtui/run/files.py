"""Run-folder files opened safely, and small files written crash-safe.

A run folder can be written by anyone who can write its parent, so nothing in it is trusted: every open
refuses a symbolic link (``O_NOFOLLOW``) and anything that is not a regular file (a FIFO, a device), and
never blocks doing so (``O_NONBLOCK``); small files are read with a size cap. A refusal is one line that
names the file. Small files are replaced whole: written to a per-process temp name, fsynced, renamed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from rocmtui.errors import UsageError

MAX_SMALL_BYTES = 1 << 20
"""The most a small file (status, config, summary, a lock) may hold before a reader refuses it."""


class RunFileError(UsageError):
    """A run-folder file that is not a regular file of a sane size: refused, never followed or waited on."""


def open_regular(path: Path, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """``os.open`` that follows no link, never blocks, and returns only a regular file's descriptor.

    FileNotFoundError (and other OSErrors) as ``os.open`` raises them; RunFileError for a link or a
    file of another kind."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise RunFileError(f"{path} is a symbolic link: rocmtui does not follow links in a run folder") from None
        if err.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise RunFileError(f"{path} is not a regular file (a FIFO or socket)") from None
        raise
    try:
        info = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise RunFileError(f"{path} is not a regular file ({_kind(info.st_mode)})")
    return fd


def _kind(mode: int) -> str:
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device",
             stat.S_ISDIR: "a folder", stat.S_ISSOCK: "a socket"}  # fmt: skip
    return next((name for test, name in kinds.items() if test(mode)), "not a file")


def read_small(path: Path, max_bytes: int = MAX_SMALL_BYTES) -> bytes:
    """A small file's bytes; RunFileError past ``max_bytes`` (or for a link, a FIFO, a device)."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise RunFileError(f"{path} is larger than {max_bytes:,} bytes: not read")
    return data


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
