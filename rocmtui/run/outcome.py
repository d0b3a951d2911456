"""How a run ended, for people and shells: the lines left on the terminal and the exit code.

The same in the TUI and headless (README, "Exit codes"): 0 finished or stopped by the user, 1 failed,
2 bad input (a flag, the data, a checkpoint), 128+N when signal N ended it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn

from rocmtui.base.units import fmt_acc
from rocmtui.events import RunFailed, RunFinished

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def exit_code(final: RunFinished | RunFailed | None) -> int:
    if isinstance(final, RunFailed):
        return EXIT_USAGE if final.kind == "data" else EXIT_FAILED
    return EXIT_OK if final is not None else EXIT_FAILED


def leave(code: int) -> NoReturn:
    """Exit now; with torch loaded, skip the interpreter's teardown.

    Unloading torch takes 0.7 to 0.9 s on the 2-core CPU box (``import torch`` then exit: 2.6 to 2.9 s; then
    ``os._exit``: 1.8 to 2.0 s) and writes nothing of ours: by the time a command returns, its run files are
    closed and fsynced, its threads stopped and the terminal restored. Only the standard streams need a flush.
    """
    if "torch" not in sys.modules:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe must not turn the exit code into a traceback
            stream.flush()
    os._exit(code)


def result_lines(
    final: RunFinished | RunFailed | None, run_dir: str | None, *, script_step: int | None = None
) -> list[str]:
    """One or two plain lines: the result (or the error) and the run folder. ``script_step``: the run is a
    script's (``rocmtui.track()``), which counts steps (and epochs only if it logs them): its last step."""
    where = [f"run folder: {run_dir}"] if run_dir else []
    if isinstance(final, RunFinished) and script_step is not None:
        epochs = f", {final.epochs_completed} epoch(s)" if final.epochs_completed else ""
        steps = f"{script_step:,} step(s)" if script_step else "nothing logged"
        return [f"rocmtui: {final.reason}: {steps}{epochs}, {final.total_s:.1f}s", *where]
    if isinstance(final, RunFinished):
        best = "" if final.best_test_acc is None else f", best test accuracy {fmt_acc(final.best_test_acc)}"
        epochs = f"{final.epochs_completed} epoch(s)" if final.epochs_completed else "no epoch completed"
        tta = "" if final.tta_test_acc is None else f" ({fmt_acc(final.tta_test_acc)} with test-time augmentation)"
        head = f"rocmtui: {final.reason}: {epochs}{best}{tta}, {final.total_s:.1f}s of training"
        return [head, *where]
    if isinstance(final, RunFailed):
        return [f"rocmtui: failed ({final.kind}): {final.message}", *where]
    return ["rocmtui: the run ended without a result", *where]
