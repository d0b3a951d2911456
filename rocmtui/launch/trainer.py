"""Start a trainer process that outlives its terminal, and follow its run folder from the UI.

Why a process: a launch-bound loop spends most of its time in Python, and beside the UI in one
process it lost 12% of its throughput to the GIL (H200, BENCHMARKS.md). Why a session of its own: a
dropped SSH link hangs up the terminal's whole session; the trainer is not in it, so it trains on,
and ``rocmtui watch`` finds it later. Torch is imported there, never in the UI's process.

The launcher is a trainer callable for the app, ``(config, emit, control) -> final event``: it starts
``rocmtui.launch.trainer_process``, reads one line (the run folder) from it, then follows the folder like any
viewer (``rocmtui.run.follow``). ``control.leave`` detaches: the launcher returns, the run goes on.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

from rocmtui.codec import encode_json
from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import Emit, RunControl, RunFailed, TrainEvent
from rocmtui.run.follow import follow
from rocmtui.run.stream import last_seq

POLL_S = 0.1
STOP_GRACE_S = 30.0
"""How long the launcher waits for the trainer to close its folder after its last event."""


class LaunchedTrainer:
    """Runs ``rocmtui.launch.trainer_process`` in a new session and relays its run folder's events."""

    def __init__(
        self,
        module: str = "rocmtui.launch.trainer_process",
        *,
        telemetry: MonitorConfig | None = None,
        on_folder: Callable[[Path], None] | None = None,
    ) -> None:
        self.module = module
        self.telemetry = telemetry or MonitorConfig()
        self.on_folder = on_folder
        """Hears the run folder as soon as the trainer holds it (the UI starts reading its GPU samples)."""
        self.process: subprocess.Popen[bytes] | None = None
        self.run_dir: Path | None = None

    def start(self, config: TrainConfig) -> None:
        """Start the trainer now: its imports, CUDA start-up and data loading overlap the UI's own start."""
        if self.process is None:
            self.process = subprocess.Popen(
                [sys.executable, "-m", self.module, encode_json(config.to_dict()).decode(), self._telemetry_json()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
            )

    def __call__(self, config: TrainConfig, emit: Emit, control: RunControl) -> TrainEvent | None:
        self.start(config)
        process = self.process
        assert process is not None and process.stdout is not None and process.stderr is not None
        errors, reader = _drain(process.stderr)
        run_dir = _await_folder(process.stdout, control)
        if run_dir is None:
            if control.leave.is_set():
                return None
            code = process.wait()
            reader.join(timeout=1.0)
            message = (errors[-1] if errors else "") or f"the training process ended before it started (exit {code})"
            failed = RunFailed(message, "data" if code == 2 else "error")
            emit(failed)
            return failed
        self.run_dir = run_dir
        if self.on_folder is not None:
            self.on_folder(run_dir)
        history_until = last_seq(run_dir)
        final = follow(run_dir, emit, control, history_until=history_until, writer_alive=lambda: process.poll() is None)
        if final is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_GRACE_S)  # it closes the folder right after its last event
        return final

    def _telemetry_json(self) -> str:
        return encode_json(self.telemetry.recorder_settings()).decode()

    def kill(self) -> None:
        """End the trainer at once, without a checkpoint, and reap it: for a data error found once it has
        started (it has no folder yet), and for tests."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5.0)


def _await_folder(out: IO[bytes], control: RunControl) -> Path | None:
    """The run folder the trainer announces, or None when it exits first (or the viewer leaves).

    A stop asked for meanwhile waits for the folder: it goes through the control channel like any other,
    so the run stops at its first step boundary with a checkpoint.
    """
    line = b""
    while not control.leave.is_set():
        ready, _, _ = select.select([out], [], [], POLL_S)
        if not ready:
            continue
        chunk = os.read(out.fileno(), 4096)
        if not chunk:
            return None
        line += chunk
        if b"\n" in line:
            return Path(line.split(b"\n", 1)[0].decode())
    return None


def _drain(stream: IO[bytes]) -> tuple[deque[str], threading.Thread]:
    """Read the trainer's early stderr on a thread, keeping its last lines (a full pipe would block it)."""
    lines: deque[str] = deque(maxlen=20)

    def read() -> None:
        for raw in stream:
            text = raw.decode(errors="replace").strip()
            if text:
                lines.append(text)

    thread = threading.Thread(target=read, name="rocmtui-trainer-stderr", daemon=True)
    thread.start()
    return lines, thread
