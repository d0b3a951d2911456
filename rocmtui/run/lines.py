"""Whole lines only: an appender that never leaves a torn line, and a tailer that never reads one.

The appender is the one writer of its file (the run lock sees to that). A write that fails part way
(a full disk) is cut back, so the file always ends at a newline. A torn tail left by a crash is set
aside when the file is reopened, never appended to. The tailer holds back a partial last line until
its newline arrives, as TensorBoard and W&B's viewer do, and starts over when the file is replaced or
cut back (readers de-duplicate by sequence number).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO

from rocmtui.base.files import open_regular
from rocmtui.run.format import MAX_LINE_BYTES

CHUNK = 1 << 16
MAX_LINE = MAX_LINE_BYTES
"""A partial line longer than this is not held back: it is dropped (and counted) up to its newline, so a
file without newlines cannot grow a reader's memory. Nothing of ours writes such a line (``track()`` cuts
its windows by bytes to stay under it)."""
READ_MAX = 16 << 20
"""The most one ``read_lines`` reads: a huge append is taken in parts (``behind`` says more is there)."""


class LineWriter:
    """Appends whole lines (``bytes`` ending in a newline) to one file."""

    def __init__(self, path: Path, torn_path: Path | None = None) -> None:
        self.path = path
        self._fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            self.set_aside = set_aside_torn_tail(path, torn_path or path.with_suffix(".torn"))
        except BaseException:
            os.close(self._fd)
            raise
        """Bytes of a torn last line moved out of the file when it was opened (0 when it ended cleanly)."""

    def append(self, line: bytes) -> None:
        """Write ``line`` whole, or leave the file as it was and raise (OSError: ENOSPC, EIO...)."""
        size = os.fstat(self._fd).st_size
        view, written = memoryview(line), 0
        try:
            while written < len(line):
                written += os.write(self._fd, view[written:])
        except OSError:
            with contextlib.suppress(OSError):  # cut back whatever part went out (cutting frees space)
                if os.fstat(self._fd).st_size != size:
                    os.ftruncate(self._fd, size)
            raise

    def sync(self) -> None:
        """fsync: at epoch ends and at the end of the run, never per step."""
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def set_aside_torn_tail(path: Path, torn_path: Path) -> int:
    """Move any bytes after the last newline of ``path`` to the end of ``torn_path``; returns their count."""
    with os.fdopen(open_regular(path, os.O_RDWR), "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        keep = size
        while keep > 0:
            start = max(0, keep - CHUNK)
            f.seek(start)
            block = f.read(keep - start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            keep = start
        if keep == size:
            return 0
        f.seek(keep)
        tail = f.read()
        with os.fdopen(open_regular(torn_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as torn:
            torn.write(tail + b"\n")
            torn.flush()
            os.fsync(torn.fileno())
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
        return len(tail)


def last_line(path: Path) -> bytes | None:
    """The last complete, non-blank line of ``path`` (without its newline), or None."""
    try:
        with os.fdopen(open_regular(path), "rb") as f:
            pos, tail = f.seek(0, os.SEEK_END), b""
            while pos > 0:
                start = max(0, pos - CHUNK)
                f.seek(start)
                tail = f.read(pos - start) + tail
                pos = start
                complete = [line for line in tail.split(b"\n")[:-1] if line.strip()]
                if len(complete) > 1 or (complete and pos == 0):
                    return complete[-1]
            return None
    except FileNotFoundError:
        return None


class LineTailer:
    """Reads the complete lines appended to a file since the last call.

    By path (a viewer's tail: a replaced file is read again from its start), or ``held``: one file opened
    once, read through its descriptor whatever later happens to the path (the trainer's control channel)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held = False
        self._file: BinaryIO | None = None
        self._inode: int | None = None
        self._offset = 0
        self._partial = b""
        self._dropping = False
        """Inside a line longer than MAX_LINE: its bytes are dropped up to its newline."""
        self.dropped = 0
        """Lines dropped for their length since the last ``take_dropped``: always the last of a read."""
        self.restarts = 0
        """Times the file was replaced or cut back and read again from the start."""
        self.behind = False
        """The last read stopped at READ_MAX before the end of the file."""

    @classmethod
    def held(cls, fd: int, path: Path) -> LineTailer:
        """A tailer of the file open on ``fd`` (``path``: for messages only; it is never opened)."""
        tailer = cls(path)
        tailer._held, tailer._file, tailer._inode = True, os.fdopen(fd, "rb"), os.fstat(fd).st_ino
        return tailer

    def read_lines(self) -> list[bytes]:
        """New complete, non-blank lines (without newlines); [] when there are none or no file yet."""
        if self._held:
            if self._file is None:
                return []
            st = os.fstat(self._file.fileno())
            if st.st_size < self._offset:  # cut back: read again from the start
                self._file.seek(0)
                self._offset, self._partial, self._dropping = 0, b"", False
                self.restarts += 1
        else:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                return []
            if self._file is None and self._inode == st.st_ino and st.st_size >= self._offset:
                self._resume()
            if self._file is None or st.st_ino != self._inode or st.st_size < self._offset:
                self._reopen(st.st_ino)
        if self._file is None or st.st_size == self._offset:
            self.behind = False
            return []
        data = self._file.read(READ_MAX)
        self._offset += len(data)
        self.behind = st.st_size > self._offset
        *lines, self._partial = (self._partial + data).split(b"\n")
        if self._dropping:  # inside an over-long line: its bytes go, up to its newline
            if lines:
                lines, self._dropping = lines[1:], False
            else:
                self._partial = b""
        if len(self._partial) > MAX_LINE:
            self._partial, self._dropping = b"", True
            self.dropped += 1
        return [line for line in lines if line and not line.isspace()]  # no copy of each line

    def take_dropped(self) -> int:
        """Lines dropped for their length since the last call."""
        dropped, self.dropped = self.dropped, 0
        return dropped

    def _reopen(self, inode: int) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._inode is not None:  # read before (open, or released): from the start again
            self.restarts += 1
        try:
            self._file = os.fdopen(open_regular(self.path), "rb")
        except FileNotFoundError:
            self._file = None
            return
        self._inode, self._offset, self._partial, self._dropping = inode, 0, b"", False

    def release(self) -> None:
        """Close the file but keep the place: the next read opens it again there (a reader of many files, the
        exporter, holds no descriptor between reads). A file replaced in between is read from its start."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _resume(self) -> None:
        try:
            file = os.fdopen(open_regular(self.path), "rb")
        except FileNotFoundError:
            return
        if os.fstat(file.fileno()).st_ino != self._inode:  # replaced since the stat: read it from the start
            file.close()
            return
        file.seek(self._offset)
        self._file = file

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
