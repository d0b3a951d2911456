"""The ``rocmtui`` command (and ``python -m rocmtui``): the collector paused, then the CLI imported and run.

The one place where every command's output errors end: a reader that went away (``rocmtui runs | head -1``)
ends the command quietly, as a process killed by SIGPIPE would; a full disk or another failed write to
stdout (``runs > /dev/full``) is one line on stderr. Neither is a traceback, whatever the command.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from rocmtui.base import startup_gc
from rocmtui.base.text import plain

startup_gc.pause()  # before the CLI's imports: the command resumes it once its start is over

EXIT_BROKEN_PIPE = 128 + 13
"""What a shell reports for a writer ended by SIGPIPE (``yes | head -1``)."""
EXIT_OUTPUT_FAILED = 1
OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""Errors of a write that no command meant to leave unhandled: the output (or a file) could not be written."""


def entry() -> NoReturn:
    """The CLI, then ``outcome.leave`` (no slow teardown once torch is loaded)."""
    from rocmtui.cli.main import main
    from rocmtui.run.outcome import leave

    leave(run_writing_out(main))


def run_writing_out(command: Callable[[], int]) -> int:
    """``command``'s exit code, with its output flushed; an output error ends it as the module says."""
    try:
        code = command()
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as err:
        if err.errno not in OUTPUT_ERRORS:
            raise
        _silence_stdout()
        where = "the output" if err.filename is None else repr(str(err.filename))
        print(f"rocmtui: cannot write {plain(where)}: {os.strerror(err.errno or 0)}", file=sys.stderr)
        return EXIT_OUTPUT_FAILED
    return code


def _silence_stdout() -> None:
    """Nothing more reaches the broken stdout: the interpreter's last flush must not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no stdout at all
        return
