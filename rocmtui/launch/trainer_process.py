"""The trainer process that ``rocmtui train`` starts: ``python -m rocmtui.launch.trainer_process CONFIG TELEMETRY``.

CONFIG is a TrainConfig as JSON; TELEMETRY the sampler's ``{"interval_s": ..., "backend": ...}``: the trainer
records the GPU samples in its run folder, and every viewer (the UI that started it included) reads them
there, so that one process polls the GPU, not two (a second NVML poller slowed a launch-bound run by about
10% on the H200, BENCHMARKS.md).

It runs in a session of its own (the launcher starts it with ``start_new_session``), so the hangup of
the terminal that started it never reaches it: the UI is only a viewer. It says where its run folder is
on stdout (one line, once the folder is held), then writes only to that folder; stderr goes to the
folder's ``trainer.log``. An error before there is a folder is one line on stderr and the exit code.
SIGTERM stops the run with a checkpoint, as a viewer's stop does.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from rocmtui.base import startup_gc
from rocmtui.codec import decode_json
from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import RunControl, RunFailed, TrainEvent
from rocmtui.launch.detached_output import node_log_name, write_output_to_folder
from rocmtui.run.format import STDERR
from rocmtui.run.outcome import exit_code, leave


def _announce(run_dir: Path, nodes: int) -> None:
    """Tell the launcher where the run is, then let go of the pipes: the launcher may go away at any time. One
    node of several writes a log of its own in the job's shared folder."""
    try:
        sys.stdout.write(f"{run_dir}\n")
        sys.stdout.flush()
    except OSError:  # the launcher is already gone: train on
        pass
    name = node_log_name(socket.gethostname(), os.getpid()) if nodes > 1 else STDERR
    write_output_to_folder(run_dir, name=name)


def main(argv: list[str]) -> int:
    config = TrainConfig.from_dict(decode_json(argv[0], dict[str, Any]))
    telemetry = MonitorConfig(**decode_json(argv[1], dict[str, Any])) if len(argv) > 1 else MonitorConfig()
    control = RunControl()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # keys reach us as commands, not as the terminal's Ctrl-C
    signal.signal(signal.SIGTERM, lambda *_: control.request_stop())
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    early: list[RunFailed] = []

    def emit(event: TrainEvent) -> None:
        if isinstance(event, RunFailed) and event.run_dir is None:
            early.append(event)

    from rocmtui.train.failures import setup_failure
    from rocmtui.train.loop import train
    from rocmtui.train.plan import plan_run

    try:
        plan = plan_run(config)
    except Exception as err:  # reported as train() reports a bad start: one line, the failure's exit code
        failed = setup_failure(err)
        _say(failed.message)
        return exit_code(failed)
    if plan.launches_ranks:  # the ranks train; this process starts them and follows their folder
        from rocmtui.launch.rank_processes import launch_ranks

        announce = functools.partial(_announce, nodes=plan.config.nnodes)
        summary = launch_ranks(plan, emit, control, telemetry=telemetry, on_folder=announce)
    else:
        summary = train(plan, emit, control, telemetry=telemetry, on_folder=functools.partial(_announce, nodes=1))
    if early:
        _say(early[-1].message)
    return exit_code(summary.event)


def _say(message: str) -> None:
    """A failure before there is a folder, on stderr (the launcher is gone: the exit code still says it)."""
    with contextlib.suppress(OSError):
        print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":
    startup_gc.pause()
    import rocmtui.train.loop  # noqa: F401 - torch, imported with the collector paused

    startup_gc.resume()
    leave(main(sys.argv[1:]))
