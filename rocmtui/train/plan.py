"""``RunPlan``: what a run is resolved to before anything starts, once, then handed on.

Its settings (a resumed run's, fitted to this machine), its device, the checkpoint it continues from (read
with ``torch.load`` once), the folder it continues in and this process's place among the ranks. The CLI's
headless path, the detached trainer and the ranks' launcher each make one and hand it to ``train`` or to
the ranks; a rank gets the launcher's settings as they are and reads only the checkpoint again (it is
another process).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from rocmtui.config import TrainConfig
from rocmtui.train.data import DataSource, resolve_source
from rocmtui.train.device import settle
from rocmtui.train.distributed import SINGLE, Ranks, rank_device
from rocmtui.train.resume import ResumePlan, load_state, prepare_resume


@dataclass(frozen=True)
class RunPlan:
    """A run, resolved."""

    config: TrainConfig
    """The settings it trains with: on resume the saved run's keep settings and this invocation's others,
    then fitted to the device (``device.fit_to_device``)."""
    device: torch.device
    """This process's device, indexed (``cuda:0``; rank N of a run on GPUs: ``cuda:N``)."""
    resume: ResumePlan
    """The checkpoint's contents and path, and the folder to continue in (none of them for a fresh run)."""
    source: DataSource
    """Where the data comes from, resolved once for the run (a DataError, one line, before anything starts)."""
    ranks: Ranks = SINGLE
    """This process's place among the ranks; SINGLE also in the process that launches them."""

    @property
    def launches_ranks(self) -> bool:
        """Whether this plan trains through ranks started by ``launch.rank_processes`` (``--nproc``, ``--nnodes``)."""
        return self.config.several_ranks and not self.ranks.several


def plan_run(config: TrainConfig) -> RunPlan:
    """The plan for ``config`` as given on the command line; UsageError (one line) for a checkpoint or
    settings this run cannot use."""
    resume = prepare_resume(config)
    device, fitted = settle(resume.config)
    return RunPlan(fitted, rank_device(device, SINGLE), resume, resolve_source(fitted))


def rank_plan(config: TrainConfig, device: str, checkpoint: Path | None, ranks: Ranks) -> RunPlan:
    """A rank's plan from its launcher's: ``config`` and ``device`` as the launcher resolved them, the
    checkpoint read here."""
    state = None if checkpoint is None else load_state(checkpoint)
    resume = ResumePlan(config, state, checkpoint, None)
    return RunPlan(config, rank_device(torch.device(device), ranks), resume, resolve_source(config), ranks)
