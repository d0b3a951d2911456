"""``train(plan, emit, control)``: the one training behind the TUI, ``--headless`` and ``bench``.

It reads as setup (the plan, the data, the run folder held), the run (engine built, checkpoint restored,
``epochs.EpochLoop``), and the ending; a failure anywhere is an event, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import Emit, RunControl, RunFailed, TrainEvent
from rocmtui.gpu.run_recorder import GpuRecorder
from rocmtui.run.format import write_config
from rocmtui.run.layout import create_run_dir, job_run_dir, run_name
from rocmtui.run.rank_health import job_failure
from rocmtui.run.rank_place import rank_place
from rocmtui.run.rank_streams import BEAT_S, RankWriter
from rocmtui.run.samples import SampleLog
from rocmtui.run.session import RunSession
from rocmtui.train.data import DataSource, load_arrays, wait_for_cache
from rocmtui.train.dataset import Arrays
from rocmtui.train.distributed import join_group, leave_group
from rocmtui.train.engine import build_engine, capture_graph
from rocmtui.train.epochs import EpochLoop
from rocmtui.train.failures import setup_failure, training_failure
from rocmtui.train.plan import RunPlan, plan_run
from rocmtui.train.progress_events import send_started
from rocmtui.train.saving import Saver
from rocmtui.train.state import Progress, restore
from rocmtui.train.summary import RunSummary, end_failed


def train(
    plan: RunPlan | TrainConfig,
    emit: Emit,
    control: RunControl,
    *,
    telemetry: MonitorConfig | None = None,
    on_folder: Callable[[Path], None] | None = None,
    run_dir: Path | None = None,
) -> RunSummary:
    """Run training to the end, a stop or a failure; never raises for training failures.

    ``plan``: a resolved ``RunPlan``, or settings to resolve here (a bad checkpoint is then a RunFailed).
    The run folder is held by a RunSession for the whole run: one writer, whole lines, a status with a
    heartbeat and a control channel. ``telemetry``: also sample the GPUs into the folder; ``on_folder``
    hears the folder's path once it is held, before the first event.

    A rank's plan (``plan.rank_plan``, several ranks started by ``rocmtui.launch.rank_processes``) trains in
    the ``run_dir`` all ranks are given: rank 0 holds the folder as above; each rank writes its own progress
    to ``ranks/rank-N.jsonl``.
    """
    try:
        setup = _Setup.make(plan, control, run_dir)
    except Exception as err:  # bad input, a busy folder, a full disk: an event, not an exception
        failed = setup_failure(err)
        emit(failed)
        return RunSummary(failed, None)
    session, leader = setup.session, setup.plan.ranks.leader

    def send(event: TrainEvent) -> None:
        try:
            if session is not None:
                session.emit(event)
        finally:  # the caller hears of the event even when the disk could not take it
            emit(event)

    recorder = GpuRecorder(lambda: SampleLog(setup.run_dir), telemetry) if telemetry is not None and leader else None
    try:
        if on_folder is not None and leader:
            on_folder(setup.run_dir)
        return _Run(setup, send, control).run()
    finally:
        if recorder is not None:
            recorder.close()
        if session is not None:
            session.close()
        if setup.plan.ranks.several:
            leave_group()
        wait_for_cache()  # a first run's data cache, written behind it: whole before the process leaves


LOST_NODE_WAIT_S = 2 * BEAT_S
"""How long rank 0 waits, after a failed collective, for the other nodes' ranks to say why before it names the
nodes that said nothing as the ones that stopped answering."""


def new_run_dir(config: TrainConfig) -> Path:
    """``runs/<YYYYmmdd-HHMMSS>-<dataset>-<model>-<suffix>/``, made atomically; a job's ``runs/job-<rdzv-id>/``."""
    shared = config.shared_runs_dir or None  # None: $ROCMTUI_SHARED_RUNS_DIR decides
    if config.rdzv_id is not None:  # a job of several nodes: every node's launcher finds the same folder
        return job_run_dir(config.runs_dir, config.rdzv_id, shared=shared)
    return create_run_dir(config.runs_dir, run_name(config.dataset, config.model), shared=shared)


@dataclass(frozen=True)
class _Setup:
    """What a run has before it trains: its plan, its data, its folder (held by rank 0)."""

    plan: RunPlan
    source: DataSource
    arrays: Arrays
    run_dir: Path
    session: RunSession | None

    @staticmethod
    def make(plan: RunPlan | TrainConfig, control: RunControl, run_dir: Path | None) -> _Setup:
        plan = plan if isinstance(plan, RunPlan) else plan_run(plan)
        config = plan.config
        source = plan.source
        arrays = load_arrays(source)
        plan.resume.check_data(arrays)  # before any folder is made or touched
        run_dir = run_dir or plan.resume.run_dir or new_run_dir(config)
        name = f"{config.dataset} {config.model}"
        session = RunSession(run_dir, control, name=name) if plan.ranks.leader else None
        return _Setup(plan, source, arrays, run_dir, session)


class _Run:
    """One run in its folder: the engine built and restored, then trained; any failure is a RunFailed."""

    def __init__(self, setup: _Setup, send: Emit, control: RunControl) -> None:
        self.setup, self.send, self.control = setup, send, control
        self.saver = Saver(setup.run_dir, setup.plan.ranks.leader, send)
        self.progress = Progress()
        self.rank_log: RankWriter | None = None

    def run(self) -> RunSummary:
        try:
            return self._prepared().run()
        except Exception as err:  # the contract: a failed run is an event, never an exception out of train()
            failed = training_failure(err, self.progress.global_step, self.progress.epoch)
            return end_failed(self._named(failed), self.saver, self.send)
        finally:
            if self.rank_log is not None:
                self.rank_log.close()

    def _named(self, failed: RunFailed) -> RunFailed:
        """Rank 0's failure of a job of several nodes with the node or rank that caused it, as their files tell
        (a node killed or cut off leaves its peers a broken connection, which names no one)."""
        ranks = self.setup.plan.ranks
        if not (ranks.leader and ranks.several and self.rank_log is not None):
            return failed
        cause = job_failure(self.setup.run_dir, rank_place().node_rank, wait_s=LOST_NODE_WAIT_S)
        if cause is None:
            return failed
        return msgspec.structs.replace(failed, message=f"{cause}; rank 0: {failed.message}")

    def _prepared(self) -> EpochLoop:
        """The engine built (and restored, and its graph captured), the settings written, the start sent."""
        plan, run_dir = self.setup.plan, self.setup.run_dir
        config, device, ranks = plan.config, plan.device, plan.ranks
        if ranks.several:
            join_group(ranks, device)
            self.rank_log = RankWriter(run_dir, ranks.rank, beat_s=BEAT_S)
        engine = build_engine(config, self.setup.arrays, device, ranks)
        resume = plan.resume
        if resume.state is not None and resume.checkpoint is not None:
            self.progress = restore(engine, resume.state, resume.checkpoint)
            resume.release_state()
        if config.cuda_graph:
            capture_graph(engine, from_epoch=self.progress.epoch)
        self.saver.prepare(engine)
        if ranks.leader:
            write_config(run_dir, config)
        send_started(
            self.send, engine, self.progress, source=self.setup.source, run_dir=run_dir, rank_log=self.rank_log
        )
        return EpochLoop(
            engine, self.progress, control=self.control, send=self.send, saver=self.saver, rank_log=self.rank_log
        )
