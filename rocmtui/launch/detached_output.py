"""A detached process's output, let go of its launcher's pipes: stderr appended to the run folder's log, stdout
to nothing (the terminal or launcher that started it may go away at any time)."""

from __future__ import annotations

import os
from pathlib import Path

from rocmtui.base.files import open_regular
from rocmtui.run.format import RANKS, STDERR


def write_output_to_folder(run_dir: Path, *, keep_stdout: bool = False, name: str = STDERR) -> None:
    """fd 2 appends to ``run_dir/name`` (the run's stderr log; opened without following a link); fd 1 goes to
    ``/dev/null`` unless ``keep_stdout`` (a script's supervisor, whose stdout the script's own redirect replaces).

    One writer a file: on a folder several hosts share (NFS), appends from two hosts may interleave, so every
    process but the run's own writes a log of its own (``node_log_name``, ``rank_log_name``)."""
    log = open_regular(run_dir / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    if not keep_stdout:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    os.dup2(log, 2)
    os.close(log)


def node_log_name(host: str, pid: int) -> str:
    """``trainer-<host>-<pid>.log``: the launcher of one node of a job, beside the others' in the shared folder."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in ".-") else "_" for c in host)[:64] or "host"
    return f"trainer-{safe}-{pid}.log"


def rank_log_name(rank: int) -> str:
    """``ranks/rank-N.log``: the stderr of rank N (rank 0's is the run's own log)."""
    return STDERR if rank == 0 else f"{RANKS}/rank-{rank}.log"
