"""Pointing standard file descriptors at /dev/null: one helper for every layer (stdlib only).

Used after a closed pipe (``monitor --json | head -1``), after a terminal hangup (the UI) and in the
training child, which shares the UI's terminal and reports by events. It lives in ``gpu`` because that
is the lowest layer that ``ui`` and ``train`` may both import.
"""

from __future__ import annotations

import os

STDIO = (0, 1, 2)
"""stdin, stdout and stderr."""


def redirect_to_devnull(fds: tuple[int, ...] = STDIO) -> None:
    """Point each file descriptor in ``fds`` at /dev/null (opened read-write), so reads see EOF and writes vanish."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in fds:
            os.dup2(null, fd)
    finally:
        os.close(null)
