"""Files opened safely and small files written crash-safe.

Files from outside are opened safely: no link followed, nothing but a regular file, never a blocking open.

A run folder can be written by anyone who can write its parent, and a path on the command line may name a FIFO
or a device: every open here refuses a symbolic link (``O_NOFOLLOW``, unless the caller's own path may be one)
and anything that is not a regular file, and never blocks doing so (``O_NONBLOCK``); small files are read with a
size cap. A refusal is one line that names the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from rocmtui.base.errors import UsageError

MAX_SMALL_BYTES = 1 << 20
"""The most a small file (status, config, summary, a lock) may hold before a reader refuses it."""


class UnsafeFileError(UsageError):
    """A file that is not a regular file of a sane size: refused, never followed or waited on."""


def open_regular(path: Path, flags: int = os.O_RDONLY, mode: int = 0o644, *, follow_links: bool = False) -> int:
    """``os.open`` that follows no link (unless ``follow_links``: a path the user typed), never blocks, and
    returns only a regular file's descriptor, in blocking mode.

    FileNotFoundError (and other OSErrors) as ``os.open`` raises them; UnsafeFileError for a link or a
    file of another kind."""
    nofollow = 0 if follow_links else os.O_NOFOLLOW
    try:
        fd = os.open(path, flags | nofollow | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeFileError(f"{path} is a symbolic link, which rocmtui does not follow here") from None
        if err.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise UnsafeFileError(f"{path} is not a regular file (a FIFO or socket)") from None
        raise
    try:
        info = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafeFileError(f"{path} is not a regular file ({file_kind(info.st_mode)})")
    os.set_blocking(fd, True)
    return fd


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, in words (a FIFO, a folder...)."""
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device",
             stat.S_ISDIR: "a folder", stat.S_ISSOCK: "a socket"}  # fmt: skip
    return next((name for test, name in kinds.items() if test(mode)), "not a file")


def read_small(path: Path, max_bytes: int = MAX_SMALL_BYTES, *, follow_links: bool = False) -> bytes:
    """A small file's bytes; UnsafeFileError past ``max_bytes`` (or for a link, a FIFO, a device)."""
    fd = open_regular(path, follow_links=follow_links)
    with os.fdopen(fd, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnsafeFileError(f"{path} is larger than {max_bytes:,} bytes: not read")
    return data


# Small files written crash-safe: replaced whole, through a per-process temp name, fsynced, renamed; never
# written through a link (``open_regular`` opens them).


def atomic_write(path: Path, payload: bytes, *, durable: bool = True, mode: int = 0o644) -> None:
    """Replace ``path`` with ``payload`` so that a reader sees the old file or the new one, never half of one.

    ``durable``: the file and the rename are fsynced, so that a crash (of the machine, too) at any point leaves
    the old file or the new one; without it (a heartbeat) the file is only renamed into place. The temp name
    carries the pid, so two processes never write through the same temp file; the rename replaces a link at
    ``path`` itself, never its target.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        fd = open_regular(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
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
