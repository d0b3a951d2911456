"""One writer per run folder: the process that trains holds an flock on ``run.lock`` for as long as it writes.

The kernel drops the lock when the process dies, ``kill -9`` included, so a lock that can be taken
means nobody is writing. The lock file names its holder, for the one-line refusal.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.base.files import UnsafeFileError, open_regular
from rocmtui.run.format import LOCK

ACQUIRE_TRIES = 5


class RunBusyError(UsageError):
    """Another live process writes this run folder."""


class RunLock:
    """An exclusive, non-blocking hold on a run folder."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    @classmethod
    def acquire(cls, run_dir: Path) -> RunLock:
        """Take the folder, or raise RunBusyError naming the live writer."""
        fd = open_regular(run_dir / LOCK, os.O_RDWR | os.O_CREAT)
        try:
            _flock_retrying(fd)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise RunBusyError(
                f"{run_dir} is being written by {holder}; watch it with 'rocmtui watch {run_dir}' "
                f"or stop it with 'rocmtui stop {run_dir}'"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        return cls(fd)

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1


def _flock_retrying(fd: int) -> None:
    """LOCK_EX, retried for a moment: a viewer's ``is_locked`` probe holds a shared lock for microseconds."""
    for attempt in range(ACQUIRE_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if attempt == ACQUIRE_TRIES - 1:
                raise
            time.sleep(0.05)


def is_locked(run_dir: Path) -> bool:
    """True while some process holds the folder's lock (a live writer on this machine)."""
    return lock_held(run_dir / LOCK)


def lock_held(path: Path) -> bool:
    """True while some process holds an flock on the regular file ``path`` (never follows a link)."""
    try:
        fd = open_regular(path)
    except (OSError, UnsafeFileError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


PROC_LOCKS = Path("/proc/locks")


def lock_holders(run_dir: Path, proc_locks: Path = PROC_LOCKS) -> set[int]:
    """The processes that hold the folder's lock, as the kernel lists them (``/proc/locks``): never a pid read
    from a file in the folder, which whoever can write the folder could point at any process."""
    try:
        fd = open_regular(run_dir / LOCK)
    except (OSError, UnsafeFileError):
        return set()
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    holders: set[int] = set()
    try:
        text = proc_locks.read_text()
    except OSError:
        return holders
    for line in text.splitlines():
        fields = line.split()
        if "->" in fields:  # a request waiting for the lock, not a holder
            continue
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device and fields[4].isdigit():
            holders.add(int(fields[4]))
    return holders
