"""A detached process's output, let go of its launcher's pipes: stderr appended to the run folder's log, stdout
to nothing (the terminal or launcher that started it may go away at any time)."""

from __future__ import annotations

import os
from pathlib import Path

from rocmtui.base.files import open_regular
from rocmtui.run.format import STDERR


def write_output_to_folder(run_dir: Path, *, keep_stdout: bool = False) -> None:
    """fd 2 appends to ``run_dir``'s stderr log (opened without following a link); fd 1 goes to ``/dev/null``
    unless ``keep_stdout`` (a script's supervisor, whose stdout the script's own redirect replaces)."""
    log = open_regular(run_dir / STDERR, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    if not keep_stdout:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    os.dup2(log, 2)
    os.close(log)
