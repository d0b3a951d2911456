"""The process that ``rocmtui run`` starts: ``python -m rocmtui.launch.script_supervisor RUN_DIR NAME -- CMD...``.

It runs in a session of its own (never dies with the terminal) and holds the run folder for the whole
life of the script: the status is live from the first moment, ``watch``, ``runs`` and ``stop`` work
whether or not the script calls ``track()``, and the folder always records how the process ended. The
script's stdout and stderr go straight to ``output.log`` (its own fds: nothing is lost when a viewer
goes away); its ``track()`` events come up a pipe and are written here; pause, resume and stop go down
another. A script that does not track is asked to stop with SIGINT, as Ctrl-C would.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rocmtui.base.errors import first_line
from rocmtui.base.files import open_regular
from rocmtui.codec import CodecError
from rocmtui.events import (
    LogMessage,
    RunControl,
    RunFailed,
    RunFinished,
    TrackStarted,
    TrainEvent,
)
from rocmtui.launch.detached_output import write_output_to_folder
from rocmtui.run.format import MAX_LINE_BYTES, OUTPUT, decode_event
from rocmtui.run.lines import last_line
from rocmtui.run.samples import SampleLog
from rocmtui.run.session import RunSession
from rocmtui.tracking import env

if TYPE_CHECKING:
    from rocmtui.gpu.run_recorder import GpuRecorder

POLL_S = 0.1
STOP_GRACE_S = 30.0
"""After a stop, how long a script that does not track gets to end on SIGINT before SIGTERM."""
RELAY_GRACE_S = 2.0
"""After the script exits, how long to wait for the rest of its events (a child process may hold the pipe)."""


class Relay:
    """Reads the script's events and writes them; holds back each final event until it is really final.

    A script may call ``track()`` more than once: an end followed by more events is only a log line.
    """

    def __init__(self, session: RunSession, fd: int) -> None:
        self.session = session
        self.final: RunFinished | RunFailed | None = None
        self.tracking = threading.Event()
        """Set once the script's ``track()`` reported in: commands go down the pipe, not as signals."""
        self._fd = fd
        self.thread = threading.Thread(target=self._read, name="rocmtui-relay", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with os.fdopen(self._fd, "rb") as stream:
            for raw in stream:
                if len(raw) <= MAX_LINE_BYTES:
                    with contextlib.suppress(CodecError):
                        self._take(decode_event(raw))

    def _take(self, event: TrainEvent) -> None:
        if isinstance(event, RunFinished | RunFailed):
            self.final = event
            return
        if self.final is not None:  # a run ended and another began in the same script
            what = self.final.reason if isinstance(self.final, RunFinished) else f"failed: {self.final.message}"
            self._write(LogMessage(f"a tracked run {what}; the script goes on"))
            self.final = None
        if isinstance(event, TrackStarted):
            self.tracking.set()
        self._write(event)

    def _write(self, event: TrainEvent) -> None:
        with contextlib.suppress(OSError):  # a full disk: the script runs on; its end is still tried
            self.session.emit(event)


class Forwarder:
    """Sends the run's commands (from its control channel) to the script: down the pipe, or as signals."""

    def __init__(self, control: RunControl, fd: int, relay: Relay, child: subprocess.Popen[bytes]) -> None:
        self.control, self.fd, self.relay, self.child = control, fd, relay, child
        self.paused = False
        self.stop_at: float | None = None
        self.signalled = False

    def sync(self) -> None:
        commands: list[str] = []
        if self.control.paused != self.paused:
            self.paused = self.control.paused
            commands.append("pause" if self.paused else "resume")
        if self.control.take_save_request() and self.relay.tracking.is_set():
            commands.append("save")
        if self.control.stop.is_set() and self.stop_at is None:
            self.stop_at = time.monotonic()
            commands.append("stop")
        if self.relay.tracking.is_set():
            for command in commands:
                with contextlib.suppress(OSError):
                    os.write(self.fd, command.encode() + b"\n")
            return
        if self.stop_at is not None and not self.signalled:  # no track(): stop it as Ctrl-C would
            self.signalled = True
            with contextlib.suppress(ProcessLookupError):
                self.child.send_signal(signal.SIGINT)
        elif self.stop_at is not None and time.monotonic() - self.stop_at > STOP_GRACE_S:
            with contextlib.suppress(ProcessLookupError):
                self.child.terminate()


def ending(final: RunFinished | RunFailed | None, code: int, run_dir: Path, total_s: float) -> TrainEvent:
    """The run's last event: the script's own when it ended cleanly, else what its exit code says."""
    if final is not None and (code == 0 or isinstance(final, RunFailed)):
        return final
    if code == 0:
        return RunFinished("completed", 0, None, None, total_s, 0.0, None, str(run_dir))
    if code < 0 and -code == signal.SIGINT:
        return RunFinished("interrupted", 0, None, None, total_s, 0.0, None, str(run_dir))
    if code < 0:
        return RunFailed(f"the script was killed by {signal.Signals(-code).name}", "error", run_dir=str(run_dir))
    last = last_line(run_dir / OUTPUT)
    said = f": {last.decode(errors='replace').strip()[:200]}" if last else ""
    return RunFailed(f"the script exited with code {code}{said}", "error", run_dir=str(run_dir))


def supervise(run_dir: Path, name: str, command: list[str]) -> int:
    control = RunControl()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: control.request_stop())
    session = RunSession(run_dir, control, name=name)
    recorder = _recorder(run_dir)
    started = time.perf_counter()
    session.emit(TrackStarted(name, str(run_dir), {"command": shlex.join(command)}, started_at=time.time()))
    events_r, events_w = os.pipe()
    commands_r, commands_w = os.pipe()
    output = open_regular(run_dir / OUTPUT, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    child_env = dict(os.environ)
    child_env.update({env.RUN_DIR: str(run_dir), env.RUN_NAME: name, env.LINK: f"{events_w},{commands_r}"})
    child_env.setdefault("PYTHONUNBUFFERED", "1")  # the log panel shows lines as they are printed
    try:
        child = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=output, stderr=output, env=child_env,
            pass_fds=(events_w, commands_r), restore_signals=True,
        )  # fmt: skip
    except OSError as err:
        failed = RunFailed(f"cannot start {command[0]}: {first_line(err)}", "data", run_dir=str(run_dir))
        _end(session, failed)
        return 127 if isinstance(err, FileNotFoundError) else 126
    finally:
        for fd in (events_w, commands_r, output):
            os.close(fd)
    relay = Relay(session, events_r)
    forwarder = Forwarder(control, commands_w, relay, child)
    code: int | None = None
    while code is None:
        forwarder.sync()
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = child.wait(POLL_S)
    relay.thread.join(RELAY_GRACE_S)
    os.close(commands_w)
    recorder.close()
    _end(session, ending(relay.final, code, run_dir, time.perf_counter() - started))
    return code if code >= 0 else 128 - code


def _recorder(run_dir: Path) -> GpuRecorder:
    """GPU samples into the folder, so that ``watch`` shows the GPU history (a torch-free module)."""
    from rocmtui.config import MonitorConfig
    from rocmtui.gpu.run_recorder import GpuRecorder

    return GpuRecorder(lambda: SampleLog(run_dir), MonitorConfig(fast_start_s=MonitorConfig.RUN_FAST_START_S))


def _end(session: RunSession, event: TrainEvent) -> None:
    try:
        with contextlib.suppress(OSError):
            session.emit(event)
    finally:
        session.close()


def main(argv: list[str]) -> int:
    run_dir, name, rest = Path(argv[0]), argv[1], argv[2:]
    command = rest[1:] if rest[:1] == ["--"] else rest
    # In a session of its own, no terminal's Ctrl-C reaches it; a SIGINT sent to it stops the run. Handlers
    # reset to the default in the script at exec; an ignored SIGHUP stays ignored there, on purpose.
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    write_output_to_folder(run_dir, keep_stdout=True)
    return supervise(run_dir, name, command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
