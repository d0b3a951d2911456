"""``--nproc N`` (and ``--nnodes``): the ranks of a data-parallel run, started by torch.distributed's elastic launcher.

This is the programmatic form of ``torchrun --standalone --nproc-per-node N`` on one node, and of ``torchrun
--nnodes M --rdzv-backend c10d`` on each of several (``launch.rendezvous``): one process per rank, no restarts. The
process that calls ``launch_ranks`` (the detached trainer, or ``--headless``) makes the run folder first (a job's
``job-ID`` folder, which every node finds) and gives it to every rank; global rank 0 then holds it exactly as a
single-process run does, so ``watch``, ``runs``, ``stop`` and ``--resume`` work unchanged. This process follows the
folder like any viewer: it passes stops on through the control channel, and relays events to ``emit``.

The launcher runs on a thread of its own: on the main thread it would install its own signal handlers,
and a hangup it was told to ignore would end the ranks.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import psutil

from rocmtui.base.errors import first_line
from rocmtui.codec import decode_json, encode_json
from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import Emit, LogMessage, RunControl, RunFailed, RunFinished, RunStarted, TrainEvent
from rocmtui.launch.detached_output import rank_log_name, write_output_to_folder
from rocmtui.launch.rendezvous import launch_config
from rocmtui.run.follow import follow
from rocmtui.run.format import EVENTS, RANKS, STDERR
from rocmtui.run.lock import is_locked
from rocmtui.run.outcome import exit_code
from rocmtui.run.rank_streams import RankEnded, RankFailed, RankWriter, read_ranks
from rocmtui.run.stream import last_seq, read_events
from rocmtui.train.distributed import ranks_from_env
from rocmtui.train.failures import setup_failure
from rocmtui.train.loop import new_run_dir, train
from rocmtui.train.plan import RunPlan, rank_plan
from rocmtui.train.summary import RunSummary

POLL_S = 0.05
STOP_GRACE_S = 60.0
"""How long ranks asked to stop before rank 0 holds the folder get before they are killed."""


def launch_ranks(
    plan: RunPlan,
    emit: Emit,
    control: RunControl,
    *,
    telemetry: MonitorConfig | None = None,
    on_folder: Callable[[Path], None] | None = None,
    interrupt_stops: bool = False,
    hangup_stops: bool = False,
) -> RunSummary:
    """Train ``plan`` with its ``config.nproc`` ranks and return how the run ended, as ``train`` does.

    ``emit`` hears the run's events as rank 0 writes them (a resumed run's earlier events are left out).
    ``interrupt_stops``/``hangup_stops``: whether SIGINT/SIGHUP stop the ranks (headless) or are ignored
    by them (a detached trainer); SIGTERM always stops them with a checkpoint.
    """
    try:
        run_dir = plan.resume.run_dir or new_run_dir(plan.config)
    except Exception as err:
        failed = setup_failure(err)
        emit(failed)
        return RunSummary(failed, None)
    history = last_seq(run_dir)
    starts_before = sum(isinstance(e, RunStarted) for e in read_events(run_dir)) if history else 0
    group = _Group(plan, telemetry, run_dir, (interrupt_stops, hangup_stops))
    group.start()
    while group.alive() and not _written(run_dir, history) and not control.stop.is_set():
        group.wait(POLL_S)
    final: TrainEvent | None = None
    if _written(run_dir, history):
        if on_folder is not None:
            on_folder(run_dir)
        relay = _AfterHistory(emit, starts_before)
        final = follow(run_dir, relay, control, history_until=history, writer_alive=group.alive)
    elif control.stop.is_set():
        group.terminate()
    group.wait()
    if isinstance(final, RunFinished | RunFailed):
        return RunSummary(final, run_dir)
    if final is None and group.error is None and (finished := _ended_here(run_dir)) is not None:
        emit(LogMessage(ELSEWHERE))
        emit(finished)
        return RunSummary(finished, run_dir)
    failed = _group_failure(run_dir, group.error)
    if plan.resume.run_dir is None and not (run_dir / EVENTS).exists() and not (run_dir / RANKS).exists():
        shutil.rmtree(run_dir, ignore_errors=True)  # nothing was trained: leave no empty run behind
    kept = run_dir if run_dir.exists() else None
    failed = RunFailed(failed.message, failed.kind, run_dir=str(kept) if kept else None)
    emit(failed)
    return RunSummary(failed, kept)


ELSEWHERE = (
    "this node's ranks ended; the job's events are in rank 0's folder, on its node (this folder holds this "
    "node's ranks: 'rocmtui watch' or 'runs --ranks' with both folders shows the whole job)"
)


def _ended_here(run_dir: Path) -> RunFinished | None:
    """How the job ended as this node's ranks wrote it (``RankEnded``), where rank 0's stream is not in this
    folder (each node keeps its own); None when no rank here wrote one."""
    for _, view in sorted(read_ranks(run_dir).items()):
        if view.ended is not None:
            return msgspec.structs.replace(view.ended.finished, run_dir=str(run_dir))
    return None


def _written(run_dir: Path, history: int) -> bool:
    """Whether rank 0 holds the folder or has written to it: on a folder shared by several hosts (NFS) the lock
    is not seen from another node, the events are."""
    return is_locked(run_dir) or last_seq(run_dir) > history


class _AfterHistory:
    """Passes on the events from the ``skip``+1-th RunStarted on (a resumed folder's earlier runs are left out)."""

    def __init__(self, emit: Emit, skip: int) -> None:
        self.emit, self.skip, self.starts = emit, skip, 0

    def __call__(self, event: TrainEvent) -> None:
        if isinstance(event, RunStarted):
            self.starts += 1
        if self.starts > self.skip:
            self.emit(event)


class _Group:
    """The elastic launcher on a thread: ``config.nproc`` processes running ``rank_main`` with the plan."""

    def __init__(self, plan: RunPlan, telemetry: MonitorConfig | None, run_dir: Path, stops: tuple[bool, bool]) -> None:
        checkpoint = plan.resume.checkpoint
        self.args = (
            encode_json(plan.config.to_dict()).decode(),
            str(plan.device),
            "" if checkpoint is None else str(checkpoint),
            encode_json(None if telemetry is None else telemetry.recorder_settings()).decode(),
            str(run_dir),
            *stops,
        )
        self.config = plan.config
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="rocmtui-ranks", daemon=True)

    def start(self) -> None:
        per_rank = max(1, (os.cpu_count() or 1) // self.config.nproc)
        os.environ.setdefault("OMP_NUM_THREADS", str(per_rank))  # as torchrun does: ranks share the cores
        # a rank's failure is told from the run folder, in one line; the launcher's own account is a traceback
        logging.getLogger("torch.distributed.elastic").setLevel(logging.CRITICAL)
        # the resource tracker (started with these options) frees what killed ranks held, and says so: not news
        if _TRACKER_NOTE not in sys.warnoptions:
            sys.warnoptions.append(_TRACKER_NOTE)
        self._thread.start()

    def _run(self) -> None:
        from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
        from torch.distributed.launcher.api import elastic_launch

        with tempfile.TemporaryDirectory(prefix="rocmtui-ranks-") as logs:
            launch = launch_config(self.config, DefaultLogsSpecs(log_dir=logs))
            try:
                elastic_launch(launch, rank_main)(*self.args)
            except BaseException as err:  # a rank that failed or was killed: reported from the folder
                self.error = err

    def alive(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def terminate(self) -> None:
        """SIGTERM to every rank (a stop before rank 0 holds the folder); SIGKILL after ``STOP_GRACE_S``."""
        children = psutil.Process().children(recursive=True)
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.terminate()
        self.wait(STOP_GRACE_S)
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.kill()


_TRACKER_NOTE = "ignore::UserWarning:multiprocessing.resource_tracker"


def _group_failure(run_dir: Path, error: BaseException | None) -> RunFailed:
    """What the ranks said of their failure (rank 0 first), else what the launcher saw."""
    said = [v.failed for _, v in sorted(read_ranks(run_dir).items()) if v.failed is not None]
    if said:
        return RunFailed(said[0].message, said[0].kind)
    why = first_line(error, with_type=True) if error is not None else "they ended before training started"
    return RunFailed(
        f"the training processes failed ({why}); see {run_dir / STDERR} and {run_dir / RANKS}/rank-N.log", "error"
    )


def rank_main(  # noqa: PLR0917 - the launcher's arguments, plain values through the spawn
    config_json: str,
    device: str,
    checkpoint: str,
    telemetry_json: str,
    run_dir: str,
    interrupt_stops: bool,
    hangup_stops: bool,
) -> int:
    """One rank: train the launcher's plan (its settings, device and checkpoint, ``""`` for none) in the run
    folder ``run_dir``; its stderr goes to the folder's ``trainer.log``.

    A rank that fails ends its process at once with its exit code, so that the launcher ends the other
    ranks rather than leave them waiting in a collective; rank 0 has written the failure by then.
    """
    ranks = ranks_from_env()
    folder = Path(run_dir)
    # the terminal that started the run may go away; one log a rank, one writer a file (NFS)
    folder.joinpath(RANKS).mkdir(mode=0o755, exist_ok=True)
    write_output_to_folder(folder, name=rank_log_name(ranks.rank))
    control = RunControl()
    signal.signal(signal.SIGTERM, lambda *_: control.request_stop())
    signal.signal(signal.SIGINT, (lambda *_: control.request_stop()) if interrupt_stops else signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, (lambda *_: control.request_stop()) if hangup_stops else signal.SIG_IGN)
    config = TrainConfig.from_dict(decode_json(config_json, dict[str, Any]))
    sampling = decode_json(telemetry_json, dict[str, Any] | None)
    telemetry = MonitorConfig(**sampling) if sampling is not None else None
    try:
        plan = rank_plan(config, device, Path(checkpoint) if checkpoint else None, ranks)
    except Exception as err:  # the checkpoint changed since the launcher read it: this rank's failure
        plan_failed = setup_failure(err)
        print(f"rank {ranks.rank}: {plan_failed.message}", file=sys.stderr, flush=True)
        os._exit(exit_code(plan_failed))
    summary = train(plan, _ignore, control, telemetry=telemetry, run_dir=folder)
    code = exit_code(summary.event)
    if isinstance(summary.event, RunFinished):
        with contextlib.suppress(OSError):  # how the job ended, where this node's launcher finds it
            writer = RankWriter(folder, ranks.rank)
            writer.write(RankEnded(ranks.rank, summary.event, time.time()))
            writer.close()
    if isinstance(summary.event, RunFailed):
        with contextlib.suppress(OSError):
            writer = RankWriter(folder, ranks.rank)
            writer.write(RankFailed(ranks.rank, summary.event.message, summary.event.kind, time.time()))
            writer.close()
        print(f"rank {ranks.rank}: {summary.event.message}", file=sys.stderr, flush=True)
        os._exit(code)
    return code


def _ignore(_event: TrainEvent) -> None:
    """A rank reports through the folder only."""
