"""How a run ended, for people and shells: the lines left on the terminal and the exit code.

The same in the TUI and headless (README, "Exit codes"): 0 finished or stopped by the user, 1 failed,
2 bad input (a flag, the data, a checkpoint), 128+N when signal N ended it.
"""

from __future__ import annotations

from rocmtui.events import RunFailed, RunFinished

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def exit_code(final: RunFinished | RunFailed | None) -> int:
    if isinstance(final, RunFailed):
        return EXIT_USAGE if final.kind == "data" else EXIT_FAILED
    return EXIT_OK if final is not None else EXIT_FAILED


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def result_lines(final: RunFinished | RunFailed | None, run_dir: str | None) -> list[str]:
    """One or two plain lines: the result (or the error) and the run folder."""
    where = [f"run folder: {run_dir}"] if run_dir else []
    if isinstance(final, RunFinished):
        best = "" if final.best_test_acc is None else f", best test accuracy {_pct(final.best_test_acc)}"
        epochs = f"{final.epochs_completed} epoch(s)" if final.epochs_completed else "done"
        head = f"rocmtui: {final.reason}: {epochs}{best}, {final.total_s:.1f}s"
        return [head, *where]
    if isinstance(final, RunFailed):
        return [f"rocmtui: failed ({final.kind}): {final.message}", *where]
    return ["rocmtui: the run ended without a result", *where]
