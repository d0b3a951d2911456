"""``--resume RUN_OR_CHECKPOINT``: read the checkpoint and the settings the run continues with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocmtui.config import TrainConfig
from rocmtui.errors import CheckpointError
from rocmtui.train import runs
from rocmtui.train.engine import resumed_config
from rocmtui.train.state import saved_config


def prepare_resume(config: TrainConfig) -> tuple[TrainConfig, dict[str, Any] | None, Path | None]:
    """(config to run, checkpoint state, checkpoint path); the same config and Nones for a fresh run.

    CheckpointError (one line) for a missing, corrupt or incompatible checkpoint.
    """
    if config.resume is None:
        return config, None, None
    path = runs.checkpoint_file(config.resume)
    if not path.is_file():
        raise CheckpointError(f"{path} does not exist; give a run folder or a checkpoint-*.pt file")
    state = runs.load_checkpoint(path)
    saved = saved_config(state, path)
    if saved.dataset != config.dataset:
        raise CheckpointError(f"{path} is a {saved.dataset} run, not {config.dataset}")
    resumed = resumed_config(config, saved)
    done = int(state.get("epoch", 0))
    if done >= resumed.epochs:
        raise CheckpointError(
            f"{path} has already trained {done} of {resumed.epochs} epochs; "
            f"pass --epochs N with N above {done} to train it further"
        )
    return resumed, state, path
