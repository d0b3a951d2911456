"""Start a script under the supervisor, in a session of its own, and follow its run folder from the UI.

``ScriptLauncher`` is a run source for the training app, ``(config, emit, control) -> final event``, as
``rocmtui.launch.trainer.LaunchedTrainer`` is for ``rocmtui train``: the run's events come from its folder
(``rocmtui.run.follow``), its stdout and stderr from ``output.log`` as log lines. ``control.leave``
detaches: the launcher returns and the script runs on.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from pathlib import Path

from rocmtui.config import TrainConfig
from rocmtui.events import Emit, LogMessage, RunControl, TrainEvent
from rocmtui.run.follow import follow
from rocmtui.run.format import OUTPUT
from rocmtui.run.lines import LineTailer

POLL_S = 0.2
MAX_LINES_PER_POLL = 40
"""Output lines shown per poll; a script printing faster is summarised (every line stays in output.log)."""
EXIT_GRACE_S = 30.0


def supervisor_command(run_dir: Path, name: str, command: list[str]) -> list[str]:
    return [sys.executable, "-m", "rocmtui.launch.script_supervisor", str(run_dir), name, "--", *command]


def start(run_dir: Path, name: str, command: list[str]) -> subprocess.Popen[bytes]:
    """The supervisor, in a new session: the terminal's hangup and Ctrl-C never reach it or the script."""
    return subprocess.Popen(
        supervisor_command(run_dir, name, command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def output_lines(raw: list[bytes]) -> list[str]:
    """Lines as a terminal would leave them: a carriage return (a progress bar) keeps only its last part."""
    out = []
    for line in raw:
        text = line.decode(errors="replace").rstrip("\r").rsplit("\r", 1)[-1].rstrip()
        if text:
            out.append(text)
    return out


class OutputTail:
    """Relays ``output.log`` to the viewer as LogMessages on a thread, until ``stop``."""

    def __init__(self, run_dir: Path, emit: Emit) -> None:
        self._lines = LineTailer(run_dir / OUTPUT)
        self._emit = emit
        self._done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="rocmtui-output-tail", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            done = self._done.wait(POLL_S)
            lines = output_lines(self._lines.read_lines())
            if len(lines) > MAX_LINES_PER_POLL:
                skipped = len(lines) - MAX_LINES_PER_POLL
                self._emit(LogMessage(f"… {skipped} lines (all in {OUTPUT})"))
                lines = lines[-MAX_LINES_PER_POLL:]
            for line in lines:
                self._emit(LogMessage(line))
            if done:
                self._lines.close()
                return

    def stop(self) -> None:
        self._done.set()
        self.thread.join(timeout=5.0)


class ScriptLauncher:
    """The run source of ``rocmtui run``: starts the supervisor, follows the folder and the output."""

    def __init__(self, run_dir: Path, name: str, command: list[str]) -> None:
        self.run_dir, self.name, self.command = run_dir, name, command
        self.process: subprocess.Popen[bytes] | None = None

    def __call__(self, config: TrainConfig, emit: Emit, control: RunControl) -> TrainEvent | None:
        process = self.process = start(self.run_dir, self.name, self.command)
        tail = OutputTail(self.run_dir, emit)
        try:
            final = follow(self.run_dir, emit, control, writer_alive=lambda: process.poll() is None)
        finally:
            tail.stop()
        if final is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=EXIT_GRACE_S)  # it closes the folder right after its last event
        return final

    @property
    def returncode(self) -> int | None:
        """The script's exit code, once the supervisor (which exits with it) has ended."""
        return None if self.process is None else self.process.poll()
